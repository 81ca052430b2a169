import Foundation
import PoiFormats
@testable import PoiServer
import PoiStore
import PoiTestSupport
import Testing

/// Every way a request reached a Swift trap (a crash of the whole server, every client
/// cut off) is a client error now; each test ends by asking the same server for its health.
@Suite("poi serve requests that trapped", .tags(.live, .process), .serialized, .liveServer)
struct RequestTrapTests {
    static let boundary = "90d22162221bcbee4b95263e49a8f42e"

    func multipart(_ s: ServeHarness, _ body: [UInt8]) throws -> HTTPResult {
        try s.request("POST", "/files", headers: ["Content-Type": "multipart/form-data; boundary=\(Self.boundary)"], body: body)
    }

    /// Schemathesis' request: a part with no header block, a non-ASCII byte where multipart-kit
    /// reads a header name (its 128-entry table).
    @Test func aNonASCIIHeaderNameInAPartIsA400() throws {
        let s = try ServeHarness("mpguard")
        let b = Self.boundary
        let cases: [[UInt8]] = [
            Array("--\(b)\r\n".utf8) + [0xC2, 0x92] + Array("abc--\(b)--\r\n".utf8),
            Array("--\(b)\r\nContent-Dispositi".utf8) + [0xC3, 0xB3] + Array("n: form-data; name=\"file\"\r\n\r\nx\r\n--\(b)--\r\n".utf8),
            // After a first part, in the second part's headers.
            Array("--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--\(b)\r\n".utf8) + [0xFF, 0x3A, 0x20, 0x31]
                + Array("\r\n\r\ny\r\n--\(b)--\r\n".utf8),
        ]
        for body in cases {
            let r = try multipart(s, body)
            #expect(r.status == 400)
            #expect(r.text == #"{"error":"malformed multipart/form-data body: a part's header name is not ASCII"}"#)
        }
        #expect(try s.get("/healthz").status == 200)
        // A UTF-8 file name in a header value is what browsers send: still accepted.
        let png = try ServeHarness.sample("brick.png")
        let ok = try multipart(s, Array("--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"brïck.png\"\r\n".utf8)
                               + Array("Content-Type: image/png\r\n\r\n".utf8) + png + Array("\r\n--\(b)--\r\n".utf8))
        #expect(ok.status == 201)
        #expect(try s.count("files", ["originalName": .string("brïck.png")]) == 1)
    }

    /// `abs(Int64.min)` in the Express-style date output, and the GeoJSON formatter's day
    /// arithmetic next to Int64.min: answered, not trapped on (the formatters alone; the stand-in
    /// server cannot store such dates, see below).
    @Test func extremeDatesFormatWithoutATrap() {
        #expect(ExpressJSON.isoString(BSONDate(millisecondsSinceEpoch: .min)) == nil)
        #expect(ExpressJSON.isoString(BSONDate(millisecondsSinceEpoch: .max)) == nil)
        #expect(ExpressJSON.isoString(BSONDate(millisecondsSinceEpoch: 8_640_000_000_000_000)) == "+275760-09-13T00:00:00.000Z")
        #expect(ISO8601.string(millisecondsSince1970: .min) == "0000-01-01T00:00:00.000Z")
        #expect(ISO8601.string(millisecondsSince1970: .min + 86_399_998) == "0000-01-01T00:00:00.000Z")
        #expect(ISO8601.string(millisecondsSince1970: .max) == "9999-12-31T23:59:59.999Z")
        #expect(ISO8601.string(millisecondsSince1970: -1) == "1969-12-31T23:59:59.999Z")
    }

    /// The same through a live server, where the server stores such dates (real MongoDB does;
    /// SecantusDB refuses years outside Python's datetime, so there this is skipped).
    @Test(.enabled(if: Self.extremeDatesUnstorableReason == nil,
                   Comment(rawValue: "SKIPPED: \(Self.extremeDatesUnstorableReason ?? "")")))
    func extremeDatesAreServedNotTrappedOn() throws {
        let s = try ServeHarness("dates")
        let r = try s.postJSON("/things", #"{"d":{"$date":{"$numberLong":"-9223372036854775808"}}}"#)
        #expect(r.status == 201, "\(r.text)")
        #expect((r.json as? [String: Any])?["d"] is NSNull, "beyond JavaScript's date range, toJSON gives null")
        #expect(try s.get("/things").status == 200)
        let place = try s.postJSON("/locations", #"{"location":{"type":"Point","coordinates":[0,0]},"#
                                   + #""name":"n","updated_at":{"$date":{"$numberLong":"-9223372036854775000"}}}"#)
        #expect(place.status == 201, "\(place.text)")
        let geojson = try s.get("/locations?format=geojson")
        #expect(geojson.status == 200)
        #expect(geojson.text.contains(#""updated_at":"0000-01-01T00:00:00.000Z""#))
        #expect(try s.get("/healthz").status == 200)
    }

    /// Why the live server cannot hold a date at Int64.min, or nil when it can (asked once).
    static let extremeDatesUnstorableReason: String? = {
        guard let uri = LiveDatabase.uri else { return "MONGODB_URI is not set" }
        do {
            let db = MongoDatabase(connection: try MongoConnection(uri: uri), name: "poikit_test_probe_dates")
            defer { try? db.collection("d").drop() }
            try db.collection("d").insertOne(["d": .date(BSONDate(millisecondsSinceEpoch: .min))])
            return nil
        } catch {
            return "the server refuses a date at Int64.min (\(String(describing: error).prefix(80))…); real MongoDB stores it"
        }
    }()

    /// A conditional date with a year that does not fit `tm_year` is ignored, as any unparsable one.
    @Test func aHugeYearInAConditionalDateIsIgnored() throws {
        let s = try ServeHarness("years")
        let png = try ServeHarness.sample("brick.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        for header in ["If-Modified-Since", "If-Unmodified-Since"] {
            let r = try s.get("/files/\(id)", headers: [header: "Sun, 01 Jan -2147483648 00:00:00 GMT"])
            #expect(r.status == 200, "\(header)")
            #expect(r.body == png)
        }
        #expect(try s.get("/healthz").status == 200)
    }

    /// An empty field name is the client's error, at any depth, for POST and PUT.
    @Test func anEmptyFieldNameIsA400() throws {
        let s = try ServeHarness("emptykey")
        let cases = [(#"{"": 1}"#, "a field name cannot be empty: a top-level field"),
                     (#"{"a": {"b": {"": 1}}}"#, "a field name cannot be empty: a field inside \"a.b\""),
                     (#"{"a": [1, {"": 1}]}"#, "a field name cannot be empty: a field inside \"a.1\"")]
        for (body, message) in cases {
            let r = try s.postJSON("/anything", body)
            #expect(r.status == 400, "\(body)")
            #expect((r.json as? [String: Any])?["error"] as? String == message)
            let put = try s.request("PUT", "/anything/0123456789abcdef01234567", headers: ["Content-Type": "application/json"],
                                    body: Array(body.utf8))
            #expect(put.status == 400, "PUT \(body)")
        }
        #expect(try s.count("anything") == 0)
    }
}
