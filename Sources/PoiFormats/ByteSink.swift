import CSystemShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where writers put bytes. Writers buffer themselves and call `write` with large blocks.
public protocol ByteSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(FormatError)
    /// Called once after the last write (a compressing sink writes its trailer).
    mutating func finish() throws(FormatError)
}

extension ByteSink {
    public mutating func finish() throws(FormatError) {}

    /// Writes a writer's `buffer` and empties it, keeping its capacity. The buffer is lent as it
    /// is, never copied, and the sink is not copied either: a copy of a `MemorySink` shares its
    /// array, so a flush through one copied everything written so far, and a 100k-place GeoJSON
    /// answer of `poi serve` took quadratic time (40k places: 2.55 s, 1.54 s once fixed).
    public mutating func write(draining buffer: inout [UInt8]) throws(FormatError) {
        guard !buffer.isEmpty else { return }
        var failure: FormatError?
        buffer.withUnsafeBytes { b in
            do throws(FormatError) { try write(b) } catch { failure = error }
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw failure }
    }
}

/// Collects output in memory (tests, small outputs).
public struct MemorySink: ByteSink {
    public var bytes: [UInt8] = []
    public init() {}
    public mutating func write(_ b: UnsafeRawBufferPointer) throws(FormatError) { bytes.append(contentsOf: b) }
}

/// Writes to a file descriptor, retrying short writes and EINTR. Does not own the descriptor.
/// With `gzip`, what is written is gzip'd on the way (`GzipDeflater`), completed by `finish()`.
/// With `writesBackAhead`, the bytes already written are handed to the disk as the output grows
/// (`WritebackAhead`), for a file that is fsync'd once complete.
public struct FileDescriptorSink: ByteSink {
    public let fd: Int32
    public let name: String
    private let deflater: GzipDeflater?
    private var writeback: WritebackAhead?

    public init(fd: Int32, name: String, gzip: Bool = false, writesBackAhead: Bool = false) {
        self.fd = fd
        self.name = name
        deflater = gzip ? GzipDeflater() : nil
        writeback = writesBackAhead ? WritebackAhead() : nil
    }

    public mutating func write(_ b: UnsafeRawBufferPointer) throws(FormatError) {
        guard let deflater else { return try writeRaw(b) }
        try deflater.compress(b, finish: false) { (out) throws(FormatError) in try writeRaw(out) }
    }

    public mutating func finish() throws(FormatError) {
        guard let deflater else { return }
        try deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), finish: true) { (out) throws(FormatError) in
            try writeRaw(out)
        }
    }

    private mutating func writeRaw(_ b: UnsafeRawBufferPointer) throws(FormatError) {
        var off = 0
        while off < b.count {
            #if canImport(Glibc)
            let r = Glibc.write(fd, b.baseAddress! + off, b.count - off)
            #else
            let r = Darwin.write(fd, b.baseAddress! + off, b.count - off)
            #endif
            if r < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(file: name, reason: String(cString: strerror(errno)))
            }
            off += r
        }
        writeback?.wrote(b.count, to: fd)
    }
}

/// Starts the disk writes of a file's pages while the rest of it is still being made, a few
/// megabytes behind the end: `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which queues them and
/// does not wait. A file that is fsync'd when complete (`AtomicFile`'s synced outputs) then
/// waits only for its last stretch. Measured: the fsync of `poi convert`'s 40 MB
/// output took 16–18 ms after everything else was done, 5 % of the run, on this machine's disk.
///
/// A hint only: its failures (a pipe, another system, where CSystemShims answers ENOSYS) change
/// nothing. Called through CSystemShims: Swift's Glibc module leaves out the GNU declarations of
/// <fcntl.h>.
struct WritebackAhead {
    /// Bytes between hints: big enough that the calls cost nothing, small enough that the tail
    /// left for the final fsync is short.
    static let stride = 4 << 20
    /// Bytes written so far, and where the last hint ended.
    private var written = 0
    private var handedOver = 0

    mutating func wrote(_ count: Int, to fd: Int32) {
        written += count
        guard written - handedOver >= Self.stride else { return }
        // Start writing the range's dirty pages, do not wait.
        _ = poi_sync_file_range(fd, Int64(handedOver), Int64(written - handedOver), UInt32(POI_SYNC_FILE_RANGE_WRITE))
        handedOver = written
    }
}
