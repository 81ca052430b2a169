import PoiDigest
import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// The tutorial's Express server's answers, recorded once in `Fixtures/reference-answers.json`
/// (request, status, Content-Type, ETag, body), replayed against `poi serve` on every run: the
/// Express quirks the app relies on are checked on any machine, not only where the reference
/// server sits beside the clone. Where it does, its live answers are compared with the recording
/// too (a recording the reference no longer gives fails), and `POI_RECORD_REFERENCE=1` records
/// them anew. `CompatibilityTests` keeps the live side-by-side run.
@Suite("the reference server's recorded answers", .tags(.live, .process), .serialized, .liveServer)
struct ReferenceAnswersTests {
    static let fixturePath = ServeHarness.repoRoot.appendingPathComponent("Tests/PoiServerTests/Fixtures/reference-answers.json")

    static func fixture() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixturePath)) as? [String: Any])
    }

    /// The fixture's documents (Extended JSON, fixed ids) and upload bytes, put where both servers
    /// read them.
    static func seed(_ fixture: [String: Any], into harness: ServeHarness) throws {
        let seed = try #require(fixture["seed"] as? [String: Any])
        for collection in ["locations", "files"] {
            // Text, not parsed objects: a document's field order is part of the bytes both
            // servers answer, and a Foundation dictionary has none.
            for json in seed[collection] as? [String] ?? [] {
                try harness.database.collection(collection).insertOne(try BSONDocument(json: json))
            }
        }
        for (name, source) in seed["uploads"] as? [String: String] ?? [:] {
            try FileManager.default.copyItem(atPath: ServeHarness.repoRoot.appendingPathComponent(source).path,
                                             toPath: harness.uploads + "/" + name)
        }
    }

    /// One exchange's answer in the fixture's form, as `compare` says what matters.
    static func answer(to exchange: [String: Any], harness: ServeHarness, base: String? = nil) throws -> [String: Any] {
        let request = try #require(exchange["request"] as? [String: Any])
        let method = try #require(request["method"] as? String), path = try #require(request["path"] as? String)
        var body = (request["body"] as? String).map { Array($0.utf8) }
        if let file = request["bodyFile"] as? String {
            body = [UInt8](try Data(contentsOf: ServeHarness.repoRoot.appendingPathComponent(file)))
        }
        let r = try harness.request(method, path, headers: request["headers"] as? [String: String] ?? [:], body: body, base: base)
        var out: [String: Any] = ["status": r.status, "contentType": r.header("content-type") ?? NSNull()]
        switch exchange["compare"] as? String {
        case "json":
            out["json"] = CompatibilityTests.normalized(r.json) ?? NSNull()
        case "sha256":
            out["sha256"] = SHA256.hash(data: r.body).map { String(format: "%02x", $0) }.joined()
        default:
            out["body"] = r.text
            if method == "GET" && r.status == 200 { out["etag"] = r.header("etag") ?? NSNull() }
        }
        return out
    }

    static func expectSame(_ mine: [String: Any], _ recorded: [String: Any], _ exchange: [String: Any], _ who: String) {
        let request = exchange["request"] as? [String: Any] ?? [:]
        let label = "\(request["method"] ?? "") \(request["path"] ?? "") (\(exchange["why"] ?? ""))"
        for key in Set(recorded.keys).union(mine.keys).sorted() {
            #expect(CompatibilityTests.same(mine[key], recorded[key]),
                    "\(label): \(key) is \(String(describing: mine[key] ?? "absent")) from \(who), recorded \(String(describing: recorded[key] ?? "absent"))")
        }
    }

    @Test func poiServeGivesTheRecordedAnswers() throws {
        let fixture = try Self.fixture()
        let exchanges = try #require(fixture["exchanges"] as? [[String: Any]])
        #expect(exchanges.count >= 20)
        let poi = try ServeHarness("recorded")
        try Self.seed(fixture, into: poi)
        for exchange in exchanges {
            var expected = try #require(exchange["answer"] as? [String: Any], "not recorded yet: \(exchange["request"] ?? "")")
            // Where poi serve answers otherwise on purpose, the fixture says what and why.
            for (key, value) in exchange["poiServeDiffers"] as? [String: Any] ?? [:] where key != "why" { expected[key] = value }
            Self.expectSame(try Self.answer(to: exchange, harness: poi), expected, exchange, "poi serve")
        }
    }

    /// Where the reference runs: it still gives the recorded answers, or (`POI_RECORD_REFERENCE=1`)
    /// they are recorded again.
    @Test(.referenceServer) func theReferenceStillGivesTheRecordedAnswers() throws {
        var fixture = try Self.fixture()
        let poi = try ServeHarness("recording")
        try Self.seed(fixture, into: poi)
        poi.stop()  // the reference alone over the seeded database
        let ref = try ReferenceServer(uri: LiveDatabase.uri!, database: poi.databaseName, uploads: poi.uploads, scratch: poi.scratch)
        let base = "http://127.0.0.1:\(ref.port)"
        var exchanges = try #require(fixture["exchanges"] as? [[String: Any]])
        let recording = ProcessInfo.processInfo.environment["POI_RECORD_REFERENCE"] == "1"
        for i in exchanges.indices {
            let theirs = try Self.answer(to: exchanges[i], harness: poi, base: base)
            if recording {
                exchanges[i]["answer"] = theirs
            } else {
                let recorded = try #require(exchanges[i]["answer"] as? [String: Any])
                Self.expectSame(theirs, recorded, exchanges[i], "the reference")
            }
        }
        guard recording else { return }
        let node = try runToEnd(URL(fileURLWithPath: Reference.node!), ["--version"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        fixture["recordedWith"] = "tmt-server index.js on Node.js \(node), over SecantusDB"
        fixture["exchanges"] = exchanges
        let data = try JSONSerialization.data(withJSONObject: fixture, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try (data + Data("\n".utf8)).write(to: Self.fixturePath)
    }
}
