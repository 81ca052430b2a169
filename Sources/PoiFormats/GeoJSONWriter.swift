import PoiModel

/// One GeoJSON Feature with a Point geometry, as the writer takes it.
public struct GeoJSONFeature: Sendable, Hashable {
    /// Feature `id`: the stored place's `_id` hex for exports; nil to omit.
    public var id: JSONValue?
    public var coordinate: Coordinate
    /// The position's third value, written as given (shortest round-trip form); nil for none.
    public var altitude: Double?
    /// Written in order. Keys must be unique (`placeProperties` guarantees it).
    public var properties: JSONObject

    public init(id: JSONValue? = nil, coordinate: Coordinate, altitude: Double? = nil, properties: JSONObject) {
        self.id = id
        self.altitude = altitude
        self.coordinate = coordinate
        self.properties = properties
    }

    /// The feature `poi convert` writes: the place's own `id` (unless `id` is given) as the
    /// Feature id, properties `name`, `placename`, `details`,
    /// `categories` (when there are any), `image`, then `additional`, `importKey`, the place's own PoiKit properties
    /// (`Place.poiKitProperties`, as read), then the `extra` members. Absent optional fields are
    /// omitted. An extra is written under `PoiKitProperties.propertyName(forExtra:)`: its own
    /// name, or "name (extra)" when a reader would take its name for something else.
    public init(place: Place, id: JSONValue? = nil, additional: [JSONMember] = []) {
        var props = JSONObject()
        props.append("name", .string(place.name))
        if let v = place.placename { props.append("placename", .string(v)) }
        if let v = place.details { props.append("details", .string(v)) }
        // Absent when there are none: a file converted keeps what it was given, and an import
        // reads no categories as an empty list anyway.
        if !place.categories.isEmpty { props.append("categories", .array(place.categories.map(JSONValue.string))) }
        if let v = place.image { props.append("image", .string(v)) }
        for m in additional where !props.contains(m.key) { props.append(m.key, m.value) }
        props.append("importKey", .string(place.importKey))
        if !place.poiKitProperties.isEmpty {
            for m in place.poiKitProperties.members where !props.contains(m.key) { props.append(m.key, m.value) }
        }
        for m in place.extra.members {
            var key = PoiKitProperties.propertyName(forExtra: m.key)
            while props.contains(key) { key += FieldMapping.extraSuffix }  // only an `additional` of the caller's
            props.append(key, m.value)
        }
        // The input's own id (Feature id, id property or column) as given, type and all: a
        // file converted keeps what it was given, and reads back to the same place.
        self.init(id: id ?? place.id, coordinate: place.coordinate, altitude: place.altitude, properties: props)
    }
}

/// Streams RFC 7946 GeoJSON: a FeatureCollection, or GeoJSON Text Sequences (RFC 8142: each
/// feature as RS + JSON + LF). Memory is one 64 KiB buffer whatever the number of features.
///
/// Output is deterministic (member order as given, fixed number formatting): coordinates are
/// written exactly as stored — the shortest decimal that reads back as the same double, as any
/// language's JSON writer does, but without exponent and without "-0" — or, when `precision`
/// is given, rounded half away from zero to that many decimals; other numbers use Swift's
/// shortest round-trip form, doubles keep a fraction or exponent and their sign (`5.0`, `-0.0`)
/// so they read back as the same double; strings escape `"` `\` and every control character,
/// plus U+2028/U+2029 (valid JSON, but they break JavaScript consumers).
public struct GeoJSONWriter<Sink: ByteSink> {
    public enum Style: Sendable { case featureCollection, sequence }

    public private(set) var sink: Sink
    public let style: Style
    /// Decimals coordinates are rounded to; nil: exact (shortest round trip).
    public var precision: Int? { encoder.precision }
    private var encoder: GeoJSONFeatureEncoder
    private var buffer: [UInt8] = []
    private var count = 0
    private var started = false
    private var finished = false
    private static var flushAt: Int { 64 * 1024 }

    /// `precision`, when given, is clamped to 0...15 decimals (RFC 7946 §11.2 suggests 6 or 7
    /// for new data; 7 ≈ 1 cm). The default, nil, writes coordinates exactly.
    public init(sink: Sink, style: Style = .featureCollection, precision: Int? = nil) {
        self.sink = sink
        self.style = style
        encoder = GeoJSONFeatureEncoder(precision: precision)
        buffer.reserveCapacity(Self.flushAt + 4096)
    }

    /// Number of features written so far.
    public var featureCount: Int { count }

    public mutating func write(_ feature: GeoJSONFeature) throws(FormatError) {
        beginFeature()
        encoder.append(feature, to: &buffer)
        try endFeature()
    }

    /// Writes `GeoJSONFeature(place: place)`.
    public mutating func write(_ place: Place) throws(FormatError) {
        beginFeature()
        encoder.append(place, to: &buffer)
        try endFeature()
    }

    /// Writes one feature that a `GeoJSONFeatureEncoder` of the same precision encoded.
    public mutating func write(encoded feature: UnsafeRawBufferPointer) throws(FormatError) {
        beginFeature()
        buffer.append(contentsOf: feature)
        try endFeature()
    }

    private mutating func beginFeature() {
        precondition(!finished, "GeoJSONWriter.write after finish")
        if !started { begin() }
        switch style {
        case .featureCollection:
            if count > 0 { buffer.append(0x2C) }
            buffer.append(0x0A)
        case .sequence:
            buffer.append(0x1E)
        }
    }

    private mutating func endFeature() throws(FormatError) {
        if style == .sequence { buffer.append(0x0A) }
        count += 1
        if buffer.count >= Self.flushAt { try flush() }
    }

    /// Closes the collection and flushes. An empty collection is still a valid document.
    public mutating func finish() throws(FormatError) {
        guard !finished else { return }
        if !started { begin() }
        if style == .featureCollection { buffer.append(contentsOf: "\n]}\n".utf8) }
        finished = true
        try flush()
        try sink.finish()
    }

    private mutating func begin() {
        started = true
        if style == .featureCollection {
            buffer.append(contentsOf: #"{"type":"FeatureCollection","features":["#.utf8)
        }
    }

    private mutating func flush() throws(FormatError) {
        try sink.write(draining: &buffer)
    }
}

/// JSON text for `JSONValue`s, byte-oriented.
public enum JSONEncoding {
    public static func append(_ v: JSONValue, to out: inout [UInt8]) {
        switch v {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i):
            if i < 0 { out.append(0x2D) }
            FixedDecimal.appendDigits(i.magnitude, to: &out)
        case .bigInteger(let text): out.append(contentsOf: text.utf8)  // the digits as read
        case .double(let d):
            if !d.isFinite {
                out.append(contentsOf: "null".utf8)  // unreachable from readers; JSON has no Inf/NaN
            } else if d == 0 {
                out.append(contentsOf: (d.sign == .minus ? "-0.0" : "0.0").utf8)  // the sign survives
            } else if d == d.rounded(.towardZero) && abs(d) < 1e15 {
                // Integral doubles keep a ".0" so they read back as doubles (types survive a
                // round trip).
                let i = Int64(d)
                if i < 0 { out.append(0x2D) }
                FixedDecimal.appendDigits(i.magnitude, to: &out)
                out.append(contentsOf: ".0".utf8)
            } else {
                out.append(contentsOf: d.description.utf8)  // shortest round-trip; valid JSON
            }
        case .string(let s): appendString(s, to: &out)
        case .date(let ms): appendString(ISO8601.string(millisecondsSince1970: ms), to: &out)
        case .array(let a):
            out.append(0x5B)
            for (k, e) in a.enumerated() {
                if k > 0 { out.append(0x2C) }
                append(e, to: &out)
            }
            out.append(0x5D)
        case .object(let o):
            out.append(0x7B)
            for (k, m) in o.members.enumerated() {
                if k > 0 { out.append(0x2C) }
                appendString(m.key, to: &out)
                out.append(0x3A)
                append(m.value, to: &out)
            }
            out.append(0x7D)
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        s.withUTF8InPlace { appendEscaped($0, to: &out) }
        out.append(0x22)
    }

    /// `p`'s bytes, escaped as a JSON string's contents.
    private static func appendEscaped(_ p: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard let base = p.baseAddress else { return }
        let n = p.count
        var runStart = 0
        var i = 0
        while i < n {
            // Eight bytes at a time past those that need nothing (most text): see `mayNeedEscape`.
            if i + 8 <= n && !mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            let b = p[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C && b != 0xE2 { i += 1; continue }
            var skip = 1
            if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0x08: out.append(0x5C); out.append(0x62)
            case 0x0C: out.append(0x5C); out.append(0x66)
            case 0xE2:
                // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR: valid JSON, but they
                // break JavaScript consumers. Any other E2 sequence is written as it is.
                if i + 2 < n && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9) {
                    out.append(contentsOf: (p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    skip = 3
                } else {
                    out.append(b)
                }
            default:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            }
            i += skip
            runStart = i
        }
        if n > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<n])) }
    }

    /// Whether any of eight bytes may need escaping: a control byte (< 0x20), `"`, `\` or 0xE2
    /// (the lead byte of U+2028 and U+2029). The word tricks ("has a byte less than n" for
    /// n <= 128, "has a zero byte") are exact as a yes or no, which is all this asks.
    @inline(__always)
    private static func mayNeedEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let below20 = (w &- ones &* 0x20) & ~w & highs
        return (below20 | hasZero(w ^ (ones &* 0x22)) | hasZero(w ^ (ones &* 0x5C)) | hasZero(w ^ (ones &* 0xE2))) != 0
    }
}

/// The shortest decimal that reads back as the same double (Swift's `description`, the digits
/// every language's JSON writer gives), written without exponent and without "-0": exact
/// coordinates in GeoJSON. 28.000000001 stays 28.000000001, 1e-7 is 0.0000001, 28.0 is 28.
public enum ShortestDecimal {
    public static func appendFixed(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite, value != 0 else { out.append(0x30); return }
        if value < 0 { out.append(0x2D) }
        // Most coordinates' shortest form has no exponent ("12.345", "28.0"): it is the output
        // as it is, but for an integral value's ".0".
        var text = value.magnitude.description
        let plain: Bool = text.withUTF8 { p in
            guard !p.contains(0x65) else { return false }
            let n = p.count
            let end = n >= 2 && p[n - 2] == 0x2E && p[n - 1] == 0x30 ? n - 2 : n
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[..<end]))
            return true
        }
        if plain { return }
        slowPath(Array(text.utf8), to: &out)
    }

    /// "d.ddde±x": the digits placed by hand.
    private static func slowPath(_ text: [UInt8], to out: inout [UInt8]) {
        // Split "d.ddde±x" (or "ddd.ddd") into digits and the position of the decimal point.
        var digits: [UInt8] = []
        var point = -1
        var exponent = 0
        var i = 0
        while i < text.count {
            let c = text[i]
            if c == 0x2E { point = digits.count }
            else if c == 0x65 || c == 0x45 {
                exponent = Int(String(decoding: text[(i + 1)...], as: UTF8.self)) ?? 0
                break
            } else { digits.append(c) }
            i += 1
        }
        if point < 0 { point = digits.count }
        point += exponent
        // Trim leading zeros (keeping the point's place) and trailing zeros after the point.
        while digits.count > 1, digits.first == 0x30, point > 1 { digits.removeFirst(); point -= 1 }
        while digits.count > max(point, 1), digits.last == 0x30 { digits.removeLast() }
        if point <= 0 {
            out.append(contentsOf: [0x30, 0x2E])
            for _ in 0..<(-point) { out.append(0x30) }
            out.append(contentsOf: digits)
        } else if point >= digits.count {
            out.append(contentsOf: digits)
            for _ in 0..<(point - digits.count) { out.append(0x30) }
        } else {
            out.append(contentsOf: digits[..<point])
            out.append(0x2E)
            out.append(contentsOf: digits[point...])
        }
    }

    public static func fixedString(_ value: Double) -> String {
        var b: [UInt8] = []
        appendFixed(value, to: &b)
        return String(decoding: b, as: UTF8.self)
    }
}
