import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// What the reference server lets through and `poi serve` must not.
@Suite("poi serve hostile requests", .tags(.live, .process), .serialized, .liveServer)
struct HostileTests {
    @Test func javaScriptOperatorsAtAnyDepth() throws {
        let s = try ServeHarness("js")
        let cases: [(String, String)] = [
            (#"{"$where":"sleep(1000)"}"#, "$where"),
            (#"{"$and":[{"name":"x"},{"$where":"1"}]}"#, "$where"),
            (#"{"$or":[{"a":1},{"$expr":{"$function":{"body":"return 1","args":[],"lang":"js"}}}]}"#, "$function"),
            (#"{"tags":{"$elemMatch":{"$where":"1"}}}"#, "$where"),
            (#"{"$expr":{"$accumulator":{}}}"#, "$accumulator"),
        ]
        for (query, op) in cases {
            let r = try s.get("/locations?query=\(urlEncoded(query))")
            #expect(r.status == 400, "\(query)")
            let body = try #require(r.json as? [String: Any])
            #expect(body["operator"] as? String == op)
            #expect((body["error"] as? String)?.hasPrefix(op) == true)
        }
    }

    @Test func contentTypesCannotNamePaths() throws {
        let s = try ServeHarness("ctype")
        let png = try ServeHarness.sample("brick.png")
        for ctype in ["image/../../x", "image/png/../../../etc/passwd", "../png", "image/", "text/html",
                      "image/" + String(repeating: "p", count: 10_000), "application/octet-stream"] {
            let r = try s.request("POST", "/files", headers: ["Content-Type": ctype], body: png)
            #expect(r.status == 415, "\(ctype.prefix(40))")
        }
        // Declared JPEG, PNG bytes: refused, naming both.
        let mismatch = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: png)
        #expect(mismatch.status == 415)
        #expect(mismatch.text == #"{"error":"the body is not image/jpeg (its bytes are image/png)"}"#)
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [])
        // Parameters do not change the stored type or name.
        let ok = try s.request("POST", "/files", headers: ["Content-Type": "IMAGE/PNG; name=../../x"], body: png)
        #expect(ok.status == 201)
        let id = try #require((ok.json as? [String: Any])?["_id"] as? String)
        #expect(s.uploadedNames.contains("\(id).png"))
    }

    @Test func uploadOverTheLimit() throws {
        let s = try ServeHarness("limit", extraArguments: ["--max-upload", "1000000"])
        var body: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        body += [UInt8](repeating: 7, count: 1_000_100)
        let declared = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: body)
        #expect(declared.status == 413)
        #expect(declared.text == #"{"error":"the body is larger than the 1000000-byte limit"}"#)
        // Chunked: no length to refuse up front, so the limit stops the stream.
        let chunked = try s.request("POST", "/files", headers: ["Content-Type": "image/png", "Transfer-Encoding": "chunked"], body: body)
        #expect(chunked.status == 413)
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [])
        #expect(try s.get("/healthz").status == 200)
    }

    @Test func defaultLimitIs100MB() throws {
        let s = try ServeHarness("limit100")
        // 101 MB announced: refused before a byte of it is read.
        let reply = try s.rawSocket(Array("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\nContent-Length: \(101 * 1024 * 1024)\r\n\r\n".utf8) + [0xFF, 0xD8, 0xFF],
                                    readReply: true)
        #expect(reply.hasPrefix("HTTP/1.1 413"))
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [])
    }

    @Test func halfABodyThenDisconnect() throws {
        let s = try ServeHarness("halfbody")
        let head = Array("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 200000\r\n\r\n".utf8)
        _ = try s.rawSocket(head + [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 90_000), thenWait: 0.3)
        usleep(700_000)
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [])
        #expect(try s.get("/healthz").status == 200)
    }

    @Test func concurrentUploads() async throws {
        let s = try ServeHarness("concurrent")
        let jpeg = try ServeHarness.sample("coffee.jpg")
        // 32 different images: the same JPEG with different bytes after its end marker.
        let bodies = (0..<32).map { i in jpeg + Array("poikit-\(i)-".utf8) + [UInt8](repeating: UInt8(i), count: 1000 * (i + 1)) }
        let results = try await withThrowingTaskGroup(of: (Int, HTTPResult).self) { group in
            for (i, body) in bodies.enumerated() {
                group.addTask { (i, try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: body)) }
            }
            var out: [Int: HTTPResult] = [:]
            for try await (i, r) in group { out[i] = r }
            return out
        }
        var ids = Set<String>()
        for (i, body) in bodies.enumerated() {
            let r = try #require(results[i])
            #expect(r.status == 201)
            let id = try #require((r.json as? [String: Any])?["_id"] as? String)
            ids.insert(id)
            #expect(try s.get("/files/\(id)").body == body)
        }
        #expect(ids.count == 32)
        #expect(try s.count("files", ["role": "original"]) == 32)
    }

    @Test func deeplyNestedJSONBody() throws {
        let s = try ServeHarness("nested")
        let body = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let wrapped = #"{"a":"# + body + "}"
        #expect(wrapped.utf8.count > 200_000)
        let mega = #"{"a":"# + String(repeating: "[", count: 500_000) + String(repeating: "]", count: 500_000) + "}"
        for text in [wrapped, mega] {
            let r = try s.postJSON("/locations", text)
            #expect(r.status == 400)
            #expect((r.json as? [String: Any])?["error"] != nil)
        }
        #expect(try s.postJSON("/locations", "[1,2]").status == 400)
        #expect(try s.postJSON("/locations", "{bad").status == 400)
        #expect(try s.get("/healthz").status == 200)
        #expect(try s.count("locations") == 0)
    }
}
