import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client's own mistakes (a taken `_id`, an unknown query operator, a bad replacement body) are
/// answered 4xx, not 500.
@Suite("poi serve: a client's own mistakes are 4xx, not 500", .tags(.live, .process), .serialized, .liveServer)
struct ClientErrorsTests {
    /// Inserting a document whose `_id` is taken is the client's mistake, answered as a server
    /// failure: 500 with "MongoDB error 11000: E11000 duplicate key error collection: <db>.<coll>…".
    @Test func duplicateIdIsAConflictNotA500() throws {
        let s = try ServeHarness("t14dupid")
        #expect(try s.postJSON("/things", #"{"_id":"abc","x":1}"#).status == 201)
        let again = try s.postJSON("/things", #"{"_id":"abc","x":2}"#)
        #expect(again.status == 409, "\(again.status) \(again.text)")
    }

    /// Query operators the server does not know, wrong argument counts and failed conversions are
    /// the request's fault: the reference answers 400; `poi serve` answered 500 for every server
    /// error code outside a fixed list (168, 16020, 241, …), and 500 "MongoDB driver error" for a
    /// replacement body with `$` operators.
    @Test func aClientsBadQueryOrBodyIsA400() throws {
        let s = try ServeHarness("badquery")
        _ = try s.postJSON("/locations", #"{"name":"x","n":"abc"}"#)
        for query in [#"{"$expr":{"$foo":1}}"#, #"{"$expr":{"$substr":[1]}}"#, #"{"$expr":{"$toInt":"$n"}}"#] {
            let got = try s.get("/locations?query=\(urlEncoded(query))", headers: ["Accept": "application/json"])
            #expect(got.status == 400, "\(query): \(got.status) \(got.text)")
            #expect(got.text.hasPrefix("{\"error\":"), "\(got.text)")
        }
        let put = try s.request("PUT", "/locations/\(ObjectId().hex)", headers: ["Content-Type": "application/json"],
                                body: Array(#"{"$set":{"pwned":1}}"#.utf8))
        #expect(put.status == 400, "a replacement with an update operator: \(put.status) \(put.text)")
        #expect(put.text.contains("$set"), "\(put.text)")
        #expect(s.stop() == 0)
    }
}
