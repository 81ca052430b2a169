#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file whole into the array the decoders and hashers take: one `fstat`, one
/// allocation of the right size, `read` straight into it. Used for images (import, `poi thumb`)
/// and stored uploads; dumps are streamed instead (PoiFormats' `ByteSource`).
public enum WholeFile {
    /// The bytes of `path`, refusing a non-regular file, or one over `limit` bytes before reading
    /// any of it. A file that shrinks while it is read yields what was there.
    public static func read(_ path: String, limit: Int = .max) throws(FileError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever (a
        // `poi thumb photos/*` meeting a named pipe). It changes nothing for a regular file.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .cannotRead(path: path, errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        let size = Int(st.st_size)
        guard size <= limit else { throw .tooLarge(path: path, bytes: size, limit: limit) }
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var filled = 0
            while filled < size {
                let n = systemRead(fd, buffer.baseAddress! + filled, size - filled)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if n == 0 { break }
                filled += n
            }
            count = filled
        }
        if failure != 0 { throw .cannotRead(path: path, errno: failure) }
        return bytes
    }
}

/// `read(2)`; named apart so it does not collide with `WholeFile.read` inside the type.
@inline(__always)
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
