import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP socket bound to a port the kernel picked: for a free port to give a server, or
/// (kept open) a port that is taken. One helper for every test target.
public enum Loopback {
    /// A socket bound to 127.0.0.1 on a port the kernel picked, and that port; the caller closes it.
    public static func bound() -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// A loopback port nothing listens on right now (bound, read, released).
    public static func freePort() -> Int {
        let (fd, port) = bound()
        close(fd)
        return port
    }
}
