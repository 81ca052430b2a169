import Foundation
import NIOCore
import PoiStore
import Testing
@testable import PoiServer

/// Issue 25: thumbnails (small files) are served from memory, and never once the file on disk
/// is gone or replaced, whoever did it.
@Suite struct SmallFileCacheTests {
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
@Suite(.serialized, .liveServer) struct SmallFileCacheServeTests {
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
}
