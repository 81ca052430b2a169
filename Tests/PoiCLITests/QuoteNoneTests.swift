import Foundation
import PoiTestSupport
import Testing

/// GeoNames-style rows with bare quotes: `--quote none` reads the quotes as text, and without it
/// the reject says how to. No database.
@Suite(.tags(.process))
struct BareQuotesTests: DumpFixtures {
    /// The README's GeoNames command line (with `check`): `--quote none` reads both rows, with
    /// the quotes kept as text.
    @Test func bareQuotesInGeoNamesRowsAreTextWithQuoteNone() throws {
        let dir = try Self.scratch("geonames")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.geonamesRows.write(to: dir.appendingPathComponent("allCountries.txt"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "allCountries.txt", "--delimiter", "tab", "--quote", "none",
                                    "--columns", Self.geonamesColumns, "--field", "id=geonameid", "--json"],
                                   currentDirectory: dir)
        #expect(r.status == 0, "stdout: \(r.stdout) stderr: \(r.stderr)")
        let summary = try Self.json(r.stdout)
        #expect(summary["valid"] as? Int == 2)
        #expect(summary["rejected"] as? Int == 0)
        // The name keeps its quotes: convert shows what would be stored.
        let c = try PoiProcess.run(["convert", "allCountries.txt", "-o", "-", "--delimiter", "tab", "--quote", "none",
                                    "--columns", Self.geonamesColumns, "--field", "id=geonameid"], currentDirectory: dir)
        #expect(c.status == 0, "\(c.stderr)")
        let features = try #require(try Self.json(c.stdout)["features"] as? [[String: Any]])
        let names = features.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String }
        #expect(names == ["\"Quoted\" Hill", "Next"])
        let extra = (features.first?["properties"] as? [String: Any])?["alternatenames"] as? String
        #expect(extra == "\"Alt,Other")
    }

    /// Without `--quote none` the quote still swallows the rest (RFC 4180 says it may), but the
    /// reject says what to do about it.
    @Test func anUnterminatedQuoteSaysHowToReadQuotesAsText() throws {
        let dir = try Self.scratch("geonames-default")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.geonamesRows.write(to: dir.appendingPathComponent("allCountries.txt"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "allCountries.txt", "--delimiter", "tab", "--columns", Self.geonamesColumns,
                                    "--field", "id=geonameid"], currentDirectory: dir)
        #expect(r.status == 1)
        #expect(r.stdout.contains("allCountries.txt:1: record 1: unterminated quoted field (the file ends inside quotes "
                                  + "opened in this record, so every line after it was read into it: lines 1–2; if \" is plain text in this file, read it with --quote none)"),
                "\(r.stdout)")
        #expect(try PoiProcess.run(["check", "--help"]).stdout.contains("--quote <q>"))
    }
}

/// The rejects file of a file read with `--quote none` (or whose quotes merged its cells) holds each
/// row's raw cells and the three reason columns, with the file's own line ends, and reads back with
/// `--quote none`.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct QuoteNoneRejectsTests: DumpFixtures {
    static let columns = "geonameid,name,asciiname,alternatenames,latitude,longitude,feature_class,feature_code,country_code"

    /// A bad row of a `--quote none` import comes back byte for byte, and PoiKit's own cells
    /// after it are not quoted either: the rejects file reads back with `--quote none`, the row's
    /// quotes still text. (`check` validates the same way; the rejects file is the import's, so
    /// this runs the import against the live server.)
    @Test(.liveServer) func rejectsOfAnUnquotedFileReadBackUnquoted() throws {
        let ws = try Workspace("geonames-rejects")
        defer { ws.cleanUp() }
        let bad = "3\t\"Bad\" Lat\tBad Lat\t\"x\t95.0\t20.0\tT\tHLL\tUS\t\t\t\t\t\t0\t\t0\tAmerica/X\t2014-11-05\n"
        try (Self.geonamesRows + bad).write(toFile: ws.path("allCountries.txt"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", "allCountries.txt", "--delimiter", "tab", "--quote", "none",
                            "--columns", Self.geonamesColumns, "--field", "id=geonameid"])
        #expect(r.status == 1, "\(r.stderr)")
        let rejects = try String(contentsOfFile: ws.path("allCountries.rejects.csv"), encoding: .utf8)
        let lines = rejects.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3, "\(rejects)")
        #expect(lines[0] == Self.geonamesColumns.replacingOccurrences(of: ",", with: "\t") + "\t_line\t_field\t_reason")
        #expect(lines[1] == bad.dropLast() + "\t3\tlatitude\tlatitude 95.0 out of range [-90, 90] (looks swapped: latitude 20.0, longitude 95.0 would fit; check which column is which)")
        // Fixed, it reads back with the same quoting (the header is there now).
        try rejects.replacingOccurrences(of: "\t95.0\t", with: "\t45.0\t")
            .write(toFile: ws.path("allCountries.rejects.csv"), atomically: true, encoding: .utf8)
        let again = try ws.poi(["check", "allCountries.rejects.csv", "--quote", "none", "--field", "id=geonameid", "--json"])
        #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
        #expect(try Self.json(again.stdout)["valid"] as? Int == 1)
    }

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
}
