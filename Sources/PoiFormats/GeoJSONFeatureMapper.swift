import Dispatch
import PoiModel
import Synchronization

/// Feature bytes framed by the reader, waiting to be parsed and mapped.
struct FeatureBatch: Sendable {
    enum Entry: Sendable {
        case feature(Range<Int>, PlaceSource)
        case item(ReadItem)
    }
    var bytes: [UInt8] = []
    var entries: [Entry] = []

    mutating func add(_ slice: ArraySlice<UInt8>, source: PlaceSource) {
        let start = bytes.count
        bytes.append(contentsOf: slice)
        entries.append(.feature(start..<bytes.count, source))
    }

    mutating func add(_ item: ReadItem) { entries.append(.item(item)) }
}

/// Notes found by the mapper's workers, each kept once.
final class NoteCollector: Sendable {
    private let state = Mutex<(seen: Set<ReadNote>, list: [ReadNote])>(([], []))
    func add(_ note: ReadNote) {
        state.withLock { s in if s.seen.insert(note).inserted { s.list.append(note) } }
    }
    var all: [ReadNote] { state.withLock { $0.list } }
}

/// Feature JSON → `ReadItem`: GeoJSON rules, field mapping and validation. Pure, so batches are
/// converted in parallel.
struct FeatureMapper: Sendable {
    let options: ReadOptions
    let notes = NoteCollector()

    /// Property name → field, memoised: features repeat the same few keys, and normalising a
    /// name is far dearer than a lookup. Capped so hostile files with endless distinct keys
    /// cannot grow it.
    func field(forProperty key: String, cache: inout [String: PlaceField?]) -> PlaceField? {
        if let hit = cache[key] { return hit }
        let f = options.mapping.field(forColumn: key)
        if cache.count < 4096 { cache[key] = .some(f) }
        return f
    }

    /// Parses and maps a batch into slots 0..<n of `queue`, one contiguous chunk per core.
    func convert(_ batch: FeatureBatch, into queue: ReadItemQueue, parallelism: Int) {
        let n = batch.entries.count
        if n == 0 { return }
        let chunks = n < 64 ? 1 : min(parallelism, n)
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            var cache: [String: PlaceField?] = [:]
            for i in (n * c / chunks)..<(n * (c + 1) / chunks) {
                queue.set(i, convert(batch.entries[i], batch, &cache))
            }
        }
    }

    private func convert(_ e: FeatureBatch.Entry, _ batch: FeatureBatch, _ cache: inout [String: PlaceField?]) -> ReadItem {
        switch e {
        case .item(let item): return item
        case .feature(let range, let source):
            let parsed = batch.bytes.withUnsafeBufferPointer { p in
                Result { () throws(JSONParseError) -> JSONValue in
                    try JSONParser.parse(UnsafeBufferPointer(rebasing: p[range]), maxDepth: options.limits.maxDepth)
                }
            }
            // The framed bytes are the feature as written: a copy only when asked for.
            let raw = options.keepRawRecords ? RawRecord.feature(Array(batch.bytes[range])) : nil
            switch parsed {
            case .success(let v): return map(v, source: source, cache: &cache, raw: raw)
            case .failure(let err):
                return .reject(Reject(source: source, field: nil, reason: "invalid JSON: \(err.message)"), raw: raw)
            }
        }
    }

    /// The value at a dotted path (`tags.name`) in `object`; a member whose own name holds the dot
    /// wins over the path.
    static func value(at path: String, in object: JSONObject) -> JSONValue? {
        if let direct = object[path] { return direct }
        var current = JSONValue.object(object)
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            guard case .object(let o) = current, let next = o[String(part)] else { return nil }
            current = next
        }
        return current
    }

    /// A property object holding a member that the default mapping reads as `field` (OSM's
    /// `tags.name`): the `--field` path that would read it.
    static func nestedPath(for field: PlaceField, in object: JSONObject) -> String? {
        for m in object.members {
            guard case .object(let inner) = m.value else { continue }
            if let k = inner.members.first(where: { FieldMapping().field(forColumn: $0.key) == field && $0.value != .null })?.key {
                return m.key + "." + k
            }
        }
        return nil
    }

    /// Names each "NAME (extra)" member at `positions` NAME, unless a member of that name is
    /// there already (a file PoiKit did not write; the member keeps its whole name). Fewest
    /// suffixes first, so "a (extra) (extra)" becomes "a (extra)" only after that one became "a".
    static func unsuffix(_ extra: inout JSONObject, at positions: [Int]) {
        for i in positions.sorted(by: { extra.members[$0].key.utf8.count < extra.members[$1].key.utf8.count }) {
            guard let own = FieldMapping.extraName(extra.members[i].key), !extra.contains(own) else { continue }
            extra.members[i].key = own
        }
    }

    func map(_ v: JSONValue, source: PlaceSource, cache: inout [String: PlaceField?], raw: RawRecord?) -> ReadItem {
        func reject(_ field: String?, _ reason: String) -> ReadItem {
            .reject(Reject(source: source, field: field, reason: reason), raw: raw)
        }
        guard case .object(let f) = v else { return reject(nil, "feature must be an object, got \(v.typeName)") }
        switch f["type"] {
        case .string("Feature")?: break
        case .string(let t)?: return reject("type", "type \(t) is not Feature")
        case nil: return reject("type", "type missing, Feature required")
        case let t?: return reject("type", "type must be a string, got \(t.typeName)")
        }
        var draft = PlaceDraft(source: source)
        // Geometry: a Point, nothing else.
        switch f["geometry"] {
        case nil: return reject("geometry", "geometry missing, Point required")
        case .null?: return reject("geometry", "geometry null, Point required")
        case .object(let g)?:
            guard case .string(let gt)? = g["type"] else { return reject("geometry", "geometry has no type, Point required") }
            guard gt == "Point" else { return reject("geometry", "geometry type \(gt) not supported, Point required") }
            guard case .array(let c)? = g["coordinates"], c.count >= 2 else {
                return reject("geometry", "Point coordinates must be [longitude, latitude]")
            }
            // RFC 7946 positions are numbers: a string ("2,5") is refused, as ogr2ogr does, not
            // coerced (text coordinates are a CSV and properties matter). Both are named.
            let wrong = [("longitude", c[0]), ("latitude", c[1])].filter { $0.1.doubleValue == nil }
            if !wrong.isEmpty {
                return reject("geometry", "Point coordinates must be numbers (RFC 7946): " + wrong.map { name, value in
                    switch value {
                    case .string(let s): return "\(name) is the string \"\(s.prefix(40))\""
                    case .null: return "\(name) is null"
                    default: return "\(name) is \(value.typeName == "boolean" ? "a" : "an") \(value.typeName)"
                    }
                }.joined(separator: ", "))
            }
            draft.longitude = c[0]
            draft.latitude = c[1]
            // Altitude (RFC 7946 §3.1.1), kept; further values are ignored, as the RFC allows.
            if c.count >= 3 { draft.altitude = c[2] }
        case let g?: return reject("geometry", "geometry must be an object, got \(g.typeName)")
        }
        // `--field id=COLUMN` names the id, for GeoJSON as for CSV: the Feature `id` then is
        // kept as `extra.id`, as a CSV's `id` column is, instead of winning over the mapping (one
        // data set imported as CSV and as GeoJSON with the same flags is one place).
        let idNamed = options.mapping.overrides[.id] != nil
        var featureID: JSONValue?
        switch f["id"] {
        case nil, .null?: break
        case .string?, .integer?, .bigInteger?, .double?:
            if idNamed { featureID = f["id"] } else { draft.id = f["id"] }
        case let i?: return reject("id", "id must be a string or a number, got \(i.typeName)")
        }
        draft.categorySeparators = options.categorySeparators
        switch f["properties"] {
        case nil, .null?: break
        case .object(let props)?:
            var taken = FieldSet()
            // Positions in `extra` of "NAME (extra)" properties (PoiKitProperties' rule), named
            // NAME once every property is placed.
            var suffixed: [Int] = []
            for m in props.members {
                if m.key.utf8.last == 0x29, FieldMapping.extraName(m.key) != nil {
                    suffixed.append(draft.extra.count)
                    draft.extra.append(m.key, m.value)
                    continue
                }
                let mapped = field(forProperty: m.key, cache: &cache)
                // A null alias is absent: `"tags": null` must not take the categories from a
                // `category` property after it. (A null field is absent anyway.)
                // Whether or not the field is taken already: the rule does not depend on order.
                if m.value == .null, mapped != nil { continue }
                if let field = mapped, !taken.contains(field),
                   field != .latitude, field != .longitude, !(field == .id && draft.id != nil) {
                    // An optional text field given a non-string (an `address` object): the value
                    // is kept under extra as it is, rather than losing the feature.
                    let wrongType = (field == .placename || field == .details || field == .image)
                        ? m.value != .null && m.value.stringValue == nil
                        : field == .categories && m.value.objectValue != nil  // OSM-style `tags: {…}`
                    if wrongType {
                        notes.add(ReadNote(file: "", kind: .wrongType(field, type: m.value.typeName), name: m.key,
                                           key: m.key, noun: "property"))
                        draft.extra.append(m.key, m.value)
                        continue
                    }
                    taken.insert(field)
                    // A string holding a JSON array is that list, as in a CSV cell (what ogr2ogr
                    // makes of such a cell): one rule for both formats.
                    if field == .categories, case .string(let text) = m.value {
                        switch GDALListText.read(text) {
                        case .notAList: draft[field] = CSVRecordConverter.categories(text)
                        case .items(let items):
                            notes.add(ReadNote(file: "", kind: .gdalList, name: m.key, key: m.key, noun: "property"))
                            draft[field] = .array(items.map(JSONValue.string))
                        case .ambiguous(let count, let pieces):
                            return reject(m.key, GDALListText.refusal(text, count: count, pieces: pieces))
                        }
                    } else {
                        draft[field] = m.value
                    }
                } else if PoiKitProperties.isOwn(m.key, m.value) {
                    // What an export or rejects file says about where it came from: not the user's.
                    draft.poiKitProperties.append(m.key, m.value)
                } else if case .string(let text) = m.value, text.utf8.first == 0x28, options.columnTypes[m.key] == nil {
                    // GDAL's list text in any other list field (a `--types` name is read as that type).
                    switch GDALListText.read(text) {
                    case .notAList: draft.extra.append(m.key, m.value)
                    case .items(let items):
                        notes.add(ReadNote(file: "", kind: .gdalList, name: m.key, key: m.key, noun: "property"))
                        draft.extra.append(m.key, .array(items.map(JSONValue.string)))
                    case .ambiguous(let count, let pieces):
                        return reject(m.key, GDALListText.refusal(text, count: count, pieces: pieces))
                    }
                } else {
                    draft.extra.append(m.key, m.value)
                }
            }
            if !suffixed.isEmpty { Self.unsuffix(&draft.extra, at: suffixed) }
            if !options.columnTypes.isEmpty {
                for k in draft.extra.members.indices {
                    guard let type = options.columnTypes[draft.extra.members[k].key] else { continue }
                    switch type.value(json: draft.extra.members[k].value) {
                    case .success(let v): draft.extra.members[k].value = v
                    case .failure(let problem): return reject(draft.extra.members[k].key, problem.message)
                    }
                }
            }
            // Dotted paths (`--field name=tags.name`): a field read from inside an object
            // property, as OSM-style GeoJSON keeps names and kinds in `tags`. The object itself
            // stays where it went (under extra), so nothing is lost.
            for (field, path) in options.mapping.overrides where path.contains(".") && !taken.contains(field)
                && field != .latitude && field != .longitude && !(field == .id && draft.id != nil) {
                guard let value = Self.value(at: path, in: props), value != .null else { continue }
                taken.insert(field)
                draft[field] = value
            }
        case let p?: return reject("properties", "properties must be an object, got \(p.typeName)")
        }
        if let featureID {
            // A property named `id` went to extra too (the mapping took the name): the CSV rule, `id#2`.
            var key = "id", k = 2
            while draft.extra.contains(key) { key = "id#\(k)"; k += 1 }
            draft.extra.append(key, featureID)
        }
        switch PlaceValidator.validate(draft) {
        case .success(let p): return .place(p, raw: raw)
        case .failure(var r):
            // A field given by a property of another name (`title` for the name): the reject names
            // the property the user wrote. Looked up here, off the common path.
            // (Coordinates come from the geometry, and a Feature `id` beats an id property.)
            if let name = r.field, let wanted = PlaceField(rawValue: name), wanted != .latitude, wanted != .longitude,
               !(wanted == .id && draft.id != nil), case .object(let props)? = f["properties"],
               let given = props.members.first(where: { field(forProperty: $0.key, cache: &cache) == wanted })?.key,
               given != name {
                r.field = given
                if r.reason.hasPrefix(name) { r.reason = "\(given) (the \(name))" + r.reason.dropFirst(name.count) }
            }
            // A field missing at the top level that an object property holds (OSM's `tags`).
            if let name = r.field, let wanted = PlaceField(rawValue: name), r.reason == "\(name) is missing",
               case .object(let props)? = f["properties"], let path = Self.nestedPath(for: wanted, in: props) {
                r.reason += "; the property \(path) holds one: read it with --field \(name)=\(path)"
            }
            return .reject(r, raw: raw)
        }
    }
}

/// A set of `PlaceField`s as a bitmask: per-feature bookkeeping without hashing.
struct FieldSet {
    private var bits: UInt16 = 0
    private static func bit(_ f: PlaceField) -> UInt16 {
        switch f {
        case .name: return 1
        case .placename: return 2
        case .latitude: return 4
        case .longitude: return 8
        case .details: return 16
        case .categories: return 32
        case .image: return 64
        case .id: return 128
        case .importKey: return 256
        }
    }
    func contains(_ f: PlaceField) -> Bool { bits & FieldSet.bit(f) != 0 }
    mutating func insert(_ f: PlaceField) { bits |= FieldSet.bit(f) }
}
