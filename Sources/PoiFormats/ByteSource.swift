#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file (or an in-memory buffer, for tests) in fixed-size chunks, so readers hold at most
/// one chunk plus the current record whatever the file size.
/// More than ten stored properties: the file, its chunk buffer and the positions a reader and its progress read; splitting them would put a hop on every chunk.
public final class ByteSource {
    public static let chunkSize = 256 * 1024

    private var fd: Int32 = -1
    private var memory: [UInt8] = []
    private var memoryOffset = 0
    /// Most bytes one in-memory `read` returns (pipes and stdin give short reads too).
    private var memoryChunk = ByteSource.chunkSize
    public let name: String
    /// Bytes of the file read so far, and the file's size when it has one: progress and ETA.
    /// Through a decoding stage (gzip, another encoding) these are the file's own bytes, not the
    /// decoded ones, so the fraction `bytesRead / totalBytes` stays a progress fraction.
    public var bytesRead: Int { stage?.inputBytesRead ?? rest?.bytesRead ?? ownBytesRead }
    public var totalBytes: Int? { stage?.inputTotalBytes ?? rest?.totalBytes ?? ownTotalBytes }
    private var ownBytesRead = 0
    private var ownTotalBytes: Int?
    /// A regular file's modification time when opened (its size is `ownTotalBytes`): at its end
    /// the file is looked at again, and one whose time or size moved meanwhile (still
    /// downloading, truncated, rewritten) is a read failure, not a shorter input read as if
    /// whole (as tar's "file changed as we read it").
    private var openedModified: timespec?
    /// Decodes another source's bytes (`GzipStage`, `TranscodingStage`).
    private var stage: ByteStage?

    /// Opens `path` read-only. "-" reads standard input.
    public init(path: String) throws(FormatError) {
        name = path
        if path == "-" {
            fd = 0
            return
        }
        let f = open(path, O_RDONLY | O_CLOEXEC)
        if f < 0 { throw .cannotOpen(file: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        if fstat(f, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(f)
            throw .cannotOpen(file: path, reason: "is a directory")
        }
        if (st.st_mode & S_IFMT) == S_IFREG {
            ownTotalBytes = Int(st.st_size)
            openedModified = st.st_mtim
        }
        fd = f
    }

    /// Whether `init(path:)` would open `path`, without opening it: a run of several inputs checks
    /// them all before writing anything. Opening is left to the read itself because opening a
    /// FIFO or `<(cmd)` and closing it again would end the writer's pipe; those are only checked
    /// to exist. Throws what `init(path:)` would.
    public static func checkReadable(path: String) throws(FormatError) {
        if path == "-" { return }
        var st = stat()
        if stat(path, &st) != 0 { throw .cannotOpen(file: path, reason: String(cString: strerror(errno))) }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotOpen(file: path, reason: "is a directory") }
        if (st.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) != 0 {
            throw .cannotOpen(file: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Serves `prefix` first, then the rest of `then` (format sniffing without seeking); with
    /// `failing`, throws that after the prefix instead (the read error that ended the peek).
    init(prefix: [UInt8], then rest: ByteSource, failing: FormatError? = nil) {
        name = rest.name
        memory = prefix
        self.rest = rest
        pendingError = failing
    }

    private var pendingError: FormatError?

    private var rest: ByteSource?

    /// Serves what `stage` decodes (the name stays the file's: messages name the file).
    init(name: String, stage: ByteStage) {
        self.name = name
        self.stage = stage
    }

    /// Serves `bytes`, at most `chunkSize` of them per `read` (small values exercise the readers'
    /// chunk-boundary handling, as a pipe's short reads would: tests and `make fuzz-formats`).
    public init(bytes: [UInt8], name: String, chunkSize: Int = ByteSource.chunkSize) {
        precondition(chunkSize > 0)
        self.name = name
        memory = bytes
        memoryChunk = chunkSize
    }

    deinit {
        if fd > 0 { close(fd) }
    }

    /// Appends up to `chunkSize` bytes to `buffer`; returns how many (0 at end of file).
    public func read(appendingTo buffer: inout [UInt8]) throws(FormatError) -> Int {
        if let stage { return try stage.read(appendingTo: &buffer) }
        if fd < 0 {
            if memoryOffset == memory.count, let rest {
                if let e = pendingError { pendingError = nil; throw e }
                return try rest.read(appendingTo: &buffer)
            }
            let n = min(memoryChunk, memory.count - memoryOffset)
            buffer.append(contentsOf: memory[memoryOffset..<(memoryOffset + n)])
            memoryOffset += n
            if rest == nil { ownBytesRead += n }  // a replayed prefix was counted by `rest`
            return n
        }
        let old = buffer.count
        let want = ByteSource.chunkSize
        buffer.reserveCapacity(old + want)
        var got = 0
        // Grow the array by `want` uninitialised bytes, read into them, then trim.
        buffer.append(contentsOf: repeatElement(0, count: want))
        while true {
            let r = buffer.withUnsafeMutableBytes { raw in
                sysRead(fd, raw.baseAddress! + old, want)
            }
            if r < 0 && errno == EINTR { continue }
            if r < 0 {
                buffer.removeLast(want)
                throw .readFailed(file: name, reason: String(cString: strerror(errno)))
            }
            got = r
            break
        }
        buffer.removeLast(want - got)
        ownBytesRead += got
        if got == 0 { try checkUnchangedAtEnd() }
        return got
    }

    private func checkUnchangedAtEnd() throws(FormatError) {
        guard let opened = openedModified, let openedSize = ownTotalBytes else { return }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        let size = Int(st.st_size)
        // The size as well as the time: a timestamp can lag (a truncation here kept the file's
        // modification time of 200 ms before, kernel 6.18, ext4). What was read is not compared
        // with the size: a pseudo-file (/proc: size 0) reads more than its size says.
        let modified = st.st_mtim.tv_sec != opened.tv_sec || st.st_mtim.tv_nsec != opened.tv_nsec
        guard modified || size != openedSize else { return }
        openedModified = nil  // said once
        throw .changedWhileRead(file: name, openedBytes: openedSize, endBytes: size, readBytes: ownBytesRead)
    }
}

/// A decoder between a file's bytes and the readers: it hands out decoded bytes in chunks.
protocol ByteStage: AnyObject {
    /// Appends decoded bytes to `buffer`; returns how many (0 only at the end of the input).
    func read(appendingTo buffer: inout [UInt8]) throws(FormatError) -> Int
    /// The underlying file's bytes consumed so far, and its size when known (progress).
    var inputBytesRead: Int { get }
    var inputTotalBytes: Int? { get }
}

@inline(__always)
func sysRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, p, n)
    #else
    return Darwin.read(fd, p, n)
    #endif
}
