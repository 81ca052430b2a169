import PoiModel

/// One Feature's JSON text, exactly as `GeoJSONWriter` writes it, into any byte buffer: what
/// lets a job encode features on worker threads and still write them in order (`poi convert`).
///
/// `append(_ place:to:)` writes the bytes of `append(GeoJSONFeature(place: place), to:)` without
/// building the feature's property object: a place's strings go straight from the place to the
/// output. That object was a third of `poi convert`'s time (an array of members, a retain for
/// each key and value, every key looked up in the members before it).
public struct GeoJSONFeatureEncoder: Sendable {
    /// Decimals coordinates are rounded to (0...15); nil: exact (shortest round trip).
    public let precision: Int?
    /// The property names of the feature being encoded, for the rule that a name is written once.
    private var names: [String] = []
    /// The same names as a set, once there are more than `namesScanned`: looking each name up in
    /// the array made a feature quadratic in its properties (a 600-column CSV: 180,000 string
    /// comparisons a row, 27–48 s for 20k rows; new-user trial). `Set` and `contains` on the
    /// array answer alike: both compare strings by canonical equivalence.
    private var nameSet: Set<String> = []
    private static let namesScanned = 16
    /// The property names last given to each extra, by its position: a CSV file's extras are the
    /// same columns in every record, so the rule of `PoiKitProperties.propertyName(forExtra:)`
    /// is applied once per column rather than once per record.
    private var extraKeys: [String] = []
    private var extraNames: [String] = []

    /// `precision`, when given, is clamped to 0...15.
    public init(precision: Int?) {
        self.precision = precision.map { max(0, min(15, $0)) }
    }

    public func append(_ f: GeoJSONFeature, to buffer: inout [UInt8]) {
        appendHead(id: f.id, coordinate: f.coordinate, altitude: f.altitude, to: &buffer)
        JSONEncoding.append(.object(f.properties), to: &buffer)
        buffer.append(0x7D)
    }

    /// The feature `GeoJSONFeature(place:)` makes of `place`, member for member.
    public mutating func append(_ place: Place, to buffer: inout [UInt8]) {
        appendHead(id: place.id, coordinate: place.coordinate, altitude: place.altitude, to: &buffer)
        names.removeAll(keepingCapacity: true)
        nameSet.removeAll(keepingCapacity: true)
        buffer.append(0x7B)
        member("name", to: &buffer)
        JSONEncoding.appendString(place.name, to: &buffer)
        if let v = place.placename { member("placename", to: &buffer); JSONEncoding.appendString(v, to: &buffer) }
        if let v = place.details { member("details", to: &buffer); JSONEncoding.appendString(v, to: &buffer) }
        if !place.categories.isEmpty {
            member("categories", to: &buffer)
            buffer.append(0x5B)
            for (k, c) in place.categories.enumerated() {
                if k > 0 { buffer.append(0x2C) }
                JSONEncoding.appendString(c, to: &buffer)
            }
            buffer.append(0x5D)
        }
        if let v = place.image { member("image", to: &buffer); JSONEncoding.appendString(v, to: &buffer) }
        member("importKey", to: &buffer)
        JSONEncoding.appendString(place.importKey, to: &buffer)
        for m in place.poiKitProperties.members where !isWritten(m.key) {
            member(m.key, to: &buffer)
            JSONEncoding.append(m.value, to: &buffer)
        }
        for (k, m) in place.extra.members.enumerated() {
            var key = extraName(m.key, at: k)
            while isWritten(key) { key += FieldMapping.extraSuffix }
            member(key, to: &buffer)
            JSONEncoding.append(m.value, to: &buffer)
        }
        buffer.append(0x7D)
        buffer.append(0x7D)
    }

    private func isWritten(_ name: String) -> Bool {
        names.count > Self.namesScanned ? nameSet.contains(name) : names.contains(name)
    }

    private mutating func member(_ name: String, to buffer: inout [UInt8]) {
        if !names.isEmpty { buffer.append(0x2C) }
        names.append(name)
        if names.count > Self.namesScanned {
            if nameSet.isEmpty { nameSet.formUnion(names) } else { nameSet.insert(name) }
        }
        JSONEncoding.appendString(name, to: &buffer)
        buffer.append(0x3A)
    }

    private mutating func extraName(_ key: String, at k: Int) -> String {
        // Byte for byte: `==` holds canonically equivalent strings equal, and a key written in
        // decomposed form (NFD) would take the composed name of the record before it.
        if k < extraKeys.count, Self.sameBytes(extraKeys[k], key) { return extraNames[k] }
        let name = PoiKitProperties.propertyName(forExtra: key)
        if k < extraKeys.count {
            extraKeys[k] = key
            extraNames[k] = name
        } else if k == extraKeys.count {
            extraKeys.append(key)
            extraNames.append(name)
        }
        return name
    }

    /// Byte for byte equal. `utf8.elementsEqual` compared a byte at a time through the generic
    /// collection path (1 % of `poi convert`).
    @inline(__always)
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8InPlace { pa in b.withUTF8InPlace { pb in pa.elementsEqual(pb) } }
    }

    /// `{"type":"Feature",` the id, the geometry and `"properties":`.
    private func appendHead(id: JSONValue?, coordinate: Coordinate, altitude: Double?, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: #"{"type":"Feature","#.utf8)
        if let id {
            buffer.append(contentsOf: #""id":"#.utf8)
            JSONEncoding.append(id, to: &buffer)
            buffer.append(0x2C)
        }
        buffer.append(contentsOf: #""geometry":{"type":"Point","coordinates":["#.utf8)
        if let precision {
            FixedDecimal.append(coordinate.longitude, places: precision, trimZeros: true, to: &buffer)
            buffer.append(0x2C)
            FixedDecimal.append(coordinate.latitude, places: precision, trimZeros: true, to: &buffer)
        } else {
            ShortestDecimal.appendFixed(coordinate.longitude, to: &buffer)
            buffer.append(0x2C)
            ShortestDecimal.appendFixed(coordinate.latitude, to: &buffer)
        }
        if let altitude, altitude.isFinite {
            buffer.append(0x2C)
            JSONEncoding.append(.double(altitude), to: &buffer)
        }
        buffer.append(contentsOf: #"]},"properties":"#.utf8)
    }
}
