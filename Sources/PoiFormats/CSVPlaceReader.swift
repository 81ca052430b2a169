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
    public var delimiter: UInt8 { tokenizer.delimiter }
    private let tokenizer: CSVTokenizer
    private let converter: CSVRecordConverter
    private var record = 0
    /// Items handed out by `next()`.
    private var ready = ReadItemQueue()
    /// Filled by the batch conversion in flight.
    private var spare = ReadItemQueue()
    private var inflight: DispatchGroup?
    private var exhausted = false
    /// Batches converted together (one per core).
    private let parallelism: Int
    static let batchRecords = 2048
    static let batchBytes = 2 << 20

    public init(source: ByteSource, options: ReadOptions = ReadOptions(), parallelism: Int? = nil) throws(FormatError) {
        file = source.name
        tokenizer = try CSVTokenizer(source: source, delimiter: options.delimiter, limits: options.limits)
        guard try tokenizer.next() else { throw .emptyFile(file: file) }
        if tokenizer.overflowed {
            throw .invalidHeader(file: file, reason: "header row exceeds the size/field limits")
        }
        var names: [String] = []
        for i in 0..<tokenizer.fieldCount {
            guard let s = String(validating: tokenizer.field(i), as: UTF8.self) else {
                throw .invalidHeader(file: file, reason: "column \(i + 1) is not valid UTF-8")
            }
            names.append(s)
        }
        header = names
        roles = options.mapping.plan(header: names)
        for f in [PlaceField.name, .latitude, .longitude] where !roles.contains(.field(f)) {
            let looked = options.mapping.overrides[f].map { [$0] } ?? f.aliases
            throw .missingColumn(file: file, field: f, looked: looked)
        }
        converter = CSVRecordConverter(file: file, header: names, roles: roles, limits: options.limits)
        self.parallelism = max(1, min(8, parallelism ?? ProcessInfoCores.count))
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
            if inflight == nil && exhausted { return nil }
            var upcoming: [RawCSVBatch] = []
            if !exhausted {
                for _ in 0..<(parallelism * 2) {
                    let b = try readBatch()
                    if !b.records.isEmpty { upcoming.append(b) }
                    if exhausted { break }
                }
            }
            if let group = inflight {
                group.wait()
                inflight = nil
                swap(&ready, &spare)
            }
            if !upcoming.isEmpty { launch(upcoming) }
        }
    }

    /// Converts `batches` into `spare` on worker threads (in order, one slot per record).
    private func launch(_ batches: [RawCSVBatch]) {
        var starts: [Int] = []
        var total = 0
        for b in batches { starts.append(total); total += b.records.count }
        spare.reset(count: total)
        let conv = converter, queue = spare, offsets = starts, cores = parallelism
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            if cores == 1 || batches.count == 1 {
                for (i, b) in batches.enumerated() { conv.convert(b, into: queue, at: offsets[i]) }
            } else {
                DispatchQueue.concurrentPerform(iterations: batches.count) { i in
                    conv.convert(batches[i], into: queue, at: offsets[i])
                }
            }
        }
        inflight = group
    }

    deinit {
        // A conversion still running writes into a queue it keeps alive; wait so no work outlives us.
        inflight?.wait()
    }

    private func readBatch() throws(FormatError) -> RawCSVBatch {
        var batch = RawCSVBatch()
        while batch.records.count < Self.batchRecords && batch.bytes.count < Self.batchBytes {
            guard try tokenizer.next() else { exhausted = true; break }
            record += 1
            batch.add(tokenizer, record: record)
        }
        return batch
    }
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
    }
    var bytes: [UInt8] = []
    /// Absolute end offset in `bytes` of every field of every record.
    var ends: [Int] = []
    var records: [Record] = []

    mutating func add(_ t: CSVTokenizer, record: Int) {
        let base = bytes.count
        bytes.append(contentsOf: t.bytes)
        let first = ends.count
        for e in t.ends { ends.append(base + e) }
        records.append(Record(record: record, line: t.recordLine, firstField: first, fieldCount: t.ends.count,
                              overflowed: t.overflowed, unterminatedQuote: t.unterminatedQuote))
    }
}

/// Record → `ReadItem`: mapping and validation. Pure, so batches convert in parallel.
struct CSVRecordConverter: Sendable {
    let file: String
    let header: [String]
    let roles: [ColumnRole]
    let limits: ReadLimits

    /// Converts every record of `batch` into slots `offset...` of `queue`.
    func convert(_ batch: RawCSVBatch, into queue: ReadItemQueue, at offset: Int) {
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.ends.withUnsafeBufferPointer { ends in
                for (k, r) in batch.records.enumerated() { queue.set(offset + k, convert(r, bytes: bytes, ends: ends)) }
            }
        }
    }

    private func convert(_ r: RawCSVBatch.Record, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>) -> ReadItem {
        @inline(__always) func field(_ i: Int) -> UnsafeBufferPointer<UInt8> {
            let k = r.firstField + i
            // Records are appended back to back: a field starts where the previous one ended.
            let start = k == 0 ? 0 : ends[k - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
        }
        let source = PlaceSource(file: file, record: r.record, position: .line(r.line))
        func rawFields() -> [String] {
            (0..<r.fieldCount).map { String(decoding: field($0), as: UTF8.self) }
        }
        func reject(_ field: String?, _ reason: String) -> ReadItem {
            .reject(Reject(source: source, field: field, reason: reason), raw: .csv(rawFields()))
        }
        if r.unterminatedQuote {
            return reject(nil, "unterminated quoted field (the file ends inside quotes)")
        }
        if r.overflowed {
            return reject(nil, "record exceeds the limit of \(limits.maxRecordBytes) bytes or \(limits.maxFields) fields")
        }
        var count = r.fieldCount
        // Trailing empty fields beyond the header (a spreadsheet's stray delimiters) are harmless.
        while count > roles.count && field(count - 1).isEmpty { count -= 1 }
        if count != roles.count {
            return reject(nil, "record has \(r.fieldCount) fields, header has \(roles.count)")
        }
        var draft = PlaceDraft(source: source)
        for i in 0..<count {
            let raw = field(i)
            guard let value = decodeField(raw) else {
                return reject(header[i], raw.contains(0) ? "contains a NUL byte" : "not valid UTF-8")
            }
            switch roles[i] {
            case .field(let f): draft[f] = .string(value)
            case .extra(let key): draft.extra.append(key, .string(value))
            }
        }
        switch PlaceValidator.validate(draft) {
        case .success(let p): return .place(p)
        case .failure(let rej): return .reject(rej, raw: .csv(rawFields()))
        }
    }

    /// UTF-8 text of a field, nil when invalid or containing NUL.
    @inline(__always)
    private func decodeField(_ p: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for b in p {
            if b == 0 { return nil }
            if b >= 0x80 { ascii = false }
        }
        return ascii ? String(decoding: p, as: UTF8.self) : String(validating: p, as: UTF8.self)
    }
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
