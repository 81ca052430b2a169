import Dispatch
import PoiModel

/// Streams places out of GeoJSON: a FeatureCollection (feature by feature — the `features` array
/// is never held whole), a single Feature, GeoJSON Text Sequences (RFC 8142, RS-separated) or
/// newline-delimited Features. Memory is one chunk plus the current feature (capped by
/// `ReadLimits.maxFeatureBytes`).
///
/// Framing is found by a small resumable scanner (brackets and strings: `GeoJSONFramer`); each
/// feature's bytes are then parsed by `JSONParser` and mapped by `FeatureMapper`
/// (GeoJSONFeatureMapper.swift) on worker threads. So a malformed feature whose brackets still
/// balance is a reject and reading goes on; broken framing ends the file with a reject saying
/// where, except in RFC 8142 sequences, where reading resumes at the next RS as the RFC asks.
///
/// This file is the state machine between the two: where in the top-level structure reading
/// is, and what each piece of it becomes.
public final class GeoJSONReader {
    public let file: String
    private let options: ReadOptions
    private let framer: GeoJSONFramer
    private var record = 0
    /// Features found so far, handed out or still ahead in batches (see `PlaceReader.recordsScanned`).
    public var recordsScanned: Int { record }
    private var featureIndex = 0
    private var isSequence = false
    private let mapper: FeatureMapper
    private var ready = ReadItemQueue()
    private var spare = ReadItemQueue()
    /// The features in flight: one batch at most.
    private var work = ReadWork()
    private let parallelism = max(1, min(8, ProcessorCores.available))
    static let batchFeatures = 2048
    static let batchBytes = 4 << 20

    private enum Phase { case betweenTexts, inObject(first: Bool), inFeatures(first: Bool), done }
    private var phase = Phase.betweenTexts
    /// Members of the current top-level object that matter when it is itself a Feature.
    private var top = JSONObject()
    private var topError: String?
    private var topStart = 0

    public init(source: ByteSource, options: ReadOptions = ReadOptions()) throws(FormatError) {
        self.options = options
        file = source.name
        mapper = FeatureMapper(options: options)
        framer = GeoJSONFramer(source: source, maxValueBytes: options.limits.maxFeatureBytes)
        // Reads may be short (a pipe): make the BOM and the first non-blank byte available first.
        try framer.ensure(3)
        if framer.buf.count >= 3 && framer.buf[0] == 0xEF && framer.buf[1] == 0xBB && framer.buf[2] == 0xBF { framer.pos = 3 }
        while true {
            try framer.ensure(1)
            guard framer.pos < framer.buf.count else { throw .emptyFile(file: file) }
            guard [0x20, 0x0A, 0x0D, 0x09].contains(framer.buf[framer.pos]) else { break }
            framer.pos += 1
        }
        isSequence = framer.buf[framer.pos] == 0x1E
        if framer.buf[framer.pos] != 0x7B && !isSequence { throw .unknownFormat(file: file) }
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// What the features read so far kept without mapping it (`ReadNote`), each once, in the
    /// order first met.
    public var notes: [ReadNote] { mapper.notes.all.map { var n = $0; n.file = file; return n } }

    /// RS is whitespace between top-level texts only.
    private var isSequenceOrTop: Bool {
        if case .betweenTexts = phase { return true }
        return false
    }

    private func peek() throws(FormatError) -> UInt8? {
        try framer.peek(rsIsSpace: isSequenceOrTop)
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
                if work.finish() { swap(&ready, &spare) }
                launch(batch, tail: tail)
                continue
            }
            // Anything else comes after the features in flight: drain them first.
            if work.finish() { swap(&ready, &spare); continue }
            switch phase {
            case .done:
                return nil
            case .betweenTexts:
                guard let b = try peek() else { phase = .done; return nil }
                guard b == 0x7B else {
                    return broken("expected a GeoJSON object, found '\(Unicode.Scalar(b).escaped(asASCII: true))'")
                }
                topStart = framer.offset
                if options.keepRawRecords { framer.startCapture() }
                framer.pos += 1
                top = JSONObject()
                topError = nil
                phase = .inObject(first: true)
            case .inObject(let first):
                guard let b = try peek() else { return broken("unexpected end of file in the top-level object") }
                if b == 0x7D {
                    framer.pos += 1
                    phase = .betweenTexts
                    if let item = finishTopObject() { return item }
                    continue
                }
                if !first {
                    guard b == 0x2C else { return broken("expected ',' or '}' in the top-level object") }
                    framer.pos += 1
                }
                guard try peek() == 0x22 else { return broken("expected a member name in the top-level object") }
                guard case .value(let kr) = try framer.scanValue(),
                      case .success(.string(let key)) = framer.parse(kr, maxDepth: 1) else {
                    return broken("invalid member name in the top-level object")
                }
                guard try peek() == 0x3A else { return broken("expected ':' after \"\(key.prefix(40))\"") }
                framer.pos += 1
                phase = .inObject(first: false)
                if key == "features", try peek() == 0x5B {
                    framer.pos += 1
                    top.append("features", .array([]))  // marks a streamed collection
                    phase = .inFeatures(first: true)
                    framer.stopCapture()
                    continue
                }
                switch try framer.scanValue() {
                case .value(let r):
                    if key == "crs", case .success(let crs) = framer.parse(r, maxDepth: 4), let name = Self.foreignCRSName(crs) {
                        // Every feature would be rejected as out of range; the file's own word says why.
                        throw .foreignCRS(file: file, name: name)
                    }
                    // Only members a Feature needs are kept: foreign members can't pile up.
                    guard ["type", "id", "geometry", "properties"].contains(key) else { continue }
                    switch framer.parse(r, maxDepth: options.limits.maxDepth) {
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
            if b == 0x5D { framer.pos += 1; phase = .inObject(first: false); break }
            if !first {
                guard b == 0x2C else { tail = broken("expected ',' or ']' between features"); break }
                framer.pos += 1
            }
            phase = .inFeatures(first: false)
            let index = featureIndex
            featureIndex += 1
            record += 1
            let source = PlaceSource(file: file, record: record, position: .feature(index))
            switch try framer.scanValue() {
            case .value(let r):
                batch.add(framer.buf[r], source: source)
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
        // One piece of work, off this thread; the mapper spreads the batch over the cores itself.
        work.start(1, cores: 1) { _ in mapper.convert(batch, into: queue, parallelism: cores) }
    }

    deinit {
        // A conversion still running writes into a queue it keeps alive; wait so no work outlives us.
        work.finish()
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
        let raw = framer.takeCapture().map(RawRecord.feature)
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
        framer.stopCapture()
        record += 1
        let offset = framer.offset
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
            // (Only inside a value: a line that starts wrong is skipped, or it would break again here.)
            if case .inObject = phase, framer.followsLineBreak {
                phase = .betweenTexts
                return .reject(reject, raw: nil)
            }
            phase = framer.skipLine() ? .betweenTexts : .done
        } else if isSequence {
            // RFC 8142 §2.4: skip to the next RS and carry on.
            phase = framer.skipToRecordSeparator() ? .betweenTexts : .done
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
