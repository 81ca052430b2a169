import Foundation
import PoiTestSupport
import Testing

/// A first load sends new places as plain inserts, with the unique `importKey` index
/// as the guard. What must not change: every place once, exact outcome counts, no failures,
/// and fields the app owns kept — also when two imports race over the same keys.
@Suite(.tags(.live, .process), .liveServer) struct FirstLoadTests {
    static func csv(rows: Int, renamed: Set<Int> = []) -> String {
        var s = "id,name,lat,lon,category\n"
        for i in 0..<rows {
            s += "p\(i),\(renamed.contains(i) ? "Renamed" : "Place") \(i),\(Double(i % 170) - 85 + 0.125),\(Double(i % 360) - 180 + 0.5),c\(i % 5)\n"
        }
        return s
    }

    static func summary(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(path)")
    }

    /// Two imports of the same file started together on an empty database (and a third of one
    /// shard of it): both see an empty collection, both insert, and the one that loses each race
    /// falls back to the upsert path — every place exactly once, exit 0, and each run's counts
    /// add up to what it read.
    @Test func concurrentFirstLoadsWriteEveryPlaceOnce() throws {
        let ws = try Workspace("firstload")
        defer { ws.cleanUp() }
        let rows = 3_000
        try Self.csv(rows: rows).write(toFile: ws.path("p.csv"), atomically: true, encoding: .utf8)
        let line = ["a", "b", "c"].map { run in
            "\"$POI\" import p.csv --db \(ws.database) --uploads uploads --batch-size 200 --json"
                + (run == "c" ? " --shard 1/2" : "") + " > \(run).json 2> \(run).err; echo $? > \(run).status"
        }.joined(separator: " & ") + " & wait"
        let r = try PoiProcess.execute(URL(fileURLWithPath: "/bin/bash"), ["-c", line],
                                       environment: ["POI": PoiProcess.binary.path, "MONGODB_URI": ws.uri],
                                       currentDirectory: ws.root)
        #expect(r.status == 0, "\(r.all)")
        var insertedTotal = 0
        for run in ["a", "b", "c"] {
            let status = try String(contentsOfFile: ws.path("\(run).status"), encoding: .utf8)
            let err = (try? String(contentsOfFile: ws.path("\(run).err"), encoding: .utf8)) ?? ""
            #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "run \(run): \(err)")
            let s = try Self.summary(ws.path("\(run).json"))
            let written = (s["inserted"] as? Int ?? -1) + (s["updated"] as? Int ?? -1) + (s["unchanged"] as? Int ?? -1)
            let expected = run == "c" ? rows - (s["skippedByShard"] as? Int ?? 0) : rows
            #expect(written == expected, "run \(run): \(s)")
            #expect(s["rejected"] as? Int == 0, "run \(run): \(s)")
            insertedTotal += s["inserted"] as? Int ?? 0
        }
        // Each place was inserted by exactly one of the runs.
        #expect(insertedTotal == rows)
        let count = "import pymongo,sys; c=pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations; "
            + "print(c.count_documents({}), len(c.distinct('importKey')))"
        #expect(try ws.python(count) == "\(rows) \(rows)")
    }

    /// A rerun after a first load and an app edit: the app's own field stays, a changed row is
    /// updated in place, nothing is duplicated; a first load's documents look like any upsert's.
    @Test func aFirstLoadThenARerunKeepsTheAppsEdits() throws {
        let ws = try Workspace("firstloadedit")
        defer { ws.cleanUp() }
        try Self.csv(rows: 500).write(toFile: ws.path("p.csv"), atomically: true, encoding: .utf8)
        let first = try ws.json(try ws.poi(["import", "p.csv", "--json"]))
        #expect(first["inserted"] as? Int == 500)
        _ = try ws.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.update_one({'importKey':'p7'},{'$set':{'rating':5}})")
        try Self.csv(rows: 500, renamed: [7, 8]).write(toFile: ws.path("p.csv"), atomically: true, encoding: .utf8)
        let again = try ws.json(try ws.poi(["import", "p.csv", "--json"]))
        #expect(again["inserted"] as? Int == 0)
        #expect(again["updated"] as? Int == 2)
        #expect(again["unchanged"] as? Int == 498)
        let doc = "import pymongo,sys; c=pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations; d=c.find_one({'importKey':'p7'}); "
            + "print(c.count_documents({}), d['name'], d.get('rating'), list(d.keys())[:3], d['created_at'] < d['updated_at'])"
        #expect(try ws.python(doc) == "500 Renamed 7 5 ['_id', 'importKey', 'name'] True")
    }
}
