import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A loopback connection to a test server, for what curl cannot do: send a request a byte at a
/// time, read a little of a response and go away. Every wait has a deadline.
final class RawConnection {
    let fd: Int32

    /// `receiveBuffer`: see `Loopback.connect`.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = try Loopback.connect(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ text: String, then bytes: [UInt8] = []) -> Bool {
        let bytes = Array(text.utf8) + bytes
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads until `count` bytes arrived, the peer closed, or `seconds` passed; what arrived.
    func receive(atLeast count: Int, within seconds: Double) -> [UInt8] {
        var got: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while got.count < count, Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            got += buffer[0..<n]
        }
        return got
    }

    /// Seconds until the server closed the connection (reading and dropping whatever it sends),
    /// nil when it is still open after `seconds`.
    func secondsUntilClosed(within seconds: Double) -> Double? {
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while Date().timeIntervalSince(start) < seconds {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return Date().timeIntervalSince(start) }
        }
        return nil
    }
}

/// Findings of the second new-user trial of `poi serve`, one test per finding; each
/// fails on the code before its fix.
@Suite("poi serve trial findings, round 3 (issue 14)", .serialized, .liveServer)
struct ServeTrial3FindingsTests {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    // MARK: 2. Slow clients

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

    // MARK: 3. Access log of a download cut off

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

    // MARK: 4. Staged uploads left by a killed server

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

    // MARK: 5. If-Match, If-Unmodified-Since, If-Range

    /// `If-Match` was ignored: a range asked for with another version's ETag got that range of
    /// this version (206), where RFC 9110 §13.1.1 says 412. Strong comparison: a weak tag never
    /// matches; `*` matches any stored file; a list matches when one of its tags does.
    /// `If-Unmodified-Since` the same way (§13.1.4, when there is no If-Match). `If-Range` with
    /// another tag or a weak one sends the whole file (200), as it did; with the file's
    /// Last-Modified date it resumes (a stored file never changes, so that date is strong).
    @Test func ifMatchAndIfRangeAnswerAsRFC9110Says() throws {
        let s = try ServeHarness("ifmatch")
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let first = try s.get("/files/\(id)")
        let etag = try #require(first.header("etag"))
        let modified = try #require(first.header("last-modified"))
        let range = ["Range": "bytes=0-9"]

        func status(_ headers: [String: String], method: String = "GET") throws -> Int {
            try s.request(method, "/files/\(id)", headers: headers.merging(range) { a, _ in a }).status
        }
        #expect(try status(["If-Match": etag]) == 206)
        #expect(try status(["If-Match": "*"]) == 206)
        #expect(try status(["If-Match": "\"0000\", \(etag)"]) == 206)
        #expect(try status(["If-Match": "\"0000\""]) == 412)
        #expect(try status(["If-Match": "W/\(etag)"]) == 412)
        #expect(try status(["If-Match": "\"0000\""], method: "HEAD") == 412)
        let refused = try s.request("GET", "/files/\(id)", headers: ["If-Match": "\"0000\""])
        #expect(refused.status == 412)
        #expect(refused.text == #"{"error":"precondition failed: the file is not the version If-Match names"}"#)
        #expect(refused.header("etag") == etag)
        // If-Match wins over If-None-Match (§13.2.2): a failed If-Match is 412, never 304.
        #expect(try status(["If-Match": "\"0000\"", "If-None-Match": etag]) == 412)

        #expect(try status(["If-Unmodified-Since": modified]) == 206)
        #expect(try status(["If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]) == 412)
        // Ignored when If-Match is there (§13.1.4).
        #expect(try status(["If-Match": etag, "If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]) == 206)

        #expect(try status(["If-Range": etag]) == 206)
        let other = try s.request("GET", "/files/\(id)", headers: ["If-Range": "\"0000\"", "Range": "bytes=0-9"])
        #expect(other.status == 200 && other.body == png)
        #expect(try status(["If-Range": "W/\(etag)"]) == 200)
        #expect(try status(["If-Range": modified]) == 206)
        #expect(try status(["If-Range": "Thu, 01 Jan 1970 00:00:00 GMT"]) == 200)
    }

    // MARK: 6. The thumbnail of a deleted original

    /// `GET /files/:id/thumbnail` of an original deleted through another server process (this one
    /// had its files document cached) answered 404 with JSON `{"error":"no thumbnail for this
    /// file"}`, where `GET /files/:id` answers the reference's text `file not found`. Both answer
    /// the same now.
    @Test func thumbnailOfADeletedOriginalIs404FileNotFound() throws {
        let s = try ServeHarness("thumbgone")
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        #expect(try s.get("/files/\(id)/thumbnail").status == 200)  // the original's document is cached now

        let other = try ServeHarness("thumbgone2", extraArguments: ["--db", s.databaseName, "--uploads", s.uploads])
        #expect(try other.request("DELETE", "/files/\(id)").status == 200)

        // The thumbnail first: a plain download finds the bytes gone and drops the cached document.
        let thumb = try s.get("/files/\(id)/thumbnail")
        let plain = try s.get("/files/\(id)")
        #expect(plain.status == 404 && plain.text == "file not found", "\(plain.status) \(plain.text)")
        #expect(thumb.status == 404 && thumb.text == "file not found", "\(thumb.status) \(thumb.text)")
        #expect(thumb.header("content-type") == plain.header("content-type"))
        #expect(try s.get("/files/\(ObjectId().hex)/thumbnail").text == "file not found")
    }

    // MARK: 7. GIF and WebP headers

    /// A 1×1 GIF (header, logical screen, one image, trailer).
    static let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF,
                                                      0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]

    /// A WebP container with `chunk` (fourCC) holding `payload`; `riffSize` overrides the header's.
    static func webp(chunk: String = "VP8L", payload: [UInt8] = [0x2F, 0, 0, 0, 0, 0, 0, 0], riffSize: Int? = nil) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        let body = Array("WEBP".utf8) + Array(chunk.utf8) + le32(payload.count) + payload
        return Array("RIFF".utf8) + le32(riffSize ?? body.count) + body
    }

    /// GIF and WebP uploads were checked by their first bytes only: `GIF89a` with a 0×0 screen,
    /// or a WebP whose RIFF size is not the body's, was stored. Their container headers are
    /// checked now (they are not decoded: README says which types are).
    @Test func gifAndWebPHeadersAreChecked() throws {
        let s = try ServeHarness("gifwebp")
        func upload(_ bytes: [UInt8], _ type: String) throws -> HTTPResult {
            try s.request("POST", "/files", headers: ["Content-Type": type], body: bytes)
        }
        #expect(try upload(Self.gif, "image/gif").status == 201)
        #expect(try upload(Self.webp(), "image/webp").status == 201)

        var flat = Self.gif
        flat[6] = 0; flat[7] = 0
        let zero = try upload(flat, "image/gif")
        #expect(zero.status == 415)
        #expect(zero.text == #"{"error":"the upload is not a readable image (a GIF whose logical screen is 0×1)"}"#)

        let long = try upload(Self.webp(riffSize: 1000), "image/webp")
        #expect(long.status == 415)
        #expect(long.text == #"{"error":"the upload is not a readable image (a WebP whose RIFF header says 1008 bytes, but the body has 28)"}"#)
        let truncated = try upload(Array(Self.webp(payload: [UInt8](repeating: 7, count: 100)).prefix(60)), "image/webp")
        #expect(truncated.status == 415, "\(truncated.text)")
        let notImage = try upload(Self.webp(chunk: "JUNK"), "image/webp")
        #expect(notImage.status == 415, "\(notImage.text)")

        #expect(try s.count("files") == 2)
        #expect(s.uploadedNames.count == 2, "\(s.uploadedNames)")
    }
}
