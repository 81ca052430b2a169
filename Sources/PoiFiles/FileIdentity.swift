#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file as the kernel knows it: device and inode, after following links. Two paths with the
/// same identity are the same file, however they are spelled (`./a`, `../x/a`, a symlink).
public struct FileIdentity: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    /// nil when `path` does not exist (or cannot be looked at).
    public init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    public init?(descriptor fd: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    /// Whether two existing paths name the same file.
    public static func same(_ a: String, _ b: String) -> Bool {
        guard let x = FileIdentity(path: a), let y = FileIdentity(path: b) else { return false }
        return x == y
    }
}
