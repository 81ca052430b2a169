import PoiModel

/// One GeoJSON Feature with a Point geometry, as the writer takes it.
public struct GeoJSONFeature: Sendable, Hashable {
    /// Feature `id`: the stored place's `_id` hex for exports; nil to omit.
    public var id: JSONValue?
    public var coordinate: Coordinate
    /// Written in order. Keys must be unique (`placeProperties` guarantees it).
    public var properties: JSONObject

    public init(id: JSONValue? = nil, coordinate: Coordinate, properties: JSONObject) {
        self.id = id
        self.coordinate = coordinate
        self.properties = properties
    }

    /// The feature `poi convert` writes, and the basis of exports: properties `name`,
    /// `placename`, `details`, `categories`, `image`, then `additional` (e.g. `imageId`,
    /// `thumbnailId`, `created_at`, `updated_at` from the store), `importKey`, then the `extra`
    /// members. Absent optional fields are omitted. An extra member whose key collides with
    /// one already written is renamed "key (extra)" rather than dropped or duplicated.
    public init(place: Place, id: JSONValue? = nil, additional: [JSONMember] = []) {
        var props = JSONObject()
        props.append("name", .string(place.name))
        if let v = place.placename { props.append("placename", .string(v)) }
        if let v = place.details { props.append("details", .string(v)) }
        props.append("categories", .array(place.categories.map(JSONValue.string)))
        if let v = place.image { props.append("image", .string(v)) }
        for m in additional where !props.contains(m.key) { props.append(m.key, m.value) }
        props.append("importKey", .string(place.importKey))
        for m in place.extra.members {
            var key = m.key
            while props.contains(key) { key += " (extra)" }
            props.append(key, m.value)
        }
        self.init(id: id, coordinate: place.coordinate, properties: props)
    }
}

/// Streams RFC 7946 GeoJSON: a FeatureCollection, or GeoJSON Text Sequences (RFC 8142: each
/// feature as RS + JSON + LF). Memory is one 64 KiB buffer whatever the number of features.
///
/// Output is deterministic (member order as given, fixed number formatting): coordinates are
/// rounded to `precision` decimals and written without exponent and without "-0"; other
/// numbers use Swift's shortest round-trip form; strings escape `"` `\` and every control
/// character, plus U+2028/U+2029 (valid JSON, but they break JavaScript consumers).
public struct GeoJSONWriter<Sink: ByteSink> {
    public enum Style: Sendable { case featureCollection, sequence }

    public private(set) var sink: Sink
    public let style: Style
    public let precision: Int
    private var buffer: [UInt8] = []
    private var count = 0
    private var started = false
    private var finished = false
    private static var flushAt: Int { 64 * 1024 }

    /// `precision` is clamped to 0...15 decimals (RFC 7946 §11.2 suggests 6 or 7; 7 ≈ 1 cm).
    public init(sink: Sink, style: Style = .featureCollection, precision: Int = 7) {
        self.sink = sink
        self.style = style
        self.precision = max(0, min(15, precision))
        buffer.reserveCapacity(Self.flushAt + 4096)
    }

    /// Number of features written so far.
    public var featureCount: Int { count }

    public mutating func write(_ feature: GeoJSONFeature) throws(FormatError) {
        precondition(!finished, "GeoJSONWriter.write after finish")
        if !started { begin() }
        switch style {
        case .featureCollection:
            if count > 0 { buffer.append(0x2C) }
            buffer.append(0x0A)
        case .sequence:
            buffer.append(0x1E)
        }
        appendFeature(feature)
        if style == .sequence { buffer.append(0x0A) }
        count += 1
        if buffer.count >= Self.flushAt { try flush() }
    }

    public mutating func write(_ place: Place) throws(FormatError) {
        try write(GeoJSONFeature(place: place))
    }

    /// Closes the collection and flushes. An empty collection is still a valid document.
    public mutating func finish() throws(FormatError) {
        guard !finished else { return }
        if !started { begin() }
        if style == .featureCollection { buffer.append(contentsOf: "\n]}\n".utf8) }
        finished = true
        try flush()
    }

    private mutating func begin() {
        started = true
        if style == .featureCollection {
            buffer.append(contentsOf: #"{"type":"FeatureCollection","features":["#.utf8)
        }
    }

    private mutating func flush() throws(FormatError) {
        guard !buffer.isEmpty else { return }
        var s = sink
        var failure: FormatError?
        buffer.withUnsafeBytes { b in
            do throws(FormatError) { try s.write(b) } catch { failure = error }
        }
        sink = s
        if let failure { throw failure }
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func appendFeature(_ f: GeoJSONFeature) {
        buffer.append(contentsOf: #"{"type":"Feature","#.utf8)
        if let id = f.id {
            buffer.append(contentsOf: #""id":"#.utf8)
            JSONEncoding.append(id, to: &buffer)
            buffer.append(0x2C)
        }
        buffer.append(contentsOf: #""geometry":{"type":"Point","coordinates":["#.utf8)
        FixedDecimal.append(f.coordinate.longitude, places: precision, trimZeros: true, to: &buffer)
        buffer.append(0x2C)
        FixedDecimal.append(f.coordinate.latitude, places: precision, trimZeros: true, to: &buffer)
        buffer.append(contentsOf: #"]},"properties":"#.utf8)
        JSONEncoding.append(.object(f.properties), to: &buffer)
        buffer.append(0x7D)
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
        case .double(let d):
            if !d.isFinite {
                out.append(contentsOf: "null".utf8)  // unreachable from readers; JSON has no Inf/NaN
            } else if d == d.rounded(.towardZero) && abs(d) < 1e15 {
                // Integral doubles keep a ".0" so they read back as doubles (types survive a
                // round trip), and never "-0".
                let i = Int64(d)
                if i < 0 { out.append(0x2D) }
                FixedDecimal.appendDigits(i.magnitude, to: &out)
                out.append(contentsOf: ".0".utf8)
            } else {
                out.append(contentsOf: d.description.utf8)  // shortest round-trip; valid JSON
            }
        case .string(let s): appendString(s, to: &out)
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
        var s = s
        s.withUTF8 { p in
            var runStart = 0
            var i = 0
            let n = p.count
            while i < n {
                let b = p[i]
                var escape: [UInt8]? = nil
                var skip = 1
                if b < 0x20 || b == 0x22 || b == 0x5C {
                    switch b {
                    case 0x22: escape = [0x5C, 0x22]
                    case 0x5C: escape = [0x5C, 0x5C]
                    case 0x0A: escape = [0x5C, 0x6E]
                    case 0x0D: escape = [0x5C, 0x72]
                    case 0x09: escape = [0x5C, 0x74]
                    case 0x08: escape = [0x5C, 0x62]
                    case 0x0C: escape = [0x5C, 0x66]
                    default: escape = [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
                    }
                } else if b == 0xE2 && i + 2 < n && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9) {
                    // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR
                    escape = Array((p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    skip = 3
                }
                if let e = escape {
                    if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
                    out.append(contentsOf: e)
                    i += skip
                    runStart = i
                } else {
                    i += 1
                }
            }
            if n > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<n])) }
        }
        out.append(0x22)
    }
}
