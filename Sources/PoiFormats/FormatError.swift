import PoiModel

/// A problem that stops reading a whole file (as opposed to a `Reject`, which skips one record).
/// `poi check` exits 2 on these.
public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(file: String, reason: String)
    case readFailed(file: String, reason: String)
    case writeFailed(file: String, reason: String)
    case emptyFile(file: String)
    case invalidHeader(file: String, reason: String)
    case missingColumn(file: String, field: PlaceField, looked: [String])
    case unknownFormat(file: String)

    public var description: String {
        switch self {
        case .cannotOpen(let f, let r): return "\(f): cannot open: \(r)"
        case .readFailed(let f, let r): return "\(f): read failed: \(r)"
        case .writeFailed(let f, let r): return "\(f): write failed: \(r)"
        case .emptyFile(let f): return "\(f): file is empty (no header row)"
        case .invalidHeader(let f, let r): return "\(f): invalid header: \(r)"
        case .missingColumn(let f, let field, let looked):
            return "\(f): no \(field.rawValue) column (looked for \(looked.joined(separator: ", "))); "
                + "name it with --field \(field.rawValue)=COLUMN"
        case .unknownFormat(let f): return "\(f): neither CSV nor GeoJSON"
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
