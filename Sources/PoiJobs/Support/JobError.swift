import PoiFormats
import PoiStore

/// Why a job stopped before finishing. Rejected rows and bad images are not errors: they are
/// reported and the job goes on; these are the failures that end it.
public enum JobError: Error, Sendable, CustomStringConvertible {
    /// An input could not be opened or read at all (exit 2: the user named a bad file).
    case input(FormatError)
    /// Bad options discovered while running (exit 2).
    case configuration(String)
    /// The database or byte store failed (exit 3). Everything written before it is consistent.
    case store(String)
    /// An output file (rejects, export) could not be written (exit 3).
    case output(String)

    public var description: String {
        switch self {
        case .input(let e): return e.description
        case .configuration(let s): return s
        case .store(let s): return s
        case .output(let s): return s
        }
    }

    static func from(store error: any Error) -> JobError {
        .store(String(describing: error))  // every error here is CustomStringConvertible
    }
}
