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
    private let source: ByteSource

    /// Bytes of the input read so far (readers read a little ahead of the records they return)
    /// and its size when known: enough for a progress fraction and an ETA.
    public var bytesRead: Int { source.bytesRead }
    public var totalBytes: Int? { source.totalBytes }
    /// Records found in the `bytesRead` bytes (the reader's read-ahead included): their ratio is
    /// the input's bytes per record, so `totalBytes` gives an estimate of its records.
    public var recordsScanned: Int { csv?.recordsScanned ?? geojson!.recordsScanned }

    public init(source: ByteSource, options: ReadOptions = ReadOptions()) throws(FormatError) {
        file = source.name
        self.source = source
        // Peek through a private buffer, then hand the reader a source replaying it.
        var head: [UInt8] = []
        while head.count < 4096, try source.read(appendingTo: &head) > 0 {}
        let replay = ReplaySource(head: head, rest: source)
        format = InputFormat.detect(prefix: head[...])
        switch format {
        case .csv:
            csv = try CSVPlaceReader(source: replay.source, options: options)
            geojson = nil
        case .geojson:
            geojson = try GeoJSONReader(source: replay.source, options: options)
            csv = nil
        }
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// CSV header (for a rejects file in the input's format); nil for GeoJSON.
    /// Columns or properties kept without being mapped, said once per file (`ReadNote`): for a
    /// CSV file known from the header, for GeoJSON growing as features are read (complete once
    /// `next()` returned nil or `validateRemaining` returned).
    public var notes: [ReadNote] { csv?.notes ?? geojson?.notes ?? [] }

    public var csvHeader: [String]? { csv?.header }
    public var csvDelimiter: UInt8? { csv?.delimiter }
    /// The CSV header line as in the input (BOM and line end included); nil for GeoJSON.
    public var csvRawHeader: RawCSVRecord? { csv?.rawHeader }

    /// Validates the rest of the input without building places: adds the valid records to
    /// `valid` as it goes (so a read error midway leaves the count so far) and passes each
    /// reject in order to `onReject`. Same verdicts as iterating `next()`, for
    /// `poi check`, which needs no places and is the faster for it.
    public func validateRemaining(valid: inout Int, onReject: (Reject, RawRecord?) -> Void) throws(FormatError) {
        if let csv { return try csv.validateRemaining(valid: &valid, onReject: onReject) }
        try geojson!.validateRemaining(valid: &valid, onReject: onReject)
    }

    /// The next place or reject; nil at the end. Throws only when the file cannot be read.
    public func next() throws(FormatError) -> ReadItem? {
        if let csv { return try csv.next() }
        return try geojson!.next()
    }
}

/// Puts already-read bytes back in front of a source.
private struct ReplaySource {
    let source: ByteSource
    init(head: [UInt8], rest: ByteSource) {
        source = ByteSource(prefix: head, then: rest)
    }
}
