import Foundation
@testable import PoiServer
import PoiStore
import PoiTestSupport
import Testing

/// The OpenAPI document is the server's contract: every status a live server answers is one its
/// operation documents, undeclared methods are 405 with the path's methods, and the forms a
/// generated Swift client sends (percent-encoded conditional and range headers) work.
@Suite("the OpenAPI contract", .tags(.live, .process), .serialized, .liveServer)
struct ContractTests {
    struct Exchange {
        let method: String
        let path: String
        var headers: [String: String] = [:]
        var body: [UInt8]? = nil
    }

    /// "METHOD path → status" for each exchange whose status its operation does not document.
    static func undocumented(_ s: ServeHarness, _ exchanges: [Exchange]) throws -> [String] {
        var found: [String] = []
        for e in exchanges {
            let r = try s.request(e.method, e.path, headers: e.headers, body: e.body)
            let path = String(e.path.prefix { $0 != "?" })
            let documented = DocumentedOperations.served.pathItem(matching: path)?.statuses[e.method]
            if documented?.contains(String(r.status)) != true {
                found.append("\(e.method) \(e.path) → \(r.status) \(r.text.prefix(120))")
            }
        }
        return found
    }

    static func multipart(_ bytes: [UInt8], part: String = "file") -> (contentType: String, body: [UInt8]) {
        let boundary = "----poikit-contract"
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part)\"; filename=\"a.jpg\"\r\n".utf8)
        body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8) + bytes + Array("\r\n--\(boundary)--\r\n".utf8)
        return ("multipart/form-data; boundary=\(boundary)", body)
    }

    @Test func everyAnsweredStatusIsDocumentedForItsOperation() throws {
        let s = try ServeHarness("contract", extraArguments: ["--max-upload", "200000"])
        let jpeg = try ServeHarness.sample("coffee.jpg")
        let upload = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: jpeg)
        let file = try #require((upload.json as? [String: Any])?["_id"] as? String)
        let created = try s.postJSON("/locations", #"{"name":"Bridge","location":{"type":"Point","coordinates":[2.3,48.8]}}"#)
        let place = try #require((created.json as? [String: Any])?["_id"] as? String)
        let other = try s.postJSON("/things", #"{"n":1}"#)
        let thing = try #require((other.json as? [String: Any])?["_id"] as? String)
        let missing = "000000000000000000000000"
        let fileTag = try #require(try s.get("/files/\(file)").header("etag"))
        let listTag = try #require(try s.get("/locations").header("etag"))
        let json = ["Content-Type": "application/json"]
        let form = Self.multipart(jpeg), noFile = Self.multipart(jpeg, part: "photo")
        var exchanges: [Exchange] = []
        for method in ["GET", "HEAD"] {
            for path in ["/", "/healthz", "/openapi.json", "/files", "/locations", "/locations?format=geojson", "/things",
                         "/locations/\(place)", "/locations/\(missing)", "/things/\(thing)", "/things/\(missing)",
                         "/locations?query=notjson", "/things?limit=-1", "/things?format=geojson", "/things/nothex",
                         "/files/\(file)", "/files/\(file)/thumbnail", "/files/\(missing)", "/files/nothex", "/system.users",
                         "/map", "/assets/map/map.js", "/assets/map/nope.js", "/assets/leaflet/leaflet.js",
                         "/assets/leaflet/images/marker-icon.png"] {
                exchanges.append(Exchange(method: method, path: path))
            }
            exchanges += [
                Exchange(method: method, path: "/locations", headers: ["If-None-Match": listTag]),
                Exchange(method: method, path: "/files/\(file)", headers: ["If-None-Match": fileTag]),
                Exchange(method: method, path: "/files/\(file)", headers: ["Range": "bytes=0-99"]),
                Exchange(method: method, path: "/files/\(file)", headers: ["Range": "bytes=99999999-"]),
                Exchange(method: method, path: "/files/\(file)", headers: ["If-Match": "\"other\""]),
                Exchange(method: method, path: "/files/\(file)/thumbnail", headers: ["If-Unmodified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]),
            ]
        }
        exchanges += [
            Exchange(method: "POST", path: "/locations", headers: json, body: Array(#"{"name":"x"}"#.utf8)),
            Exchange(method: "POST", path: "/locations", headers: ["Content-Type": "text/plain"], body: Array("x".utf8)),
            Exchange(method: "POST", path: "/locations", headers: json, body: Array(#"{"a":{"":1}}"#.utf8)),
            Exchange(method: "POST", path: "/locations", headers: json, body: Array(#"{"$set":1}"#.utf8)),
            Exchange(method: "POST", path: "/locations", headers: json, body: Array(#"{"_id":{"$oid":"\#(place)"}}"#.utf8)),
            Exchange(method: "POST", path: "/things", headers: json, body: Array(#"{"name":"x"}"#.utf8)),
            Exchange(method: "POST", path: "/things", headers: json, body: Array("[1]".utf8)),
            Exchange(method: "PUT", path: "/locations/\(place)", headers: json, body: Array(#"{"name":"y"}"#.utf8)),
            Exchange(method: "PUT", path: "/locations/nothex", headers: json, body: Array("{}".utf8)),
            Exchange(method: "PUT", path: "/things/\(thing)", headers: ["Content-Type": "text/plain"], body: Array("x".utf8)),
            Exchange(method: "PUT", path: "/files/\(file)", headers: json, body: Array(#"{"title":"t"}"#.utf8)),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": "text/plain"], body: Array("x".utf8)),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": "image/jpeg"], body: Array("not a jpeg".utf8)),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": form.contentType], body: form.body),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": noFile.contentType], body: noFile.body),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": "image/png"], body: Array(repeating: 0, count: 300_000)),
            Exchange(method: "DELETE", path: "/things/\(thing)"),
            Exchange(method: "DELETE", path: "/things/nothex"),
            Exchange(method: "DELETE", path: "/locations/\(place)"),
            Exchange(method: "DELETE", path: "/files/\(file)"),
            Exchange(method: "DELETE", path: "/files/nothex"),
        ]
        let found = try Self.undocumented(s, exchanges)
        #expect(found == [], "statuses the document does not give their operation")

        let guarded = try ServeHarness("contracttoken", extraArguments: ["--write-token", "secret"])
        let writes = [
            Exchange(method: "POST", path: "/locations", headers: json, body: Array("{}".utf8)),
            Exchange(method: "POST", path: "/files", headers: ["Content-Type": "image/jpeg"], body: jpeg),
            Exchange(method: "PUT", path: "/things/\(thing)", headers: json, body: Array("{}".utf8)),
            Exchange(method: "DELETE", path: "/files/\(file)"),
        ]
        #expect(try Self.undocumented(guarded, writes) == [], "statuses of a guarded server the document does not give")
    }

    @Test func undeclaredMethodsAre405WithThePathsMethods() throws {
        let s = try ServeHarness("methods")
        let id = "000000000000000000000000"
        for (method, path, allow) in [("TRACE", "/", "GET, HEAD"), ("PATCH", "/locations/\(id)", "GET, HEAD, PUT, DELETE"),
                                      ("DELETE", "/healthz", "GET, HEAD"), ("PUT", "/files", "GET, HEAD, POST"),
                                      ("POST", "/files/\(id)/thumbnail", "GET, HEAD"), ("OPTIONS", "/things", "GET, HEAD, POST")] {
            let r = try s.request(method, path)
            #expect(r.status == 405, "\(method) \(path)")
            #expect(r.header("allow") == allow, "\(method) \(path)")
            #expect(r.text == #"{"error":"\#(method) is not a method of this path; it has \#(allow)"}"#)
        }
        // A path that matches nothing stays 404, whatever the method.
        #expect(try s.request("PATCH", "/files/\(id)/thumbnail/x").status == 404)
        #expect(try s.request("GET", "/healthz/\(id)").status == 404)
    }

    /// swift-openapi-generator percent-encodes header values; those forms are read decoded, and a
    /// real value holding `%` is read as sent.
    @Test func percentEncodedConditionalAndRangeHeadersAreRead() throws {
        let s = try ServeHarness("encodedheaders")
        let jpeg = try ServeHarness.sample("coffee.jpg")
        let upload = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: jpeg)
        let id = try #require((upload.json as? [String: Any])?["_id"] as? String)
        let tag = try #require(try s.get("/files/\(id)").header("etag"))  // "<sha256>"
        let encodedTag = "%22" + tag.dropFirst().dropLast() + "%22"
        #expect(try s.get("/files/\(id)", headers: ["If-None-Match": encodedTag]).status == 304)
        #expect(try s.get("/files/\(id)", headers: ["If-None-Match": "%2A"]).status == 304)
        let part = try s.get("/files/\(id)", headers: ["Range": "bytes%3D0-99"])
        #expect(part.status == 206)
        #expect(part.body == Array(jpeg.prefix(100)))
        #expect(part.header("content-range") == "bytes 0-99/\(jpeg.count)")
        #expect(try s.get("/files/\(id)", headers: ["If-Match": "%22nope%22"]).status == 412)
        #expect(try s.get("/files/\(id)", headers: ["If-Match": encodedTag, "Range": "bytes%3D0-9"]).status == 206)
        let listTag = try #require(try s.get("/locations").header("etag"))  // W/"…"
        let encodedListTag = listTag.replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "+", with: "%2B")
        #expect(try s.get("/locations", headers: ["If-None-Match": encodedListTag]).status == 304)
        // Quoted, so a tag: `%22` inside it is part of the tag, which is not this file's.
        #expect(try s.get("/files/\(id)", headers: ["If-None-Match": "\"" + encodedTag + "\""]).status == 200)
        // Has its `=`, so a Range as sent: `%3D` is not decoded into a second one.
        #expect(try s.get("/files/\(id)", headers: ["Range": "bytes=0-9%3D"]).status == 200)
    }

    /// Node's JSON.parse takes a lone surrogate escape and the BSON serializer stores U+FFFD for
    /// it, and an integer beyond 64 bits is a double to it; so it is to `poi serve` (both were a
    /// 400). An escaped backslash before `u` is text, and so are digits inside a string.
    @Test func bodiesAreStoredAsTheReferenceStoresThem() throws {
        let s = try ServeHarness("nodejson")
        let body = #"{"a":"x\ud800y","b":["\udfff"],"c":"\ud83d\ude00","d":"\\ud800","#
            + #""big":123456789012345678901234567890,"neg":-99999999999999999999,"max":9223372036854775807,"#
            + #""text":"123456789012345678901234567890","f":1.5e3}"#
        let r = try s.postJSON("/things", body)
        #expect(r.status == 201, "\(r.text)")
        let id = try #require((r.json as? [String: Any])?["_id"] as? String)
        let doc = try #require(try s.database.collection("things").findOne(["_id": .objectId(ObjectId(hex: id)!)]))
        #expect(doc["a"] == .string("x\u{FFFD}y"))
        #expect(doc["b"] == .array([.string("\u{FFFD}")]))
        #expect(doc["c"] == .string("\u{1F600}"))
        #expect(doc["d"] == .string("\\ud800"))
        #expect(doc["big"] == .double(123456789012345678901234567890))
        #expect(doc["neg"] == .double(-99999999999999999999))
        #expect(doc["max"] == .int64(9223372036854775807))
        #expect(doc["text"] == .string("123456789012345678901234567890"))
        #expect(doc["f"] == .double(1500))
    }

    /// A missing document is still the reference's empty 200, typed `text/plain` so that a typed
    /// client can tell it from a document.
    @Test func aMissingDocumentIsAnEmptyTextAnswer() throws {
        let s = try ServeHarness("missingdoc")
        let r = try s.get("/locations/000000000000000000000000")
        #expect(r.status == 200)
        #expect(r.body.isEmpty)
        #expect(r.header("content-type") == "text/plain; charset=utf-8")
    }
}
