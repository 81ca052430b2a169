/// A JSON value with object members kept in input order.
///
/// `Place.extra` holds the input's unmapped columns/properties as `JSONValue`s so nothing the user
/// supplied is dropped; PoiStore converts them to BSON and the GeoJSON writer writes them back.
/// Integers that fit in `Int64` stay exact (`.integer`), and so do longer ones up to 34 digits
/// (`.bigInteger`, stored as BSON Decimal128); every other number is a finite `.double`
/// (readers reject non-finite numbers such as `1e400`).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer beyond `Int64`, as its decimal text (`-?[1-9][0-9]*`, at most
    /// `JSONValue.maxBigIntegerDigits` digits): a double would change it
    /// (`12345678901234567890` reads back as `12345678901234567168`).
    case bigInteger(String)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
    /// An instant (milliseconds since 1970, UTC): not a JSON type, but what a column typed `date`
    /// (`--types opened=date`) holds, stored as a BSON date so it can be queried as one. JSON
    /// text writes it as its ISO 8601 string, which the same `--types` reads back.
    case date(millisecondsSince1970: Int64)

    /// The string payload, or nil for any other case.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The object payload, or nil for any other case.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The numeric payload as a `Double`, or nil when not a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .bigInteger(let text): return Double(text)
        case .double(let d): return d
        default: return nil
        }
    }

    /// Digits a `.bigInteger` holds at most: what BSON Decimal128 stores exactly (34
    /// significant digits). Longer integers are doubles, as in any JSON reader.
    public static let maxBigIntegerDigits = 34

    /// A short type name for error messages ("string", "number", ...).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .bigInteger, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        case .date: return "date"
        }
    }
}

/// One member of a `JSONObject`.
public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSONValue
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON object whose members keep their order (deterministic output, faithful round trips).
/// Lookups are linear: objects here are small (a feature's properties), and order matters more.
public struct JSONObject: Sendable, Hashable {
    public var members: [JSONMember]

    public init(_ members: [JSONMember] = []) { self.members = members }

    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }

    /// The first member's value with this key.
    public subscript(key: String) -> JSONValue? {
        for m in members where m.key == key { return m.value }
        return nil
    }

    public func contains(_ key: String) -> Bool { members.contains { $0.key == key } }

    /// Appends a member; the caller guarantees the key is new (readers reject duplicate keys).
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(JSONMember(key, value))
    }
}
