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
        var failure: Int32 = 0
        var bytes: [UInt8] = []
        try withOpenFile(path, limit: limit) { fd, size in
            bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                (count, failure) = readFully(fd, into: UnsafeMutableRawPointer(buffer.baseAddress), size: size)
            }
        }
        if failure != 0 { throw .cannotRead(path: path, errno: failure) }
        return bytes
    }

    /// `read(_:limit:)` into `buffer`, whose memory is kept from one file to the next (grown
    /// when a file is larger): a worker reading photo after photo writes to pages already mapped
    /// instead of a fresh allocation, faulted in and zeroed by the kernel, per file.
    public static func read(_ path: String, limit: Int = .max, into buffer: ReusableBytes) throws(FileError) {
        var failure: Int32 = 0
        try withOpenFile(path, limit: limit) { fd, size in
            buffer.reserve(size)
            (buffer.count, failure) = readFully(fd, into: buffer.storage.baseAddress, size: size)
        }
        if failure != 0 { throw .cannotRead(path: path, errno: failure) }
    }

    /// The size `stat` gives now, for ordering work; nil when there is nothing to stat.
    public static func size(of path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    /// Opens `path` and hands over its descriptor and size: a regular file within `limit`.
    private static func withOpenFile(_ path: String, limit: Int, _ body: (Int32, Int) -> Void) throws(FileError) {
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
        body(fd, size)
    }

    /// Up to `size` bytes; fewer if the file shrank. Returns the count and errno (0: none).
    private static func readFully(_ fd: Int32, into base: UnsafeMutableRawPointer?, size: Int) -> (Int, Int32) {
        var filled = 0
        while filled < size, let base {
            let n = systemRead(fd, base + filled, size - filled)
            if n < 0 {
                if errno == EINTR { continue }
                return (filled, errno)
            }
            if n == 0 { break }
            filled += n
        }
        return (filled, 0)
    }
}

/// Bytes `WholeFile.read(_:limit:into:)` fills again and again: one worker's, never shared
/// while in use. Its memory grows to the largest file read and goes when it is released.
public final class ReusableBytes: @unchecked Sendable {
    fileprivate private(set) var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    public fileprivate(set) var count = 0

    public init() {}

    deinit { storage.deallocate() }

    /// Bytes allocated (and, once a file that large was read, mapped): the largest file read.
    public var capacity: Int { storage.count }

    /// The bytes of the last file read; valid until the next read.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[0..<count]) }

    fileprivate func reserve(_ size: Int) {
        count = 0
        guard storage.count < size else { return }
        storage.deallocate()
        storage = .allocate(byteCount: size, alignment: 64)
    }
}

/// `read(2)`; named apart so it does not collide with `WholeFile.read` inside the type.
@inline(__always)
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
