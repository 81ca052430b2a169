import Foundation
import PoiTestSupport
import Testing

/// `poi import` of dumps as they arrive, end to end against the live server: each
/// variant of Samples/places.csv (made at test time by Python's own gzip and codecs) must store
/// exactly the documents the plain file stores, every field compared.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct DumpVariantsCLITests {
    /// Writes the variants into the workspace's Samples/ folder.
    static let makeFixtures = #"""
    import csv, gzip, io, sys, os
    root = sys.argv[1]
    s = os.path.join(root, "Samples")
    plain = open(os.path.join(s, "places.csv"), "rb").read()
    open(os.path.join(s, "places.csv.gz"), "wb").write(gzip.compress(plain, mtime=0))
    open(os.path.join(s, "u16.csv"), "wb").write(b"\xff\xfe" + plain.decode("utf-8").encode("utf-16-le"))
    open(os.path.join(s, "u16be.csv"), "wb").write(b"\xfe\xff" + plain.decode("utf-8").encode("utf-16-be"))
    rows = list(csv.reader(io.StringIO(plain.decode("utf-8"), newline="")))
    out = io.StringIO(newline="")
    w = csv.writer(out, delimiter="\t", lineterminator="\n")
    w.writerows(rows[1:])
    open(os.path.join(s, "headerless.tsv"), "wb").write(out.getvalue().encode("utf-8"))
    print(",".join(rows[0]))
    """#

    /// The stored places, minus what differs between two imports of the same data: ids, dates,
    /// the input's file name, the ids of the (same) stored images and the digest covering them;
    /// `dropSource` drops the line too.
    static func documents(_ ws: Workspace, dropSource: Bool = false) throws -> String {
        try ws.python("""
            import pymongo, sys, json
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            hide = {'_id': 0, 'created_at': 0, 'updated_at': 0, 'imageId': 0, 'thumbnailId': 0, 'contentHash': 0, \(dropSource ? "'source': 0" : "'source.file': 0")}
            docs = list(db.locations.find({}, hide).sort('importKey', 1))
            print(json.dumps(docs, sort_keys=True, default=str))
            """)
    }

    static func plainDocuments() throws -> (String, String) {
        let ws = try Workspace("variants-plain")
        defer { ws.cleanUp() }
        // The sample holds three rows rejected on purpose: exit status 1.
        let r = try ws.poi(["import", "Samples/places.csv", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        return (try documents(ws), try documents(ws, dropSource: true))
    }

    @Test func everyVariantStoresThePlainPlaces() throws {
        let (plain, plainWithoutSource) = try Self.plainDocuments()
        #expect(plain.count > 1000, "the plain import stored places")
        let variants: [(label: String, args: [String], stdin: Data?, dropSource: Bool)] = [
            ("gzip-file", ["Samples/places.csv.gz"], nil, false),
            ("gzip-stdin", ["-", "--images-dir", "Samples", "--rejects", "stdin.rejects.csv"], nil, false),
            ("utf16le", ["Samples/u16.csv"], nil, false),
            ("utf16be", ["Samples/u16be.csv"], nil, false),
            ("headerless", ["Samples/headerless.tsv", "--delimiter", "tab", "--columns", ""], nil, true),
        ]
        for v in variants {
            let ws = try Workspace("variants-\(v.label)")
            defer { ws.cleanUp() }
            let columns = try PoiProcess.python(Self.makeFixtures, [ws.root.path])
            var args = ["import"] + v.args + ["--quiet"]
            if let i = args.firstIndex(of: "--columns") { args[i + 1] = columns }
            let stdin = v.label == "gzip-stdin" ? try Data(contentsOf: URL(fileURLWithPath: ws.path("Samples/places.csv.gz"))) : nil
            let r = try PoiProcess.run(args + ["--db", ws.database, "--uploads", ws.path("uploads")],
                                       environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root, stdin: stdin)
            #expect(r.status == 1, "\(v.label): stderr: \(r.stderr)")
            #expect(try Self.documents(ws, dropSource: v.dropSource) == (v.dropSource ? plainWithoutSource : plain), "\(v.label)")
            if v.label == "headerless" {
                // Its rejects file names the columns in a header line, then the three rows as
                // they came, each with the reasons after it.
                let rejects = try String(contentsOfFile: ws.path("Samples/headerless.rejects.csv"), encoding: .utf8)
                let input = try String(contentsOfFile: ws.path("Samples/headerless.tsv"), encoding: .utf8)
                #expect(!rejects.contains("\r"), "the rows' own line ends (LF), the header's too")
                let lines = rejects.split(separator: "\n")
                #expect(lines.first.map(String.init) == columns.replacingOccurrences(of: ",", with: "\t") + "\t_line\t_field\t_reason")
                #expect(lines.count == 4)
                let inputLines = Set(input.split(separator: "\n").map(String.init))
                for line in lines.dropFirst() {
                    let row = line.split(separator: "\t", omittingEmptySubsequences: false).dropLast(3).joined(separator: "\t")
                    #expect(inputLines.contains(row), "\(line)")
                }
            }
        }
    }

    /// Three broken rows of a Windows-1252 file come back in the rejects file as their own bytes.
    @Test func cp1252RejectsComeBackByteForByte() throws {
        let ws = try Workspace("variants-cp1252")
        defer { ws.cleanUp() }
        let header = "id,name,lat,lon,note"
        let good = ["c1,Café de Flore,48.854,2.333,crème brûlée", "c2,Œuvre – Zürich,47.37,8.54,naïve"]
        let broken = ["c3,Brûlerie,abc,2.3,déjà vu", "c4,,48.1,2.2,œuf – sans nom", "c5,Bäckerei,48.1,xyz,süß"]
        let rows = [good[0], broken[0], good[1], broken[1], broken[2]]
        let text = ([header] + rows).map { $0 + "\r\n" }.joined()
        let cp1252 = try #require(text.data(using: .windowsCP1252))
        #expect(cp1252.count == text.unicodeScalars.count, "one byte a character")
        try cp1252.write(to: URL(fileURLWithPath: ws.path("legacy.csv")))

        let r = try ws.poi(["import", "legacy.csv", "--encoding", "cp1252", "--json", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let summary = try ws.json(r)
        #expect(int(summary, "rejected") == 3)
        #expect(int(summary, "inserted") == 2)
        #expect(try ws.python("""
            import pymongo, sys
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            print('|'.join(d['name'] for d in db.locations.find().sort('importKey', 1)))
            """) == "Café de Flore|Œuvre – Zürich")

        let got = try #require(FileManager.default.contents(atPath: ws.path("legacy.rejects.csv")))
        let lines = [UInt8](got).split(separator: 0x0A).map { Array($0) }
        #expect(lines.count == 4)
        let cp = { (s: String) in [UInt8](s.data(using: .windowsCP1252)!) }
        #expect(lines.first == cp(header + ",_line,_field,_reason\r"))
        for (i, row) in broken.enumerated() where i + 1 < lines.count {
            #expect(Array(lines[i + 1].prefix(cp(row).count + 1)) == cp(row + ","), "row \(row)")
        }
        // Unknown encodings are usage errors naming valid ones.
        let bad = try ws.poi(["import", "legacy.csv", "--encoding", "klingon-1"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("cp1252"), "\(bad.stderr)")
    }

    /// A UTF-16 input's rejects file is UTF-16 with the input's BOM, and is still recognised as a
    /// rejects file (a later run without rejects removes it).
    @Test func utf16RejectsKeepTheEncodingAndAreRecognised() throws {
        let ws = try Workspace("variants-u16rejects")
        defer { ws.cleanUp() }
        _ = try PoiProcess.python(Self.makeFixtures, [ws.root.path])
        let r = try ws.poi(["import", "Samples/u16.csv", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let rejects = try #require(FileManager.default.contents(atPath: ws.path("Samples/u16.rejects.csv")))
        #expect(Array(rejects.prefix(2)) == [0xFF, 0xFE])
        let text = try #require(String(data: rejects.dropFirst(2), encoding: .utf16LittleEndian))
        #expect(text.hasPrefix("id,name,address,lat,lon,description,tags,photo,opening_hours,_line,_field,_reason"), "\(text.prefix(200))")
        #expect(text.components(separatedBy: ",_line,_field,_reason").count == 2)
        // Fixed (here: replaced by a file without bad rows), the next run removes the stale rejects.
        let good = try #require("id,name,lat,lon\nx1,Fine,1,2\n".data(using: .utf16LittleEndian))
        try (Data([0xFF, 0xFE]) + good).write(to: URL(fileURLWithPath: ws.path("Samples/u16.csv")))
        #expect(try ws.poi(["import", "Samples/u16.csv", "--quiet"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: ws.path("Samples/u16.rejects.csv")))
    }

    @Test func gzipExportGunzipsToThePlainExport() throws {
        let ws = try Workspace("variants-export")
        defer { ws.cleanUp() }
        let r = try ws.poi(["import", "Samples/places.csv", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(try ws.poi(["export", "-o", "plain.geojson"]).status == 0)
        let e = try ws.poi(["export", "-o", "out.geojson.gz"])
        #expect(e.status == 0, "stderr: \(e.stderr)")
        let unzipped = try PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/gzip"), ["-dc", ws.path("out.geojson.gz")])
        #expect(unzipped.status == 0)
        let plain = try String(contentsOfFile: ws.path("plain.geojson"), encoding: .utf8)
        #expect(plain.count > 1000)
        #expect(unzipped.stdout == plain)
        // convert too, and --gzip on stdout.
        let c = try ws.poi(["convert", "Samples/places.csv", "-o", "c.geojson.gz", "--quiet"])
        #expect(c.status == 1, "stderr: \(c.stderr)")
        let plainConvert = try ws.poi(["convert", "Samples/places.csv", "-o", "-", "--quiet"])
        #expect(try PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/gzip"), ["-dc", ws.path("c.geojson.gz")]).stdout
                == plainConvert.stdout)
        // And a gzip'd export reads back in (the import detects it).
        let check = try ws.poi(["check", "out.geojson.gz", "--quiet"])
        #expect(check.status == 0, "stderr: \(check.stderr)")
        #expect(check.stdout == "out.geojson.gz: 19 valid, 0 rejected\n")
    }

    @Test func truncatedGzipSaysWhereAndKeepsTheRowsBefore() throws {
        let ws = try Workspace("variants-truncated")
        defer { ws.cleanUp() }
        let complete = try PoiProcess.python("""
            import gzip, zlib, sys, os
            rows = ["id,name,lat,lon"] + ["t%d,Place %d,%.4f,%.4f" % (i, i, (i % 170) - 85, (i % 350) - 175) for i in range(4000)]
            gz = gzip.compress(("\\n".join(rows) + "\\n").encode(), mtime=0)
            cut = gz[: len(gz) // 2]
            open(os.path.join(sys.argv[1], "trunc.csv.gz"), "wb").write(cut)
            partial = zlib.decompressobj(31).decompress(cut)
            print(partial.count(b"\\n") - 1, len(cut))
            """, [ws.root.path])
        let parts = complete.split(separator: " ").compactMap { Int($0) }
        let (rows, size) = (parts[0], parts[1])
        let r = try ws.poi(["import", "trunc.csv.gz", "--quiet"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("trunc.csv.gz: damaged gzip data at byte \(size) of the compressed file"), "\(r.stderr)")
        #expect(r.stderr.contains("truncated"))
        let stored = try ws.python("""
            import pymongo, sys
            print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.count_documents({}))
            """)
        #expect(Int(stored) == rows, "every row before the damage is stored")
    }
}
