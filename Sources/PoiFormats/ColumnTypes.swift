import PoiModel

/// The type a column kept under `extra` is stored as (`--types population=int`), as
/// `mongoimport --columnsHaveTypes` and ogr2ogr's `AUTODETECT_TYPE` give CSV columns: without
/// one, a CSV cell is text, and `population` cannot be queried as a number.
public enum ColumnType: String, Sendable, CaseIterable {
    /// Text as given (a CSV cell's default); in GeoJSON, only a string is accepted.
    case string
    /// A whole number: Int64 (BSON int32/int64), or Decimal128 up to 34 digits beyond it.
    case int
    /// A finite double, written as the coordinates are (`1.5`, `-2`, `1e3`; a lone decimal comma).
    case double
    /// `true`/`false`, `yes`/`no`, `1`/`0`, any case.
    case bool
    /// An ISO 8601 date (`2024-03-01`, midnight UTC) or date-time with a zone, stored as a BSON date.
    case date
    /// A JSON value of any kind (`5`, `"5"`, `true`, `null`, `[1,2]`, `{"a":1}`): what a cell
    /// holding a list or an object (a GeoJSON property flattened into CSV) is read as, and what
    /// `poi export --format csv` writes, in a `String(JSON)` column of its `.csvt`, for a
    /// column whose values mix types or are missing on some places, so each comes back as it
    /// was stored.
    case json

    /// The type a `--types` name means (`int64`, `integer` and `long` are `int`, as mongoimport's
    /// and GDAL's names are); nil for an unknown name.
    public init?(name: String) {
        switch name.lowercased() {
        case "string", "text", "str": self = .string
        case "int", "integer", "int32", "int64", "long": self = .int
        case "double", "float", "real", "number", "decimal": self = .double
        case "bool", "boolean": self = .bool
        case "date", "datetime", "date_iso8601": self = .date
        case "json": self = .json
        default: return nil
        }
    }

    /// The value a CSV cell (or a GeoJSON string property) holds, or why it holds none.
    /// The text is trimmed of whitespace first, as coordinates are; blank text is the caller's.
    public func value(text: String) -> Result<JSONValue, TypedValueProblem> {
        let t = trimWhitespace(text)
        switch self {
        case .string: return .success(.string(text))
        case .int:
            if let i = Int64(t) { return .success(.integer(i)) }
            // Beyond Int64: exact digits (Decimal128), as the JSON reader keeps them.
            var digits = Substring(t)
            let negative = digits.first == "-"
            if digits.first == "-" || digits.first == "+" { digits.removeFirst() }
            if !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                let significant = digits.drop { $0 == "0" }
                if significant.count <= JSONValue.maxBigIntegerDigits {
                    return .success(.bigInteger((negative ? "-" : "") + significant))
                }
                return .failure(TypedValueProblem(type: self, text: t, detail: "more than \(JSONValue.maxBigIntegerDigits) digits"))
            }
            return .failure(TypedValueProblem(type: self, text: t))
        case .double:
            guard let d = DecimalText.parse(t) else { return .failure(TypedValueProblem(type: self, text: t)) }
            guard d.isFinite else { return .failure(TypedValueProblem(type: self, text: t, detail: "out of range")) }
            return .success(.double(d))
        case .bool:
            switch t.lowercased() {
            case "true", "yes", "1": return .success(.bool(true))
            case "false", "no", "0": return .success(.bool(false))
            default: return .failure(TypedValueProblem(type: self, text: t))
            }
        case .date:
            guard let ms = ISO8601.milliseconds(parsing: t) ?? Self.gdalDateTime(t).flatMap(ISO8601.milliseconds(parsing:))
            else { return .failure(TypedValueProblem(type: self, text: t)) }
            return .success(.date(millisecondsSince1970: ms))
        case .json:
            // The depth GeoJSON properties may have (GeoJSONReader's limit), so a property
            // flattened into a cell reads back whatever it held.
            do { return .success(try JSONParser.parse(Array(t.utf8), maxDepth: 64)) } catch {
                return .failure(TypedValueProblem(type: self, text: t, detail: error.description))
            }
        }
    }

    /// The value a GeoJSON property holds: a value of the type already is one (an integral
    /// number is an int, any number a double), a string is read as text is, null stays null.
    public func value(json: JSONValue) -> Result<JSONValue, TypedValueProblem> {
        switch (self, json) {
        case (.json, _):
            return .success(json)
        case (_, .null), (.string, .string), (.int, .integer), (.int, .bigInteger), (.double, .double),
             (.bool, .bool), (.date, .date):
            return .success(json)
        case (.double, .integer), (.double, .bigInteger):
            return .success(.double(json.doubleValue ?? 0))
        case (.int, .double(let d)) where d == d.rounded() && abs(d) < 9.0e15:
            return .success(.integer(Int64(d)))
        case (.string, _):
            return .failure(TypedValueProblem(type: self, text: nil, detail: "got \(json.typeName == "array" || json.typeName == "object" ? "an" : "a") \(json.typeName)"))
        case (_, .string(let s)):
            return value(text: s)
        default:
            return .failure(TypedValueProblem(type: self, text: nil, detail: "got \(json.typeName == "array" || json.typeName == "object" ? "an" : "a") \(json.typeName)"))
        }
    }

    /// GDAL's own date text (`2024/03/01`, `2024/03/01 10:00:00.5+00`, `+0530`, no zone: UTC),
    /// what ogr2ogr writes into a CSV with a `.csvt`, as ISO 8601; nil for anything else.
    static func gdalDateTime(_ t: String) -> String? {
        let u = Array(t.utf8)
        func digits(_ r: Range<Int>) -> Bool { r.upperBound <= u.count && u[r].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard u.count >= 10, digits(0..<4), u[4] == 0x2F, digits(5..<7), u[7] == 0x2F, digits(8..<10) else { return nil }
        let date = String(decoding: u[0..<4], as: UTF8.self) + "-" + String(decoding: u[5..<7], as: UTF8.self) + "-"
            + String(decoding: u[8..<10], as: UTF8.self)
        if u.count == 10 { return date }
        guard u.count >= 19, u[10] == 0x20, digits(11..<13), u[13] == 0x3A, digits(14..<16), u[16] == 0x3A, digits(17..<19) else { return nil }
        var i = 19
        var fraction = ""
        if i < u.count, u[i] == 0x2E {
            var j = i + 1
            while j < u.count, u[j] >= 0x30, u[j] <= 0x39 { j += 1 }
            guard j > i + 1 else { return nil }
            fraction = String(decoding: u[i..<j], as: UTF8.self)
            i = j
        }
        var zone = "Z"
        if i < u.count {
            guard u[i] == 0x2B || u[i] == 0x2D, digits((i + 1)..<(i + 3)) else { return nil }
            let hours = String(decoding: u[(i + 1)..<(i + 3)], as: UTF8.self)
            let rest = u.count - (i + 3)
            if rest == 0 { zone = String(UnicodeScalar(u[i])) + hours + ":00" }
            else if rest == 2, digits((i + 3)..<(i + 5)) { zone = String(UnicodeScalar(u[i])) + hours + ":" + String(decoding: u[(i + 3)...], as: UTF8.self) }
            else if rest == 3, u[i + 3] == 0x3A, digits((i + 4)..<(i + 6)) { zone = String(UnicodeScalar(u[i])) + hours + String(decoding: u[(i + 3)...], as: UTF8.self) }
            else { return nil }
        }
        return date + "T" + String(decoding: u[11..<19], as: UTF8.self) + fraction + zone
    }

    /// "an integer", "a date": what a reject says was expected.
    var expected: String {
        switch self {
        case .string: return "text"
        case .int: return "an integer"
        case .double: return "a number"
        case .bool: return "true or false"
        case .date: return "an ISO 8601 date (2024-03-01 or 2024-03-01T14:30:00Z)"
        case .json: return "a JSON value (a string in double quotes, a number, true, false, null, an array or an object)"
        }
    }
}

/// Why a value is not of its column's type: a reject's reason, naming the value as written.
public struct TypedValueProblem: Error, Sendable, Equatable {
    public var type: ColumnType
    /// The text as written (trimmed), or nil when the value was not text.
    public var text: String?
    public var detail: String?
    /// Where the type was given: `--types`, or a `.csvt` file beside the CSV.
    public var origin = "--types"

    public init(type: ColumnType, text: String?, detail: String? = nil) {
        self.type = type
        self.text = text
        self.detail = detail
    }

    public var message: String {
        var m = "typed \(type.rawValue) (\(origin)): "
        if let text { m += "\"\(text.count > 40 ? text.prefix(40) + "…" : Substring(text))\" is not \(type.expected)" }
        else { m += "expected \(type.expected)" }
        if let detail { m += " (\(detail))" }
        return m
    }
}

/// The types `--types` gives columns/properties kept under `extra`, by the name they are kept
/// under (a CSV header's column name, a GeoJSON property's key).
public struct ColumnTypes: Sendable, Equatable {
    public private(set) var types: [String: ColumnType] = [:]
    /// The names in the order given, for messages.
    public private(set) var names: [String] = []

    public init() {}

    public var isEmpty: Bool { types.isEmpty }

    /// Adds `name`'s type; false when `name` already has one.
    @discardableResult
    public mutating func add(_ name: String, _ type: ColumnType) -> Bool {
        guard types[name] == nil else { return false }
        types[name] = type
        names.append(name)
        return true
    }

    public subscript(name: String) -> ColumnType? { types[name] }
}
