import Dispatch
import PoiModel
import Synchronization

/// Streams places out of GeoJSON: a FeatureCollection (feature by feature — the `features` array
/// is never held whole), a single Feature, GeoJSON Text Sequences (RFC 8142, RS-separated) or
/// newline-delimited Features. Memory is one chunk plus the current feature (capped by
/// `ReadLimits.maxFeatureBytes`).
///
/// Framing is found by a small resumable scanner (brackets and strings); each feature's bytes are
/// then parsed by `JSONParser`. So a malformed feature whose brackets still balance is a reject
/// and reading goes on; broken framing ends the file with a reject saying where, except in
/// RFC 8142 sequences, where reading resumes at the next RS as the RFC asks.
public final class GeoJSONReader {
    public let file: String
    private let source: ByteSource
    private let options: ReadOptions
    private var buf: [UInt8] = []
    private var pos = 0
    private var eof = false
    /// Bytes dropped from the front of `buf` so far (for byte offsets in messages).
    private var dropped = 0
    private var record = 0
    /// Features found so far, handed out or still ahead in batches (see `PlaceReader.recordsScanned`).
    public var recordsScanned: Int { record }
    private var featureIndex = 0
    private var isSequence = false
    private let mapper: FeatureMapper
    private var ready = ReadItemQueue()
    private var spare = ReadItemQueue()
    private var inflight: DispatchGroup?
    private let parallelism = max(1, min(8, ProcessInfoCores.count))
    static let batchFeatures = 2048
    static let batchBytes = 4 << 20

    private enum Phase { case betweenTexts, inObject(first: Bool), inFeatures(first: Bool), done }
    private var phase = Phase.betweenTexts
    /// Members of the current top-level object that matter when it is itself a Feature.
    private var top = JSONObject()
    private var topError: String?
    private var topStart = 0
    /// With `keepRawRecords`, the bytes of the top-level object being read (a single Feature, or
    /// one of a sequence): `topRaw` holds what compaction has already moved out of `buf`, and
    /// `topRawFrom` is where the rest starts in `buf`. Nil when not capturing: not asked, a
    /// FeatureCollection (its features are framed one by one), or over `maxFeatureBytes`.
    private var topRaw: [UInt8] = []
    private var topRawFrom: Int?

    public init(source: ByteSource, options: ReadOptions = ReadOptions()) throws(FormatError) {
        self.source = source
        self.options = options
        file = source.name
        mapper = FeatureMapper(options: options)
        // Reads may be short (a pipe): make the BOM and the first non-blank byte available first.
        try ensure(3)
        if buf.count >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF { pos = 3 }
        while true {
            try ensure(1)
            guard pos < buf.count else { throw .emptyFile(file: file) }
            guard [0x20, 0x0A, 0x0D, 0x09].contains(buf[pos]) else { break }
            pos += 1
        }
        isSequence = buf[pos] == 0x1E
        if buf[pos] != 0x7B && !isSequence { throw .unknownFormat(file: file) }
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// What the features read so far kept without mapping it (`ReadNote`), each once, in the
    /// order first met.
    public var notes: [ReadNote] { mapper.notes.all.map { var n = $0; n.file = file; return n } }

    // MARK: buffer

    /// Makes at least `n` bytes available after `pos`, unless the file ends first.
    private func ensure(_ n: Int) throws(FormatError) {
        while buf.count - pos < n && !eof {
            if pos > 0 && pos >= buf.count / 2 {
                if let from = topRawFrom {
                    if topRaw.count + (pos - from) > options.limits.maxFeatureBytes {
                        topRawFrom = nil
                        topRaw = []
                    } else {
                        topRaw.append(contentsOf: buf[from..<pos])
                        topRawFrom = 0
                    }
                }
                buf.removeSubrange(0..<pos)
                dropped += pos
                pos = 0
            }
            if try source.read(appendingTo: &buf) == 0 { eof = true }
        }
    }

    private func skipWS() {
        while true {
            while pos < buf.count {
                let b = buf[pos]
                if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 || (b == 0x1E && isSequenceOrTop) { pos += 1 } else { return }
            }
            if eof { return }
            do { try ensure(1) } catch { return }
            if pos >= buf.count { return }
        }
    }

    /// RS is whitespace between top-level texts only.
    private var isSequenceOrTop: Bool {
        if case .betweenTexts = phase { return true }
        return false
    }

    private func skipWSThrowing() throws(FormatError) {
        while true {
            while pos < buf.count {
                let b = buf[pos]
                if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 || (b == 0x1E && isSequenceOrTop) { pos += 1 } else { return }
            }
            if eof { return }
            try ensure(1)
        }
    }

    private func peek() throws(FormatError) -> UInt8? {
        try skipWSThrowing()
        return pos < buf.count ? buf[pos] : nil
    }

    private enum Scanned {
        case value(Range<Int>)
        case tooLarge(Int)
        case broken(String)
    }

    /// Finds the extent of the JSON value starting at `pos` (after whitespace), reading more as
    /// needed. Over the size limit it keeps scanning but discards bytes, so memory stays bounded.
    private func scanValue() throws(FormatError) -> Scanned {
        try skipWSThrowing()
        guard pos < buf.count else { return .broken("unexpected end of file") }
        let limit = options.limits.maxFeatureBytes
        var depth = 0
        var inString = false
        var escape = false
        var skipped = 0
        let first = buf[pos]
        let scalar = first != 0x7B && first != 0x5B && first != 0x22
        var i = pos
        while true {
            var end = -1
            buf.withUnsafeBufferPointer { p in
                while i < p.count {
                    let b = p[i]
                    if inString {
                        if escape { escape = false }
                        else if b == 0x5C { escape = true }
                        else if b == 0x22 {
                            inString = false
                            if depth == 0 { end = i + 1; return }
                        }
                    } else if scalar {
                        if b == 0x2C || b == 0x5D || b == 0x7D || b == 0x20 || b == 0x0A || b == 0x0D
                            || b == 0x09 || b == 0x1E { end = i; return }
                    } else {
                        switch b {
                        case 0x22: inString = true
                        case 0x7B, 0x5B: depth += 1
                        case 0x7D, 0x5D:
                            depth -= 1
                            if depth == 0 { end = i + 1; return }
                            if depth < 0 { end = i; return }
                        default: break
                        }
                    }
                    i += 1
                }
            }
            if end >= 0 {
                if skipped > 0 || end - pos > limit {
                    let total = skipped + (end - pos)
                    pos = end
                    return .tooLarge(total)
                }
                let r = pos..<end
                pos = end
                return .value(r)
            }
            if eof {
                if scalar && i > pos { let r = pos..<i; pos = i; return .value(r) }
                pos = i
                return .broken("unexpected end of file inside a value")
            }
            // Over the limit: drop what was scanned, remember we are skipping.
            if i - pos > limit {
                skipped += i - pos
                pos = i
            }
            let rel = i - pos
            try ensure(rel + 1)
            i = pos + rel
        }
    }

    private func parse(_ r: Range<Int>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        buf.withUnsafeBufferPointer { p in
            do throws(JSONParseError) {
                return .success(try JSONParser.parse(UnsafeBufferPointer(rebasing: p[r]), maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
    }

    // MARK: iteration

    /// The next place or reject; nil at end of input. Throws only on I/O failure.
    ///
    /// Inside a `features` array, batches are double-buffered: this thread frames the next batch
    /// while worker threads parse and map the previous one.
    /// The number of valid features left and each reject in order (see `PlaceReader`).
    public func validateRemaining(valid: inout Int, onReject: (Reject, RawRecord?) -> Void,
                                  onKey: ((UInt64) -> Void)? = nil, placesWithKeys wanted: Set<UInt64>? = nil,
                                  keys fingerprinting: KeyFingerprinting = .exact,
                                  onPlace: (Place) -> Void = { _ in }) throws(FormatError) {
        while let item = try next() {
            switch item {
            case .place(let p, _):
                valid += 1
                guard onKey != nil || wanted != nil else { continue }
                let key = fingerprinting == .exact ? ImportKey.fingerprint(p.importKey) : KeyCandidate.of(p)
                onKey?(key)
                if let wanted, wanted.contains(key) { onPlace(p) }
            case .reject(let r, let raw): onReject(r, raw)
            }
        }
    }

    public func next() throws(FormatError) -> ReadItem? {
        while true {
            if let item = ready.pop() { return item }
            if case .inFeatures = phase {
                let (batch, tail) = try frameBatch()
                if let group = inflight { group.wait(); inflight = nil; swap(&ready, &spare) }
                launch(batch, tail: tail)
                continue
            }
            // Anything else comes after the features in flight: drain them first.
            if let group = inflight { group.wait(); inflight = nil; swap(&ready, &spare); continue }
            switch phase {
            case .done:
                return nil
            case .betweenTexts:
                guard let b = try peek() else { phase = .done; return nil }
                guard b == 0x7B else {
                    return broken("expected a GeoJSON object, found '\(Unicode.Scalar(b).escaped(asASCII: true))'")
                }
                topStart = dropped + pos
                if options.keepRawRecords {
                    topRaw.removeAll(keepingCapacity: true)
                    topRawFrom = pos
                }
                pos += 1
                top = JSONObject()
                topError = nil
                phase = .inObject(first: true)
            case .inObject(let first):
                guard let b = try peek() else { return broken("unexpected end of file in the top-level object") }
                if b == 0x7D {
                    pos += 1
                    phase = .betweenTexts
                    if let item = finishTopObject() { return item }
                    continue
                }
                if !first {
                    guard b == 0x2C else { return broken("expected ',' or '}' in the top-level object") }
                    pos += 1
                }
                guard try peek() == 0x22 else { return broken("expected a member name in the top-level object") }
                guard case .value(let kr) = try scanValue(),
                      case .success(.string(let key)) = parse(kr, maxDepth: 1) else {
                    return broken("invalid member name in the top-level object")
                }
                guard try peek() == 0x3A else { return broken("expected ':' after \"\(key.prefix(40))\"") }
                pos += 1
                phase = .inObject(first: false)
                if key == "features", try peek() == 0x5B {
                    pos += 1
                    top.append("features", .array([]))  // marks a streamed collection
                    phase = .inFeatures(first: true)
                    topRawFrom = nil
                    topRaw = []
                    continue
                }
                switch try scanValue() {
                case .value(let r):
                    if key == "crs", case .success(let crs) = parse(r, maxDepth: 4), let name = Self.foreignCRSName(crs) {
                        // Every feature would be rejected as out of range; the file's own word says why.
                        throw .foreignCRS(file: file, name: name)
                    }
                    // Only members a Feature needs are kept: foreign members can't pile up.
                    guard ["type", "id", "geometry", "properties"].contains(key) else { continue }
                    switch parse(r, maxDepth: options.limits.maxDepth) {
                    case .success(let v):
                        if top.contains(key) { topError = "duplicate key \"\(key)\"" } else { top.append(key, v) }
                    case .failure(let e): topError = topError ?? "\(key): \(e.message)"
                    }
                case .tooLarge(let n):
                    topError = topError ?? "member \"\(key.prefix(40))\" is \(n) bytes, over the limit of \(options.limits.maxFeatureBytes)"
                case .broken(let why):
                    return broken(why)
                }
            case .inFeatures:
                continue  // handled above
            }
        }
    }

    /// Frames the next batch of features (sequential), leaving `phase` where framing stopped.
    private func frameBatch() throws(FormatError) -> (FeatureBatch, ReadItem?) {
        var batch = FeatureBatch()
        var tail: ReadItem?
        collect: while batch.entries.count < GeoJSONReader.batchFeatures && batch.bytes.count < GeoJSONReader.batchBytes {
            guard case .inFeatures(let first) = phase else { break }
            guard let b = try peek() else { tail = broken("unexpected end of file in the features array"); break }
            if b == 0x5D { pos += 1; phase = .inObject(first: false); break }
            if !first {
                guard b == 0x2C else { tail = broken("expected ',' or ']' between features"); break }
                pos += 1
            }
            phase = .inFeatures(first: false)
            let index = featureIndex
            featureIndex += 1
            record += 1
            let source = PlaceSource(file: file, record: record, position: .feature(index))
            switch try scanValue() {
            case .value(let r):
                batch.add(buf[r], source: source)
            case .tooLarge(let n):
                batch.add(.reject(Reject(source: source, field: nil,
                                         reason: "feature is \(n) bytes, over the limit of \(options.limits.maxFeatureBytes)"), raw: nil))
            case .broken(let why):
                // No feature was framed: the reject takes this feature's index and record number.
                featureIndex -= 1
                record -= 1
                tail = broken(why)
                break collect
            }
        }
        return (batch, tail)
    }

    /// Parses and maps `batch` into `spare` on worker threads; the framing reject (if any) last.
    private func launch(_ batch: FeatureBatch, tail: ReadItem?) {
        let n = batch.entries.count
        if n == 0 && tail == nil { return }
        spare.reset(count: n + (tail == nil ? 0 : 1))
        if let tail { spare.set(n, tail) }
        let mapper = self.mapper, queue = spare, cores = parallelism
        let group = DispatchGroup()
        // A private (overcommit) queue, as CSVPlaceReader.inBackground explains.
        DispatchQueue(label: "poi.read.convert").async(group: group) {
            mapper.convert(batch, into: queue, parallelism: cores)
        }
        inflight = group
    }

    deinit {
        // A conversion still running writes into a queue it keeps alive; wait so no work outlives us.
        inflight?.wait()
    }

    /// The name a 2008-GeoJSON `crs` member gives (`{"type":"name","properties":{"name":…}}`) when
    /// it is not WGS 84 longitude/latitude (CRS84, EPSG:4326 in any of its spellings); nil for those,
    /// and for a member that names nothing.
    static func foreignCRSName(_ crs: JSONValue) -> String? {
        guard case .object(let o) = crs, case .object(let props)? = o["properties"] else { return nil }
        // A linked CRS (GeoJSON 2008 `"type": "link"`) says nothing this reader can check: no
        // more WGS 84 than a named one, so it is named too.
        if o["type"] == .string("link"), case .string(let href)? = props["href"] {
            return "the linked CRS " + String(href.prefix(80))
        }
        guard case .string(let name)? = props["name"] else { return nil }
        let n = name.uppercased()
        let wgs84 = n.hasSuffix("CRS84") || n.hasSuffix(":4326") || n.hasSuffix("::4326") || n == "EPSG:4326"
            || n.hasSuffix("/4326")
        return wgs84 ? nil : String(name.prefix(80))
    }

    /// A top-level object ended: a Feature (single or in a sequence) yields a place or reject;
    /// a FeatureCollection has already streamed its features.
    private func finishTopObject() -> ReadItem? {
        var raw: RawRecord?
        if let from = topRawFrom {
            if topRaw.count + (pos - from) <= options.limits.maxFeatureBytes {
                raw = .feature(topRaw + buf[from..<pos])
            }
            topRawFrom = nil
            topRaw.removeAll(keepingCapacity: true)
        }
        if top.contains("features") && top["type"] != .string("Feature") {
            if let e = topError {
                record += 1
                return .reject(Reject(source: PlaceSource(file: file, record: record, position: .feature(featureIndex)),
                                      field: nil, reason: "invalid FeatureCollection: \(e)"), raw: nil)
            }
            return nil
        }
        let index = featureIndex
        featureIndex += 1
        record += 1
        let source = PlaceSource(file: file, record: record, position: .feature(index))
        if let e = topError {
            return .reject(Reject(source: source, field: nil, reason: "invalid JSON: \(e)"), raw: raw)
        }
        if case .string(let t)? = top["type"], t != "Feature" {
            return .reject(Reject(source: source, field: "type",
                                  reason: "top-level type \(t) not supported; FeatureCollection, Feature or a sequence of Features required"), raw: raw)
        }
        return mapper.map(.object(top), source: source, cache: &fieldCache, raw: raw)
    }

    /// Framing is broken: report once, then stop — or, in an RFC 8142 sequence, resume at the next RS.
    private func broken(_ why: String) -> ReadItem {
        topRawFrom = nil
        topRaw = []
        record += 1
        let offset = dropped + pos
        let reject = Reject(source: PlaceSource(file: file, record: record, position: .feature(featureIndex)),
                            field: nil,
                            reason: isSequence ? "malformed JSON text at byte \(offset): \(why); skipped to the next record separator"
                                : lineDelimited ? "malformed JSON at byte \(offset): \(why); skipped to the next line"
                                : "malformed JSON at byte \(offset): \(why); the rest of the file is not read")
        featureIndex += 1
        if lineDelimited && !isSequence {
            // One Feature per line (newline-delimited GeoJSON): a damaged line is one reject,
            // and reading resumes at the next line, as RFC 8142 files resume at the next RS. A
            // value cut short (a missing `}`) breaks at the next line's start: resume right there.
            var back = pos - 1
            while back >= 0, buf[back] == 0x20 || buf[back] == 0x09 || buf[back] == 0x0D { back -= 1 }
            // (Only inside a value: a line that starts wrong is skipped, or it would break again here.)
            if case .inObject = phase, back >= 0, buf[back] == 0x0A {
                phase = .betweenTexts
                return .reject(reject, raw: nil)
            }
            while true {
                if pos >= buf.count {
                    if eof { phase = .done; break }
                    do { try ensure(1) } catch { phase = .done; break }
                    continue
                }
                let b = buf[pos]
                pos += 1
                if b == 0x0A { phase = .betweenTexts; break }
                if pos > 1 << 16 { buf.removeSubrange(0..<pos); dropped += pos; pos = 0 }
            }
        } else if isSequence {
            // RFC 8142 §2.4: skip to the next RS and carry on.
            while true {
                if pos >= buf.count {
                    if eof { phase = .done; break }
                    do { try ensure(1) } catch { phase = .done; break }
                    continue
                }
                if buf[pos] == 0x1E { phase = .betweenTexts; break }
                pos += 1
                if pos > 1 << 16 { buf.removeSubrange(0..<pos); dropped += pos; pos = 0 }
            }
        } else {
            phase = .done
        }
        return .reject(reject, raw: nil)
    }

    /// The file is newline-delimited GeoJSON by its name (`.ndjson`, `.geojsonl`, `.jsonl`,
    /// `.geojsonseq`, gzip'd or not): one Feature per line, so a damaged line can be skipped. A
    /// damaged FeatureCollection is never read past (its framing is gone).
    private var lineDelimited: Bool {
        guard case .inFeatures = phase else {
            var name = file.lowercased()
            if name.hasSuffix(".gz") { name.removeLast(3) }
            return [".ndjson", ".geojsonl", ".jsonl", ".geojsonseq", ".ldjson"].contains { name.hasSuffix($0) } && !top.contains("features")
        }
        return false
    }

    /// Property-name memo for features mapped on this thread (single Features, sequences).
    private var fieldCache: [String: PlaceField?] = [:]
}

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

/// Feature JSON → `ReadItem`: GeoJSON rules, field mapping and validation. Pure, so batches are
/// converted in parallel.
/// Notes found by the mapper's workers, each kept once.
final class NoteCollector: Sendable {
    private let state = Mutex<(seen: Set<ReadNote>, list: [ReadNote])>(([], []))
    func add(_ note: ReadNote) {
        state.withLock { s in if s.seen.insert(note).inserted { s.list.append(note) } }
    }
    var all: [ReadNote] { state.withLock { $0.list } }
}

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
