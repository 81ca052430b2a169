import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Staged uploads: a staging error names its real cause, a killed server's staged files are removed
/// at the next start, and `poi gc` never calls a live upload's staged file stale.
@Suite("poi serve: staged uploads, their errors and their clean-up", .tags(.live, .process), .serialized, .liveServer)
struct StagedUploadsTests: UploadFixtures {
    /// The staging error quotes `strerror(errno)` read after a thread-pool hop, so it names
    /// another thread's errno: "…: Success", "…: Transport endpoint is not connected".
    @Test func stagingErrorNamesTheRealCause() throws {
        let s = try ServeHarness("t14errno")
        try FileManager.default.removeItem(atPath: s.uploads)
        #expect(FileManager.default.createFile(atPath: s.uploads, contents: Data("not a folder".utf8)))
        let r = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: try ServeHarness.sample("brick.png"))
        #expect(r.status >= 500)
        #expect(r.text.contains("Not a directory"), "\(r.text)")
    }

    /// A pid no process has now: that of a program that has ended.
    static func deadPid() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    /// Names in `folder` that start with `prefix`.
    static func names(in folder: String, prefix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// `kill -9` during a GridFS upload left `/tmp/.upload.tmp-*` for nobody to remove. The next
    /// server removes what a stopped one staged, in the temporary folder (GridFS) and in the
    /// uploads folder, and leaves a live process's staged upload and other programs' files.
    @Test func stagedUploadsOfAKilledServerAreRemovedAtStart() throws {
        let tmp = NSTemporaryDirectory() + "poi-serve-stale-\(ObjectId().hex)"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: tmp) }

        let first = try ServeHarness("stale1", extraArguments: ["--gridfs"], environment: ["TMPDIR": tmp])
        let client = try RawConnection(port: first.port)
        client.send("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 5000000\r\n\r\n",
                    then: Self.pngSignature + [UInt8](repeating: 0x78, count: 2_000_000))
        var staged: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while staged.isEmpty && Date() < deadline {
            staged = Self.names(in: tmp, prefix: ".upload.tmp-")
            if staged.isEmpty { usleep(50_000) }
        }
        try #require(staged.count == 1, "no staged upload in \(tmp)")
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        #expect(Self.names(in: tmp, prefix: ".upload.tmp-") == staged, "kill -9 leaves the staged upload")

        let live = ".upload.tmp-\(getpid()).abcdef"  // this test process's: alive
        let other = ".export.tmp-\(try Self.deadPid()).abcdef"  // not a staged upload
        for name in [live, other] { _ = FileManager.default.createFile(atPath: tmp + "/" + name, contents: Data([1])) }

        let second = try ServeHarness("stale2", extraArguments: ["--gridfs"], environment: ["TMPDIR": tmp])
        #expect(Self.names(in: tmp, prefix: ".upload.tmp-") == [live])
        #expect(Self.names(in: tmp, prefix: ".export.tmp-") == [other])
        #expect(second.log.contains("poi serve: removed 1 staged upload left in \(tmp)"),
                "\(second.log)")
        #expect(second.stop() == 0)

        // The uploads folder, where the disk store stages: the same.
        let disk = try ServeHarness("stale3")
        let leftover = ".upload.tmp-\(try Self.deadPid()).Qx9Zk2"
        _ = FileManager.default.createFile(atPath: disk.uploads + "/" + leftover, contents: Data([1, 2, 3]))
        #expect(disk.stop() == 0)
        let again = try ServeHarness("stale4", extraArguments: ["--uploads", disk.uploads])
        #expect(Self.names(in: disk.uploads, prefix: ".upload.tmp-") == [], "\(again.log)")
        #expect(again.stop() == 0)
    }

    /// While a server streams an upload, `poi gc` listed its staged file as a "stale temporary
    /// file" (exit 1 on a healthy system; `--min-age 0 --delete` would remove a live upload's
    /// file). A staged upload whose process runs is not stale, as `poi serve` itself judges at
    /// start.
    @Test func gcDoesNotCallALiveUploadStale() throws {
        let s = try ServeHarness("gclive")
        var client: RawConnection? = try RawConnection(port: s.port)
        _ = client?.send("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 5000000\r\n\r\n",
                    then: Self.pngSignature + [UInt8](repeating: 0x78, count: 1_000_000))
        var staged: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while staged.isEmpty && Date() < deadline {
            staged = s.uploadedNames.filter { $0.hasPrefix(".upload.tmp-") }
            if staged.isEmpty { usleep(50_000) }
        }
        try #require(staged.count == 1, "the upload is not being staged: \(s.uploadedNames)")

        let (text, status) = try runToEnd(ServeHarness.binary,
                                          ["gc", "--uri", LiveDatabase.uri!, "--db", s.databaseName, "--uploads", s.uploads, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        let stale = report["staleTemporaryFiles"] as? [String] ?? []
        #expect(!stale.contains(staged[0]), "a live server's upload in progress was reported stale: \(stale)")
        #expect(status == 0, "gc exit \(status) on a consistent store with one upload under way: \(text)")

        let (_, deleteStatus) = try runToEnd(ServeHarness.binary,
                                             ["gc", "--uri", LiveDatabase.uri!, "--db", s.databaseName, "--uploads", s.uploads,
                                              "--delete", "--min-age", "0", "--quiet"])
        _ = deleteStatus
        #expect(s.uploadedNames.contains(staged[0]), "gc --delete --min-age 0 removed a live upload's staged file")
        // The client goes away mid-body, so SIGTERM has no request to wait for.
        client = nil
        #expect(s.stop() == 0)
    }
}
