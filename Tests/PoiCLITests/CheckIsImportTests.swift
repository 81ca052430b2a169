import Foundation
import PoiTestSupport
import Testing

/// `poi check` and `poi convert` apply the import's key rule — a key once per run,
/// across files and zip members, exact repeats written once — and skip rejects files among
/// several inputs as the import does; the counts of all three agree on every fixture.
@Suite(.tags(.process)) struct CheckIsImportTests {
    static func scratch(_ name: String) throws -> String { try OutputSafetyTests.scratch("checkimport-" + name) }
    static func object(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    struct Counts: Equatable, CustomStringConvertible {
        var valid: Int, rejected: Int
        var description: String { "\(valid) valid, \(rejected) rejected" }
    }

    /// check, import --dry-run and convert over the same files: (valid, rejected) each, and what
    /// convert wrote.
    static func counts(_ files: [String], in dir: String, extra: [String] = [], stdin: Data? = nil, output: String? = nil)
        throws -> (check: Counts, dryRun: Counts, convert: Counts?, features: Int?) {
        let at = URL(fileURLWithPath: dir)
        let check = try PoiProcess.run(["check", "--json"] + files + extra, currentDirectory: at, stdin: stdin)
        let c = try #require(object(check.stdout), "\(check.all)")
        let dry = try PoiProcess.run(["import", "--dry-run", "--json"] + files + extra,
                                     currentDirectory: at, stdin: stdin)
        let d = try #require(object(dry.stdout), "\(dry.all)")
        let rows = d["rowsRead"] as? Int ?? -1, dryRejected = d["rejected"] as? Int ?? -1
        var convert: Counts?, features: Int?
        if files.count == 1 {
            let out = output ?? dir + "/out.geojson"
            let r = try PoiProcess.run(["convert", files[0], "-o", out, "--json"] + extra, currentDirectory: at, stdin: stdin)
            let s = try #require(object(r.stdout), "\(r.all)")
            features = s["features"] as? Int
            let written = (s["features"] as? Int ?? 0) + (s["unchanged"] as? Int ?? 0) + (s["duplicates"] as? Int ?? 0)
            convert = Counts(valid: written, rejected: s["rejected"] as? Int ?? -1)
        }
        return (Counts(valid: c["valid"] as? Int ?? -1, rejected: c["rejected"] as? Int ?? -1),
                Counts(valid: rows - dryRejected, rejected: dryRejected), convert, features)
    }

    @Test func duplicateKeysAreRejectedByAllThree() throws {
        let dir = try Self.scratch("dup")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "id,name,lat,lon\n7,A,1,2\n7,B,1,2\n8,C,1,2\n8,C,1,2\n".write(toFile: dir + "/d.csv", atomically: true, encoding: .utf8)
        let (check, dry, convert, features) = try Self.counts(["d.csv"], in: dir)
        #expect(check == Counts(valid: 3, rejected: 1))
        #expect(dry == check)
        #expect(convert == check)
        #expect(features == 2, "B is refused, the second C is the first written once")
        let text = try PoiProcess.run(["check", "d.csv"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(text.status == 1)
        #expect(text.stdout.contains("d.csv:3: record 2: id: duplicate key of line 2\n"), "\(text.stdout)")
        #expect(text.stdout.contains("of the valid: 1 exact repeat(s) of an earlier record of their key\n"), "\(text.stdout)")
        // Read once from standard input (places built in that one pass): the same verdicts.
        let piped = try Self.counts(["-"], in: dir, stdin: Data(contentsOf: URL(fileURLWithPath: dir + "/d.csv")))
        #expect(piped.check == check && piped.dryRun == check)
        // --on-duplicate first: nothing rejected, B left out.
        let first = try Self.counts(["d.csv"], in: dir, extra: ["--on-duplicate", "first"])
        #expect(first.check == Counts(valid: 4, rejected: 0) && first.dryRun == first.check && first.convert == first.check)
        #expect(first.features == 2)
        // --on-duplicate last: convert writes B, not A.
        let last = try PoiProcess.run(["convert", "d.csv", "-o", "-", "--on-duplicate", "last"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(last.stdout.contains("\"name\":\"B\"") && !last.stdout.contains("\"name\":\"A\""), "\(last.all)")
    }

    /// `42` and `"42"` are one key, in GeoJSON as in the import.
    @Test func numberAndStringIdsAreOneKey() throws {
        let dir = try Self.scratch("ids")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func feature(_ id: String, _ name: String) -> String {
            #"{"type":"Feature","id":"# + id + #","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":""# + name + #""}}"#
        }
        try (feature("42", "A") + "\n" + feature("\"42\"", "B") + "\n").write(toFile: dir + "/i.geojsonl", atomically: true, encoding: .utf8)
        let (check, dry, convert, _) = try Self.counts(["i.geojsonl"], in: dir)
        #expect(check == Counts(valid: 1, rejected: 1))
        #expect(dry == check && convert == check)
    }

    /// A key of an earlier file repeated in a later one, and a rejects file among the inputs.
    @Test func acrossFilesAndSkippingRejectsFiles() throws {
        let dir = try Self.scratch("across")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "id,name,lat,lon\n1,A,1,2\n2,B,1,2\n".write(toFile: dir + "/a.csv", atomically: true, encoding: .utf8)
        try "id,name,lat,lon\n3,C,1,2\n1,Z,1,2\n".write(toFile: dir + "/b.csv", atomically: true, encoding: .utf8)
        try "id,name,lat,lon,_line,_field,_reason\n9,Q,1,99,3,latitude,bad\n".write(toFile: dir + "/a.rejects.csv",
                                                                                  atomically: true, encoding: .utf8)
        let (check, dry, _, _) = try Self.counts(["a.csv", "a.rejects.csv", "b.csv"], in: dir)
        #expect(check == Counts(valid: 3, rejected: 1))
        #expect(dry == check)
        let text = try PoiProcess.run(["check", "a.csv", "a.rejects.csv", "b.csv"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(text.stdout == "a.csv: 2 valid, 0 rejected\nb.csv:3: record 2: id: duplicate key of a.csv line 2\n"
                + "b.csv: 1 valid, 1 rejected\ntotal: 3 valid, 1 rejected\n", "\(text.all)")
        #expect(text.stderr.contains("poi: skipped a.rejects.csv: a rejects file of an earlier import, not a dump"))
    }

    /// The same file twice: the first copy's own repeat is judged before its counts are printed.
    @Test func aFileGivenTwice() throws {
        let dir = try Self.scratch("twice")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "id,name,lat,lon\n7,A,1,2\n7,B,1,2\n".write(toFile: dir + "/d.csv", atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "d.csv", "d.csv"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.stdout == "d.csv:3: record 2: id: duplicate key of line 2\nd.csv: 1 valid, 1 rejected\n"
                + "d.csv:3: record 2: id: duplicate key of d.csv line 2\nd.csv: 1 valid, 1 rejected\n"
                + "total: 2 valid, 2 rejected\nof the valid: 1 exact repeat(s) of an earlier record of their key\n", "\(r.all)")
        let (check, dry, _, _) = try Self.counts(["d.csv", "d.csv"], in: dir)
        #expect(check == Counts(valid: 2, rejected: 2) && dry == check)
    }

    /// Every sample: the three agree.
    @Test(arguments: ["places.csv", "landmarks.geojson"])
    func samplesAgree(sample: String) throws {
        let scratch = try Self.scratch("sample")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let dir = PoiProcess.repoRoot.appendingPathComponent("Samples").path
        let (check, dry, convert, _) = try Self.counts([sample], in: dir, output: scratch + "/out.geojson")
        #expect(check.rejected > 0, "the samples hold rejects on purpose")
        #expect(dry == check, "\(sample)")
        #expect(convert == check, "\(sample)")
    }

    /// A file with an id column where one row's id is blank: the key notice says so, not "no id column".
    @Test func aBlankIDIsNamedAsSuch() throws {
        let dir = try CheckIsImportTests.scratch("blankid")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "id,name,lat,lon\n42,A,10,20\n,E,10,20\n".write(toFile: dir + "/d.csv", atomically: true, encoding: .utf8)
        let run = try PoiProcess.run(["import", "--dry-run", "d.csv"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(run.stderr.contains("key: d.csv: line 3 and any other row with a blank \"id\" gets its key from name + coordinates "
                                    + "(a place with the same name and position as another is a duplicate)\n"), "\(run.all)")
        #expect(!run.stderr.contains("no id column"), "\(run.all)")
    }
}
