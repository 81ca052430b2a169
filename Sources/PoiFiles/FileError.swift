#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a local file could not be read or written. `description` is the user-facing reason and
/// always names the path; `errno` cases keep the number so callers can tell ENOSPC from EACCES.
public enum FileError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, errno: Int32)
    case cannotRead(path: String, errno: Int32)
    case cannotWrite(path: String, errno: Int32)
    /// A directory, socket or other thing where a file's bytes were expected.
    case notARegularFile(path: String)
    case tooLarge(path: String, bytes: Int, limit: Int)
    /// An output that is one of the command's own inputs (same device and inode).
    case outputIsInput(path: String, input: String)

    public var path: String {
        switch self {
        case .cannotOpen(let p, _), .cannotRead(let p, _), .cannotWrite(let p, _), .notARegularFile(let p),
             .tooLarge(let p, _, _), .outputIsInput(let p, _):
            return p
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let p, let e): return "\(p): cannot open: \(Self.text(e))"
        case .cannotRead(let p, let e): return "\(p): cannot read: \(Self.text(e))"
        case .cannotWrite(let p, let e): return "\(p): cannot write: \(Self.text(e))"
        case .notARegularFile(let p): return "\(p): not a regular file"
        case .tooLarge(let p, let bytes, let limit):
            return "\(p): file is \(bytes) bytes, over the \(limit)-byte limit"
        case .outputIsInput(let p, let input):
            return p == input ? "\(p): refusing to overwrite an input with an output"
                : "\(p): refusing to write there: it is the input \(input)"
        }
    }

    /// The reason without the path, for messages that name the file themselves.
    public var reason: String {
        let full = description
        let prefix = path + ": "
        return full.hasPrefix(prefix) ? String(full.dropFirst(prefix.count)) : full
    }

    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
