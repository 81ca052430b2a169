import PoiModel

/// The input formats PoiKit reads.
public enum InputFormat: String, Sendable {
    case csv, geojson

    /// Sniffs the first bytes: a `{` or an RS (after an optional BOM and whitespace) is GeoJSON,
    /// anything else CSV. Content wins over the extension: dumps are often misnamed.
    public static func detect(prefix: ArraySlice<UInt8>) -> InputFormat {
        var s = prefix
        if s.starts(with: [0xEF, 0xBB, 0xBF]) { s = s.dropFirst(3) }
        for b in s {
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { continue }
            return (b == 0x7B || b == 0x1E) ? .geojson : .csv
        }
        return .csv
    }
}

/// Reads any supported dump (CSV or GeoJSON, auto-detected) as places and rejects.
/// This is what `poi check`, `poi convert` and the import job iterate:
///
///     let reader = try PlaceReader(path: file, options: options)
///     while let item = try reader.next() { switch item { case .place(let p): ...; case .reject(let r, let raw): ... } }
public final class PlaceReader {
    public let format: InputFormat
    public let file: String
    private let csv: CSVPlaceReader?
    private let geojson: GeoJSONReader?
    /// The outermost layer: its `bytesRead` is the file's bytes consumed, whichever thread reads them.
    private let source: ByteSource

    /// Bytes of the input read so far (readers read a little ahead of the records they return)
    /// and its size when known: enough for a progress fraction and an ETA.
    public var bytesRead: Int { source.bytesRead }
    public var totalBytes: Int? { source.totalBytes }
    /// Records found in the `bytesRead` bytes (the reader's read-ahead included): their ratio is
    /// the input's bytes per record, so `totalBytes` gives an estimate of its records.
    public var recordsScanned: Int { csv?.recordsScanned ?? geojson!.recordsScanned }

    /// The input was gzip'd (decompressed as it was read).
    public let isGzip: Bool
    /// The input's encoding when it is not UTF-8: the one given in `ReadOptions.encoding`, else
    /// the one its byte-order mark says (a rejects file is written back in it). nil for UTF-8.
    public let encoding: TextEncoding?

    public init(source: ByteSource, options: ReadOptions = ReadOptions()) throws(FormatError) {
        file = source.name
        let layers = try Self.decoded(source, options: options)
        self.source = layers.stream
        isGzip = layers.isGzip
        encoding = layers.encoding
        format = InputFormat.detect(prefix: layers.head[...])
        columnsGiven = options.columns != nil
        switch format {
        case .csv:
            csv = try CSVPlaceReader(source: layers.stream, options: options)
            geojson = nil
        case .geojson:
            geojson = try GeoJSONReader(source: layers.stream, options: options)
            csv = nil
        }
    }

    /// What the format readers read: `source` through the layers its first bytes call for, each
    /// decided by the bytes it starts with — gzip (magic bytes 1f 8b; inflated on a thread of its
    /// own: `GzipStage`), then the text encoding (`options.encoding`, else a UTF-16/UTF-32 BOM;
    /// `TranscodingStage`). `head` is the decoded stream's first bytes (it replays them).
    static func decoded(_ source: ByteSource, options: ReadOptions) throws(FormatError)
        -> (stream: ByteSource, head: [UInt8], isGzip: Bool, encoding: TextEncoding?) {
        var (head, stream) = try peek(source)
        // A zip reaches here only unexpanded: from standard input or a pipe (`ZipArchive` reads
        // files), or as a member of another zip.
        if ZipArchive.isZip(head[...]) { throw .zipNeedsFile(file: source.name) }
        let isGzip = Gzip.isGzip(head[...])
        if isGzip {
            (head, stream) = try peek(ByteSource(name: source.name, stage: GzipStage.stage(compressed: stream,
                                                                                     maxBytes: options.limits.maxInflatedBytes)))
        }
        let encoding = options.encoding ?? TextEncoding.fromBOM(head[...])
        if encoding == nil, let bigEndian = TextEncoding.unmarkedUTF16(head[...]) {
            throw .unmarkedUTF16(file: source.name, bigEndian: bigEndian)
        }
        if let encoding {
            (head, stream) = try peek(ByteSource(name: source.name, stage: TranscodingStage(source: stream, encoding: encoding)))
        }
        return (stream, head, isGzip, encoding)
    }

    /// The first bytes of `source` (to decide what it is), and a source that replays them first.
    /// A read error while peeking (a gzip damaged in its first kilobytes) comes after the bytes
    /// read before it, as it would have without the peek: the records before it are read.
    private static func peek(_ source: ByteSource) throws(FormatError) -> ([UInt8], ByteSource) {
        var head: [UInt8] = []
        do {
            while head.count < 4096, try source.read(appendingTo: &head) > 0 {}
        } catch {
            if head.isEmpty { throw error }
            return (head, ByteSource(prefix: head, then: source, failing: error))
        }
        return (head, ByteSource(prefix: head, then: source))
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// CSV header (for a rejects file in the input's format); nil for GeoJSON.
    /// Columns or properties kept without being mapped, said once per file (`ReadNote`): for a
    /// CSV file known from the header, for GeoJSON growing as features are read (complete once
    /// `next()` returned nil or `validateRemaining` returned).
    public var notes: [ReadNote] {
        if let csv { return csv.notes }
        return (columnsGiven ? [ReadNote(file: file, kind: .columnNamesIgnored, name: "", key: "")] : []) + geojson!.notes
    }
    /// `ReadOptions.columns` was given (for GeoJSON, a note says it is not used).
    private let columnsGiven: Bool

    public var csvHeader: [String]? { csv?.header }
    public var csvDelimiter: UInt8? { csv?.delimiter }
    public var csvQuoting: CSVQuoting { csv?.quoting ?? .doubleQuote }
    /// The CSV header line as in the input (BOM and line end included); nil for GeoJSON.
    public var csvRawHeader: RawCSVRecord? { csv?.rawHeader }
    /// The CSV input has a header line (false when `ReadOptions.columns` named its columns).
    public var csvHasHeaderLine: Bool { csv?.hasHeaderLine ?? false }
    /// The CSV input starts with a byte-order mark (in a header-less file, before its first record).
    public var csvHasBOM: Bool { csv?.hasBOM ?? false }

    /// Validates the rest of the input without building places: adds the valid records to
    /// `valid` as it goes (so a read error midway leaves the count so far) and passes each
    /// reject in order to `onReject`. Same verdicts as iterating `next()`, for
    /// `poi check`, which needs no places and is the faster for it. With `onKey`, each valid
    /// record's key fingerprint (`ImportKey.fingerprint` of exactly the `importKey` its place
    /// would have) is passed in input order too: what the key rule needs to find out whether any
    /// key repeats. Computed on the worker threads, and no key is made into a String.
    ///
    /// With `placesWithKeys`, the places of the valid records whose key fingerprint is in it are
    /// built and passed to `onPlace`, in input order: `poi check`'s second pass, which judges
    /// only the keys its first pass saw repeat (a key seen once is kept whatever its record), so
    /// a dump with a few repeated keys is not read as slowly as an import reads it.
    ///
    /// `keys`: `.candidates` hands out and selects by `KeyCandidate`s instead of exact key
    /// fingerprints (a dump without ids is then checked several times faster: no key is made).
    public func validateRemaining(valid: inout Int, onReject: (Reject, RawRecord?) -> Void,
                                  onKey: ((UInt64) -> Void)? = nil, placesWithKeys: Set<UInt64>? = nil,
                                  keys: KeyFingerprinting = .exact,
                                  onPlace: (Place) -> Void = { _ in }) throws(FormatError) {
        if let csv {
            return try csv.validateRemaining(valid: &valid, onReject: onReject, onKey: onKey,
                                             placesWithKeys: placesWithKeys, keys: keys, onPlace: onPlace)
        }
        try geojson!.validateRemaining(valid: &valid, onReject: onReject, onKey: onKey,
                                       placesWithKeys: placesWithKeys, keys: keys, onPlace: onPlace)
    }

    /// Whether `nextBatch(preparedBy:)` prepares on the reader's workers (CSV input).
    public var preparesBatches: Bool { csv != nil }

    /// CSV input only (`preparesBatches`): the rest of the input as batches of `preparer`'s
    /// making, each prepared on the worker that converted its records
    /// (`CSVPlaceReader.nextBatch(preparedBy:)`); nil at the end.
    public func nextBatch<P: ReadItemPreparer>(preparedBy preparer: P) throws(FormatError) -> P.Batch? {
        guard let csv else { preconditionFailure("nextBatch(preparedBy:) reads CSV input only") }
        return try csv.nextBatch(preparedBy: preparer)
    }

    /// The next place or reject; nil at the end. Throws only when the file cannot be read.
    public func next() throws(FormatError) -> ReadItem? {
        if let csv { return try csv.next() }
        return try geojson!.next()
    }
}

/// Work done on each item right where a reader's worker makes it, rather than after the item
/// has been handed to the caller's thread (`PlaceReader.nextBatch(preparedBy:)`). Why: `poi
/// convert` encodes and fingerprints every place; done on another thread, each place was moved
/// across threads twice, read again with its strings out of cache, and freed far from where it
/// was allocated (the allocator's slow path): a fifth of the job's CPU for no work of its own.
public protocol ReadItemPreparer: Sendable {
    associatedtype Batch: AnyObject, Sendable
    /// An empty batch, on a worker thread.
    func makeBatch() -> Batch
    /// Adds the next item of `batch`'s stretch of input, on the worker thread that made it;
    /// the items of one batch come in input order.
    func add(_ item: consuming ReadItem, to batch: Batch)
}
