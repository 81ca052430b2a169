import Foundation
import PoiTestSupport
import Testing
@testable import PoiFormats

/// A file that changes while it is read ends in `changedWhileRead`, never in a shorter input
/// read as if whole.
@Suite(.tags(.unit)) struct ByteSourceTests {
    static let oldDate = Date(timeIntervalSince1970: 1_600_000_000)

    /// A file of `bytes` bytes with an old modification time, so that any write after the open
    /// moves it, however coarse the file system's clock.
    static func oldFile(bytes: Int) throws -> (path: String, remove: () -> Void) {
        let path = NSTemporaryDirectory() + "poi-bytesource-\(UUID().uuidString.prefix(8))"
        try Data(repeating: UInt8(ascii: "a"), count: bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: oldDate], ofItemAtPath: path)
        return (path, { try? FileManager.default.removeItem(atPath: path) })
    }

    static func readToEnd(_ source: ByteSource) throws(FormatError) -> Int {
        var buffer: [UInt8] = []
        while try source.read(appendingTo: &buffer) > 0 { buffer.removeAll(keepingCapacity: true) }
        return source.bytesRead
    }

    @Test func anUnchangedFileReadsToItsEnd() throws {
        let file = try Self.oldFile(bytes: 600_000)
        defer { file.remove() }
        #expect(try Self.readToEnd(ByteSource(path: file.path)) == 600_000)
    }

    /// `keepingItsModificationTime`: a file system's timestamp can lag behind a truncation (seen
    /// on ext4, kernel 6.18: the modification time stayed as it was); the size says it too.
    @Test(arguments: [false, true])
    func aFileTruncatedWhileReadIsAChangedFile(keepingItsModificationTime: Bool) throws {
        let file = try Self.oldFile(bytes: 1 << 20)
        defer { file.remove() }
        let source = try ByteSource(path: file.path)
        var buffer: [UInt8] = []
        #expect(try source.read(appendingTo: &buffer) == ByteSource.chunkSize)
        #expect(truncate(file.path, 100_000) == 0)
        if keepingItsModificationTime {
            try FileManager.default.setAttributes([.modificationDate: Self.oldDate], ofItemAtPath: file.path)
        }
        #expect(throws: FormatError.changedWhileRead(file: file.path, openedBytes: 1 << 20, endBytes: 100_000,
                                                     readBytes: ByteSource.chunkSize)) {
            _ = try Self.readToEnd(source)
        }
    }

    @Test func aChangedFileIsSaidWithItsSizes() {
        let message = FormatError.changedWhileRead(file: "in.csv", openedBytes: 1 << 20, endBytes: 100_000,
                                                   readBytes: ByteSource.chunkSize).description
        #expect(message == "in.csv: changed while it was read (1048576 bytes when opened, 100000 at its end, 262144 read): "
                + "another program was writing or truncating it, so what was read is not the file")
    }

    /// Still being written (a download): the bytes appended before the end are read, and the
    /// file is still said to have changed, since more may come.
    @Test func aFileAppendedWhileReadIsAChangedFile() throws {
        let file = try Self.oldFile(bytes: 300_000)
        defer { file.remove() }
        let source = try ByteSource(path: file.path)
        var buffer: [UInt8] = []
        #expect(try source.read(appendingTo: &buffer) == ByteSource.chunkSize)
        let handle = try #require(FileHandle(forWritingAtPath: file.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x62, count: 50_000))
        try handle.close()
        #expect(throws: FormatError.changedWhileRead(file: file.path, openedBytes: 300_000, endBytes: 350_000,
                                                     readBytes: 350_000)) {
            _ = try Self.readToEnd(source)
        }
    }

    /// /proc files say 0 bytes and read more: not a change.
    @Test func aPseudoFileWhoseSizeIsZeroReadsToItsEnd() throws {
        #expect(try Self.readToEnd(ByteSource(path: "/proc/self/status")) > 100)
    }
}
