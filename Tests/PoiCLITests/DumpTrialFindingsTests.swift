import Foundation
import PoiTestSupport
import Testing

/// What trying dumps as they arrive (gzip'd, zipped, other encodings, no header) found, each reproduced as the trial found it:
/// GeoNames' bare quotes, a zip with nothing to read, `convert` of a dump damaged midway, column
/// names that do not fit, a zip member that is not damaged but cannot be read, UTF-16 without a
/// byte-order mark. No database: `poi check` and `poi convert` read exactly as the import does.
@Suite struct DumpTrialFindingsTests {
    static let geonamesColumns = "geonameid,name,asciiname,alternatenames,latitude,longitude,feature_class,feature_code,"
        + "country_code,cc2,admin1_code,admin2_code,admin3_code,admin4_code,population,elevation,dem,timezone,modification_date"

    /// Two GeoNames rows; the first holds bare quotes, as real ones do (`"Quoted" Hill`, an
    /// alternate name starting with `"`).
    static let geonamesRows = "1\t\"Quoted\" Hill\tQuoted Hill\t\"Alt,Other\t10.0\t20.0\tT\tHLL\tUS\t\t\t\t\t\t0\t\t0\tAmerica/X\t2014-11-05\n"
        + "2\tNext\tNext\t\t11.0\t21.0\tT\tHLL\tUS\t\t\t\t\t\t0\t\t0\tAmerica/X\t2014-11-05\n"

    static func scratch(_ name: String) throws -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory() + "poi-dump-trial-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    // MARK: GeoNames' bare quotes

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

    // MARK: a zip with nothing to read

    @Test(arguments: ["empty", "readme-only"]) func zipWithoutDumpsIsUnreadable(_ kind: String) throws {
        let dir = try Self.scratch(kind)
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("""
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w') as z:
                if sys.argv[2] == 'readme-only':
                    z.writestr('dump/README.txt', 'read me')
            """, [dir.path, kind])
        let why = kind == "empty" ? "it is empty" : "only dump/README.txt (documentation)"
        let message = "d.zip: no CSV or GeoJSON member in this zip archive (\(why))"
        let check = try PoiProcess.run(["check", "d.zip"], currentDirectory: dir)
        #expect(check.status == 2)
        #expect(check.stderr.contains(message), "\(check.stderr)")
        let json = try PoiProcess.run(["check", "d.zip", "--json"], currentDirectory: dir)
        #expect(json.status == 2)
        #expect(try Self.json(json.stdout)["unreadable"] as? Int == 1, "\(json.stdout)")
        let convert = try PoiProcess.run(["convert", "d.zip", "-o", "out.geojson"], currentDirectory: dir)
        #expect(convert.status == 2)
        #expect(convert.stderr.contains(message), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.geojson").path))
    }

    /// A skipped member is said once, prefixed once (convert said `poi: poi: skipped`).
    @Test func convertSaysASkippedMemberOnce() throws {
        let dir = try Self.scratch("convert-skipped")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("""
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w') as z:
                z.writestr('README.txt', 'read me')
                z.writestr('p.csv', 'name,lat,lon\\na,1,2\\n')
            """, [dir.path])
        let r = try PoiProcess.run(["convert", "d.zip", "-o", "out.geojson"], currentDirectory: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "poi: skipped d.zip:README.txt (documentation)\npoi: 1 places written to out.geojson, 0 rejected\n")
    }

    /// The import refuses it before it connects or writes anything (so no server is needed to
    /// see it: the URI points at a closed port).
    @Test func importOfAZipWithoutDumpsIsUnreadable() throws {
        let dir = try Self.scratch("import-empty-zip")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("import zipfile, sys; zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w').close()", [dir.path])
        let r = try PoiProcess.run(["import", "d.zip", "--uri", "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300",
                                    "--uploads", dir.appendingPathComponent("uploads").path], currentDirectory: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("d.zip: no CSV or GeoJSON member in this zip archive (it is empty)"), "\(r.stderr)")
    }

    // MARK: convert of a dump damaged midway

    static let makeTruncatedGzip = """
        import gzip, sys
        rows = b'id,name,lat,lon\\n' + b''.join(b'g%06d,Place %d,10.0,20.0\\n' % (i, i) for i in range(20000))
        g = gzip.compress(rows, mtime=0)
        open(sys.argv[1] + '/t.csv.gz', 'wb').write(g[:len(g) // 2])
        """

    /// On standard output every place read before the damage is written, in a closed
    /// collection; exit 2 and a message that says so.
    @Test func convertToStdoutOfATruncatedGzipKeepsEveryGoodRow() throws {
        let dir = try Self.scratch("trunc")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(Self.makeTruncatedGzip, [dir.path])
        let check = try PoiProcess.run(["check", "t.csv.gz", "--json"], currentDirectory: dir)
        #expect(check.status == 2)
        let valid = try #require(try Self.json(check.stdout)["valid"] as? Int)
        #expect(valid > 1000 && valid < 20000)
        let conv = try PoiProcess.run(["convert", "t.csv.gz", "-o", "-", "-q"], currentDirectory: dir)
        #expect(conv.status == 2, "stderr: \(conv.stderr)")
        let features = try #require(try Self.json(conv.stdout)["features"] as? [[String: Any]], "a closed collection")
        #expect(features.count == valid, "every row check counted valid is converted")
        // The id is the import key: the places in input order, none missing, none made up.
        let keys = features.compactMap { ($0["properties"] as? [String: Any])?["importKey"] as? String }
        let expected = (0..<valid).map { String(format: "g%06d", $0) }
        #expect(keys == expected, "\(keys.count) keys, first difference at \(Array(zip(keys, expected)).firstIndex { $0 != $1 } ?? min(keys.count, expected.count))")
        #expect(conv.stderr.contains("t.csv.gz: damaged gzip data at byte "), "\(conv.stderr)")
        #expect(conv.stderr.contains("; the \(valid) places read before it were written to standard output"), "\(conv.stderr)")
    }

    /// To a file nothing is written, and an earlier file stays as it was (a damaged download
    /// never replaces a good conversion); the message says so.
    @Test func convertToAFileOfATruncatedGzipLeavesTheFileAlone() throws {
        let dir = try Self.scratch("trunc-file")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(Self.makeTruncatedGzip, [dir.path])
        let out = dir.appendingPathComponent("t.geojson")
        let fresh = try PoiProcess.run(["convert", "t.csv.gz", "-o", "t.geojson", "-q"], currentDirectory: dir)
        #expect(fresh.status == 2)
        #expect(fresh.stderr.contains("; t.geojson was not written (left as it was)"), "\(fresh.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        try Data("earlier".utf8).write(to: out)
        let again = try PoiProcess.run(["convert", "t.csv.gz", "-o", "t.geojson", "-q"], currentDirectory: dir)
        #expect(again.status == 2)
        #expect(try Data(contentsOf: out) == Data("earlier".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["t.csv.gz", "t.geojson"],
                "no temporary file left")
    }

    /// A zip whose second member is corrupt: the first member's places and the second's before
    /// the damage all reach standard output.
    @Test func convertOfAZipWithACorruptMemberKeepsTheRowsBefore() throws {
        let dir = try Self.scratch("corrupt-member")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(#"""
            import sys, zipfile
            p = sys.argv[1] + '/d.zip'
            rows = lambda tag, n: ('id,name,lat,lon\n' + ''.join('%s%05d,P,1.0,2.0\n' % (tag, i) for i in range(n))).encode()
            with zipfile.ZipFile(p, 'w', zipfile.ZIP_STORED) as z:
                z.writestr('a.csv', rows('a', 100))
                z.writestr('b.csv', rows('b', 5000))
            b = bytearray(open(p, 'rb').read())
            i = b.rindex(b'b04999')
            b[i + 1] = ord('9')   # the CRC of b.csv no longer matches: found at its end
            open(p, 'wb').write(b)
            """#, [dir.path])
        let conv = try PoiProcess.run(["convert", "d.zip", "-o", "-", "-q"], currentDirectory: dir)
        #expect(conv.status == 2, "\(conv.stderr)")
        #expect(conv.stderr.contains("d.zip:b.csv: damaged zip data: CRC-32 mismatch"), "\(conv.stderr)")
        let features = try #require(try Self.json(conv.stdout)["features"] as? [Any])
        #expect(features.count == 5100)
    }

    // MARK: column names that do not fit

    /// More fields than names on the first line: one message, exit 2, nothing read (instead of
    /// one reject per line of a 12-million-line file).
    @Test func tooFewColumnNamesStopAtTheFirstLine() throws {
        let dir = try Self.scratch("columns")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.geonamesRows.write(to: dir.appendingPathComponent("allCountries.txt"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "allCountries.txt", "--delimiter", "tab", "--quote", "none", "--columns",
                                    "geonameid,name,asciiname,alternatenames,latitude,longitude", "--field", "id=geonameid"],
                                   currentDirectory: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("allCountries.txt: line 1 has 19 fields, but 6 column names were given for this file "
                                  + "without a header line; nothing was read. Name all 19 columns with --columns"), "\(r.stderr)")
        #expect(!r.stdout.contains("record 2"), "no reject per line: \(r.stdout)")
    }

    /// A later line with more fields than names is a reject that names the names given, not a
    /// header the file does not have.
    @Test func aLongerLaterLineSaysColumnNamesNotHeader() throws {
        let dir = try Self.scratch("columns-later")
        defer { try? FileManager.default.removeItem(at: dir) }
        try "a,1.0,2.0\nb,1.0,2.0,extra\n".write(to: dir.appendingPathComponent("h.csv"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "h.csv", "--columns", "name,lat,lon"], currentDirectory: dir)
        #expect(r.status == 1)
        #expect(r.stdout.contains("h.csv:2: record 2: record has 4 fields, 3 column names were given"), "\(r.stdout)")
        // convert says where the places went in words ("written to -" before).
        let c = try PoiProcess.run(["convert", "h.csv", "--columns", "name,lat,lon", "-o", "-", "-q"], currentDirectory: dir)
        #expect(c.status == 1)
        #expect(c.stderr == "poi: 1 places written to standard output, 1 rejected\n", "\(c.stderr)")
    }

    /// `--columns` on GeoJSON is said, not silently ignored.
    @Test func columnsOnGeoJSONIsNoted() throws {
        let dir = try Self.scratch("columns-geojson")
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"a"}}]}"#
            .write(to: dir.appendingPathComponent("p.geojson"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "p.geojson", "--columns", "name,lat,lon"], currentDirectory: dir)
        #expect(r.status == 0)
        #expect(r.stderr.contains("note: p.geojson: column names were given for a CSV file without a header line, "
                                  + "but this file is GeoJSON; not used"), "\(r.stderr)")
    }

    // MARK: a member that is not damaged but cannot be read here

    @Test(arguments: ["encrypted", "bzip2"]) func unreadableMemberIsNotCalledDamaged(_ kind: String) throws {
        let dir = try Self.scratch(kind)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Python's zipfile writes bzip2 members; an encrypted one is a stored member with the
        // encryption flag set in both headers (its bytes are never looked at).
        _ = try PoiProcess.python(#"""
            import sys, zipfile, struct
            p = sys.argv[1] + '/d.zip'
            method = zipfile.ZIP_BZIP2 if sys.argv[2] == 'bzip2' else zipfile.ZIP_STORED
            with zipfile.ZipFile(p, 'w', method) as z: z.writestr('p.csv', 'name,lat,lon\na,1,2\n')
            if sys.argv[2] == 'encrypted':
                b = bytearray(open(p, 'rb').read())
                for sig, at in ((b'PK\x03\x04', 6), (b'PK\x01\x02', 8)):
                    i = b.index(sig) + at
                    b[i] |= 1
                open(p, 'wb').write(b)
            """#, [dir.path, kind])
        let r = try PoiProcess.run(["check", "d.zip"], currentDirectory: dir)
        #expect(r.status == 2)
        let what = kind == "bzip2" ? "the member is compressed with method 12 (bzip2); only stored and deflate members are read"
            : "the member is encrypted (password-protected)"
        #expect(r.stderr.contains("d.zip:p.csv: not read: \(what). Unzip it"), "\(r.stderr)")
        #expect(!r.stderr.contains("damaged"))
    }

    // MARK: UTF-16 without a byte-order mark

    @Test(arguments: [false, true]) func unmarkedUTF16SaysWhichEncodingToName(_ bigEndian: Bool) throws {
        let dir = try Self.scratch("utf16")
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = "name\tlat\tlon\nCafé\t1.0\t2.0\n"
        try #require(text.data(using: bigEndian ? .utf16BigEndian : .utf16LittleEndian))
            .write(to: dir.appendingPathComponent("u.txt"))
        let r = try PoiProcess.run(["check", "u.txt"], currentDirectory: dir)
        #expect(r.status == 2)
        let name = bigEndian ? "utf-16be" : "utf-16le"
        #expect(r.stderr.contains("u.txt: looks like UTF-16 \(bigEndian ? "BE" : "LE") text without a byte-order mark "
                                  + "(a NUL byte every other byte); it was not read as UTF-8. Name its encoding: --encoding \(name)."),
                "\(r.stderr)")
        let named = try PoiProcess.run(["check", "u.txt", "--encoding", name, "--json"], currentDirectory: dir)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try Self.json(named.stdout)["valid"] as? Int == 1)
    }
}
