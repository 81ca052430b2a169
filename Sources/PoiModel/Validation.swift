/// A record after field mapping, before validation: what a reader extracted, still untrusted.
/// CSV readers fill `.string` values; GeoJSON readers pass JSON values through.
/// More than ten stored properties: one per field a place may have before validation, as `Place` has after it.
public struct PlaceDraft: Sendable {
    public var name: JSONValue?
    public var placename: JSONValue?
    public var longitude: JSONValue?
    public var latitude: JSONValue?
    public var details: JSONValue?
    public var categories: JSONValue?
    public var image: JSONValue?
    public var id: JSONValue?
    public var importKey: JSONValue?
    /// A GeoJSON position's third value, if any.
    public var altitude: JSONValue?
    public var extra: JSONObject
    /// PoiKit's own properties of a GeoJSON feature (`Place.poiKitProperties`).
    public var poiKitProperties = JSONObject()
    public var source: PlaceSource
    /// ASCII bytes a categories text is split on (`Categories.defaultSeparators`: `;` and `|`).
    public var categorySeparators: [UInt8] = Categories.defaultSeparators

    public init(source: PlaceSource) {
        self.extra = JSONObject()
        self.source = source
    }

    public subscript(field: PlaceField) -> JSONValue? {
        get {
            switch field {
            case .name: return name
            case .placename: return placename
            case .latitude: return latitude
            case .longitude: return longitude
            case .details: return details
            case .categories: return categories
            case .image: return image
            case .id: return id
            case .importKey: return importKey
            }
        }
        set {
            switch field {
            case .name: name = newValue
            case .placename: placename = newValue
            case .latitude: latitude = newValue
            case .longitude: longitude = newValue
            case .details: details = newValue
            case .categories: categories = newValue
            case .image: image = newValue
            case .id: id = newValue
            case .importKey: importKey = newValue
            }
        }
    }
}

/// The validation rules of ARCHITECTURE.md §4, shared by `poi check`, `poi convert` and `poi import`.
public enum PlaceValidator {
    /// Validates a draft into a `Place`, or returns the first problem as a `Reject`.
    /// Strings are valid UTF-8 by construction: readers refuse invalid bytes before building them.
    public static func validate(_ d: PlaceDraft) -> Result<Place, Reject> {
        func reject(_ field: PlaceField, _ reason: String) -> Result<Place, Reject> {
            .failure(Reject(source: d.source, field: field.rawValue, reason: reason))
        }
        // name
        let name: String
        switch d.name {
        case .string(let s)?:
            name = trimWhitespace(s)
            if name.isEmpty { return reject(.name, "name is empty") }
        case nil, .null?:
            return reject(.name, "name is missing")
        case let v?:
            return reject(.name, "name must be a string, got \(v.typeName)")
        }
        // coordinates
        // Both values are looked at before a reject, so it names every problem, with each value
        // as written (`95`, not `95.0`), and says when the pair fits only the other way round.
        let lonResult = number(d.longitude, PlaceField.longitude), latResult = number(d.latitude, PlaceField.latitude)
        var problems: [(PlaceField, String)] = []
        if case .failure(let r) = lonResult { problems.append((.longitude, r.message)) }
        if case .failure(let r) = latResult { problems.append((.latitude, r.message)) }
        let coordinate: Coordinate
        if case .success(let lon) = lonResult, case .success(let lat) = latResult {
            do {
                coordinate = try Coordinate.validated(longitude: lon, latitude: lat)
            } catch {
                func written(_ v: JSONValue?, _ x: Double) -> String {
                    switch v {
                    case .string(let s)?: return String(trimWhitespace(s).prefix(40))
                    case .integer(let i)?: return String(i)
                    case .bigInteger(let t)?: return t
                    default: return x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
                    }
                }
                let lonText = written(d.longitude, lon), latText = written(d.latitude, lat)
                if !lon.isFinite || !(-180.0...180.0).contains(lon) {
                    problems.append((.longitude, lon.isFinite ? "longitude \(lonText) out of range [-180, 180]"
                                                              : "longitude \(lonText) is not a finite number"))
                }
                if !lat.isFinite || !(-90.0...90.0).contains(lat) {
                    problems.append((.latitude, lat.isFinite ? "latitude \(latText) out of range [-90, 90]"
                                                             : "latitude \(latText) is not a finite number"))
                }
                if problems.isEmpty { return reject(error.field, error.message) }
                var message = problems.map(\.1).joined(separator: "; ")
                if (-90.0...90.0).contains(lon) && (-180.0...180.0).contains(lat) {
                    // A GeoJSON file has no columns: its positions are [longitude, latitude].
                    message += " (looks swapped: latitude \(lonText), longitude \(latText) would fit; "
                        + (d.source.line == nil ? "GeoJSON positions are [longitude, latitude])" : "check which column is which)")
                }
                return reject(problems[0].0, message)
            }
        } else {
            return reject(problems[0].0, problems.map(\.1).joined(separator: "; "))
        }
        var altitude: Double?
        switch d.altitude {
        case nil, .null?: break
        case .integer(let i)?: altitude = Double(i)
        case .bigInteger(let text)?: altitude = Double(text)
        case .double(let x)?: altitude = x == 0 ? 0 : x
        case let v?:
            return .failure(Reject(source: d.source, field: "geometry", reason: "altitude must be a number, got \(v.typeName)"))
        }
        // optional strings
        var placename: String?, details: String?, image: String?
        for f in [PlaceField.placename, .details, .image] {
            var value: String?
            switch d[f] {
            case nil, .null?: break
            case .string(let s)?:
                let t = trimWhitespace(s)
                if !t.isEmpty { value = t }
            case let v?: return reject(f, "\(f.rawValue) must be a string, got \(v.typeName)")
            }
            switch f {
            case .placename: placename = value
            case .details: details = value
            default: image = value
            }
        }
        // categories
        var categories: [String] = []
        switch d.categories {
        case nil, .null?: break
        case .string(let s)?: categories = Categories.parse(s, separators: d.categorySeparators)
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let s) = item else {
                    return reject(.categories, "categories must be strings, got \(item.typeName)")
                }
                // A list is a list: its items are categories as given, `Fish | Chips` included
                // (splitting them again broke export → import of an app's own categories).
                strings.append(s)
            }
            categories = Categories.normalize(strings)
        case let v?: return reject(.categories, "categories must be a string or an array of strings, got \(v.typeName)")
        }
        // importKey: explicit key, else id, else derived.
        var key: String?
        var keyField: PlaceField?
        for f in [PlaceField.importKey, .id] {
            switch d[f] {
            case nil, .null?: continue
            case .string(let s)?:
                let t = trimWhitespace(s)
                if !t.isEmpty { key = t }
            case .integer(let i)?: key = String(i)
            case .bigInteger(let text)?: key = text  // its digits, like the integer's text
            case .double(let x)?:
                // A key is text, and a number's text is its value's: 7, 7.0 and 7e0 are "7",
                // like the string "7" and an integer 7 (ImportKey, rule 2).
                key = (x == x.rounded() && abs(x) < 9.2e18) ? String(Int64(x)) : String(x)
            case let v?: return reject(f, "\(f.rawValue) must be a string or a number, got \(v.typeName)")
            }
            if key != nil { keyField = f; break }
        }
        // A CSV `id` column that lost to an explicit importKey is kept in extra: nothing supplied
        // is dropped. A GeoJSON Feature `id` beside an `importKey` property is not: that is how
        // PoiKit's own exports look, and there the id is the exporting database's `_id`, which
        // means nothing in the database the file is imported into.
        var extra = d.extra
        var id: JSONValue? = d.id
        if case .string(let s)? = id, trimWhitespace(s).isEmpty { id = nil }
        if id == .null { id = nil }
        if keyField == .importKey, d.source.line != nil, let given = id {
            if !extra.contains("id") { extra.append("id", given) }
            id = nil
        }
        // Made in the result, not in a local first: `let place = …; return .success(place)` was
        // compiled as a copy of the place (a retain per field) and a release of the local.
        return .success(Place(name: name, placename: placename, coordinate: coordinate,
                          details: details, categories: categories, image: image,
                          importKey: key ?? ImportKey.derived(name: name, coordinate: coordinate),
                          extra: extra, source: d.source,
                          keySource: keyField == .importKey ? .importKey : keyField == .id ? .id : .derived,
                          hasImageField: d.image != nil, altitude: altitude, poiKitProperties: d.poiKitProperties, id: id))
    }

    /// A coordinate from a JSON number or from text (CSV, or a GeoJSON property given as string).
    /// Why a coordinate value is unusable (user-facing text).
    struct NumberProblem: Error { var message: String }

    static func number(_ v: JSONValue?, _ field: PlaceField) -> Result<Double, NumberProblem> {
        switch v {
        case nil, .null?: return .failure(NumberProblem(message: "\(field.rawValue) is missing"))
        case .integer(let i)?: return .success(Double(i))
        // Far outside any coordinate range: the range check names the value.
        case .bigInteger(let text)?: return .success(Double(text) ?? .infinity)
        case .double(let x)?: return .success(x)
        case .string(let s)?:
            let t = trimWhitespace(s)
            if t.isEmpty { return .failure(NumberProblem(message: "\(field.rawValue) is empty")) }
            guard let x = DecimalText.parse(t) else {
                if DecimalText.underflows(t) {
                    return .failure(NumberProblem(message: "\(field.rawValue) \"\(t.prefix(40))\" is too small to be represented (it would read as 0)"))
                }
                return .failure(NumberProblem(message: "\(field.rawValue) \"\(t.prefix(40))\" is not a number"))
            }
            return .success(x)
        case let v?: return .failure(NumberProblem(message: "\(field.rawValue) must be a number, got \(v.typeName)"))
        }
    }
}

/// Strict decimal text: `[+-]digits[.digits][e[+-]digits]`. Refuses "NaN", "Infinity", hex
/// floats and anything `strtod` would half-accept. A lone decimal comma ("48,85", common in
/// semicolon-separated European exports) is read as a point when the text has no point.
/// Text whose value underflows to 0 (`1e-400`) is refused like one that overflows: nil.
public enum DecimalText {
    /// True when `text` is well-formed decimal text that is not zero but reads as 0 in a Double.
    public static func underflows(_ text: String) -> Bool {
        let mantissa = text.utf8.prefix { $0 != 0x65 && $0 != 0x45 }
        guard mantissa.contains(where: { $0 >= 0x31 && $0 <= 0x39 }) else { return false }
        let t = String(text.map { $0 == "," ? "." : $0 })
        return Double(t) == 0
    }

    public static func parse(_ text: String) -> Double? {
        var t = text
        return t.withUTF8 { parse(utf8: $0) }
    }

    public static func parse(utf8 p: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = p.count
        if n == 0 || n > 64 { return nil }
        var i = 0
        var negative = false
        if p[i] == 0x2B || p[i] == 0x2D { negative = p[i] == 0x2D; i += 1 }
        var digits = 0, fracDigits = 0
        var mantissa: UInt64 = 0
        var comma = false
        while i < n && p[i] >= 0x30 && p[i] <= 0x39 {
            if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(p[i] &- 0x30) }
            i += 1; digits += 1
        }
        if i < n && (p[i] == 0x2E || p[i] == 0x2C) {
            comma = p[i] == 0x2C
            i += 1
            while i < n && p[i] >= 0x30 && p[i] <= 0x39 {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(p[i] &- 0x30) }
                i += 1; digits += 1; fracDigits += 1
            }
        }
        if digits == 0 { return nil }
        var hasExp = false
        if i < n && (p[i] == 0x65 || p[i] == 0x45) {
            hasExp = true
            i += 1
            if i < n && (p[i] == 0x2B || p[i] == 0x2D) { i += 1 }
            var e = 0
            while i < n && p[i] >= 0x30 && p[i] <= 0x39 { i += 1; e += 1 }
            if e == 0 { return nil }
        }
        if i != n { return nil }
        // Exact fast path (Clinger): ≤ 15 digits, power of ten ≤ 22, both exact in a Double.
        if !hasExp && digits <= 15 && fracDigits <= 22 {
            let d = Double(mantissa) / pow10[fracDigits]
            return negative ? -d : d
        }
        let text = comma ? String(decoding: p.map { $0 == 0x2C ? 0x2E : $0 }, as: UTF8.self)
                         : String(decoding: p, as: UTF8.self)
        guard let d = Double(text) else { return nil }
        // Underflow: a non-zero text that reads as 0 is refused, never silently 0.
        if d == 0 && p.contains(where: { $0 >= 0x31 && $0 <= 0x39 }) && !exponentOnlyNonzero(p) { return nil }
        return d
    }

    /// True when every non-zero digit is in the exponent (`0e5`, `0.0e-12`): the value is 0.
    private static func exponentOnlyNonzero(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in p {
            if b == 0x65 || b == 0x45 { return true }
            if b >= 0x31 && b <= 0x39 { return false }
        }
        return true
    }

    private static let pow10: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }
}
