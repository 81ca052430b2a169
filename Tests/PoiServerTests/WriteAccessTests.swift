import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Who may write, and what a browser is sent: an empty write token never leaves writes open, a
/// download is never served as HTML, and JSON bodies need a JSON content type (no CSRF).
@Suite("poi serve: who may write, and what a browser is sent", .tags(.live, .process), .serialized, .liveServer)
struct WriteAccessTests {
    /// `--write-token ""` (what `--write-token "$TOKEN"` from `poi serve --help` gives when TOKEN is
    /// unset) printed "writes need a bearer token" and then took every write without one.
    @Test func emptyWriteTokenDoesNotLeaveWritesOpen() throws {
        guard let s = try? ServeHarness("t14emptytoken", extraArguments: ["--write-token", ""]) else {
            return  // refusing to start with an empty token is a right answer too
        }
        let r = try s.postJSON("/locations", #"{"name":"pwned"}"#)
        #expect(r.status == 401, "an empty --write-token left writes open: \(r.status) \(r.text)")
        #expect(try s.count("locations") == 0)
    }

    /// The download's Content-Type is the `files` document's string as stored, and
    /// `PUT /files/:id` (kept from the reference) lets any client set it: a PNG with HTML after
    /// it (decoders stop at the image's end) is then served as `text/html` from the API's origin
    /// (stored XSS).
    @Test func downloadIsNeverServedAsHTML() throws {
        let s = try ServeHarness("t14xss")
        let body = try ServeHarness.sample("coins.png") + Array("<html><script>alert(document.domain)</script></html>".utf8)
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: body)
        #expect(up.status == 201)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        _ = try s.request("PUT", "/files/\(id)", headers: ["Content-Type": "application/json"],
                          body: Array(#"{"content-type":"text/html","ext":".png"}"#.utf8))
        let got = try s.get("/files/\(id)")
        #expect(got.header("content-type")?.lowercased().hasPrefix("image/") == true,
                "served as \(got.header("content-type") ?? "nil") with status \(got.status)")
    }

    /// A web page can send `text/plain`, `application/x-www-form-urlencoded` and
    /// `multipart/form-data` to 127.0.0.1:3000 without a CORS preflight. `poi serve` parsed such a
    /// body as JSON and stored it (the reference parses only `application/json` and stores an
    /// empty document): any site the operator visits could insert places. Only JSON media types
    /// are read; the others are 415 with nothing stored.
    @Test func jsonBodiesNeedAJSONContentType() throws {
        let s = try ServeHarness("ctype")
        let body = Array(#"{"name":"planted by a web page"}"#.utf8)
        for type in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                     "multipart/form-data; boundary=x"] {
            let post = try s.request("POST", "/locations", headers: ["Content-Type": type], body: body)
            #expect(post.status == 415, "POST with Content-Type \(type): \(post.status) \(post.text)")
        }
        let noType = try s.request("POST", "/locations", body: body)
        #expect(noType.status == 415, "POST without Content-Type: \(noType.status) \(noType.text)")
        #expect(try s.count("locations") == 0, "a body that was not declared JSON was stored")

        let id = ObjectId()
        try s.database.collection("locations").insertOne(["_id": .objectId(id), "name": .string("kept")])
        let put = try s.request("PUT", "/locations/\(id.hex)", headers: ["Content-Type": "text/plain"], body: body)
        #expect(put.status == 415, "PUT with text/plain: \(put.status) \(put.text)")
        #expect(try s.get("/locations/\(id.hex)").text.contains("\"kept\""))

        // What the app and every JSON client send keeps working.
        #expect(try s.postJSON("/locations", #"{"name":"ok"}"#).status == 201)
        #expect(try s.request("POST", "/locations", headers: ["Content-Type": "application/json; charset=utf-8"], body: body).status == 201)
        #expect(s.stop() == 0)
    }
}
