import Foundation
import PoiTestSupport
import Testing

/// What trying the readers of real third-party dumps (GeoNames, typed columns) as a new user
/// found, end to end.
@Suite(.serialized, .liveServer) struct Trial28FindingsTests {
    static let columns = "geonameid,name,asciiname,alternatenames,latitude,longitude,feature_class,feature_code,country_code"

    /// A tab record refused because two cells hold bare quotes (its quoted split merged cells)
    /// goes to the rejects file as its raw cells plus exactly the three reason columns, so the
    /// rejects file reads back with --quote none as README promises.
    @Test func aQuoteRejectedRowFitsItsRejectsFile() throws {
        let ws = try Workspace("t28-rejects")
        defer { ws.cleanUp() }
        let rows = [
            "1\tAlpha\tAlpha\t\t10.5\t20.5\tP\tPPL\tUS",
            "2\t\"The Point\tThe Point\t\"Pointe\t11.5\t21.5\tP\tPPL\tUS",
            "3\tGamma\tGamma\t\t12.5\t22.5\tP\tPPL\tUS",
        ]
        try (rows.joined(separator: "\n") + "\n").write(toFile: ws.path("g.txt"), atomically: true, encoding: .utf8)
        let run = try ws.poi(["import", "g.txt", "--delimiter", "tab", "--columns", Self.columns, "--field", "id=geonameid", "--quiet"])
        #expect(run.status == 1, "\(run.all)")
        let rejects = try String(contentsOfFile: ws.path("g.rejects.csv"), encoding: .utf8)
        let lines = rejects.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).count } == [12, 12], "\(rejects)")
        #expect(lines.last?.hasPrefix(rows[1] + "\t2\tname\t") == true, "\(rejects)")
        let again = try ws.poi(["check", "g.rejects.csv", "--quote", "none", "--field", "id=geonameid"])
        #expect(again.status == 0 && again.stdout.contains("g.rejects.csv: 1 valid, 0 rejected"), "\(again.all)")
    }

    /// A header-less LF file whose last record opens a quote that never closes: its rejects file
    /// uses LF throughout (no CRLF mixed in) and closes the quote on the row, not on a line of
    /// its own.
    @Test func anUnterminatedRowsRejectsLineKeepsTheFilesLineEnds() throws {
        let ws = try Workspace("t28-unterminated")
        defer { ws.cleanUp() }
        try "1\tAlpha\t10\t20\n2\t\"Beta\t11\t21\n3\tGamma\t12\t22\n".write(toFile: ws.path("u.txt"), atomically: true, encoding: .utf8)
        let run = try ws.poi(["import", "u.txt", "--delimiter", "tab", "--columns", "id,name,lat,lon", "--field", "id=id", "--quiet"])
        #expect(run.status == 1, "\(run.all)")
        let rejects = try String(contentsOfFile: ws.path("u.rejects.csv"), encoding: .utf8)
        #expect(!rejects.contains("\r"), "\(rejects.debugDescription)")
        #expect(rejects.hasPrefix("id\tname\tlat\tlon\t_line\t_field\t_reason\n2\t\"Beta\t11\t21\n3\tGamma\t12\t22\"\t2\t\t"),
                "\(rejects.debugDescription)")
        #expect(rejects.hasSuffix("--quote none)\"\n"), "\(rejects.debugDescription)")
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
