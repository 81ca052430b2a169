import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tutorial's Node.js/Express server (../shared/reference/tmt-server, never copied here),
/// when Node.js and Debian's node-express and node-mongodb are installed (`make setup` installs
/// them as root).
enum Reference {
    static let nodePath = "/usr/share/nodejs"

    static var script: String? {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["TMT_REFERENCE"] { candidates.append(explicit) }
        let root = ServeHarness.repoRoot
        candidates.append(root.appendingPathComponent("../shared/reference/tmt-server/index.js").standardized.path)
        candidates.append(root.appendingPathComponent("../../shared/reference/tmt-server/index.js").standardized.path)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    static var node: String? { ["/usr/bin/node", "/usr/bin/nodejs"].first { FileManager.default.isExecutableFile(atPath: $0) } }

    static var unavailableReason: String? {
        if node == nil { return "Node.js is not installed" }
        for module in ["express", "mongodb"] where !FileManager.default.fileExists(atPath: "\(nodePath)/\(module)") {
            return "Debian's node-\(module) is not installed (apt-get install node-express node-mongodb)"
        }
        if script == nil { return "the reference server (../shared/reference/tmt-server) is not next to this repository" }
        return nil
    }
}

extension Trait where Self == ConditionTrait {
    static var referenceServer: Self {
        .enabled(if: Reference.unavailableReason == nil, Comment(rawValue: "SKIPPED: \(Reference.unavailableReason ?? "")"))
    }
}

/// The reference server on a free port over the harness's database and uploads folder.
final class ReferenceServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    let log: String

    init(uri: String, database: String, uploads: String, scratch: String) throws {
        port = Loopback.freePort()
        log = scratch + "/reference.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: Reference.node!)
        process.arguments = [Reference.script!]
        var env = ProcessInfo.processInfo.environment
        env["NODE_PATH"] = Reference.nodePath
        env["MONGO_URL"] = uri
        env["DB"] = database
        env["PORT"] = String(port)
        env["UPLOADS"] = uploads
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning {
            if (try? String(contentsOfFile: log, encoding: .utf8))?.contains("listening on port") == true { return }
            usleep(50_000)
        }
        throw HarnessError("the reference server did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    deinit {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
    }
}

@Suite("poi serve against the reference server", .tags(.live, .process), .serialized, .liveServer, .referenceServer)
struct CompatibilityTests {
    /// ids and timestamps differ between two inserts; everything else must not.
    static func normalized(_ value: Any?) -> Any? {
        switch value {
        case let dict as [String: Any]:
            var out: [String: Any] = [:]
            for (k, v) in dict where !["_id", "created_at", "updated_at", "connection"].contains(k) { out[k] = normalized(v) }
            return out
        case let array as [Any]: return array.map { normalized($0) as Any }
        default: return value
        }
    }

    static func same(_ a: Any?, _ b: Any?) -> Bool {
        NSDictionary(dictionary: ["v": a ?? NSNull()]).isEqual(to: ["v": b ?? NSNull()])
    }

    @Test func sameAnswersOnTheSameData() throws {
        let poi = try ServeHarness("compat")
        let ref = try ReferenceServer(uri: LiveDatabase.uri!, database: poi.databaseName, uploads: poi.uploads, scratch: poi.scratch)
        let refBase = "http://127.0.0.1:\(ref.port)"
        func both(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> (HTTPResult, HTTPResult) {
            let mine = try poi.request(method, path, headers: headers, body: body)
            let theirs = try poi.request(method, path, headers: headers, body: body, base: refBase)
            return (mine, theirs)
        }
        func expectSame(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
                        exactText: Bool = false) throws -> (HTTPResult, HTTPResult) {
            let (m, t) = try both(method, path, headers: headers, body: body.map { Array($0.utf8) })
            #expect(m.status == t.status, "\(method) \(path): status \(m.status) vs reference \(t.status)")
            if exactText {
                #expect(m.text == t.text, "\(method) \(path)")
                // The same bytes, the same weak validator as Express's: a cache the reference
                // filled revalidates here.
                if method == "GET" && t.status == 200 {
                    #expect(m.header("etag") != nil && m.header("etag") == t.header("etag"), "\(method) \(path): ETag")
                }
            } else {
                #expect(Self.same(Self.normalized(m.json), Self.normalized(t.json)), "\(method) \(path): \(m.text) vs reference \(t.text)")
            }
            return (m, t)
        }
        let json = ["Content-Type": "application/json"]
        let place = #"{"name":"Cafe","placename":"Main St","location":{"type":"Point","coordinates":[-0.1,51.5]},"details":"x","categories":["cafe","bar"],"rating":4.5,"visits":12,"open":true,"note":null}"#
        let (created, _) = try expectSame("POST", "/locations", headers: json, body: place)
        _ = try expectSame("POST", "/locations", headers: json, body: #"{"name":"Park","location":{"type":"Point","coordinates":[2.35,48.85]},"categories":["park"]}"#)
        // Both servers read the same four documents: byte-for-byte the same JSON.
        _ = try expectSame("GET", "/locations", headers: ["Accept": "application/json"], exactText: true)
        let id = try #require((created.json as? [String: Any])?["_id"] as? String)
        _ = try expectSame("GET", "/locations/\(id)", exactText: true)
        _ = try expectSame("GET", "/locations/000000000000000000000000", exactText: true)
        _ = try expectSame("GET", "/locations/xyz", exactText: true)
        let box = #"{"location":{"$geoWithin":{"$box":[[-1,51],[1,52]]}}}"#
        _ = try expectSame("GET", "/locations?query=\(urlEncoded(box))", exactText: true)
        let inQuery = #"{"categories":{"$in":["park","bar"]}}"#
        _ = try expectSame("GET", "/locations?query=\(urlEncoded(inQuery))", exactText: true)
        _ = try expectSame("GET", "/locations?query=\(urlEncoded("{bad"))", exactText: true)
        _ = try expectSame("PUT", "/locations/\(id)", headers: json, body: #"{"name":"Cafe 2","categories":["cafe"]}"#)
        _ = try expectSame("GET", "/", exactText: true)

        let png = try ServeHarness.sample("brick.png")
        let (mineUp, theirUp) = try both("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        #expect(mineUp.status == 201 && theirUp.status == 201)
        let ids = [mineUp, theirUp].compactMap { ($0.json as? [String: Any])?["_id"] as? String }
        #expect(ids.count == 2)
        for fileId in ids {
            let (m, t) = try both("GET", "/files/\(fileId)")
            #expect(m.status == 200 && t.status == 200)
            #expect(m.body == png && t.body == png)
            #expect(m.header("content-type")?.hasPrefix("image/png") == true && t.header("content-type")?.hasPrefix("image/png") == true)
        }
        _ = try expectSame("GET", "/files/000000000000000000000000", exactText: true)
        _ = try expectSame("GET", "/files/xyz", exactText: true)
        // Each server deletes a document of its own, then both delete one that is gone.
        let (mineDoc, theirDoc) = try both("POST", "/locations", headers: json, body: Array(#"{"name":"Gone"}"#.utf8))
        let mineId = try #require((mineDoc.json as? [String: Any])?["_id"] as? String)
        let theirId = try #require((theirDoc.json as? [String: Any])?["_id"] as? String)
        let mineDelete = try poi.request("DELETE", "/locations/\(mineId)")
        let theirDelete = try poi.request("DELETE", "/locations/\(theirId)", base: refBase)
        #expect(mineDelete.status == theirDelete.status)
        #expect(Self.same(Self.normalized(mineDelete.json), Self.normalized(theirDelete.json)), "\(mineDelete.text) vs \(theirDelete.text)")
        _ = try expectSame("DELETE", "/locations/\(mineId)")
    }
}
