import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// What the routes answer, checked in-process (`InProcessRoutes`: the server's own router, no
/// socket): exact status and body, as the reference server answers. What needs the connection,
/// the process or its log stays in `RouteTests`.
@Suite("poi serve routes, in-process", .tags(.live), .liveServer)
struct RouteAnswersTests {
    @Test func helloPage() async throws {
        try await InProcessRoutes.with("hello") { s in
            let r = try await s.get("/")
            #expect(r.status == 200)
            #expect(r.text == "<html><body><h1>Hello World</h1></body></html>")
            #expect(r.header("content-type") == "text/html; charset=utf-8")
        }
    }

    @Test func invalidIds() async throws {
        try await InProcessRoutes.with("ids") { s in
            for bad in ["xyz", "0123456789abcdef0123456g", "0123456789abcdef012345678", "..%2F..%2Fetc", "%00" + String(repeating: "a", count: 23),
                        String(repeating: "a", count: 10_000)] {
                for method in ["GET", "PUT", "DELETE"] {
                    let r = try await s.request(method, "/locations/\(bad)",
                                                headers: method == "PUT" ? ["Content-Type": "application/json"] : [:],
                                                body: method == "PUT" ? Array("{}".utf8) : nil)
                    #expect(r.status == 400, "\(method) \(bad.prefix(30))")
                    #expect(r.text == #"{"error":"invalid id"}"#)
                }
                let f = try await s.get("/files/\(bad)")
                #expect(f.status == 400)
                #expect(f.text == #"{"error":"invalid id"}"#)
            }
            let unknown = try await s.get("/files/000000000000000000000000")
            #expect(unknown.status == 404)
            #expect(unknown.text == "file not found")
        }
    }

    @Test func collectionNames() async throws {
        try await InProcessRoutes.with("names") { s in
            let systemUsers = try await s.get("/system.users")
            #expect(systemUsers.status == 400)
            #expect(systemUsers.text == #"{"error":"the system.* collections are not served"}"#)
            #expect(try await s.get("/a$b").text == #"{"error":"a collection name cannot contain '$'"}"#)
            #expect(try await s.get("/a%00b").text == #"{"error":"a collection name cannot contain NUL"}"#)
            #expect(try await s.postJSON("/system.js", "{}").status == 400)
            #expect(try s.count("system.js") == 0)
        }
    }

    @Test func queries() async throws {
        try await InProcessRoutes.with("query") { s in
            let places: [(String, Double, Double, [String])] = [
                ("Inside A", 10, 50, ["museum"]), ("Inside B", 11, 51, ["park", "cafe"]), ("Outside", 30, 10, ["museum"]),
            ]
            for (name, lon, lat, cats) in places {
                let cj = cats.map { "\"\($0)\"" }.joined(separator: ",")
                #expect(try await s.postJSON("/locations", #"{"name":"\#(name)","location":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"categories":[\#(cj)]}"#).status == 201)
            }
            func names(_ r: HTTPResult) -> [String] { ((r.json as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }
            let box = #"{"location":{"$geoWithin":{"$box":[[9,49],[12,52]]}}}"#
            let boxed = try await s.get("/locations?query=\(urlEncoded(box))", headers: ["Accept": "application/json"])
            #expect(boxed.status == 200)
            #expect(names(boxed) == ["Inside A", "Inside B"])
            let inQuery = #"{"categories":{"$in":["museum"]}}"#
            #expect(names(try await s.get("/locations?query=\(urlEncoded(inQuery))")) == ["Inside A", "Outside"])
            // Beyond the reference: limit, skip, sort, fields, the cap.
            #expect(names(try await s.get("/locations?sort=-name&limit=2")) == ["Outside", "Inside B"])
            #expect(names(try await s.get("/locations?sort=name&skip=1")) == ["Inside B", "Outside"])
            let fields = try await s.get("/locations?fields=name&limit=1&sort=name")
            #expect((fields.json as? [[String: Any]])?.first?.keys.sorted() == ["_id", "name"])
            let geo = try await s.get("/locations?format=geojson&query=\(urlEncoded(box))&sort=name")
            #expect(geo.status == 200)
            #expect(geo.header("content-type") == "application/geo+json")
            let fc = try #require(geo.json as? [String: Any])
            #expect(fc["type"] as? String == "FeatureCollection")
            #expect((fc["features"] as? [[String: Any]])?.count == 2)
            // Malformed JSON: the reference's answer.
            let bad = try await s.get("/locations?query=\(urlEncoded("{bad"))")
            #expect(bad.status == 400)
            #expect(bad.text == #"{"error":"bad query"}"#)
            // An HTML table for a browser.
            let html = try await s.get("/locations", headers: ["Accept": "text/html,application/xhtml+xml,*/*;q=0.8"])
            #expect(html.header("content-type") == "text/html; charset=utf-8")
            #expect(html.text.contains("<td>Inside A</td>"))
        }
    }

    @Test func resultCap() async throws {
        try await InProcessRoutes.with("cap", configure: { $0.maxResults = 3 }) { s in
            for i in 0..<5 { _ = try await s.postJSON("/things", #"{"i":\#(i)}"#) }
            let r = try await s.get("/things")
            #expect((r.json as? [Any])?.count == 3)
            #expect(r.header("x-results-truncated") == "limit 3")
            #expect((try await s.get("/things?limit=2").json as? [Any])?.count == 2)
            #expect((try await s.get("/things?limit=100").json as? [Any])?.count == 3)
        }
    }
}
