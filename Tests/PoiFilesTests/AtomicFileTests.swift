import Foundation
import PoiTestSupport
import Testing
@testable import PoiFiles

/// A scratch folder removed at the end of each test.
struct Scratch: ~Copyable {
    let root: String
    init() throws {
        var template = Array((NSTemporaryDirectory() + "poifiles-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw CocoaError(.fileWriteUnknown)
        }
        root = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    func path(_ name: String) -> String { root + "/" + name }
    func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws -> String {
        let p = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        chmod(p, mode)
        return p
    }
    func read(_ name: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path(name)))).map { String(decoding: $0, as: UTF8.self) }
    }
    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted() }
    func mode(_ name: String) -> mode_t {
        var st = stat()
        lstat(path(name), &st)
        return st.st_mode
    }
    deinit { try? FileManager.default.removeItem(atPath: root) }
}

@Suite(.tags(.unit)) struct AtomicFileTests {
    @Test func replacesAWholeFileAndLeavesNoTemporary() throws {
        let s = try Scratch()
        let p = try s.write("out.geojson", "old")
        try AtomicFile.write(Array("new content".utf8), to: p)
        #expect(s.read("out.geojson") == "new content")
        #expect(s.names() == ["out.geojson"])
        // Other tests run at the same time: only this folder's temporary files matter here.
        #expect(!TemporaryFiles.shared.current.contains { $0.hasPrefix(s.root + "/") })
    }

    @Test func abandonKeepsTheOldFile() throws {
        let s = try Scratch()
        let p = try s.write("out.csv", "old")
        let f = try AtomicFile(path: p)
        try f.write(Array("half".utf8))
        #expect(s.names().count == 2)  // the temporary file beside it
        #expect(TemporaryFiles.shared.current.contains(f.temporaryPath!))
        f.abandon()
        #expect(s.read("out.csv") == "old")
        #expect(s.names() == ["out.csv"])
        #expect(!TemporaryFiles.shared.current.contains(f.temporaryPath!))
    }

    @Test func keepsTheModeOfTheFileItReplaces() throws {
        let s = try Scratch()
        for mode: mode_t in [0o600, 0o640, 0o755] {
            let p = try s.write("f\(mode)", "old", mode: mode)
            try AtomicFile.write([1, 2, 3], to: p)
            #expect(s.mode("f\(mode)") & 0o7777 == mode)
        }
    }

    @Test func newFilesHonourTheUmask() throws {
        let s = try Scratch()
        try AtomicFile.write([1], to: s.path("new"))
        #expect(s.mode("new") & 0o7777 == 0o666 & ~ProcessUmask.value)
        // The value read from /proc agrees with the kernel's.
        let old = umask(0o022)
        umask(old)
        #expect(ProcessUmask.value == old)
    }

    @Test func followsASymlinkAndKeepsIt() throws {
        let s = try Scratch()
        let real = try s.write("real.geojson", "old", mode: 0o600)
        #expect(symlink("real.geojson", s.path("link.geojson")) == 0)
        try AtomicFile.write(Array("new".utf8), to: s.path("link.geojson"))
        #expect(s.mode("link.geojson") & S_IFMT == S_IFLNK)
        #expect(s.read("real.geojson") == "new")
        #expect(s.mode("real.geojson") & 0o7777 == 0o600)
        _ = real
    }

    @Test func aDanglingSymlinkIsWrittenThrough() throws {
        let s = try Scratch()
        #expect(symlink("target.json", s.path("link.json")) == 0)
        try AtomicFile.write(Array("x".utf8), to: s.path("link.json"))
        #expect(s.mode("link.json") & S_IFMT == S_IFLNK)
        #expect(s.read("target.json") == "x")
    }

    @Test func aFIFOIsWrittenInPlace() throws {
        let s = try Scratch()
        let fifo = s.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on the other end, as `poi export -o fifo` would have.
        let received = ReceivedBytes()
        let reader = Thread {
            let fd = open(fifo, O_RDONLY)
            guard fd >= 0 else { return }
            var data = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { break }
                data.append(contentsOf: chunk[..<n])
            }
            close(fd)
            received.set(data)
        }
        reader.start()
        try AtomicFile.write(Array("through the pipe".utf8), to: fifo)
        for _ in 0..<200 where received.get() == nil { usleep(10_000) }
        #expect(received.get().map { String(decoding: $0, as: UTF8.self) } == "through the pipe")
        #expect(s.mode("pipe") & S_IFMT == S_IFIFO)
        #expect(s.names() == ["pipe"])
    }

    @Test(.enabled(if: geteuid() == 0, "mknod needs root"))
    func aDeviceNodeIsWrittenInPlaceNotReplaced() throws {
        let s = try Scratch()
        // A private null device (char 1:3) and full device (1:7), never the real /dev.
        #expect(mknod(s.path("null"), S_IFCHR | 0o666, Self.device(1, 3)) == 0)
        #expect(mknod(s.path("full"), S_IFCHR | 0o666, Self.device(1, 7)) == 0)
        try AtomicFile.write(Array(repeating: 7, count: 3831), to: s.path("null"))
        #expect(s.mode("null") & S_IFMT == S_IFCHR)
        #expect(throws: FileError.cannotWrite(path: s.path("full"), errno: ENOSPC)) {
            try AtomicFile.write(Array(repeating: 7, count: 10), to: s.path("full"))
        }
        #expect(s.mode("full") & S_IFMT == S_IFCHR)
        #expect(s.names() == ["full", "null"])
    }

    /// glibc's makedev() is a macro Swift cannot see; this is its encoding for small numbers.
    static func device(_ major: UInt64, _ minor: UInt64) -> dev_t { dev_t((major << 8) | minor) }

    @Test func refusesToWriteOverAnInput() throws {
        let s = try Scratch()
        let input = try s.write("x.geojson", "precious")
        #expect(symlink("x.geojson", s.path("alias.geojson")) == 0)
        #expect(throws: FileError.outputIsInput(path: input, input: input)) {
            try AtomicFile.write([1], to: input, refusing: [input])
        }
        #expect(throws: FileError.outputIsInput(path: s.path("alias.geojson"), input: input)) {
            try AtomicFile.write([1], to: s.path("alias.geojson"), refusing: [input])
        }
        #expect(s.read("x.geojson") == "precious")
    }

    @Test func temporaryNamesFitNameMax() throws {
        let s = try Scratch()
        for length in [200, 240, 250, 255] {
            let name = String(repeating: "é", count: length / 2) + (length % 2 == 1 ? "x" : "")
            #expect(name.utf8.count == length)
            try AtomicFile.write([1], to: s.path(name))
            #expect(s.read(name) != nil)
        }
        #expect(AtomicFile.temporaryName(for: String(repeating: "a", count: 255)).utf8.count <= 255)
    }

    @Test func aFolderIsNotAnOutput() throws {
        let s = try Scratch()
        #expect(throws: FileError.notARegularFile(path: s.root)) { try AtomicFile.write([1], to: s.root) }
    }

    @Test func staleTemporariesOfDeadWritersAreRemoved() throws {
        let s = try Scratch()
        _ = try s.write("out.geojson", "old")
        // pid 2^22+ is above Linux's default pid_max on this machine's kind: no such process.
        let dead = try s.write(".out.geojson.tmp-4194999.abcdef", "partial")
        let live = try s.write(".out.geojson.tmp-\(getpid()).abcdef", "in progress")
        let other = try s.write(".other.tmp-4194999.abcdef", "not ours")
        #expect(AtomicFile.removeStaleTemporaries(of: s.path("out.geojson")) == 1)
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: other))
    }
}

final class ReceivedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    func get() -> Data? { lock.lock(); defer { lock.unlock() }; return data }
}

@Suite(.tags(.unit)) struct WholeFileAndPathTests {
    @Test func readsExactBytesAndRefusesWhatIsNotAFile() throws {
        let s = try Scratch()
        let p = try s.write("a", "hello")
        #expect(try WholeFile.read(p) == Array("hello".utf8))
        #expect(throws: FileError.tooLarge(path: p, bytes: 5, limit: 4)) { try WholeFile.read(p, limit: 4) }
        #expect(throws: FileError.notARegularFile(path: s.root)) { try WholeFile.read(s.root) }
        #expect(throws: FileError.cannotOpen(path: s.path("missing"), errno: ENOENT)) { try WholeFile.read(s.path("missing")) }
        #expect(try WholeFile.read(try s.write("empty", "")) == [])
    }

    /// One buffer, file after file: each read gives exactly that file's bytes, the memory grows
    /// only for a larger file, and an empty file reads as empty.
    @Test func aReusedBufferHoldsExactlyTheLastFileRead() throws {
        let s = try Scratch()
        let buffer = ReusableBytes()
        let big = try s.write("big", String(repeating: "x", count: 10_000))
        try WholeFile.read(big, into: buffer)
        #expect(Array(buffer.bytes) == Array(repeating: UInt8(ascii: "x"), count: 10_000))
        let first = buffer.bytes.baseAddress
        try WholeFile.read(try s.write("small", "hello"), into: buffer)
        #expect(Array(buffer.bytes) == Array("hello".utf8) && buffer.bytes.baseAddress == first)
        #expect(throws: FileError.tooLarge(path: big, bytes: 10_000, limit: 10)) { try WholeFile.read(big, limit: 10, into: buffer) }
        #expect(throws: FileError.notARegularFile(path: s.root)) { try WholeFile.read(s.root, into: buffer) }
        try WholeFile.read(try s.write("empty", ""), into: buffer)
        #expect(buffer.count == 0 && Array(buffer.bytes) == [])
        let fresh = ReusableBytes()
        try WholeFile.read(try s.write("empty2", ""), into: fresh)
        #expect(fresh.count == 0 && Array(fresh.bytes) == [])
    }

    @Test func pathsThatTrapFoundationAreFine() {
        // NSString.deletingLastPathComponent traps on these in this toolchain's Foundation.
        #expect(FilePaths.folder(of: "a") == ".")
        #expect(FilePaths.folder(of: "-") == ".")
        #expect(FilePaths.folder(of: "x/") == ".")
        #expect(FilePaths.folder(of: "..") == ".")
        #expect(FilePaths.folder(of: "./") == ".")
        #expect(FilePaths.folder(of: "/a") == "/")
        #expect(FilePaths.folder(of: "d/e/f.csv") == "d/e")
        #expect(FilePaths.folder(of: "new\nline/f.csv") == "new\nline")
        #expect(FilePaths.lastComponent(of: "d/e/f.csv") == "f.csv")
        #expect(FilePaths.stem(of: "d/photo.final.jpg") == "photo.final")
        #expect(FilePaths.stem(of: "a") == "a")
        #expect(FilePaths.join("out", "a.jpeg") == "out/a.jpeg")
    }

    @Test func identityFollowsLinks() throws {
        let s = try Scratch()
        let a = try s.write("a", "1")
        _ = try s.write("b", "1")
        #expect(symlink("a", s.path("l")) == 0)
        #expect(FileIdentity.same(a, s.path("l")))
        #expect(FileIdentity.same(a, s.root + "/./a"))
        #expect(!FileIdentity.same(a, s.path("b")))
        #expect(!FileIdentity.same(a, s.path("missing")))
    }
}
