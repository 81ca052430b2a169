import PoiModel

/// A problem that stops reading a whole file (as opposed to a `Reject`, which skips one record).
/// `poi check` exits 2 on these. Messages say what is wrong, not which option fixes it: the CLI
/// adds that (e.g. how to name a missing column's field).
public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(file: String, reason: String)
    case readFailed(file: String, reason: String)
    case writeFailed(file: String, reason: String)
    case emptyFile(file: String)
    case invalidHeader(file: String, reason: String)
    case missingColumn(file: String, field: PlaceField, looked: [String])
    case unknownFormat(file: String)
    /// The column `field` would be read from (by name or by its mapping) is mapped to another
    /// field, `by` (a mapping such as name=lat took the latitude's column).
    case columnTaken(file: String, field: PlaceField, column: String, by: PlaceField)
    /// The compressed input is damaged at `offset` (a byte offset in the compressed file): the
    /// bytes decoded before it were read.
    case damagedCompression(file: String, offset: Int, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let f, let r): return "\(f): cannot open: \(r)"
        case .readFailed(let f, let r): return "\(f): read failed: \(r)"
        case .writeFailed(let f, let r): return "\(f): write failed: \(r)"
        case .emptyFile(let f): return "\(f): file is empty (no header row)"
        case .invalidHeader(let f, let r): return "\(f): invalid header: \(r)"
        case .missingColumn(let f, let field, let looked):
            return "\(f): no \(field.rawValue) column (looked for \(looked.joined(separator: ", ")))"
        case .unknownFormat(let f): return "\(f): neither CSV nor GeoJSON"
        case .columnTaken(let f, let field, let column, let other):
            return "\(f): no \(field.rawValue) column: column \(column) is mapped to \(other.rawValue)"
        case .damagedCompression(let f, let offset, let r):
            return "\(f): damaged gzip data at byte \(offset) of the compressed file: \(r); "
                + "everything before it was read"
        }
    }
}

/// Size limits that keep hostile input from exhausting memory. Exceeding one rejects the record
/// (the reader skips to the next one), it never aborts the file.
public struct ReadLimits: Sendable, Equatable {
    /// Largest CSV record, in bytes (all fields together).
    public var maxRecordBytes: Int = 1 << 20
    /// Most fields in one CSV record.
    public var maxFields: Int = 4096
    /// Largest single GeoJSON Feature (or top-level member), in bytes.
    public var maxFeatureBytes: Int = 16 << 20
    /// Deepest JSON nesting inside a feature (objects + arrays).
    public var maxDepth: Int = 64

    public init() {}
}
