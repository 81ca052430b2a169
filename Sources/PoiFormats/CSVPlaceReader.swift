import Dispatch
import PoiModel

/// Reads places from CSV: header → column plan → per record mapping and validation.
///
/// Tokenizing is sequential (it must find record boundaries), but turning a record into a
/// validated `Place` is independent per record and is most of the cost (UTF-8 checks, strings,
/// number parsing, SHA-256 keys). So records are tokenized into small batches, and the batches are
/// converted in parallel on all cores; items are still returned in input order. Batches are capped
/// in records and bytes, so memory stays flat.
public final class CSVPlaceReader {
    public let file: String
    public let header: [String]
    public let roles: [ColumnRole]
    /// What the header kept without mapping it (`ReadNote`), once per file, and, once read, how
    /// many records quotes joined across lines (`JoinedLines`): the count a summary shows.
    public var notes: [ReadNote] {
        guard joined.records > 0 else { return headerNotes }
        return headerNotes + [ReadNote(file: file, kind: .quotedLines(records: joined.records, lines: joined.lines,
                                                                     wholeRecordLines: joined.wholeRecordLines),
                                       name: "", key: "")]
    }
    private let headerNotes: [ReadNote]
    /// Records rejected as `JoinedLines` so far, and the physical lines they took.
    private var joined = (records: 0, lines: 0, wholeRecordLines: 0)
    public var delimiter: UInt8 { tokenizer.delimiter }
    public var quoting: CSVQuoting { tokenizer.quoting }
    /// The header line as in the input: a leading BOM, the names as quoted there, its line end.
    /// Without a header line (`ReadOptions.columns`): only the BOM, if any, and no line end.
    public let rawHeader: RawCSVRecord
    /// False when `ReadOptions.columns` named the columns: the first line was a record.
    public let hasHeaderLine: Bool
    /// The input starts with a UTF-8 BOM (after any decoding).
    public var hasBOM: Bool { tokenizer.hasBOM }
    private let tokenizer: CSVTokenizer
    /// Items carry their records' raw bytes (`ReadOptions.keepRawRecords`).
    private let keepRaw: Bool
    private let converter: CSVRecordConverter
    private var record = 0
    /// Records found so far, handed out or still ahead in batches (see `PlaceReader.recordsScanned`).
    public var recordsScanned: Int { record }
    /// Items handed out by `next()`.
    private var ready = ReadItemQueue()
    /// Filled by the batch conversion in flight.
    private var spare = ReadItemQueue()
    private var inflight: DispatchGroup?
    /// `nextBatch(preparedBy:)`'s batches, handed out in order, and those in preparation.
    private var readyPrepared = SlotQueue<AnyObject>()
    private var sparePrepared = SlotQueue<AnyObject>()
    /// The conversion in flight is `nextBatch(preparedBy:)`'s.
    private var inflightPrepares = false
    /// The read error that ended the input, thrown after the records read before it.
    private var readError: FormatError?
    /// The batches of the conversion in flight, and emptied ones to fill again: reusing their
    /// storage saves faulting in fresh pages for every batch (a tenth of `poi check`'s time).
    private var inflightBatches: [RawCSVBatchBox] = []
    private var spareBatches: [RawCSVBatchBox] = []
    private var exhausted = false
    /// Batches converted together (one per core).
    private let parallelism: Int
    /// The columns a rejects file adds after a CSV row's own (PoiJobs' `RejectsWriter`).
    public static let rejectsReasonColumns = ["_line", "_field", "_reason"]
    static let batchRecords = 2048
    static let batchBytes = 2 << 20
    /// Record bytes of a set of batches read for `nextBatch(preparedBy:)`, whatever the cores.
    /// A prepared batch holds more than its records (a GeoJSON feature is up to 6 times its CSV
    /// text, `\u00XX` for every control character), and two sets are held at once: without this
    /// cap, such a file took 130–150 MB on 2 cores (85–93 MB before preparing moved here; new-user
    /// trial) and would take several hundred on 16. Typical records fill a set by count first.
    static let preparedSetBytes = 4 << 20
    /// What each field adds to a prepared batch beyond its text: a GeoJSON property repeats the
    /// column's name, quoted, with a colon, a comma and the value's quotes. Counted against
    /// `preparedSetBytes`, or a wide file's sets hold ten times their record bytes: 600 one-letter
    /// columns, 1.2 KB a row, encode to 7 KB, and such a file peaked at 182 MB (new-user trial).
    private let preparedFieldBytes: Int

    public init(source: ByteSource, options: ReadOptions = ReadOptions(), parallelism: Int? = nil) throws(FormatError) {
        file = source.name
        tokenizer = try CSVTokenizer(source: source, delimiter: options.delimiter, quoting: options.quoting ?? .doubleQuote,
                                     limits: options.limits)
        keepRaw = options.keepRawRecords
        var names: [String] = []
        if let columns = options.columns {
            // No header line: the first line is a record, the names are the ones given.
            hasHeaderLine = false
            names = columns
            rawHeader = RawCSVRecord(bytes: tokenizer.hasBOM ? [0xEF, 0xBB, 0xBF] : [], lineEndLength: 0,
                                     fieldCount: columns.count, unterminatedQuote: false)
        } else {
            hasHeaderLine = true
            guard try tokenizer.nextHeader() else { throw .emptyFile(file: file) }
            if tokenizer.overflowed {
                let limits = options.limits
                let blank = tokenizer.fieldCount == 0 || (tokenizer.fieldCount == 1 && tokenizer.field(0).isEmpty)
                throw .invalidHeader(file: file, reason: tokenizer.firstLimitCrossed == .fields
                    ? "the header has more than \(limits.maxFields) columns"
                    : blank ? "more than \(CSVTokenizer.maxBlankLinesBeforeHeader) blank lines and no header line; reading stopped there"
                    : "no header line within the first \(limits.maxRecordBytes) bytes (a header ends with a line break "
                        + "within the record size limit); reading stopped there")
            }
            rawHeader = RawCSVRecord(bytes: (tokenizer.hasBOM ? [0xEF, 0xBB, 0xBF] : []) + tokenizer.raw,
                                     lineEndLength: tokenizer.lineEndLength, fieldCount: tokenizer.fieldCount,
                                     unterminatedQuote: tokenizer.unterminatedQuote)
            for i in 0..<tokenizer.fieldCount {
                if tokenizer.field(i).contains(0) {
                    throw .invalidHeader(file: file, reason: "column \(i + 1) contains a NUL byte")
                }
                guard let s = String(validating: tokenizer.field(i), as: UTF8.self) else {
                    throw .invalidHeader(file: file, reason: "column \(i + 1) is not valid UTF-8")
                }
                names.append(s)
            }
        }
        header = names
        tokenizer.recordWidth = names.count
        preparedFieldBytes = names.isEmpty ? 0 : names.reduce(0) { $0 + $1.utf8.count } / names.count + 6
        var roles = options.mapping.plan(header: names)
        if options.isRejectsFile && names.suffix(3).map(trimWhitespace) == CSVPlaceReader.rejectsReasonColumns {
            roles.replaceSubrange((roles.count - 3)..., with: repeatElement(.ignored, count: 3))
        }
        // No latitude and longitude column: a WKT point column gives both (ogr2ogr's
        // GEOMETRY=AS_WKT, GeoPandas' `geometry`), unless a mapping names one of them.
        if !roles.contains(.field(.latitude)) && !roles.contains(.field(.longitude))
            && options.mapping.overrides[.latitude] == nil && options.mapping.overrides[.longitude] == nil,
           let k = names.indices.first(where: { i in
               guard case .extra = roles[i] else { return false }
               return WKTPoint.columnNames.contains(PlaceField.normalizeColumnName(trimWhitespace(names[i])))
           }) {
            roles[k] = .pointWKT
        }
        let isExport = Self.isPoiKitExport(header: names)
        if isExport {
            // By the header's own name: an extra the export wrote as "imageSource (extra)" is the
            // user's, even when no own imageSource column is there.
            for i in roles.indices {
                guard case .extra(let key) = roles[i], key == trimWhitespace(names[i]),
                      PoiKitProperties.exportColumns.contains(key) else { continue }
                roles[i] = .own(key)
            }
            // The altitude: its own column, named as the export names it.
            if let i = roles.indices.first(where: { roles[$0] == .extra(PoiKitProperties.altitudeColumn)
                                                    && trimWhitespace(names[$0]) == PoiKitProperties.altitudeColumn }) {
                roles[i] = .altitude
            }
            // With the own column holding NAME, `plan` kept "NAME (extra)" whole: it is extra NAME.
            for i in roles.indices {
                guard case .extra(let key) = roles[i], let base = FieldMapping.extraName(key),
                      PoiKitProperties.exportColumns.contains(base) || base == PoiKitProperties.altitudeColumn,
                      !roles.contains(.extra(base)) else { continue }
                roles[i] = .extra(base)
            }
        }
        self.roles = roles
        var headerNotes = options.mapping.notes(header: names, roles: roles, file: file)
        let coordinatesFromWKT = roles.contains(.pointWKT)
        for f in [PlaceField.name, .latitude, .longitude] where !roles.contains(.field(f)) {
            if coordinatesFromWKT && f != .name { continue }
            let looked = options.mapping.overrides[f].map { [$0] } ?? f.aliases
            // A column that would have been this field's, claimed by another field's mapping
            // (`name=lat`): say so, rather than claim there is no such column.
            for (i, column) in names.enumerated() {
                guard case .field(let other) = roles[i], other != f,
                      looked.contains(where: { PlaceField.normalizeColumnName($0) == PlaceField.normalizeColumnName(column) })
                else { continue }
                throw .columnTaken(file: file, field: f, column: column, by: other)
            }
            throw .missingColumn(file: file, field: f, looked: looked, header: names.map(trimWhitespace))
        }
        var converter = CSVRecordConverter(file: file, header: names, roles: roles, limits: options.limits,
                                           categorySeparators: options.categorySeparators)
        converter.columnsGiven = !hasHeaderLine
        converter.ignoreBlanks = options.ignoreBlanks
        converter.isPoiKitExport = isExport
        converter.delimiter = tokenizer.delimiter
        converter.types = try Self.columnTypes(options.columnTypes, header: names, roles: roles, file: file)
        // A `.csvt` that lists another number of columns describes another file (GDAL ignores
        // it too).
        // Said, never silent: a `.csvt` that does not fit, or names types nobody defines.
        if let sidecar = options.sidecarTypes, let sidecarName = options.sidecarName {
            if sidecar.count != names.count {
                headerNotes.append(ReadNote(file: file, kind: .sidecarIgnored(reason: "lists \(sidecar.count) column type\(sidecar.count == 1 ? "" : "s") "
                    + "for \(names.count) columns; not used, every column is read as text"), name: sidecarName, key: ""))
            } else if !options.sidecarUnknownNames.isEmpty {
                headerNotes.append(ReadNote(file: file, kind: .sidecarIgnored(reason: "unknown type "
                    + options.sidecarUnknownNames.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
                    + "; those columns are read as text (GDAL's types: String, Integer, Integer64, Real, Date, DateTime, "
                    + "Integer(Boolean), String(JSON)…)"), name: sidecarName, key: ""))
            }
        }
        if let sidecar = options.sidecarTypes, sidecar.count == names.count, sidecar.contains(where: { $0 != nil }) {
            if converter.types.isEmpty { converter.types = Array(repeating: nil, count: roles.count) }
            converter.blankIsAbsent = Array(repeating: false, count: roles.count)
            for i in roles.indices {
                guard case .extra = roles[i], converter.types[i] == nil, let type = sidecar[i] else { continue }
                converter.types[i] = type
                converter.blankIsAbsent[i] = true
            }
            converter.sidecarName = options.sidecarName.map { name in String(name.split(separator: "/").last ?? Substring(name)) }
        }
        self.headerNotes = headerNotes
        self.converter = converter
        self.parallelism = max(1, min(8, parallelism ?? ProcessInfoCores.count))
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// Whether a header is one `poi export --format csv` wrote: it names `importKey`,
    /// `created_at` and `updated_at` as they are. Its `imageId`, `created_at`, `_source`…
    /// columns are then PoiKit's own (`ColumnRole.own`), as in a GeoJSON export, so the export
    /// imports back unchanged; in any other file such a column is the user's, kept under extra.
    static func isPoiKitExport(header: [String]) -> Bool {
        var seen = 0
        for name in header {
            switch trimWhitespace(name) {
            case "importKey": seen |= 1
            case "created_at": seen |= 2
            case "updated_at": seen |= 4
            default: break
            }
        }
        return seen == 7
    }

    /// Each column's `--types` type (empty when none is given). A name must be a column this
    /// file keeps under `extra`: a typo, or a column PoiKit reads as a field, stops the file
    /// before any record is read, as mongoimport stops on a bad `--columnsHaveTypes` header.
    static func columnTypes(_ given: ColumnTypes, header: [String], roles: [ColumnRole], file: String) throws(FormatError) -> [ColumnType?] {
        guard !given.isEmpty else { return [] }
        var types = [ColumnType?](repeating: nil, count: roles.count)
        for name in given.names {
            if let i = roles.firstIndex(of: .extra(name)) {
                types[i] = given[name]
                continue
            }
            if let i = header.firstIndex(where: { trimWhitespace($0) == name }) {
                let what: String
                switch roles[i] {
                case .field(let f): what = "is read as the place's \(f.rawValue), which has its own type"
                case .pointWKT: what = "holds the place's coordinates (WKT)"
                default: what = "is not kept under extra"
                }
                throw .typedColumn(file: file, name: name, reason: "column \(name) \(what); --types applies to columns kept under extra")
            }
            let extras = roles.compactMap { if case .extra(let k) = $0 { return k } else { return nil } }
            throw .typedColumn(file: file, name: name, reason: "no column \(name) in this file"
                + (extras.isEmpty ? "" : " (its extra columns: " + extras.prefix(12).joined(separator: ", ") + (extras.count > 12 ? ", …" : "") + ")"))
        }
        return types
    }

    /// The next place or reject; nil at end of file. Throws only on I/O failure.
    ///
    /// Double-buffered: while one set of batches is converted on worker threads, this thread
    /// tokenizes the next set, so tokenizing and converting overlap.
    public func next() throws(FormatError) -> ReadItem? {
        while true {
            if let item = ready.pop() { return item }
            if inflight == nil && exhausted {
                // A read error ends the file only after every record read before it came out.
                if let e = readError { readError = nil; throw e }
                return nil
            }
            var upcoming: [RawCSVBatchBox] = []
            if !exhausted { readError = readBatches(into: &upcoming) }
            if let group = inflight {
                group.wait()
                inflight = nil
                swap(&ready, &spare)
                recycle(&inflightBatches)
            }
            if !upcoming.isEmpty { launch(upcoming); inflightBatches = upcoming }
        }
    }

    /// The rest of the input as batches of `preparer`'s making, in input order; nil at the end.
    /// Each batch holds the items of one tokenized batch, added on the worker that converted
    /// them (`ReadItemPreparer`), so no item crosses a thread. Throws as `next()` does, after the
    /// batches read before the failure. Not to be mixed with `next()` on one reader.
    public func nextBatch<P: ReadItemPreparer>(preparedBy preparer: P) throws(FormatError) -> P.Batch? {
        precondition(ready.isEmpty && (inflight == nil || inflightPrepares), "nextBatch(preparedBy:) after next()")
        while true {
            if let batch = readyPrepared.pop() { return unsafeDowncast(batch, to: P.Batch.self) }
            if inflight == nil && exhausted {
                if let e = readError { readError = nil; throw e }
                return nil
            }
            var upcoming: [RawCSVBatchBox] = []
            if !exhausted { readError = readBatches(into: &upcoming, setBytes: Self.preparedSetBytes, fieldBytes: preparedFieldBytes) }
            if let group = inflight {
                group.wait()
                inflight = nil
                swap(&readyPrepared, &sparePrepared)
                recycle(&inflightBatches)
            }
            if !upcoming.isEmpty {
                sparePrepared.reset(count: upcoming.count)
                let conv = converter, batches = upcoming, slots = sparePrepared
                inflight = Self.inBackground(batches.count, cores: parallelism) { i in
                    let prepared = preparer.makeBatch()
                    conv.convert(batches[i].batch) { item in preparer.add(item, to: prepared) }
                    slots.set(i, prepared)
                }
                inflightPrepares = true
                inflightBatches = upcoming
            }
        }
    }

    /// Validates the rest of the input without building places (what `poi check` needs): adds
    /// the valid records to `valid` and passes each reject, in input order, to `onReject`. Accepts
    /// and rejects exactly what `next()` would, several times faster: see
    /// `CSVRecordConverter.certainlyValid`.
    /// `placesWithKeys`/`onPlace`: see `PlaceReader.validateRemaining`.
    public func validateRemaining(valid: inout Int, onReject: (Reject, RawRecord?) -> Void,
                                  onKey: ((UInt64) -> Void)? = nil, placesWithKeys wanted: Set<UInt64>? = nil,
                                  keys fingerprinting: KeyFingerprinting = .exact,
                                  onPlace: (Place) -> Void = { _ in }) throws(FormatError) {
        // Whatever `next()` already converted comes first.
        while true {
            while let item = ready.pop() {
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
            guard let group = inflight else { break }
            group.wait()
            inflight = nil
            swap(&ready, &spare)
            recycle(&inflightBatches)
        }
        // Same double buffering as `next()`: tokenize the next batches while workers validate.
        let verdicts = SlotQueue<CSVBatchVerdict>()
        var running: DispatchGroup?
        var runningBatches: [RawCSVBatchBox] = []
        func collect() {
            guard let group = running else { return }
            group.wait()
            recycle(&runningBatches)
            while let v = verdicts.pop() {
                valid += v.valid
                for (r, raw) in v.rejects { onReject(r, raw) }
                if let onKey { for key in v.keys { onKey(key) } }
                for place in v.places { onPlace(place) }
            }
            running = nil
        }
        while true {
            var upcoming: [RawCSVBatchBox] = []
            if !exhausted { readError = readBatches(into: &upcoming) }
            collect()
            if upcoming.isEmpty {
                // What was read before a read error still counts; then the error ends the file.
                if let e = readError { readError = nil; throw e }
                return
            }
            verdicts.reset(count: upcoming.count)
            let conv = converter, batches = upcoming, wantsKeys = onKey != nil
            running = Self.inBackground(batches.count, cores: parallelism) { i in
                verdicts.set(i, conv.verdict(batches[i].batch, keys: wantsKeys, placesWithKeys: wanted, fingerprinting: fingerprinting))
            }
            runningBatches = upcoming
        }
    }

    /// Converts `batches` into `spare` on worker threads (in order, one slot per record).
    private func launch(_ batches: [RawCSVBatchBox]) {
        var starts: [Int] = []
        var total = 0
        for b in batches { starts.append(total); total += b.batch.records.count }
        spare.reset(count: total)
        let conv = converter, queue = spare, offsets = starts
        inflight = Self.inBackground(batches.count, cores: parallelism) { i in
            conv.convert(batches[i].batch, into: queue, at: offsets[i])
        }
    }

    /// Runs `body(0..<n)` off this thread — on all cores unless `cores` is 1 — and returns the
    /// group to wait on. The double buffering of `next()` and `validateRemaining` both use it.
    private static func inBackground(_ n: Int, cores: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        // A private queue, not the global one: it targets libdispatch's overcommit pool, which
        // starts a thread even when every global worker is busy or blocked by someone else's
        // code (a server's handlers, a test runner's parallel tests). On the global queue, whose
        // pool is one thread per core on Linux, this reader could wait for a free thread while
        // its caller, itself perhaps on that pool, waits for it.
        // concurrentPerform below still spreads the batches over the global workers, and runs
        // them on this thread alone when none is free.
        DispatchQueue(label: "poi.read.convert").async(group: group) {
            if cores == 1 || n == 1 {
                for i in 0..<n { body(i) }
            } else {
                DispatchQueue.concurrentPerform(iterations: n, execute: body)
            }
        }
        return group
    }

    deinit {
        // A conversion still running writes into a queue it keeps alive; wait so no work outlives us.
        inflight?.wait()
    }

    /// Empties finished batches into `spareBatches`, keeping their storage. Called once the
    /// workers are done with them (after `wait()`), so this thread owns them again.
    private func recycle(_ boxes: inout [RawCSVBatchBox]) {
        for box in boxes {
            box.batch.bytes.removeAll(keepingCapacity: true)
            box.batch.ends.removeAll(keepingCapacity: true)
            box.batch.records.removeAll(keepingCapacity: true)
            box.batch.raw.removeAll(keepingCapacity: true)
            box.batch.rawEnds.removeAll(keepingCapacity: true)
            box.batch.quotedEmpty.removeAll(keepingCapacity: true)
        }
        spareBatches += boxes
        boxes = []
    }

    /// Tokenizes up to one set of batches (two per core) into `upcoming`. A read error ends the
    /// input: the records before it, down to the last whole one, are kept, and the error is
    /// returned to be thrown once they have come out.
    /// `setBytes`: the set's record bytes at most, split evenly between its batches (a record
    /// may end past its batch's share).
    /// `fieldBytes`: what each field weighs beyond its bytes towards `setBytes` and the batch size.
    private func readBatches(into upcoming: inout [RawCSVBatchBox], setBytes: Int = .max, fieldBytes: Int = 0) -> FormatError? {
        let count = parallelism * 2
        let batchBytes = min(Self.batchBytes, setBytes / count)
        for _ in 0..<count {
            let box = spareBatches.popLast() ?? RawCSVBatchBox()
            var failure: FormatError?
            do { try fill(&box.batch, maxBytes: batchBytes, fieldBytes: fieldBytes) } catch { failure = error; exhausted = true }
            if box.batch.records.isEmpty { spareBatches.append(box) } else { upcoming.append(box) }
            if let failure { return failure }
            if exhausted { break }
        }
        return nil
    }

    private func fill(_ batch: inout RawCSVBatch, maxBytes: Int, fieldBytes: Int = 0) throws(FormatError) {
        // Raw bytes count towards the batch's size, so keeping them does not grow memory.
        while batch.records.count < Self.batchRecords
                && batch.bytes.count + batch.raw.count + batch.ends.count * fieldBytes < maxBytes {
            let first = batch.ends.count
            let rawStart = batch.raw.count, bytesStart = batch.bytes.count
            guard let info = try tokenizer.appendRecord(bytes: &batch.bytes, ends: &batch.ends, raw: &batch.raw,
                                                        quotedEmpty: &batch.quotedEmpty, keepRaw: keepRaw)
            else { exhausted = true; break }
            // A row of nothing but delimiters (`,,,`, `"",,`) is skipped like a blank line: it is
            // no record, and spreadsheets write such rows below the data.
            if !info.overflowed && !info.unterminatedQuote && batch.bytes.count == bytesStart {
                batch.ends.removeSubrange(first...)
                while let last = batch.quotedEmpty.last, last >= first { batch.quotedEmpty.removeLast() }
                if keepRaw { batch.raw.removeSubrange(rawStart...) }
                continue
            }
            if record == 0 && !hasHeaderLine && !info.overflowed && !info.unterminatedQuote {
                // Names given for a file without a header line that has more fields than names:
                // every record would be a reject saying so (12 million of them for GeoNames).
                // The first record decides, before anything is read.
                var count = batch.ends.count - first
                func isEmpty(_ k: Int) -> Bool { batch.ends[k] == (k == 0 ? 0 : batch.ends[k - 1]) }
                while count > roles.count && isEmpty(first + count - 1) { count -= 1 }
                if count > roles.count {
                    let found = batch.ends.count - first
                    batch.ends.removeSubrange(first...)
                    while let last = batch.quotedEmpty.last, last >= first { batch.quotedEmpty.removeLast() }
                    batch.bytes.removeSubrange(bytesStart...)
                    if keepRaw { batch.raw.removeSubrange(rawStart...) }
                    throw .columnCountMismatch(file: file, line: info.line, fields: found, names: roles.count)
                }
            }
            record += 1
            if let j = info.joinedLines {
                joined.records += 1
                joined.lines += j.lines
                joined.wholeRecordLines += j.wholeRecordLines
            }
            batch.records.append(RawCSVBatch.Record(record: record, line: info.line, firstField: first,
                                                    fieldCount: batch.ends.count - first, overflowed: info.overflowed,
                                                    unterminatedQuote: info.unterminatedQuote, joinedLines: info.joinedLines,
                                                    textAfterQuote: info.textAfterQuote,
                                                    rawKept: info.rawKept,
                                                    lineEndLength: UInt8(info.lineEndLength)))
            if keepRaw { batch.rawEnds.append(batch.raw.count) }
        }
    }
}

/// A batch workers read while the reading thread waits; the reader reuses its storage after.
/// Unchecked: only the reading thread mutates it, and only when no worker holds it.
final class RawCSVBatchBox: @unchecked Sendable {
    var batch = RawCSVBatch()
}

/// Tokenized records, detached from the tokenizer so they can be converted on another thread.
struct RawCSVBatch: Sendable {
    struct Record: Sendable {
        var record: Int
        var line: Int
        var firstField: Int
        var fieldCount: Int
        var overflowed: Bool
        var unterminatedQuote: Bool
        var joinedLines: JoinedLines?
        var textAfterQuote: Int?
        /// The record's raw bytes are in `raw` (they end at `rawEnds[k]`).
        var rawKept: Bool
        var lineEndLength: UInt8
    }
    var bytes: [UInt8] = []
    /// Absolute end offset in `bytes` of every field of every record.
    var ends: [Int] = []
    var records: [Record] = []
    /// With `keepRawRecords`, the records' raw bytes back to back, and where each record's end
    /// (one entry per record). Kept out of `Record`, so reading without them moves no more bytes.
    var raw: [UInt8] = []
    var rawEnds: [Int] = []
    /// Indexes (in `ends`) of the fields written `""`, ascending (`CSVTokenizer.appendRecord`).
    var quotedEmpty: [Int] = []

    /// Whether field `k` (an index in `ends`) was written `""`.
    func isQuotedEmpty(_ k: Int) -> Bool {
        var lo = 0, hi = quotedEmpty.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if quotedEmpty[mid] < k { lo = mid + 1 } else { hi = mid }
        }
        return lo < quotedEmpty.count && quotedEmpty[lo] == k
    }

}

/// Record → `ReadItem`: mapping and validation. Pure, so batches convert in parallel.
struct CSVRecordConverter: Sendable {
    let file: String
    let header: [String]
    let roles: [ColumnRole]
    let limits: ReadLimits
    let categorySeparators: [UInt8]
    /// The names came from `ReadOptions.columns`, not a header line (what a count mismatch says).
    var columnsGiven = false
    /// Each column's `--types` type; empty when none is given.
    var types: [ColumnType?] = []
    /// The file is a PoiKit CSV export (`CSVPlaceReader.isPoiKitExport`): its `id` is the
    /// exporting database's `_id`, dropped beside an importKey, as a GeoJSON export's Feature id is.
    var isPoiKitExport = false
    /// Columns whose blank cell is no value (the key left out): those a `.csvt` typed.
    var blankIsAbsent: [Bool] = []
    /// The `.csvt` file the types came from, for rejects.
    var sidecarName: String?
    /// `ReadOptions.ignoreBlanks`.
    var ignoreBlanks = false
    /// The file's delimiter (how a rejected record's raw line splits unquoted).
    var delimiter: UInt8 = 0x2C
    /// Columns of the fields the validate-only fast path looks at (-1: none).
    private let nameColumn: Int, longitudeColumn: Int, latitudeColumn: Int, importKeyColumn: Int, idColumn: Int
    private let hasAltitudeColumn: Bool

    init(file: String, header: [String], roles: [ColumnRole], limits: ReadLimits,
         categorySeparators: [UInt8] = Categories.defaultSeparators) {
        self.categorySeparators = categorySeparators
        self.file = file
        self.header = header
        self.roles = roles
        self.limits = limits
        // The reader refuses a header without these three, so every index exists.
        nameColumn = roles.firstIndex(of: .field(.name)) ?? -1
        longitudeColumn = roles.firstIndex(of: .field(.longitude)) ?? -1
        hasAltitudeColumn = roles.contains(.altitude)
        latitudeColumn = roles.firstIndex(of: .field(.latitude)) ?? -1
        importKeyColumn = roles.firstIndex(of: .field(.importKey)) ?? -1
        idColumn = roles.firstIndex(of: .field(.id)) ?? -1
    }

    /// Validates every record of `batch` without building places: the count `convert` would
    /// turn into places, and its rejects in order; with `keys`, each valid record's import key.
    /// `placesWithKeys`: the places of the valid records whose key fingerprint is in it are
    /// built (the others are only validated) and returned in order in `places`.
    func verdict(_ batch: RawCSVBatch, keys: Bool = false, placesWithKeys wanted: Set<UInt64>? = nil,
                 fingerprinting: KeyFingerprinting = .exact) -> CSVBatchVerdict {
        var result = CSVBatchVerdict()
        let raw = (batch.raw, batch.rawEnds)
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.ends.withUnsafeBufferPointer { ends in
                for (k, r) in batch.records.enumerated() {
                    if certainlyValid(r, bytes: bytes, ends: ends) {
                        result.valid += 1
                        guard keys || wanted != nil else { continue }
                        let key = keyFingerprint(ofValid: r, bytes: bytes, ends: ends, fingerprinting)
                        if keys { result.keys.append(key) }
                        if let wanted, wanted.contains(key),
                           case .place(let p, _) = convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty) {
                            result.places.append(p)
                        }
                        continue
                    }
                    switch convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty) {
                    case .place(let p, _):
                        result.valid += 1
                        guard keys || wanted != nil else { continue }
                        let key = fingerprinting == .exact ? ImportKey.fingerprint(p.importKey) : KeyCandidate.of(p)
                        if keys { result.keys.append(key) }
                        if let wanted, wanted.contains(key) { result.places.append(p) }
                    case .reject(let reject, let raw): result.rejects.append((reject, raw))
                    }
                }
            }
        }
        return result
    }

    /// True only when `convert` would certainly return a place, decided on the bytes alone: no
    /// strings, no `Place`, no import key. False means "not sure", and the caller runs `convert`,
    /// so every reject and its reason still come from the one validator. The cases answered
    /// here are the common ones: a well-formed record, valid UTF-8, a name with a visible ASCII
    /// character, plain decimal coordinates in range. (The other fields cannot reject a CSV
    /// record: they are strings, and any string is a valid placename, details, image,
    /// categories, id or extra value.) Tests and the fuzz oracle compare both paths.
    @inline(__always)
    private func certainlyValid(_ r: RawCSVBatch.Record, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>) -> Bool {
        if r.unterminatedQuote || r.overflowed || r.joinedLines != nil || r.textAfterQuote != nil || r.fieldCount != roles.count { return false }
        // A typed column can reject a record: the full validator decides.
        if !types.isEmpty { return false }
        // Coordinates from a WKT column go through the full validator, and so does an altitude.
        if longitudeColumn < 0 || latitudeColumn < 0 || hasAltitudeColumn { return false }
        let first = r.firstField
        let recordStart = first == 0 ? 0 : ends[first - 1]
        let recordEnd = ends[first + r.fieldCount - 1]
        // The fields are stored back to back: the record is valid UTF-8 field by field when the
        // whole is valid and no field starts inside a character.
        guard UTF8Scan.isValidWithoutNUL(UnsafeBufferPointer(rebasing: bytes[recordStart..<recordEnd])) else { return false }
        for k in (first + 1)..<(first + r.fieldCount) {
            let s = ends[k - 1]
            if s < ends[k] && UTF8Scan.isContinuation(bytes[s]) { return false }
        }
        @inline(__always) func field(_ column: Int) -> UnsafeBufferPointer<UInt8> {
            let k = first + column
            return UnsafeBufferPointer(rebasing: bytes[(k == first ? recordStart : ends[k - 1])..<ends[k]])
        }
        // A visible ASCII character survives trimming whatever else the name holds.
        guard field(nameColumn).contains(where: { $0 > 0x20 && $0 < 0x7F }) else { return false }
        guard let lon = Self.plainDecimal(field(longitudeColumn)),
              let lat = Self.plainDecimal(field(latitudeColumn)) else { return false }
        return (try? Coordinate.validated(longitude: lon, latitude: lat)) != nil
    }

    /// The fingerprint of the import key of a record `certainlyValid` vouched for, by the
    /// validator's rule (`PlaceValidator.validate`): the trimmed `importKey` text, else the
    /// trimmed `id` text, else derived from the trimmed name and the coordinate. CSV cells are
    /// text, so these are the only cases; tests and the fuzz oracle hold it to `next()`'s keys.
    /// With `.candidates`, `KeyCandidate`'s instead: most names are normalised from their bytes.
    private func keyFingerprint(ofValid r: RawCSVBatch.Record, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>,
                                _ fingerprinting: KeyFingerprinting = .exact) -> UInt64 {
        @inline(__always) func field(_ column: Int) -> UnsafeBufferPointer<UInt8> {
            let k = r.firstField + column
            let start = k == 0 ? 0 : ends[k - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
        }
        @inline(__always) func text(_ column: Int) -> String { String(decoding: field(column), as: UTF8.self) }
        for column in [importKeyColumn, idColumn] where column >= 0 && column < r.fieldCount {
            let t = trimWhitespace(text(column))
            if !t.isEmpty { return fingerprinting == .exact ? ImportKey.fingerprint(t) : KeyCandidate.explicit(t) }
        }
        let k = r.firstField
        func decimal(_ column: Int) -> Double {
            let start = k + column == 0 ? 0 : ends[k + column - 1]
            return Self.plainDecimal(UnsafeBufferPointer(rebasing: bytes[start..<ends[k + column]])) ?? .nan
        }
        // certainlyValid checked both: validated() cannot fail here; it normalises -0 as the validator does.
        let coordinate = (try? Coordinate.validated(longitude: decimal(longitudeColumn), latitude: decimal(latitudeColumn)))
            ?? Coordinate(longitude: .nan, latitude: .nan)
        if fingerprinting == .candidates {
            return KeyCandidate.derived(utf8Name: field(nameColumn), coordinate: coordinate)
                ?? KeyCandidate.derived(name: trimWhitespace(text(nameColumn)), coordinate: coordinate)
        }
        return ImportKey.derivedFingerprint(name: trimWhitespace(text(nameColumn)), coordinate: coordinate)
    }

    /// An ASCII field read as `PlaceValidator` reads coordinate text: ASCII whitespace trimmed
    /// (the only whitespace in ASCII), then `DecimalText`. Nil for anything else.
    @inline(__always)
    private static func plainDecimal(_ p: UnsafeBufferPointer<UInt8>) -> Double? {
        var lo = 0, hi = p.count
        @inline(__always) func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }
        while lo < hi && isSpace(p[lo]) { lo += 1 }
        while hi > lo && isSpace(p[hi - 1]) { hi -= 1 }
        if lo == hi { return nil }
        if p.contains(where: { $0 >= 0x80 }) { return nil }
        return DecimalText.parse(utf8: UnsafeBufferPointer(rebasing: p[lo..<hi]))
    }

    /// Converts every record of `batch` into slots `offset...` of `queue`.
    func convert(_ batch: RawCSVBatch, into queue: ReadItemQueue, at offset: Int) {
        var slot = offset
        convert(batch) { item in
            queue.set(slot, item)
            slot += 1
        }
    }

    /// Converts every record of `batch`, passing each item to `body` in order.
    func convert(_ batch: RawCSVBatch, each body: (consuming ReadItem) -> Void) {
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.ends.withUnsafeBufferPointer { ends in
                let raw = (batch.raw, batch.rawEnds)
                for (k, r) in batch.records.enumerated() {
                    body(convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty))
                }
            }
        }
    }

    /// Record `r`, the `k`th of its batch, with the batch's raw bytes and their ends.
    private func convert(_ r: RawCSVBatch.Record, _ k: Int, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>,
                         raw: (bytes: [UInt8], ends: [Int]), quotedEmpty: (Int) -> Bool) -> ReadItem {
        @inline(__always) func field(_ i: Int) -> UnsafeBufferPointer<UInt8> {
            let k = r.firstField + i
            // Records are appended back to back: a field starts where the previous one ended.
            let start = k == 0 ? 0 : ends[k - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
        }
        let source = PlaceSource(file: file, record: r.record, position: .line(r.line))
        func rawRecord() -> RawRecord? {
            guard r.rawKept else { return nil }
            let bytes = Array(raw.bytes[(k == 0 ? 0 : raw.ends[k - 1])..<raw.ends[k]])
            var fieldCount = r.fieldCount
            if r.joinedLines != nil || r.textAfterQuote != nil {
                // Refused because its quotes look like plain text: the rejects file is read back
                // with --quote none, which sees the fields of the record's last line, unquoted.
                // The reasons go after that many (the quoted split merged some of them).
                let content = bytes.dropLast(Int(r.lineEndLength))
                let lastLine = content.lastIndex(where: { $0 == 0x0A || $0 == 0x0D }).map { content[($0 + 1)...] } ?? content[...]
                fieldCount = lastLine.reduce(1) { $0 + ($1 == delimiter ? 1 : 0) }
            }
            return .csv(RawCSVRecord(bytes: bytes, lineEndLength: Int(r.lineEndLength), fieldCount: fieldCount,
                                     unterminatedQuote: r.unterminatedQuote))
        }
        func reject(_ field: String?, _ reason: String) -> ReadItem {
            .reject(Reject(source: source, field: field, reason: reason), raw: rawRecord())
        }
        if r.unterminatedQuote {
            // Every line after the opening quote is in this record: say the likely cause, a bare
            // `"` in a file that does not quote (GeoNames' tab-separated names).
            // Lines it swallowed, counted in its fields (a lone CR ends a line too).
            let start = r.firstField == 0 ? 0 : ends[r.firstField - 1]
            let end = r.fieldCount == 0 ? start : ends[r.firstField + r.fieldCount - 1]
            var breaks = 0
            for i in start..<end where bytes[i] == 0x0A || (bytes[i] == 0x0D && (i + 1 == end || bytes[i + 1] != 0x0A)) { breaks += 1 }
            // The file's last line break ends its last line; it starts none.
            if end > start, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { breaks -= 1 }
            let span = breaks == 0 ? "" : ": lines \(r.line)–\(r.line + breaks)"
            return reject(nil, "unterminated quoted field (the file ends inside quotes opened in this record, so every "
                          + "line after it was read into it\(span); if \" is plain text in this file, read it with --quote none)")
        }
        if let j = r.joinedLines {
            let last = r.line + j.lines - 1
            return reject(j.field < header.count ? header[j.field] : nil,
                          "quoted field spans \(j.lines) lines holding \(j.quotedDelimiters) delimiters "
                          + "(lines \(r.line)–\(last) were read as one record; \(j.wholeRecordLines) of them are "
                          + "records by themselves); if \" is plain text in this file, read it with --quote none")
        }
        if let k = r.textAfterQuote {
            return reject(k < header.count ? header[k] : nil,
                          "text follows the closing quote of a quoted value (as in \"Bo\" Hill), so its quotes would be "
                          + "lost; if \" is plain text in this file, read it with --quote none")
        }
        if r.overflowed {
            return reject(nil, "record exceeds the limit of \(limits.maxRecordBytes) bytes or \(limits.maxFields) fields")
        }
        var count = r.fieldCount
        // Trailing empty fields beyond the header (a spreadsheet's stray delimiters) are harmless.
        while count > roles.count && field(count - 1).isEmpty { count -= 1 }
        if count > roles.count {
            return reject(nil, "record has \(r.fieldCount) fields, "
                          + (columnsGiven ? "\(roles.count) column names were given" : "header has \(roles.count)"))
        }
        var draft = PlaceDraft(source: source)
        draft.categorySeparators = categorySeparators
        // A short row (trailing empty cells left out, as spreadsheets export them) has its
        // missing cells empty, as Python's csv and GDAL read it.
        for i in 0..<roles.count {
            var value = ""
            if i < count {
                let raw = field(i)
                guard let v = decodeField(raw) else {
                    return reject(header[i], raw.contains(0) ? "contains a NUL byte" : "not valid UTF-8")
                }
                value = v
            }
            switch roles[i] {
            case .field(.categories): draft.categories = Self.categories(value)
            // A PoiKit export writes nothing for a place without an image (none stored, or one
            // its --with-images could not copy): no image field, so the stored link stays, as
            // for a GeoJSON export's feature without an `image`.
            case .field(.image) where isPoiKitExport && value.isEmpty && !(i < count && quotedEmpty(r.firstField + i)):
                break
            case .field(let f): draft[f] = .string(value)
            case .extra(let key):
                let type = types.isEmpty ? nil : types[i]
                if type == nil || type == .string {
                    if ignoreBlanks && Self.isBlank(value) { break }
                    // A PoiKit export writes "" for an empty value and nothing for none.
                    if isPoiKitExport && value.isEmpty && !(i < count && quotedEmpty(r.firstField + i)) { break }
                    draft.extra.append(key, .string(value))
                } else if Self.isBlank(value) {
                    // An empty typed cell is no value (null), as ogr2ogr reads it, not a reject;
                    // under a `.csvt`'s type, no value at all (GDAL's unset field).
                    if !ignoreBlanks && !(i < blankIsAbsent.count && blankIsAbsent[i]) { draft.extra.append(key, .null) }
                } else {
                    switch type!.value(text: value) {
                    case .success(let v): draft.extra.append(key, v)
                    case .failure(var problem):
                        if i < blankIsAbsent.count, blankIsAbsent[i], let sidecarName { problem.origin = sidecarName }
                        return reject(header[i], problem.message)
                    }
                }
            case .own(let key):
                if Self.isBlank(value) { break }
                if key == PoiKitProperties.source {
                    // `{"file":…,"line":…}` as compact JSON; anything else is the user's.
                    if let parsed = try? JSONParser.parse(Array(value.utf8), maxDepth: 2),
                       PoiKitProperties.exportedSource(parsed) != nil {
                        draft.poiKitProperties.append(key, parsed)
                    } else {
                        draft.extra.append(key, .string(value))
                    }
                } else {
                    draft.poiKitProperties.append(key, .string(value))
                }
            case .ignored: break
            case .altitude:
                // Nothing: a place without one. A number is written as JSON writes it (`581.0`).
                if Self.isBlank(value) { break }
                guard let z = DecimalText.parse(trimWhitespace(value)), z.isFinite else {
                    return reject(header[i], "altitude must be a number, got \"\(value.prefix(40))\"")
                }
                draft.altitude = .double(z)
            case .pointWKT:
                switch WKTPoint.parse(value) {
                case .success(let point):
                    draft.longitude = .string(point.x)
                    draft.latitude = .string(point.y)
                    if let z = point.z { draft.altitude = .double(z) }
                case .failure(let problem):
                    return reject(header[i], problem.message)
                }
            }
        }
        if isPoiKitExport, case .string(let key)? = draft.importKey, !Self.isBlank(key) { draft.id = nil }
        switch PlaceValidator.validate(draft) {
        case .success(let p): return .place(p, raw: rawRecord())
        case .failure(var rej):
            // A short row's missing cells read as empty: say how short, the likelier cause.
            if count < roles.count { rej.reason += " (the row has \(count) of \(roles.count) fields)" }
            return .reject(rej, raw: rawRecord())
        }
    }

    /// A categories cell: a JSON array of strings (`["a","b"]`) is that list; anything else is
    /// text, split by the validator.
    static func categories(_ value: String) -> JSONValue {
        let t = trimWhitespace(value)
        guard t.utf8.first == 0x5B, t.utf8.last == 0x5D else { return .string(value) }
        let parsed = try? JSONParser.parse(Array(t.utf8), maxDepth: 2)
        guard case .array(let items)? = parsed, items.allSatisfy({ $0.stringValue != nil }) else { return .string(value) }
        return .array(items)
    }

    /// Empty or only whitespace: what `--ignore-blanks` leaves out, and a typed column reads as null.
    static func isBlank(_ value: String) -> Bool { trimWhitespace(value).isEmpty }

    /// UTF-8 text of a field, nil when invalid or containing NUL.
    ///
    /// `String._tryFromUTF8` validates and copies in one pass, the standard library's own fast
    /// path. `String(validating:as:)` is generic over the encoding and looked up its type
    /// metadata at run time for every field that is not ASCII; checking first (`UTF8Scan`) and
    /// then making the String validated every field twice. Both were 4–5 % of `poi convert`'s
    /// CPU (profiled). NUL is refused first, by `memchr`.
    @inline(__always)
    private func decodeField(_ p: UnsafeBufferPointer<UInt8>) -> String? {
        guard let base = p.baseAddress else { return "" }
        if memchr(base, 0, p.count) != nil { return nil }
        return String._tryFromUTF8(p)
    }
}

/// What validating one batch found: how many records are valid, and the rejects in order.
struct CSVBatchVerdict: Sendable {
    var valid = 0
    var rejects: [(Reject, RawRecord?)] = []
    /// With keys asked for: each valid record's import key fingerprint, in order.
    var keys: [UInt64] = []
    /// The places asked for by their keys (`verdict(_:keys:placesWithKeys:)`), in order.
    var places: [Place] = []
}

enum ProcessInfoCores {
    static let count: Int = {
        #if canImport(Glibc)
        return Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        return 2
        #endif
    }()
}

#if canImport(Glibc)
import Glibc
#endif
