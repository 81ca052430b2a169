import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// Every compatible route: exact status and body, as the reference server answers.
@Suite("poi serve routes", .tags(.live, .process), .serialized, .liveServer)
struct RouteTests {
    @Test func helloPage() throws {
        let s = try ServeHarness("hello")
        let r = try s.get("/")
        #expect(r.status == 200)
        #expect(r.text == "<html><body><h1>Hello World</h1></body></html>")
        #expect(r.header("content-type") == "text/html; charset=utf-8")
    }

    @Test func createGetReplaceDelete() throws {
        let s = try ServeHarness("crud")
        let created = try s.postJSON("/locations", #"{"name":"Tower","n":1.5,"i":3,"big":1e21,"small":1e-7,"tags":["a","b"],"nested":{"x":null,"t":true}}"#)
        #expect(created.status == 201)
        let obj = try #require(created.json as? [String: Any])
        let id = try #require(obj["_id"] as? String)
        let createdAt = try #require(obj["created_at"] as? String)
        // The reference's field order: the body's fields, created_at, then the new _id.
        #expect(created.text == #"{"name":"Tower","n":1.5,"i":3,"big":1e+21,"small":1e-7,"tags":["a","b"],"nested":{"x":null,"t":true},"created_at":"\#(createdAt)","_id":"\#(id)"}"#)
        #expect(createdAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
        #expect(id.count == 24)

        // As stored: _id first (the server puts it there), then the fields in order.
        let got = try s.get("/locations/\(id)")
        #expect(got.status == 200)
        #expect(got.text == #"{"_id":"\#(id)","name":"Tower","n":1.5,"i":3,"big":1e+21,"small":1e-7,"tags":["a","b"],"nested":{"x":null,"t":true},"created_at":"\#(createdAt)"}"#)

        let list = try s.get("/locations", headers: ["Accept": "application/json"])
        #expect(list.status == 200)
        #expect(list.text == "[" + got.text + "]")

        let put = try s.request("PUT", "/locations/\(id)", headers: ["Content-Type": "application/json"], body: Array(#"{"name":"Bridge"}"#.utf8))
        #expect(put.status == 200)
        let updatedAt = try #require((put.json as? [String: Any])?["updated_at"] as? String)
        #expect(put.text == #"{"name":"Bridge","_id":"\#(id)","updated_at":"\#(updatedAt)"}"#)
        #expect(try s.get("/locations/\(id)").text == #"{"_id":"\#(id)","name":"Bridge","updated_at":"\#(updatedAt)"}"#)

        let del = try s.request("DELETE", "/locations/\(id)")
        #expect(del.status == 200)
        #expect(del.text == #"{"result":{"n":1,"ok":1},"deletedCount":1,"n":1,"ok":1}"#)
        let again = try s.request("DELETE", "/locations/\(id)")
        #expect(again.text == #"{"result":{"n":0,"ok":1},"deletedCount":0,"n":0,"ok":1}"#)

        // A missing document: the reference's 200 with an empty body.
        let missing = try s.get("/locations/\(id)")
        #expect(missing.status == 200)
        #expect(missing.body.isEmpty)
        #expect(s.stop() == 0)
    }

    /// An integer beyond Int64 that `poi import` stored as Decimal128 is served as the Node
    /// driver's `Decimal128.toJSON` gives it: `{"$numberDecimal": "<digits>"}`.
    @Test func decimal128AsTheNodeDriverWritesIt() throws {
        let s = try ServeHarness("decimal")
        let id = ObjectId()
        try s.database.collection("locations").insertOne(
            ["_id": .objectId(id), "extra": .document(["big": .decimal128(BSONDecimal128(exactly: "12345678901234567890")!)])])
        let got = try s.get("/locations/\(id.hex)")
        #expect(got.text == #"{"_id":"\#(id.hex)","extra":{"big":{"$numberDecimal":"12345678901234567890"}}}"#)
        #expect(s.stop() == 0)
    }

    @Test func invalidIds() throws {
        let s = try ServeHarness("ids")
        for bad in ["xyz", "0123456789abcdef0123456g", "0123456789abcdef012345678", "..%2F..%2Fetc", "%00" + String(repeating: "a", count: 23),
                    String(repeating: "a", count: 10_000)] {
            for method in ["GET", "PUT", "DELETE"] {
                let r = try s.request(method, "/locations/\(bad)", headers: method == "PUT" ? ["Content-Type": "application/json"] : [:],
                                      body: method == "PUT" ? Array("{}".utf8) : nil)
                #expect(r.status == 400, "\(method) \(bad.prefix(30))")
                #expect(r.text == #"{"error":"invalid id"}"#)
            }
            let f = try s.get("/files/\(bad)")
            #expect(f.status == 400)
            #expect(f.text == #"{"error":"invalid id"}"#)
        }
        let unknown = try s.get("/files/000000000000000000000000")
        #expect(unknown.status == 404)
        #expect(unknown.text == "file not found")
    }

    @Test func collectionNames() throws {
        let s = try ServeHarness("names")
        #expect(try s.get("/system.users").status == 400)
        #expect(try s.get("/system.users").text == #"{"error":"the system.* collections are not served"}"#)
        #expect(try s.get("/a$b").text == #"{"error":"a collection name cannot contain '$'"}"#)
        #expect(try s.get("/a%00b").text == #"{"error":"a collection name cannot contain NUL"}"#)
        #expect(try s.postJSON("/system.js", "{}").status == 400)
        #expect(try s.count("system.js") == 0)
    }

    @Test func queries() throws {
        let s = try ServeHarness("query")
        let places: [(String, Double, Double, [String])] = [
            ("Inside A", 10, 50, ["museum"]), ("Inside B", 11, 51, ["park", "cafe"]), ("Outside", 30, 10, ["museum"]),
        ]
        for (name, lon, lat, cats) in places {
            let cj = cats.map { "\"\($0)\"" }.joined(separator: ",")
            #expect(try s.postJSON("/locations", #"{"name":"\#(name)","location":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"categories":[\#(cj)]}"#).status == 201)
        }
        func names(_ r: HTTPResult) -> [String] { ((r.json as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }
        let box = #"{"location":{"$geoWithin":{"$box":[[9,49],[12,52]]}}}"#
        let boxed = try s.get("/locations?query=\(urlEncoded(box))", headers: ["Accept": "application/json"])
        #expect(boxed.status == 200)
        #expect(names(boxed) == ["Inside A", "Inside B"])
        let inQuery = #"{"categories":{"$in":["museum"]}}"#
        #expect(names(try s.get("/locations?query=\(urlEncoded(inQuery))")) == ["Inside A", "Outside"])
        // Beyond the reference: limit, skip, sort, fields, the cap.
        #expect(names(try s.get("/locations?sort=-name&limit=2")) == ["Outside", "Inside B"])
        #expect(names(try s.get("/locations?sort=name&skip=1")) == ["Inside B", "Outside"])
        let fields = try s.get("/locations?fields=name&limit=1&sort=name")
        #expect((fields.json as? [[String: Any]])?.first?.keys.sorted() == ["_id", "name"])
        let geo = try s.get("/locations?format=geojson&query=\(urlEncoded(box))&sort=name")
        #expect(geo.status == 200)
        #expect(geo.header("content-type") == "application/geo+json")
        let fc = try #require(geo.json as? [String: Any])
        #expect(fc["type"] as? String == "FeatureCollection")
        #expect((fc["features"] as? [[String: Any]])?.count == 2)
        // Malformed JSON: the reference's answer.
        let bad = try s.get("/locations?query=\(urlEncoded("{bad"))")
        #expect(bad.status == 400)
        #expect(bad.text == #"{"error":"bad query"}"#)
        // An HTML table for a browser.
        let html = try s.get("/locations", headers: ["Accept": "text/html,application/xhtml+xml,*/*;q=0.8"])
        #expect(html.header("content-type") == "text/html; charset=utf-8")
        #expect(html.text.contains("<td>Inside A</td>"))
    }

    @Test func resultCap() throws {
        let s = try ServeHarness("cap", extraArguments: ["--max-results", "3"])
        for i in 0..<5 { _ = try s.postJSON("/things", #"{"i":\#(i)}"#) }
        let r = try s.get("/things")
        #expect((r.json as? [Any])?.count == 3)
        #expect(r.header("x-results-truncated") == "limit 3")
        #expect((try s.get("/things?limit=2").json as? [Any])?.count == 2)
        #expect((try s.get("/things?limit=100").json as? [Any])?.count == 3)
    }

    @Test func writeTokenAndHealth() throws {
        let s = try ServeHarness("token", environment: ["POI_WRITE_TOKEN": "s3cret"])
        let refused = try s.postJSON("/locations", #"{"name":"x"}"#)
        #expect(refused.status == 401)
        #expect(refused.text == #"{"error":"this server needs Authorization: Bearer <token> for writes"}"#)
        #expect(try s.postJSON("/locations", #"{"name":"x"}"#, headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try s.postJSON("/locations", #"{"name":"x"}"#, headers: ["Authorization": "Bearer s3cret"]).status == 201)
        #expect(try s.get("/locations").status == 200)
        let health = try s.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"ok":true,"problems":[]}"#)
        #expect(!s.log.contains("s3cret"))
        // The access log: method, path with parameter names only, status, bytes, ms.
        _ = try s.get("/locations?query=\(urlEncoded(#"{"name":"secret value"}"#))")
        #expect(s.stop() == 0)
        #expect(s.log.contains("GET /locations?query 200 "))
        #expect(!s.log.contains("secret value"))
        #expect(s.log.contains("POST /locations 401 "))
    }
}
