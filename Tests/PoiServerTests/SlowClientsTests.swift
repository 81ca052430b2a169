import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Slow and stalled clients: closed after the idle timeout, never spinning the CPU, never holding up
/// SIGTERM, and a download cut off is logged as such.
@Suite("poi serve: slow and stalled clients", .tags(.live, .process, .budget), .serialized, .liveServer)
struct SlowClientsTests: UploadFixtures {
    /// A client that sends a request's head (or body) slower than anything useful held its
    /// connection forever. With `--idle-timeout 1`, a head that stops half way, a body that
    /// stops half way (nothing of it kept) and a kept-alive connection left idle are each closed
    /// after about a second.
    @Test func slowClientsAreClosedAfterTheIdleTimeout() throws {
        let s = try ServeHarness("idle", extraArguments: ["--idle-timeout", "1"])

        let head = try RawConnection(port: s.port)
        head.send("GET /locations HTTP/1.1\r\nHost: x\r\nAcc")
        let headClosed = head.secondsUntilClosed(within: 6)
        #expect(headClosed != nil && headClosed! >= 0.8, "a half-sent head: \(headClosed.map { "closed after \($0) s" } ?? "still open after 6 s")")

        let body = try RawConnection(port: s.port)
        body.send("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n",
                  then: Self.pngSignature + [UInt8](repeating: 0, count: 100))
        usleep(300_000)
        #expect(s.uploadedNames.count == 1, "the upload is not being staged: \(s.uploadedNames)")
        let bodyClosed = body.secondsUntilClosed(within: 6)
        // 0.3 s of the second went by before the wait began.
        #expect(bodyClosed != nil && bodyClosed! >= 0.5, "a half-sent body: \(bodyClosed.map { "closed after \($0) s" } ?? "still open after 6 s")")
        usleep(300_000)
        #expect(s.uploadedNames == [], "a staged upload was left: \(s.uploadedNames)")
        #expect(try s.count("files") == 0)

        let idle = try RawConnection(port: s.port)
        idle.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let reply = String(decoding: idle.receive(atLeast: 12, within: 5), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply)")
        #expect(idle.secondsUntilClosed(within: 6) != nil, "an idle kept-alive connection stayed open")

        // A download slower than the timeout is not cut: the timeout is for a client that sends
        // nothing, not for one that is being answered.
        let photo = try DiskUploads(database: s.database, directory: s.uploads)
            .put([UInt8](repeating: 0x5A, count: 8 << 20), info: FileInfo(contentType: "image/jpeg", role: .original))
        let slow = try RawConnection(port: s.port, receiveBuffer: 16384)
        slow.send("GET /files/\(photo.file.id.hex) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        var received = 0
        let start = Date()
        while Date().timeIntervalSince(start) < 3 {
            received += slow.receive(atLeast: 1, within: 0.2).count
            usleep(100_000)
        }
        received += slow.receive(atLeast: (8 << 20) + 1000, within: 20).count
        #expect(received > 8 << 20, "a download read slowly for 3 s got \(received) bytes")
    }

    @Test func idleTimeoutOptionIsChecked() throws {
        let (text, status) = try runToEnd(ServeHarness.binary, ["serve", "--idle-timeout", "0"], stderr: true)
        #expect(status == 2)
        #expect(text.contains("--idle-timeout must be more than 0 and at most 86400 seconds, got 0.0"), "\(text)")
    }

    /// A client that asks for a large file and stops reading keeps the process busy polling its
    /// socket (1 ms sleeps, forever): 50 such connections held half a core of the 2 here.
    @Test func stalledDownloadsDoNotSpinTheCPU() throws {
        let s = try ServeHarness("t14spin")
        let id = try trialUploadLarge(s, megabytes: 16)
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<40 {
            let fd = try trialConnect(s.port, receiveBuffer: 4096)
            sockets.append(fd)
            trialSend(fd, Array("GET /files/\(id) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        }
        sleep(2)
        let before = trialCPUSeconds(s.process.processIdentifier)
        sleep(4)
        let used = trialCPUSeconds(s.process.processIdentifier) - before
        #expect(used < 0.4, "\(used) s of CPU in 4 s with 40 stalled downloads and nothing else to do")
    }

    /// SIGTERM with one stalled download never ends: `shutdownGraceSeconds` (30) is never used, so
    /// a deploy waits until systemd's SIGKILL.
    @Test func sigtermEndsDespiteAStalledDownload() throws {
        let s = try ServeHarness("t14stallterm")
        let id = try trialUploadLarge(s, megabytes: 16)
        let fd = try trialConnect(s.port, receiveBuffer: 4096)
        defer { close(fd) }
        trialSend(fd, Array("GET /files/\(id) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        sleep(1)
        kill(s.process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(45)
        while s.process.isRunning && Date() < deadline { usleep(100_000) }
        #expect(!s.process.isRunning, "still running 45 s after SIGTERM (grace is 30 s)")
    }

    /// A client that read a little of a large file and went away was logged as a 200 of the
    /// whole file. The line says the bytes the connection took and `aborted`; a whole download
    /// is logged with its length and no mark.
    @Test func aCutOffDownloadIsLoggedWithItsBytesAndMarked() throws {
        let s = try ServeHarness("abortlog", extraArguments: ["--json-log"])
        let size = 32 << 20
        let big = try DiskUploads(database: s.database, directory: s.uploads)
            .put([UInt8](repeating: 0xA5, count: size), info: FileInfo(contentType: "image/jpeg", role: .original))
        let id = big.file.id.hex

        let whole = try s.get("/files/\(id)")
        #expect(whole.status == 200 && whole.body.count == size)

        do {
            let client = try RawConnection(port: s.port, receiveBuffer: 16384)
            client.send("GET /files/\(id) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let got = client.receive(atLeast: 100_000, within: 5)
            #expect(got.count >= 100_000)
        }  // closed here, with most of the file unsent

        var lines: [Substring] = []
        let deadline = Date().addingTimeInterval(10)
        while lines.count < 2 && Date() < deadline {
            lines = s.log.split(separator: "\n").filter { $0.contains("\"path\":\"/files/\(id)\"") }
            if lines.count < 2 { usleep(100_000) }
        }
        try #require(lines.count == 2, "\(s.log)")
        #expect(lines[0].contains("\"status\":200,\"bytes\":\(size),"), "\(lines[0])")
        #expect(!lines[0].contains("aborted"), "\(lines[0])")
        #expect(lines[1].contains("\"status\":200,"), "\(lines[1])")
        #expect(lines[1].hasSuffix(",\"aborted\":true}"), "\(lines[1])")
        let bytes = lines[1].range(of: "\"bytes\":").map { Int(lines[1][$0.upperBound...].prefix(while: \.isNumber)) ?? -1 } ?? -1
        #expect(bytes >= 100_000 && bytes < size / 2, "logged \(bytes) bytes of \(size) for a client that read about 100 kB")
    }
}
