import Foundation
import PoiTestSupport
import Testing

/// `--types` stores typed columns as BSON numbers, dates and booleans (queryable as
/// such by the app's driver), the types round-trip through export, and check, convert and
/// import --dry-run agree on typed rejects.
@Suite(.tags(.live, .process), .serialized, .liveServer) struct TypedColumnsCLITests {
    static let csv = """
    id,name,lat,lon,population,elevation,opened,open,note
    1,Alpha,48.1,2.1,1200,35.5,2024-03-01,yes,a
    2,Beta,48.2,2.2,80,,2024-03-01T10:00:00+02:00,no,
    3,Gamma,48.3,2.3,12a,3,2024-03-01,yes,c
    4,Delta,48.4,2.4,5000000000,-2,2020-01-31,1,d

    """
    static let types = ["--types", "population=int,elevation=double", "--types", "opened=date,open=bool"]

    /// Each stored place's extra as pymongo sees it: BSON type names and values.
    static let extraScript = """
    import pymongo, sys, json
    db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
    \(PythonTypedValues.function)
    out = {d['name']: {k: t(v) for k, v in d.get('extra', {}).items()} for d in db.locations.find()}
    out['big'] = sorted(d['name'] for d in db.locations.find({'extra.population': {'$gt': 1000}}))
    print(json.dumps(out, sort_keys=True))
    """

    @Test func typedColumnsAreStoredTypedAndComeBackFromAnExport() throws {
        let ws = try Workspace("typed")
        defer { ws.cleanUp() }
        try Self.csv.write(toFile: ws.path("t.csv"), atomically: true, encoding: .utf8)
        let first = try ws.poi(["import", "t.csv", "--json", "--quiet"] + Self.types)
        #expect(first.status == 1, "one typed reject: \(first.all)")
        let s = try ws.json(first)
        #expect(int(s, "inserted") == 3 && int(s, "rejected") == 1, "\(s)")
        let rejects = try String(contentsOfFile: ws.path("t.rejects.csv"), encoding: .utf8)
        #expect(rejects.hasSuffix("3,Gamma,48.3,2.3,12a,3,2024-03-01,yes,c,4,population,\"typed int (--types): \"\"12a\"\" is not an integer\"\n"),
                "\(rejects)")
        let stored = try ws.python(Self.extraScript)
        let expected = #"{"Alpha": {"elevation": "double:35.5", "note": "str:a", "open": "bool:True", "opened": "date:2024-03-01T00:00:00", "population": "int:1200"}, "# +
            #""Beta": {"elevation": "null", "note": "str:", "open": "bool:False", "opened": "date:2024-03-01T08:00:00", "population": "int:80"}, "# +
            #""Delta": {"elevation": "double:-2.0", "note": "str:d", "open": "bool:True", "opened": "date:2020-01-31T00:00:00", "population": "int:5000000000"}, "# +
            #""big": ["Alpha", "Delta"]}"#
        #expect(stored == expected)

        // Export, then import the export: with the same --types, nothing changes.
        #expect(ws.poiExport(["export", "-o", "out.geojson"]) == 0)
        let exported = try String(contentsOfFile: ws.path("out.geojson"), encoding: .utf8)
        #expect(exported.contains(#""population":1200,"elevation":35.5,"opened":"2024-03-01T00:00:00.000Z","open":true"#), "\(exported)")
        let again = try ws.json(try ws.poi(["import", "out.geojson", "--json", "--quiet"] + Self.types))
        #expect(int(again, "unchanged") == 3 && int(again, "updated") == 0, "\(again)")
        #expect(try ws.python(Self.extraScript) == expected)

        // Into a fresh database: the same typed documents.
        let fresh = try Workspace("typed-fresh")
        defer { fresh.cleanUp() }
        try FileManager.default.copyItem(atPath: ws.path("out.geojson"), toPath: fresh.path("out.geojson"))
        #expect(try fresh.poi(["import", "out.geojson", "--quiet"] + Self.types).status == 0)
        #expect(try fresh.python(Self.extraScript) == expected)
        // Without --types the dates come back as the ISO text the export wrote: an update, said so.
        let untyped = try ws.json(try ws.poi(["import", "out.geojson", "--json", "--quiet"]))
        #expect(int(untyped, "updated") == 3, "\(untyped)")
    }

    @Test func checkConvertAndDryRunAgreeOnTypedRejects() throws {
        let dir = try CheckIsImportTests.scratch("typed")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.csv.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
        let (check, dry, convert, _) = try CheckIsImportTests.counts(["t.csv"], in: dir, extra: Self.types)
        #expect(check == CheckIsImportTests.Counts(valid: 3, rejected: 1))
        #expect(dry == check && convert == check)
        let text = try PoiProcess.run(["check", "t.csv"] + Self.types, currentDirectory: URL(fileURLWithPath: dir))
        #expect(text.stdout.contains("t.csv:4: record 3: population: typed int (--types): \"12a\" is not an integer\n"), "\(text.all)")
        // A typo names the columns there are; nothing is read.
        let typo = try PoiProcess.run(["check", "t.csv", "--types", "popluation=int"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("t.csv: --types popluation: no column popluation in this file (its extra columns: "
                                     + "population, elevation, opened, open, note); nothing was read"), "\(typo.all)")
        let badType = try PoiProcess.run(["check", "t.csv", "--types", "population=integr"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(badType.status == 64 || badType.status == 2, "\(badType.all)")
        #expect(badType.stderr.contains("--types population=integr: unknown type 'integr'; types: string, int, double, bool, date"), "\(badType.all)")
    }
}
