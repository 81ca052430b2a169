import Dispatch
import PoiModel

/// Reads places from CSV: header → column plan (`CSVHeaderPlan`) → per record mapping and
/// validation (`CSVRecordConverter`). This file is the batching between them.
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
    /// The conversion in flight: one set of batches at most.
    private var work = ReadWork()
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
        // The header decides the columns and how each record is read (CSVHeaderPlan.swift).
        let plan = try CSVHeaderPlan(tokenizer: tokenizer, options: options, file: file)
        header = plan.names
        hasHeaderLine = plan.hasHeaderLine
        rawHeader = plan.rawHeader
        roles = plan.roles
        headerNotes = plan.notes
        converter = plan.converter
        preparedFieldBytes = plan.preparedFieldBytes
        self.parallelism = max(1, min(8, parallelism ?? ProcessorCores.available))
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// The next place or reject; nil at end of file. Throws only on I/O failure.
    ///
    /// Double-buffered: while one set of batches is converted on worker threads, this thread
    /// tokenizes the next set, so tokenizing and converting overlap.
    public func next() throws(FormatError) -> ReadItem? {
        while true {
            if let item = ready.pop() { return item }
            guard try turn(finished: { swap(&ready, &spare) }, start: launch) else { return nil }
        }
    }

    /// The rest of the input as batches of `preparer`'s making, in input order; nil at the end.
    /// Each batch holds the items of one tokenized batch, added on the worker that converted
    /// them (`ReadItemPreparer`), so no item crosses a thread. Throws as `next()` does, after the
    /// batches read before the failure. Not to be mixed with `next()` on one reader.
    public func nextBatch<P: ReadItemPreparer>(preparedBy preparer: P) throws(FormatError) -> P.Batch? {
        precondition(ready.isEmpty && (!work.isRunning || inflightPrepares), "nextBatch(preparedBy:) after next()")
        while true {
            if let batch = readyPrepared.pop() { return unsafeDowncast(batch, to: P.Batch.self) }
            let more = try turn(setBytes: Self.preparedSetBytes, fieldBytes: preparedFieldBytes,
                                finished: { swap(&readyPrepared, &sparePrepared) }) { upcoming in
                sparePrepared.reset(count: upcoming.count)
                let conv = converter, batches = upcoming, slots = sparePrepared
                inflightPrepares = true
                return { i in
                    let prepared = preparer.makeBatch()
                    conv.convert(batches[i].batch) { item in preparer.add(item, to: prepared) }
                    slots.set(i, prepared)
                }
            }
            guard more else { return nil }
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
        repeat {
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
        } while finishInflight({ swap(&ready, &spare) })
        // Same double buffering as `next()`: tokenize the next batches while workers validate.
        let verdicts = SlotQueue<CSVBatchVerdict>()
        func collect() {
            while let v = verdicts.pop() {
                valid += v.valid
                for (r, raw) in v.rejects { onReject(r, raw) }
                if let onKey { for key in v.keys { onKey(key) } }
                for place in v.places { onPlace(place) }
            }
        }
        let wantsKeys = onKey != nil
        while try turn(finished: collect, start: { upcoming in
            verdicts.reset(count: upcoming.count)
            let conv = converter, batches = upcoming
            return { i in
                verdicts.set(i, conv.verdict(batches[i].batch, keys: wantsKeys, placesWithKeys: wanted, fingerprinting: fingerprinting))
            }
        }) {}
    }

    /// One turn of the double buffering that `next()`, `nextBatch(preparedBy:)` and
    /// `validateRemaining` share: tokenizes the next set of batches on this thread while the set
    /// in flight is worked on, waits for that set (`finished` takes its results, before its
    /// batches are emptied for reuse), then starts the new set: `start` readies its slots and
    /// returns the work of its batch `i`, run on the cores (`ReadWork`).
    /// False at the end of the input, once nothing is in flight; a read error is thrown then, so
    /// every record read before it has come out first.
    /// `setBytes`, `fieldBytes`: see `readBatches`.
    private func turn(setBytes: Int = .max, fieldBytes: Int = 0, finished: () -> Void,
                      start: ([RawCSVBatchBox]) -> @Sendable (Int) -> Void) throws(FormatError) -> Bool {
        if !work.isRunning && exhausted {
            if let e = readError { readError = nil; throw e }
            return false
        }
        var upcoming: [RawCSVBatchBox] = []
        if !exhausted { readError = readBatches(into: &upcoming, setBytes: setBytes, fieldBytes: fieldBytes) }
        finishInflight(finished)
        if !upcoming.isEmpty { work.start(upcoming.count, cores: parallelism, start(upcoming)); inflightBatches = upcoming }
        return true
    }

    /// Waits for the work in flight, if any, lets `finished` take its results, and empties its
    /// batches for reuse. False when nothing was in flight.
    @discardableResult
    private func finishInflight(_ finished: () -> Void) -> Bool {
        guard work.finish() else { return false }
        finished()
        recycle(&inflightBatches)
        return true
    }

    /// Readies `spare` for `batches`, one slot per record in order, and returns the conversion of
    /// batch `i` into its slots.
    private func launch(_ batches: [RawCSVBatchBox]) -> @Sendable (Int) -> Void {
        var starts: [Int] = []
        var total = 0
        for b in batches { starts.append(total); total += b.batch.records.count }
        spare.reset(count: total)
        let conv = converter, queue = spare, offsets = starts
        return { i in
            conv.convert(batches[i].batch, into: queue, at: offsets[i])
        }
    }

    deinit {
        // A conversion still running writes into a queue it keeps alive; wait so no work outlives us.
        work.finish()
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
