import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// Every compatible route: exact status and body, as the reference server answers.
@Suite("poi serve routes", .tags(.live, .process), .serialized, .liveServer)
struct RouteTests {
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
