import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// JSON, GeoJSON and HTML answers carry a weak ETag (Express's own), and a GET or HEAD
/// that sends it back in If-None-Match gets a 304 with no body.
@Suite("poi serve validators on JSON", .tags(.live, .process), .serialized, .liveServer)
struct ValidatorTests {
    @Test func revalidationGetsA304() throws {
        let s = try ServeHarness("etag")
        _ = try s.postJSON("/locations", #"{"name":"Cafe","location":{"type":"Point","coordinates":[2.35,48.85]}}"#)
        for path in ["/locations", "/locations?format=geojson", "/"] {
            let first = try s.get(path)
            #expect(first.status == 200)
            let etag = try #require(first.header("etag"), "\(path)")
            #expect(etag.hasPrefix("W/\"\(String(first.body.count, radix: 16))-"), "\(path): \(etag)")
            let again = try s.get(path, headers: ["If-None-Match": etag])
            #expect(again.status == 304, "\(path)")
            #expect(again.body.isEmpty)
            #expect(again.header("etag") == etag)
            #expect(again.header("content-length") == nil)
            // A list that holds it, a strong spelling of the same tag, `*`: all match (weak comparison).
            for header in ["\"x\", \(etag)", String(etag.dropFirst(2)), "*"] {
                #expect(try s.get(path, headers: ["If-None-Match": header]).status == 304, "\(path) \(header)")
            }
            #expect(try s.request("HEAD", path, headers: ["If-None-Match": etag]).status == 304)
            #expect(try s.get(path, headers: ["If-None-Match": "W/\"0-x\""]).status == 200)
        }
        // A change is a new tag.
        let before = try #require(try s.get("/locations").header("etag"))
        _ = try s.postJSON("/locations", #"{"name":"Park","location":{"type":"Point","coordinates":[2.3,48.8]}}"#)
        let after = try s.get("/locations", headers: ["If-None-Match": before])
        #expect(after.status == 200)
        #expect(after.header("etag") != before)
        // Express's tag of the empty body a missing document gets.
        #expect(try s.get("/locations/000000000000000000000000").header("etag") == "W/\"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk\"")
    }
}
