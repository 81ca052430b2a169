#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where writers put bytes. Writers buffer themselves and call `write` with large blocks.
public protocol ByteSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(FormatError)
}

/// Collects output in memory (tests, small outputs).
public struct MemorySink: ByteSink {
    public var bytes: [UInt8] = []
    public init() {}
    public mutating func write(_ b: UnsafeRawBufferPointer) throws(FormatError) { bytes.append(contentsOf: b) }
}

/// Writes to a file descriptor, retrying short writes and EINTR. Does not own the descriptor.
public struct FileDescriptorSink: ByteSink {
    public let fd: Int32
    public let name: String
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    public mutating func write(_ b: UnsafeRawBufferPointer) throws(FormatError) {
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
    }
}

/// Writes a file atomically: bytes go to a temp file beside `path`; `commit()` fsyncs and renames
/// it into place, so readers of `path` see the old file or the complete new one, never a part.
/// Without `commit()` (an error, a crash) the temp file is removed by `abandon()` / `deinit`.
public final class AtomicFile {
    public let path: String
    public let tempPath: String
    public private(set) var sink: FileDescriptorSink
    private var done = false

    public init(path: String) throws(FormatError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(dir.isEmpty ? "/" : dir)/.\(base).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw .cannotOpen(file: path, reason: String(cString: strerror(errno))) }
        tempPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        fchmod(fd, 0o644)
        sink = FileDescriptorSink(fd: fd, name: path)
    }

    public func commit() throws(FormatError) {
        guard !done else { return }
        done = true
        if fsync(sink.fd) != 0 || close(sink.fd) != 0 {
            let why = String(cString: strerror(errno))
            unlink(tempPath)
            throw .writeFailed(file: path, reason: why)
        }
        if rename(tempPath, path) != 0 {
            let why = String(cString: strerror(errno))
            unlink(tempPath)
            throw .writeFailed(file: path, reason: why)
        }
    }

    public func abandon() {
        guard !done else { return }
        done = true
        close(sink.fd)
        unlink(tempPath)
    }

    deinit { abandon() }
}
