import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A deleted file, through this process, another one or another kind of client: another client's
/// image stays, caches stop serving it, a download under way ends whole, its thumbnail is 404.
@Suite("poi serve: deleted files and the processes that cached them", .tags(.live, .process), .serialized, .liveServer)
struct DeletedFilesTests {
    /// Identical bytes are answered with the id of the file already stored (here: another
    /// client's, or the import's). When the second client later deletes "its" upload, the first
    /// place's image is gone (and `poi gc --delete` then removes its bytes).
    @Test func deletingOneUploadKeepsAnotherClientsImage() throws {
        let s = try ServeHarness("t14dedupe")
        let png = try ServeHarness.sample("coins.png")
        let first = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let firstId = try #require((first.json as? [String: Any])?["_id"] as? String)
        #expect(try s.postJSON("/locations", #"{"name":"A","imageId":"\#(firstId)"}"#).status == 201)
        let second = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let secondId = try #require((second.json as? [String: Any])?["_id"] as? String)
        #expect(try s.request("DELETE", "/files/\(secondId)").status == 200)
        let image = try s.get("/files/\(firstId)")
        #expect(image.status == 200, "place A's image \(firstId) is gone after another client deleted \(secondId)")
        let sameBytes = image.body == png
        #expect(sameBytes)
    }

    /// Two processes over one database (the README's scale-out): a file deleted through one is
    /// still served by the other, from its `files` cache, for as long as the process runs.
    @Test func anotherProcessStopsServingADeletedFile() throws {
        let a = try ServeHarness("t14cachea")
        let b = try ServeHarness("t14cacheb", extraArguments: ["--db", a.databaseName, "--uploads", a.uploads])
        let png = try ServeHarness.sample("brick.png")
        let up = try a.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        #expect(try b.get("/files/\(id)").status == 200)
        #expect(try a.get("/files/\(id)/thumbnail").status == 200)
        #expect(try a.count("files") == 2)
        #expect(try a.request("DELETE", "/files/\(id)").status == 200)
        #expect(try a.get("/files/\(id)").status == 404)
        let stale = try b.get("/files/\(id)")
        #expect(stale.status == 404, "the other process still serves the deleted file: \(stale.status), \(stale.body.count) bytes")
        #expect(stale.text == "file not found")
        // Nothing left for `poi gc`: the original's bytes, its thumbnail's document and bytes.
        #expect(try a.count("files") == 0)
        #expect(a.uploadedNames == [])
    }

    /// A download under way when its file is deleted (here from disk, larger than one read)
    /// ends whole: the server reads from the file it opened, and keeps serving.
    @Test func aDownloadUnderWayOutlivesTheDelete() throws {
        let s = try ServeHarness("t14deletewhile")
        let body = try ServeHarness.sample("coffee.jpg") + trialRandomBytes(4 * 1024 * 1024)
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: body, timeout: 300)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let fd = try trialConnect(s.port, receiveBuffer: 4096)
        defer { close(fd) }
        trialSend(fd, Array("GET /files/\(id) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        var received = trialReceive(fd, atLeast: 64 * 1024)
        #expect(try s.request("DELETE", "/files/\(id)").status == 200)
        #expect(s.uploadedNames == [])
        received += trialReceive(fd, atLeast: Int.max)
        let text = String(decoding: received.prefix(200), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
        let headEnd = try #require(received.indices.first { received[$0...].starts(with: Array("\r\n\r\n".utf8)) })
        let sameBytes = Array(received[(headEnd + 4)...]) == body
        #expect(sameBytes, "received \(received.count - headEnd - 4) of \(body.count) bytes")
        #expect(try s.get("/files/\(id)").status == 404)
        #expect(try s.get("/healthz").status == 200)
    }

    /// Found by a second round of trying `poi serve` by hand: a `files` document deleted by another kind of client (the
    /// tutorial's server deletes the document and leaves the bytes; so does a shell) was served
    /// from the cache for as long as the process ran. An entry is trusted for
    /// `--files-cache-seconds` only.
    @Test func aFilesDocumentDeletedElsewhereStopsBeingServed() throws {
        let s = try ServeHarness("t14ttl", extraArguments: ["--files-cache-seconds", "1"])
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: try ServeHarness.sample("brick.png"))
        let hex = try #require((up.json as? [String: Any])?["_id"] as? String)
        let id = try #require(ObjectId(hex: hex))
        #expect(try s.get("/files/\(hex)").status == 200)
        #expect(try s.database.files.deleteOne(["_id": .objectId(id)]))
        usleep(1_500_000)
        #expect(try s.get("/files/\(hex)").status == 404)
    }

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
}
