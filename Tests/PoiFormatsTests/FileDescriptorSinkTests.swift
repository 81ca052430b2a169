import Foundation
import PoiTestSupport
import Testing
@testable import PoiFormats

/// `writesBackAhead` only starts disk writes early (`WritebackAhead`): what is written, to a file
/// or a pipe (where the hint fails), and how gzip wraps it, stay exactly the same.
@Suite(.tags(.process)) struct FileDescriptorSinkTests {
    /// 10 MB in uneven blocks: past the 4 MB stride twice, ends not on a block boundary.
    static let blocks: [[UInt8]] = (0..<23).map { k in
        (0..<(300_001 + k * 17_003)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k) }
    }

    static func write(writingBack: Bool, gzip: Bool) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-sink-\(UUID().uuidString)").path
        defer { unlink(path) }
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        #expect(fd >= 0)
        var sink = FileDescriptorSink(fd: fd, name: path, gzip: gzip, writesBackAhead: writingBack)
        for b in blocks { var block = b; try sink.write(draining: &block) }
        try sink.finish()
        #expect(fsync(fd) == 0)
        close(fd)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test(arguments: [false, true])
    func aFileWrittenBackAheadHoldsTheSameBytes(gzip: Bool) throws {
        let plain = try Self.write(writingBack: false, gzip: gzip)
        let ahead = try Self.write(writingBack: true, gzip: gzip)
        #expect(ahead == plain)
        if !gzip { #expect(plain.count == Self.blocks.reduce(0) { $0 + $1.count }) }
    }

    @Test func aPipeIsWrittenAsBefore() throws {
        // `cat` drains the pipe into a file while the sink writes (sync_file_range fails on a pipe).
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("poi-sink-pipe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        #expect(FileManager.default.createFile(atPath: out.path, contents: nil))
        let cat = Process()
        cat.executableURL = URL(fileURLWithPath: "/bin/cat")
        let pipe = Pipe()
        cat.standardInput = pipe
        cat.standardOutput = try FileHandle(forWritingTo: out)
        try cat.run()
        var sink = FileDescriptorSink(fd: pipe.fileHandleForWriting.fileDescriptor, name: "pipe", writesBackAhead: true)
        for b in Self.blocks { var block = b; try sink.write(draining: &block) }
        try pipe.fileHandleForWriting.close()
        cat.waitUntilExit()
        #expect(cat.terminationStatus == 0)
        #expect(Array(try Data(contentsOf: out)) == Self.blocks.flatMap { $0 })
    }
}
