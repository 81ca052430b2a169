import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// `--cors`, `--json-log`, `--gridfs`.
@Suite("poi serve options", .tags(.live, .process), .serialized, .liveServer)
struct OptionsTests {
    @Test func corsOnlyWhenAsked() throws {
        let plain = try ServeHarness("nocors")
        let r = try plain.get("/locations", headers: ["Origin": "https://app.example.com"])
        #expect(r.header("access-control-allow-origin") == nil)

        let s = try ServeHarness("cors", extraArguments: ["--cors", "https://app.example.com"])
        let got = try s.get("/locations", headers: ["Origin": "https://app.example.com"])
        #expect(got.header("access-control-allow-origin") == "https://app.example.com")
        let preflight = try s.request("OPTIONS", "/locations", headers: ["Origin": "https://app.example.com",
                                                                         "Access-Control-Request-Method": "POST"])
        #expect(preflight.status == 204 || preflight.status == 200)
        #expect(preflight.header("access-control-allow-methods")?.contains("POST") == true)
        // A browser reads the paging link, the validators and
        // Retry-After only if the answer itself exposes them (a preflight's list is ignored).
        let exposed = "ETag, Link, X-Results-Truncated, Retry-After, Content-Range, Content-Length, Last-Modified"
        for i in 0..<2 { _ = try s.postJSON("/things", #"{"n":\#(i)}"#) }
        let page = try s.get("/things?limit=1", headers: ["Origin": "https://app.example.com"])
        #expect(page.header("link") != nil && page.header("access-control-expose-headers") == exposed)
        let missing = try s.get("/files/6b075e7f110f4196ea07ebd3", headers: ["Origin": "https://app.example.com"])
        #expect(missing.status == 404 && missing.header("access-control-expose-headers") == exposed)
        #expect(try s.get("/things?limit=1").header("access-control-expose-headers") == nil)
        let conditional = try s.request("OPTIONS", "/files/x", headers: ["Origin": "https://app.example.com",
                                                                          "Access-Control-Request-Method": "GET",
                                                                          "Access-Control-Request-Headers": "if-range"])
        #expect(conditional.header("access-control-allow-headers")?.lowercased().contains("if-range") == true)
    }

    @Test func jsonAccessLog() throws {
        let s = try ServeHarness("jsonlog", extraArguments: ["--json-log"])
        _ = try s.get("/locations?query=\(urlEncoded(#"{"name":"private"}"#))&limit=5")
        #expect(s.stop() == 0)
        let line = try #require(s.log.split(separator: "\n").first { $0.hasPrefix("{") })
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(entry["method"] as? String == "GET")
        #expect(entry["path"] as? String == "/locations?query&limit")
        #expect(entry["status"] as? Int == 200)
        #expect(entry["bytes"] as? Int == 2)
        #expect(entry["ms"] is Double || entry["ms"] is Int)
        #expect(!s.log.contains("private"))
    }

    @Test func gridFSStore() throws {
        let s = try ServeHarness("gridfs", extraArguments: ["--gridfs"])
        if case .unsupported(let reason) = s.database.connection.probeGridFS(database: s.databaseName) {
            try Test.cancel("the server lacks GridFS: \(reason)")
        }
        let jpeg = try ServeHarness.sample("rocket.jpg")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: jpeg)
        #expect(up.status == 201)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        #expect(try s.get("/files/\(id)").body == jpeg)
        let part = try s.get("/files/\(id)", headers: ["Range": "bytes=-100"])
        #expect(part.status == 206)
        #expect(part.body == Array(jpeg.suffix(100)))
        #expect(try s.get("/files/\(id)/thumbnail").status == 200)
        #expect(s.uploadedNames == [])
        #expect(try s.count("fs.files") == 2)
        #expect(try s.request("DELETE", "/files/\(id)").status == 200)
        #expect(try s.get("/files/\(id)").status == 404)
        #expect(try s.count("fs.files") == 0)
        #expect(try s.count("fs.chunks") == 0)
    }

    /// Ranges of a file of many GridFS chunks: the bytes from the chunk holding the first byte to
    /// the one holding the last, cut to the range.
    @Test func gridFSRangesAcrossChunks() throws {
        let s = try ServeHarness("gridfsrange", extraArguments: ["--gridfs"])
        if case .unsupported(let reason) = s.database.connection.probeGridFS(database: s.databaseName) {
            try Test.cancel("the server lacks GridFS: \(reason)")
        }
        var big = try ServeHarness.sample("rocket.jpg")
        big += (0..<(3 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: big)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        #expect(try s.get("/files/\(id)").body == big)
        for (header, slice) in [("bytes=261000-1000000", 261_000...1_000_000), ("bytes=0-0", 0...0),
                                ("bytes=522240-522240", 522_240...522_240), ("bytes=-300000", (big.count - 300_000)...(big.count - 1))] {
            let part = try s.get("/files/\(id)", headers: ["Range": header])
            #expect(part.status == 206, "\(header)")
            #expect(part.header("content-range") == "bytes \(slice.lowerBound)-\(slice.upperBound)/\(big.count)", "\(header)")
            let same = part.body == Array(big[slice])
            #expect(same, "\(header): \(part.body.count) bytes")
        }
        let head = try s.request("HEAD", "/files/\(id)")
        #expect(head.header("content-length") == String(big.count))
    }
}
