import Foundation
import NIOCore
import PoiStore
import PoiTestSupport
import Testing
@testable import PoiServer

/// Thumbnails (small files) are served from memory, and never once the file on disk
/// is gone or replaced, whoever did it.
@Suite(.tags(.unit, .budget)) struct SmallFileCacheTests {
    static func scratchFile(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sfc-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test func aHitIsTheBytesOnDiskOrNothing() throws {
        let cache = SmallFileCache(budget: 1 << 20, maxFileBytes: 1 << 10)
        let path = try Self.scratchFile([1, 2, 3])
        defer { unlink(path) }
        let id = ObjectId()
        #expect(cache.get(id, path: path) == nil)
        cache.put(id, bytes: ByteBuffer(bytes: [1, 2, 3]), identity: try #require(SmallFileCache.DiskIdentity.of(path)))
        #expect(cache.get(id, path: path) == ByteBuffer(bytes: [1, 2, 3]))
        #expect(cache.heldBytes == 3)
        // Replaced by hand (a new inode, as `mv` or an editor's save gives): a miss, the entry gone.
        let other = try Self.scratchFile([9, 9, 9])
        defer { unlink(other) }  // renamed over `path` unless that failed
        #expect(rename(other, path) == 0)
        #expect(cache.get(id, path: path) == nil)
        #expect(cache.heldBytes == 0)
        // Deleted: a miss.
        cache.put(id, bytes: ByteBuffer(bytes: [9, 9, 9]), identity: try #require(SmallFileCache.DiskIdentity.of(path)))
        unlink(path)
        #expect(cache.get(id, path: path) == nil)
    }

    @Test func theBudgetEvictsTheOldestAndBigFilesAreNotKept() throws {
        let cache = SmallFileCache(budget: 10, maxFileBytes: 6)
        let path = try Self.scratchFile([0])
        defer { unlink(path) }
        let identity = try #require(SmallFileCache.DiskIdentity.of(path))
        let ids = (0..<4).map { _ in ObjectId() }
        cache.put(ids[0], bytes: ByteBuffer(bytes: [UInt8](repeating: 0, count: 7)), identity: identity)
        #expect(cache.heldBytes == 0, "over maxFileBytes")
        for id in ids.prefix(3) { cache.put(id, bytes: ByteBuffer(bytes: [UInt8](repeating: 0, count: 4)), identity: identity) }
        #expect(cache.heldBytes == 8)
        #expect(cache.get(ids[0], path: path) == nil, "the oldest went to fit the third")
        #expect(cache.get(ids[1], path: path) != nil && cache.get(ids[2], path: path) != nil)
        let off = SmallFileCache(budget: 0, maxFileBytes: 6)
        off.put(ids[3], bytes: ByteBuffer(bytes: [1]), identity: identity)
        #expect(off.get(ids[3], path: path) == nil)
    }
}

/// The same, through a live `poi serve`.
@Suite(.tags(.live, .process), .serialized, .liveServer) struct SmallFileCacheServeTests {
    @Test func aThumbnailDeletedOrReplacedOnDiskIsNotServedFromMemory() throws {
        let s = try ServeHarness("sfcache")
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let thumb = try s.get("/files/\(id)/thumbnail")
        #expect(thumb.status == 200)
        let again = try s.get("/files/\(id)/thumbnail")
        #expect(again.status == 200 && again.body == thumb.body && again.header("etag") == thumb.header("etag"))
        // A range of a cached file.
        let part = try s.request("GET", "/files/\(id)/thumbnail", headers: ["Range": "bytes=1-4"])
        #expect(part.status == 206 && part.body == Array(thumb.body[1...4]) && part.header("content-range") == "bytes 1-4/\(thumb.body.count)")
        let head = try s.request("HEAD", "/files/\(id)/thumbnail")
        #expect(head.status == 200 && head.header("content-length") == String(thumb.body.count))
        // The thumbnail's bytes replaced by hand: the new bytes, not the cached ones.
        let thumbFile = try #require(s.uploadedNames.first { !$0.hasPrefix(id) })
        let path = s.uploads + "/" + thumbFile
        let replacement = Array(thumb.body.reversed())
        try Data(replacement).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        let replaced = try s.get("/files/\(id)/thumbnail")
        #expect(replaced.body == replacement)
        // Deleted by hand: gone at once.
        #expect(unlink(path) == 0)
        #expect(try s.get("/files/\(id)/thumbnail").status == 404)
        _ = s.stop()
    }

    /// A thumbnail fetched by its own id (how the app's list screens load them) is
    /// answered from memory below the router (`CachedDownloadHandler`), with the router's
    /// headers, still checked against the disk, never ahead of an earlier pipelined response,
    /// and on a keep-alive connection that the idle timeout does not close while it is busy.
    @Test func aThumbnailByItsOwnIdIsAnsweredFromMemoryAsTheRouterWould() throws {
        let s = try ServeHarness("sfcache-direct", extraArguments: ["--idle-timeout", "1"])
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let thumbFile = try #require(s.uploadedNames.first { !$0.hasPrefix(id) })
        let thumbID = String(thumbFile.prefix(24))
        let first = try s.get("/files/\(thumbID)")  // the router's answer; it fills the caches
        let second = try s.get("/files/\(thumbID)")
        #expect(first.status == 200 && second.status == 200 && second.body == first.body)
        var withoutDate = first.headers
        withoutDate["date"] = nil
        var secondWithoutDate = second.headers
        secondWithoutDate["date"] = nil
        #expect(secondWithoutDate == withoutDate)
        #expect(second.header("date") != nil)

        // Pipelined behind a database query: the list comes first, then the two thumbnails.
        let fd = try Loopback.connect(port: s.port)
        defer { close(fd) }
        let pipelined = "GET /locations HTTP/1.1\r\nHost: x\r\n\r\nGET /files/\(thumbID) HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /files/\(thumbID) HTTP/1.1\r\nHost: x\r\n\r\n"
        _ = Array(pipelined.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let answers = try (0..<3).map { _ in try RawHTTP.readResponse(fd) }
        #expect(answers.map(\.status) == [200, 200, 200])
        #expect(answers[0].headers["content-type"] == "application/json; charset=utf-8")
        #expect(answers[1].body == first.body && answers[2].body == first.body)

        // Busy on one connection for 2.4 s with --idle-timeout 1: never closed under the client.
        for _ in 0..<6 {
            usleep(400_000)
            let request = "GET /files/\(thumbID) HTTP/1.1\r\nHost: x\r\n\r\n"
            _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let answer = try RawHTTP.readResponse(fd)
            #expect(answer.status == 200 && answer.body == first.body)
        }

        // Replaced by hand, then deleted: the disk decides, as on the router's path.
        let path = s.uploads + "/" + thumbFile
        let replacement = Array(first.body.reversed())
        try Data(replacement).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(try s.get("/files/\(thumbID)").body == replacement)
        #expect(try s.get("/files/\(thumbID)").body == replacement)
        #expect(unlink(path) == 0)
        #expect(try s.get("/files/\(thumbID)").status == 404)
        _ = s.stop()
        // Each answer has its access-log line, as the router writes them.
        #expect(s.log.components(separatedBy: "GET /files/\(thumbID) 200 \(first.body.count) ").count - 1 == 12)
    }
}

/// Reading HTTP/1.1 responses off a raw socket, one at a time (Content-Length bodies only).
enum RawHTTP {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    static func readResponse(_ fd: Int32) throws -> Answer {
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        func byte() throws -> UInt8 {
            var b: UInt8 = 0
            guard recv(fd, &b, 1, 0) == 1 else { throw HarnessError("the connection closed or timed out") }
            return b
        }
        var head: [UInt8] = []
        while !head.reversed().starts(with: [0x0A, 0x0D, 0x0A, 0x0D]) { head.append(try byte()) }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body: [UInt8] = []
        while body.count < length { body.append(try byte()) }
        return Answer(status: status, headers: headers, body: body)
    }
}

