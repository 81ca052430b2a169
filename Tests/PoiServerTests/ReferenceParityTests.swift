import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the reference server's behaviour is the contract: CORS keeps error answers, HEAD on every
/// GET route, 100-continue, the last of duplicate JSON keys, an app's edit then a re-import, and
/// `format=geojson` whatever `fields` says.
@Suite("poi serve answers as the reference server does", .tags(.live, .process), .serialized, .liveServer)
struct ReferenceParityTests {
    /// `--cors ORIGIN`: Hummingbird's CORS middleware wraps the route's APIError, so every error
    /// (400 invalid id, 401, 404 file not found, 413, 415, 416) reaches a browser as an empty 500.
    @Test func corsKeepsErrorStatusAndBody() throws {
        let s = try ServeHarness("t14corserr", extraArguments: ["--cors", "https://app.example.com"])
        let origin = ["Origin": "https://app.example.com"]
        let bad = try s.get("/locations/xyz", headers: origin)
        #expect(bad.status == 400)
        #expect(bad.text == #"{"error":"invalid id"}"#)
        #expect(bad.header("access-control-allow-origin") == "https://app.example.com")
        let missing = try s.get("/files/000000000000000000000000", headers: origin)
        #expect(missing.status == 404)
        #expect(missing.text == "file not found")
    }

    /// Express answers HEAD on every GET route (load balancers and uptime checks use `HEAD /`
    /// and `HEAD /healthz`); `poi serve` answers 404 except on /files.
    @Test func headOnEveryGetRoute() throws {
        let s = try ServeHarness("t14head")
        for path in ["/", "/healthz", "/locations"] {
            let r = try s.request("HEAD", path)
            #expect(r.status == 200, "HEAD \(path): \(r.status)")
        }
    }

    /// Expect: 100-continue (curl sends it for bodies over 1 MB, as do libcurl-based clients):
    /// the reference answers `100 Continue` at once; `poi serve` never does, so every such upload
    /// waits for the client's timeout (1 s in curl) before its body is sent.
    @Test func expectContinueIsAnswered() throws {
        let s = try ServeHarness("t14continue")
        let head = "POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n"
        let reply = try s.rawSocket(Array(head.utf8), thenWait: 0, readReply: true)
        #expect(reply.hasPrefix("HTTP/1.1 100"), "reply: \(reply.prefix(60))")
    }

    /// A body with a key twice: the reference (JSON.parse) keeps the last value; `poi serve`
    /// answers (and sends the database) a document with both.
    @Test func duplicateJSONKeysKeepTheLastValue() throws {
        let s = try ServeHarness("t14dupkeys")
        let r = try s.postJSON("/things", #"{"name":"a","name":"b"}"#)
        #expect(r.status == 201)
        #expect(r.text.components(separatedBy: #""name":"#).count == 2, "\(r.text)")
        #expect((r.json as? [String: Any])?["name"] as? String == "b")
    }

    /// Round trip: import → the app edits a place (PUT replaces the document, as the reference
    /// does) → the same import again. The PUT dropped `importKey`, so the import inserts the
    /// place a second time.
    @Test func appEditThenReimportKeepsOnePlace() throws {
        let s = try ServeHarness("t14roundtrip")
        let uri = try #require(LiveDatabase.uri)
        let csv = s.scratch + "/places.csv"
        try "id,name,latitude,longitude\nk1,Big Ben,51.5007292,-0.1246254\n".write(toFile: csv, atomically: true, encoding: .utf8)
        func runImport() throws -> Int32 {
            let p = Process()
            p.executableURL = ServeHarness.binary
            p.arguments = ["import", csv, "--uri", uri, "--db", s.databaseName, "--uploads", s.uploads, "--quiet"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            return p.terminationStatus
        }
        #expect(try runImport() == 0)
        let list = try s.get("/locations", headers: ["Accept": "application/json"])
        let id = try #require(((list.json as? [[String: Any]]) ?? []).first?["_id"] as? String)
        let put = try s.request("PUT", "/locations/\(id)", headers: ["Content-Type": "application/json"],
                                body: Array(#"{"name":"Big Ben (edited)","location":{"type":"Point","coordinates":[-0.1246254,51.5007292]},"categories":["landmark"]}"#.utf8))
        #expect(put.status == 200)
        #expect(try runImport() == 0)
        #expect(try s.count("locations") == 1, "the app's edit and the import's copy are two places now")
    }

    /// `?format=geojson&fields=name` projected `location` away, and the writer dropped every place
    /// without a Point: 200 with an empty FeatureCollection ("no places here"). With
    /// `format=geojson` the geometry is always read (or the combination is refused with 400).
    @Test func geoJSONWithFieldsKeepsTheGeometry() throws {
        let s = try ServeHarness("geofields")
        _ = try s.postJSON("/locations", #"{"name":"A","location":{"type":"Point","coordinates":[1,2]},"details":"d"}"#)
        _ = try s.postJSON("/locations", #"{"name":"B","location":{"type":"Point","coordinates":[3,4]},"details":"d"}"#)
        for fields in ["name", "_id", "details"] {
            let got = try s.get("/locations?format=geojson&fields=\(fields)")
            if got.status == 400 { continue }  // refusing the combination is a fine answer too
            #expect(got.status == 200, "\(got.text)")
            let features = ((got.json as? [String: Any])?["features"] as? [[String: Any]]) ?? []
            #expect(features.count == 2, "fields=\(fields): \(got.text)")
            for feature in features {
                #expect((feature["geometry"] as? [String: Any])?["type"] as? String == "Point", "\(feature)")
                let properties = feature["properties"] as? [String: Any] ?? [:]
                #expect(properties["location"] == nil, "the geometry is not a property: \(properties)")
            }
        }
        #expect(s.stop() == 0)
    }
}
