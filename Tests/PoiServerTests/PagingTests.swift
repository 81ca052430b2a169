import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// A page cut at `limit` or `--max-results` links to the next one (RFC 8288), which
/// continues after the page's last `_id`; pages stay put when documents are added meanwhile.
@Suite("poi serve keyset paging", .tags(.live, .process), .serialized, .liveServer)
struct PagingTests {
    static func ids(_ r: HTTPResult) -> [String] {
        ((r.json as? [[String: Any]]) ?? []).compactMap { $0["_id"] as? String }
    }

    static func next(_ r: HTTPResult) -> String? {
        guard let link = r.header("link"), link.hasSuffix(">; rel=\"next\""), link.hasPrefix("<") else { return nil }
        return String(link.dropFirst().dropLast(">; rel=\"next\"".count))
    }

    @Test func pagesFollowTheNextLinkInIdOrder() throws {
        let s = try ServeHarness("paging", extraArguments: ["--max-results", "4"])
        var all: [String] = []
        for i in 0..<7 {
            let r = try s.postJSON("/things", #"{"n":\#(i),"kind":"\#(i % 2 == 0 ? "even" : "odd")"}"#)
            all.append(try #require((r.json as? [String: Any])?["_id"] as? String))
        }
        let first = try s.get("/things?limit=3")
        #expect(Self.ids(first) == Array(all[0..<3]))
        #expect(Self.next(first) == "/things?limit=3&after=\(all[2])")
        // A document added between two pages comes last, not into the next page.
        let late = try #require((try s.postJSON("/things", #"{"n":7}"#).json as? [String: Any])?["_id"] as? String)
        let second = try s.get(try #require(Self.next(first)))
        #expect(Self.ids(second) == Array(all[3..<6]))
        let third = try s.get(try #require(Self.next(second)))
        #expect(Self.ids(third) == [all[6], late])
        #expect(Self.next(third) == nil)
        #expect(third.header("x-results-truncated") == nil)
        // The server's cap cuts too, and the query is kept in the link.
        let query = "query=%7B%22n%22%3A%7B%22%24gte%22%3A1%7D%7D"  // {"n":{"$gte":1}}: 7 of the 8
        let capped = try s.get("/things?\(query)")
        #expect(Self.ids(capped) == Array(all[1..<5]))
        #expect(capped.header("x-results-truncated") == "limit 4")
        #expect(Self.next(capped) == "/things?\(query)&after=\(all[4])")
        let rest = try s.get(try #require(Self.next(capped)))
        #expect(Self.ids(rest) == [all[5], all[6], late])
        #expect(Self.next(rest) == nil)
        // Under the cap, no link: the reference's answer.
        let under = try s.get("/things?query=%7B%22n%22%3A%7B%22%24gte%22%3A5%7D%7D")  // 3 documents
        #expect(Self.ids(under).count == 3 && Self.next(under) == nil && under.header("x-results-truncated") == nil)
        // An order of the client's own is cut without a link; after is an id, in _id order only.
        #expect(Self.next(try s.get("/things?limit=2&sort=-n")) == nil)
        #expect(try s.get("/things?after=xyz").status == 400)
        #expect(try s.get("/things?after=\(all[0])&sort=-n").status == 400)
        #expect(Self.ids(try s.get("/things?after=\(all[0])&sort=_id&limit=1")) == [all[1]])
    }

    /// A client that starts at an offset and follows the links sees
    /// every document once (the link drops `skip`, spent on the first page), and a query sent
    /// form-encoded (`+` for a space, as Python requests and URLSearchParams send it) finds what
    /// the reference finds.
    @Test func aLinkAfterSkipSkipsNothingAndPlusIsASpace() throws {
        let s = try ServeHarness("paging-skip")
        var all: [String] = []
        for i in 0..<7 {
            let r = try s.postJSON("/things", #"{"n":\#(i),"name":"Big Ben \#(i)"}"#)
            all.append(try #require((r.json as? [String: Any])?["_id"] as? String))
        }
        let first = try s.get("/things?skip=2&limit=2")
        #expect(Self.ids(first) == Array(all[2..<4]))
        #expect(Self.next(first) == "/things?limit=2&after=\(all[3])")
        var seen = Self.ids(first)
        var link = Self.next(first)
        while let next = link {
            let page = try s.get(next)
            seen += Self.ids(page)
            link = Self.next(page)
        }
        #expect(seen == Array(all[2...]))
        // {"name":"Big Ben 3"} as Python requests encodes it, and with %20.
        let plus = try s.get("/things?query=%7B%22name%22%3A%22Big+Ben+3%22%7D")
        #expect(Self.ids(plus) == [all[3]])
        let percent = try s.get("/things?query=%7B%22name%22%3A%22Big%20Ben%203%22%7D")
        #expect(Self.ids(percent) == [all[3]])
        // A literal plus is %2B.
        _ = try s.postJSON("/things", #"{"name":"C++"}"#)
        #expect(Self.ids(try s.get("/things?query=%7B%22name%22%3A%22C%2B%2B%22%7D")).count == 1)
        #expect(Self.ids(try s.get("/things?query=%7B%22name%22%3A%22C++%22%7D")).isEmpty)
        // The link keeps a form-encoded query as sent.
        let q = "query=%7B%22name%22%3A%7B%22%24regex%22%3A%22%5EBig+Ben%22%7D%7D"
        let regex = try s.get("/things?\(q)&limit=5")
        #expect(Self.ids(regex) == Array(all[0..<5]))
        #expect(Self.next(regex) == "/things?\(q)&limit=5&after=\(all[4])")
        #expect(Self.ids(try s.get(try #require(Self.next(regex)))) == Array(all[5...]))
    }
}

