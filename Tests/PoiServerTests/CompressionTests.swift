import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// JSON, GeoJSON and HTML answers are gzip'd when the client accepts it, never image
/// bytes, and the bytes unzip to exactly the uncompressed answer.
@Suite("poi serve compression", .tags(.live, .process), .serialized, .liveServer)
struct CompressionTests {
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let file = NSTemporaryDirectory() + "poi-gz-\(UUID().uuidString).gz"
        defer { unlink(file) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-dc", file]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "gzip -dc")
        return [UInt8](data)
    }

    @Test func listsAreGzippedWhenAccepted() throws {
        let s = try ServeHarness("gzip")
        for i in 0..<40 {
            _ = try s.postJSON("/locations", #"{"name":"Place \#(i)","details":"A place to visit with friends","location":{"type":"Point","coordinates":[2.3\#(i % 10),48.8]}}"#)
        }
        for path in ["/locations", "/locations?format=geojson"] {
            let plain = try s.get(path)
            #expect(plain.header("content-encoding") == nil)
            // Lists are JSON or HTML by Accept, and gzip'd by Accept-Encoding: caches key on both.
            #expect(plain.header("vary") == "Accept, Accept-Encoding")
            let zipped = try s.get(path, headers: ["Accept-Encoding": "br;q=1, gzip;q=0.8"])
            #expect(zipped.status == 200)
            #expect(zipped.header("content-encoding") == "gzip", "\(path)")
            #expect(zipped.header("vary") == "Accept, Accept-Encoding")
            #expect(zipped.header("content-length") == nil)
            #expect(zipped.body.prefix(2) == [0x1F, 0x8B])
            #expect(zipped.body.count * 4 < plain.body.count, "\(path): \(zipped.body.count) of \(plain.body.count) bytes")
            #expect(try Self.gunzip(zipped.body) == plain.body, "\(path)")
            // The same validator, and a 304 for it, with or without gzip.
            #expect(zipped.header("etag") == plain.header("etag"))
            let again = try s.get(path, headers: ["Accept-Encoding": "gzip", "If-None-Match": try #require(plain.header("etag"))])
            #expect(again.status == 304 && again.body.isEmpty)
            #expect(again.header("vary") == "Accept, Accept-Encoding", "a 304 carries its 200's Vary")
        }
        // Refused with q=0, and nothing below the threshold.
        #expect(try s.get("/locations", headers: ["Accept-Encoding": "gzip;q=0, identity"]).header("content-encoding") == nil)
        // `*` stands for the codings not named: gzip named with q=0 stays refused.
        #expect(try s.get("/locations", headers: ["Accept-Encoding": "*, gzip;q=0"]).header("content-encoding") == nil)
        #expect(try s.get("/locations", headers: ["Accept-Encoding": "*"]).header("content-encoding") == "gzip")
        #expect(try s.get("/locations?limit=1", headers: ["Accept-Encoding": "gzip"]).header("content-encoding") == nil)
        // Image bytes are never compressed.
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let file = try s.get("/files/\(id)", headers: ["Accept-Encoding": "gzip"])
        #expect(file.header("content-encoding") == nil)
        #expect(file.body == png)
    }
}
