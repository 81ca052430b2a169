import Foundation
import PoiTestSupport
import Testing

/// Rejects files of a nightly import through a glob (`poi import dumps/*.csv`): yesterday's rejects
/// file among the inputs, a clean night, two inputs whose rejects files share a name.
@Suite(.tags(.live, .process), .serialized)
struct NightlyRejectsFilesTests: CronShellRuns {
    /// README's cron line, second night: `poi import dumps/*.csv` matches yesterday's
    /// `places.rejects.csv`. Import recognises it and skips it, but still counts it among its
    /// inputs when it writes tonight's `places.rejects.csv` to the same path, so the run ends with
    /// "refusing to overwrite an input with an output", exit 3: `[ $? -le 1 ]` skips the export
    /// every night after the first one with a reject, and tonight's rejects are never written.
    @Test(.liveServer) func cronLineSecondNightWithRejectsStillExitsOneAndExports() throws {
        let ws = try Workspace("t2cron")
        defer { ws.cleanUp() }
        let dumps = ws.path("dumps")
        try FileManager.default.createDirectory(atPath: dumps, withIntermediateDirectories: true)
        try "id,name,lat,lon\na1,Alpha,1,2\na2,Beta,999,2\n".write(toFile: dumps + "/places.csv", atomically: true, encoding: .utf8)
        let line = "\"$POI\" import dumps/*.csv --db \(ws.database) --uploads uploads --quiet; s=$?; echo \"import $s\"; "
            + "[ $s -le 1 ] && \"$POI\" export --db \(ws.database) -o places.geojson --quiet && echo exported"
        for night in 1...3 {
            try? FileManager.default.removeItem(atPath: ws.path("places.geojson"))
            let r = try Self.shell(line, in: ws.root.path, uri: ws.uri)
            #expect(r.stdout.contains("import 1"), "night \(night): \(r.all)")
            #expect(r.stdout.contains("exported"), "night \(night): the export did not run: \(r.all)")
            #expect(!r.stderr.contains("refusing to overwrite an input"), "night \(night): \(r.stderr)")
            #expect(ws.files(in: "dumps") == ["places.csv", "places.rejects.csv"], "night \(night)")
        }
    }

    /// `poi import dumps/p.csv` on a clean night removes yesterday's (now stale) `p.rejects.csv`,
    /// but the README's glob (`dumps/*.csv`, which also names the rejects file) leaves it: the
    /// operator keeps reading rejects for rows that were fixed and imported.
    @Test(.liveServer) func aCleanNightThroughTheGlobRemovesTheStaleRejects() throws {
        let ws = try Workspace("t2stale")
        defer { ws.cleanUp() }
        let dumps = ws.path("dumps")
        try FileManager.default.createDirectory(atPath: dumps, withIntermediateDirectories: true)
        try "id,name,lat,lon\na1,A,1,2\na2,B,999,2\n".write(toFile: dumps + "/p.csv", atomically: true, encoding: .utf8)
        #expect(try Self.shell("\"$POI\" import dumps/*.csv --db \(ws.database) --quiet", in: ws.root.path, uri: ws.uri).status == 1)
        #expect(ws.files(in: "dumps") == ["p.csv", "p.rejects.csv"])
        try "id,name,lat,lon\na1,A,1,2\na2,B,9,2\n".write(toFile: dumps + "/p.csv", atomically: true, encoding: .utf8)
        let r = try Self.shell("\"$POI\" import dumps/*.csv --db \(ws.database) --quiet", in: ws.root.path, uri: ws.uri)
        #expect(r.status == 0, "\(r.all)")
        #expect(ws.files(in: "dumps") == ["p.csv"], "yesterday's rejects stayed although p.csv is clean tonight")
    }

    /// `poi import shops.csv shops.txt` (both CSV, as `poi import /data/dumps/*` meets them; also
    /// `x.json` + `x.geojson`): both default to `shops.rejects.csv`. The first input's rejects are
    /// written, then the second input, which has none, "removes the stale rejects file": the
    /// summary still says `rejectsFiles: ["shops.rejects.csv"]` and "rejects written to:
    /// shops.rejects.csv", and there is no such file. (With rejects in both, the second replaces
    /// the first's.) Each input's rejects should survive the run, or the collision be refused.
    @Test(.liveServer) func twoInputsWithTheSameRejectsNameDoNotLoseTheFirstsRejects() throws {
        let ws = try Workspace("trialrejname")
        defer { ws.cleanUp() }
        try "id,name,lat,lon\nc1,Alpha,1,2\nc2,Beta,999,2\n".write(toFile: ws.path("shops.csv"), atomically: true, encoding: .utf8)
        try "id,name,lat,lon\nd1,Gamma,1,2\n".write(toFile: ws.path("shops.txt"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", "shops.csv", "shops.txt", "--json"])
        #expect(r.status == 1, "\(r.all)")
        let listed = try ws.json(r)["rejectsFiles"] as? [String] ?? []
        for file in listed {
            #expect(FileManager.default.fileExists(atPath: ws.path(file)), "the summary names \(file), which does not exist")
        }
        let rejects = (try? String(contentsOfFile: ws.path("shops.rejects.csv"), encoding: .utf8)) ?? ""
        #expect(rejects.contains("c2,Beta,999,2"), "the rejected row of shops.csv is nowhere: \(listed)")
    }
}
