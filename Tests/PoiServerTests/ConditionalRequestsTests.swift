import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// If-Match, If-Unmodified-Since and If-Range answer as RFC 9110 says.
@Suite("poi serve: If-Match, If-Unmodified-Since and If-Range", .tags(.live, .process), .serialized, .liveServer)
struct ConditionalRequestsTests {
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
}
