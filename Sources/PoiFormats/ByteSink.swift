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
