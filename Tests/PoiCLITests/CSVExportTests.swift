import Foundation
import PoiTestSupport
import Testing

/// `poi export --format csv`: the columns, exact cells, the `.csvt` that brings
/// typed and sparse extras back, `--fields`, `--excel`, TSV and gzip, and the empty-result rule.
/// The Samples/ and benchmark-data round trips are in RoundTripTests (run for both formats).
@Suite(.tags(.live, .process), .serialized, .liveServer) struct CSVExportTests {
    /// Extras of every kind (`tags`, beside `categories`, is one: exported as "tags (extra)"),
    /// some on one place only, a category holding `;`, coordinates finer
    /// than 7 decimals, and a date (typed at import).
    static let geojson = """
    {"type":"FeatureCollection","features":[
    {"type":"Feature","id":"n1","geometry":{"type":"Point","coordinates":[-0.12345678912345,28.000000001]},
     "properties":{"name":"Numbers","categories":["a;b","c"],"five":5,"half":0.5,"negzero":-0.0,"flag":true,
       "tags":["x","y"],"addr":{"street":"Main","no":3},"nothing":null,"note":"5","when":"2024-03-01T10:00:00Z",
       "big":12345678901234567890}},
    {"type":"Feature","id":"n2","geometry":{"type":"Point","coordinates":[2.5,-3]},
     "properties":{"name":"=HYPERLINK(\\"http://x\\")","details":"two\\nlines, \\"quoted\\"","five":7,"half":1.5,
       "flag":false,"note":"","when":"2025-01-31T00:00:00Z"}}
    ]}
    """
    static let types = ["--types", "when=date"]

    /// Every place's stored fields that an import sets, as pymongo sees them (types included).
    static let placesScript = """
    import pymongo, sys, json
    db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
    \(PythonTypedValues.function)
    out = {}
    for d in db.locations.find():
        out[d['importKey']] = {k: t(d.get(k)) for k in ('name', 'placename', 'details', 'categories', 'location', 'extra', 'source')}
    print(json.dumps(out, sort_keys=True))
    """

    @Test func typedAndSparseExtrasComeBackThroughTheCSVT() throws {
        let ws = try Workspace("csv-typed")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"] + Self.types).status == 0)
        let before = try ws.python(Self.placesScript)

        let exp = try ws.poi(["export", "-o", "out.csv", "--json"])
        #expect(exp.status == 0, "\(exp.all)")
        let summary = try ws.json(exp)
        #expect(summary["typesFile"] as? String == "out.csvt")
        let header = "id,name,lat,lon,placename,details,categories,importKey,imageId,thumbnailId,created_at,updated_at,"
            + "_source,five,half,negzero,flag,tags (extra),addr,nothing,note,when,big"
        #expect((summary["columns"] as? [String])?.joined(separator: ",") == header)
        // Typed where every value has one type (a blank: a place without it), String(JSON)
        // where the kinds mix or a place lacks a text value, text where every place has text.
        #expect(try String(contentsOfFile: ws.path("out.csvt"), encoding: .utf8) == """
        "String","String","Real","Real","String","String","String","String","String","String","DateTime","DateTime",\
        "String(JSON)","Integer64","Real","Real","Integer(Boolean)","String(JSON)","String(JSON)","String(JSON)",\
        "String","DateTime","String(JSON)"

        """)
        let lines = try String(contentsOfFile: ws.path("out.csv"), encoding: .utf8).components(separatedBy: "\n")
        #expect(lines[0] == header)
        let ids = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(' '.join(str(d['_id']) + '|' + d['created_at'].strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z' for d in db.locations.find().sort('_id', 1)))
        """).split(separator: " ").map { $0.split(separator: "|").map(String.init) }
        #expect(lines[1] == "\(ids[0][0]),Numbers,28.000000001,-0.12345678912345,,,\"[\"\"a;b\"\",\"\"c\"\"]\",n1,,,\(ids[0][1]),\(ids[0][1]),"
                + "\"{\"\"file\"\":\"\"n.geojson\"\",\"\"feature\"\":0}\",5,0.5,-0.0,true,\"[\"\"x\"\",\"\"y\"\"]\","
                + "\"{\"\"street\"\":\"\"Main\"\",\"\"no\"\":3}\",null,5,2024-03-01T10:00:00.000Z,12345678901234567890")
        #expect(lines[2] == "\(ids[1][0]),\"=HYPERLINK(\"\"http://x\"\")\",-3,2.5,,\"two\nlines, \"\"quoted\"\"\"".components(separatedBy: "\n")[0])

        // Into the same database: nothing changes.
        let same = try ws.poi(["import", "out.csv", "--json", "--quiet"])
        #expect(same.status == 0, "\(same.all)")
        let s = try ws.json(same)
        #expect(int(s, "unchanged") == 2 && int(s, "updated") == 0, "\(s)")
        #expect(try ws.python(Self.placesScript) == before)
        // `check` reads the file as the import does: both places valid.
        let check = try ws.poi(["check", "out.csv", "--json"])
        #expect(try check.status == 0 && int(ws.json(check), "valid") == 2, "\(check.all)")

        // Into a fresh database: the same documents, types, sparse keys and provenance.
        let fresh = try Workspace("csv-typed-fresh")
        defer { fresh.cleanUp() }
        for name in ["out.csv", "out.csvt"] { try FileManager.default.copyItem(atPath: ws.path(name), toPath: fresh.path(name)) }
        let f = try fresh.poi(["import", "out.csv", "--json", "--quiet"])
        #expect(try f.status == 0 && int(fresh.json(f), "inserted") == 2, "\(f.all)")
        #expect(try fresh.python(Self.placesScript) == before)

        // Without its .csvt (standard output writes none) the values are text, as a person reads them.
        let stdout = try ws.poi(["export", "--format", "csv", "--quiet"])
        #expect(stdout.status == 0)
        let row = stdout.stdout.components(separatedBy: "\n")[1]
        #expect(row.hasSuffix(",5,0.5,-0.0,true,\"[\"\"x\"\",\"\"y\"\"]\",\"{\"\"street\"\":\"\"Main\"\",\"\"no\"\":3}\",,5,2024-03-01T10:00:00.000Z,12345678901234567890"), "\(row)")
    }

    @Test func fieldsPickAndOrderColumnsAndAMisspeltOneIsSaid() throws {
        let ws = try Workspace("csv-fields")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"]).status == 0)
        let r = try ws.poi(["export", "--format", "csv", "--fields", "name,lat", "--fields", "five,nmae,categories"])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout == "name,lat,five,nmae,categories\nNumbers,28.000000001,5,,\"[\"\"a;b\"\",\"\"c\"\"]\"\n\"=HYPERLINK(\"\"http://x\"\")\",-3,7,,\n")
        #expect(r.stderr.contains("warning: column nmae is empty in every row"), "\(r.stderr)")
        #expect(!r.stderr.contains("column five"), "\(r.stderr)")
        #expect(!ws.files(in: ".").contains { $0.hasSuffix(".csvt") })  // standard output has no .csvt
    }

    @Test func excelGetsABOMCRLFAndFormulasAsText() throws {
        let ws = try Workspace("csv-excel")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"]).status == 0)
        #expect(try ws.poi(["export", "-o", "x.csv", "--excel", "--fields", "name,lon,details", "--quiet"]).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: ws.path("x.csv")))
        #expect(Array(bytes.prefix(3)) == [0xEF, 0xBB, 0xBF])
        #expect(String(decoding: bytes.dropFirst(3), as: UTF8.self)
                == "name,lon,details\r\nNumbers,-0.12345678912345,\r\n\"'=HYPERLINK(\"\"http://x\"\")\",2.5,\"two\nlines, \"\"quoted\"\"\"\r\n")
    }

    @Test func tsvAndGzipByNameAndTheyImportBack() throws {
        let ws = try Workspace("csv-tsv")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)  // deliberate rejects
        #expect(try ws.poi(["export", "-o", "p.tsv", "--fields", "name,lat,lon", "--quiet"]).status == 0)
        let tsv = try String(contentsOfFile: ws.path("p.tsv"), encoding: .utf8)
        #expect(tsv.hasPrefix("name\tlat\tlon\nBig Ben\t51.5007292\t-0.1246254\n"), "\(tsv.prefix(200))")
        #expect(try String(contentsOfFile: ws.path("p.csvt"), encoding: .utf8) == "\"String\",\"Real\",\"Real\"\n")

        #expect(try ws.poi(["export", "-o", "p.csv.gz", "--quiet"]).status == 0)
        let head = try Data(contentsOf: URL(fileURLWithPath: ws.path("p.csv.gz"))).prefix(2)
        #expect(Array(head) == [0x1F, 0x8B])
        // GDAL's name for it: the last extension replaced, so p.csv.gz's does not replace p.tsv's.
        #expect(FileManager.default.fileExists(atPath: ws.path("p.csv.csvt")))
        #expect(try String(contentsOfFile: ws.path("p.csvt"), encoding: .utf8) == "\"String\",\"Real\",\"Real\"\n")
        let again = try ws.poi(["import", "p.csv.gz", "--json", "--quiet"])
        let s = try ws.json(again)
        #expect(again.status == 0 && int(s, "updated") == 0 && int(s, "unchanged") == int(s, "rowsRead"), "\(again.all)")
    }

    @Test func anEmptyResultLeavesRowsAloneAndBadCombinationsAreRefused() throws {
        let ws = try Workspace("csv-empty")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"]).status == 0)
        #expect(try ws.poi(["export", "-o", "x.csv", "--quiet"]).status == 0)
        let full = try Data(contentsOf: URL(fileURLWithPath: ws.path("x.csv")))
        let none = try ws.poi(["export", "-o", "x.csv", "--category", "no-such", "--quiet"])
        #expect(none.status == 2 && none.stderr.contains("would replace"), "\(none.all)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.path("x.csv"))) == full)
        #expect(try ws.poi(["export", "-o", "x.csv", "--category", "no-such", "--allow-empty", "--quiet"]).status == 0)
        #expect(try String(contentsOfFile: ws.path("x.csv"), encoding: .utf8)
                == CSVExportTests.fixedHeader + "\n")
        // Yesterday's header-only file may be replaced by another empty result.
        #expect(try ws.poi(["export", "-o", "x.csv", "--category", "no-such", "--quiet"]).status == 0)

        for (args, message) in [(["--seq"], "--seq is a GeoJSON output"), (["--format", "geojson", "--fields", "name"], "--fields picks CSV columns"),
                                (["--excel"], "--excel shapes a CSV file"), (["--format", "csv", "--fields", "name,,lat"], "empty name"),
                                (["--format", "csv", "--fields", "name,name"], "names name twice")] {
            let r = try ws.poi(["export", "-o", args.first == "--seq" ? "y.csv" : "y.out"] + args)
            #expect(r.status == 2 && r.stderr.contains(message), "\(args): \(r.all)")
        }
    }

    static let fixedHeader = "id,name,lat,lon,placename,details,categories,importKey,imageId,thumbnailId,created_at,updated_at"

    /// A `.csvt` beside a CSV that was not exported types its columns for check and import
    /// alike (GDAL's rule), and a cell that is not of its type is a reject naming the file.
    @Test func aCSVTBesideAnyCSVTypesItsColumns() throws {
        let ws = try Workspace("csv-csvt")
        defer { ws.cleanUp() }
        try "name,lat,lon,pop,open\nA,1,2,12,1\nB,3,4,many,0\nC,5,6,,\n".write(toFile: ws.path("t.csv"), atomically: true, encoding: .utf8)
        try "String,Real,Real,Integer,\"Integer(Boolean)\"\n".write(toFile: ws.path("t.csvt"), atomically: true, encoding: .utf8)
        let check = try ws.poi(["check", "t.csv", "--json"])
        let c = try ws.json(check)
        #expect(check.status == 1 && int(c, "valid") == 2 && int(c, "rejected") == 1, "\(check.all)")
        let imp = try ws.poi(["import", "t.csv", "--json", "--quiet"])
        let i = try ws.json(imp)
        #expect(imp.status == 1 && int(i, "inserted") == 2 && int(i, "rejected") == 1, "\(imp.all)")
        #expect(try String(contentsOfFile: ws.path("t.rejects.csv"), encoding: .utf8)
                == "name,lat,lon,pop,open,_line,_field,_reason\nB,3,4,many,0,3,pop,\"typed int (t.csvt): \"\"many\"\" is not an integer\"\n")
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted((d['name'], sorted(d['extra'].items())) for d in db.locations.find()))
        """) == "[('A', [('open', True), ('pop', 12)]), ('C', [])]")
    }

    /// New-user trial: extras named like PoiKit's own columns, extras stored in other orders,
    /// and a CSV moved away from its `.csvt` still come back as they were stored.
    @Test func ownNamesOrdersAndALostCSVTStillRoundTrip() throws {
        let ws = try Workspace("csv-trial")
        defer { ws.cleanUp() }
        try "id,name,lat,lon,created_at,imageId,_source,imageSource,imageError,updated_at,thumbnailId\nk1,A,1,2,c,ii,so,isrc,ierr,u,t\n"
            .write(toFile: ws.path("own.csv"), atomically: true, encoding: .utf8)
        try """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"o1","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"name":"One","b":"x","hours":""}},
        {"type":"Feature","id":"o2","geometry":{"type":"Point","coordinates":[2,2]},"properties":{"name":"Two","a":"y","b":"z"}}
        ]}
        """.write(toFile: ws.path("order.geojson"), atomically: true, encoding: .utf8)
        // One run: its ids, and so the export's row and column order, follow the inputs.
        #expect(try ws.poi(["import", "own.csv", "order.geojson", "--quiet"]).status == 0)
        let before = try ws.python(Self.placesScript)
        #expect(before.contains(#""imageSource": "str:isrc""#), "\(before)")
        #expect(try ws.poi(["export", "-o", "all.csv", "--quiet"]).status == 0)
        let header = try String(contentsOfFile: ws.path("all.csv"), encoding: .utf8).components(separatedBy: "\n")[0]
        #expect(header == Self.fixedHeader + ",_source,created_at (extra),imageId (extra),_source (extra),imageSource (extra),"
                + "imageError (extra),updated_at (extra),thumbnailId (extra),b,hours,a")
        let same = try ws.poi(["import", "all.csv", "--json", "--quiet"])
        let s = try ws.json(same)
        #expect(same.status == 0 && int(s, "unchanged") == 3 && int(s, "updated") == 0, "\(same.all)")
        #expect(try ws.python(Self.placesScript) == before)

        // Moved without its .csvt: text, empty text and no value still read right.
        try FileManager.default.createDirectory(atPath: ws.path("moved"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: ws.path("all.csv"), toPath: ws.path("moved/all.csv"))
        let fresh = try Workspace("csv-trial-fresh")
        defer { fresh.cleanUp() }
        try FileManager.default.copyItem(atPath: ws.path("moved"), toPath: fresh.path("moved"))
        #expect(try fresh.poi(["import", "moved/all.csv", "--quiet"]).status == 0)
        #expect(try fresh.python(Self.placesScript) == before)

        // A .csvt that does not fit the file is said, not silently dropped.
        try "String,Real,Real\n".write(toFile: fresh.path("moved/all.csvt"), atomically: true, encoding: .utf8)
        let noted = try fresh.poi(["check", "moved/all.csv"])
        #expect(noted.stderr.contains("all.csvt: lists 3 column types for 23 columns; not used"), "\(noted.all)")
    }

    /// What ogr2ogr writes (`-lco CREATE_CSVT=YES`, its own date format) imports typed.
    @Test func aCSVWrittenByGDALImportsTyped() throws {
        guard let ogr2ogr = GDALPipeTests.ogr2ogr else {
            try Test.cancel("SKIPPED: ogr2ogr is not installed (apt-get install gdal-bin)")
            return
        }
        let ws = try Workspace("csv-gdal")
        defer { ws.cleanUp() }
        try """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2.5,48.5]},"properties":{"name":"G","founded":"2024-03-01T10:00:00Z","n":3,"ok":true}}
        ]}
        """.write(toFile: ws.path("g.geojson"), atomically: true, encoding: .utf8)
        let made = try GDALPipeTests.shell(ws, "\(ogr2ogr) -f CSV gd g.geojson -lco GEOMETRY=AS_XY -lco CREATE_CSVT=YES")
        #expect(made.status == 0, "\(made.stderr)")
        let imp = try ws.poi(["import", "gd/g.csv", "--json", "--quiet"])
        #expect(try imp.status == 0 && int(ws.json(imp), "inserted") == 1, "\(imp.all)")
        #expect(try ws.python("""
        import pymongo, sys
        d = pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.find_one()
        print(d['location']['coordinates'], sorted((k, repr(v)) for k, v in d['extra'].items()))
        """) == "[2.5, 48.5] [('founded', 'datetime.datetime(2024, 3, 1, 10, 0)'), ('n', '3'), ('ok', 'True')]")
    }

    /// No .csvt beside a device, a FIFO or a process substitution; a warning when the CSV has
    /// more columns than the import reads.
    @Test func noCSVTBesideDevicesAndAWarningPastTheImportLimits() throws {
        let ws = try Workspace("csv-dev")
        defer { ws.cleanUp() }
        var props = (0..<4100).map { "\"p\($0)\":\($0)" }.joined(separator: ",")
        props = "\"name\":\"Wide\"," + props
        try "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]},\"properties\":{\(props)}}]}"
            .write(toFile: ws.path("wide.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "wide.geojson", "--quiet"]).status == 0)
        let wide = try ws.poi(["export", "-o", "wide.csv"])
        #expect(wide.status == 0, "\(wide.all)")
        #expect(wide.stderr.contains("warning: the CSV has 4113 columns, more than the 4096 poi import reads"), "\(wide.stderr)")
        let fifo = ws.path("pipe.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let shell = try GDALPipeTests.shell(ws, "cat pipe.csv > got.csv & \"$POI\" export --db \(ws.database) -o pipe.csv --quiet; s=$?; wait; exit $s")
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(try String(contentsOfFile: ws.path("got.csv"), encoding: .utf8).hasPrefix(Self.fixedHeader))
        #expect(!FileManager.default.fileExists(atPath: ws.path("pipe.csvt")))
        let null = try ws.poi(["export", "-o", "/dev/null", "--format", "csv", "--quiet"])
        #expect(null.status == 0 && !FileManager.default.fileExists(atPath: "/dev/null.csvt"), "\(null.all)")
    }

    /// Second trial: a photo `--with-images` could not copy leaves its row's `image` cell
    /// empty; the import keeps the stored link (same database) or traces the image it could not
    /// have (fresh one), as for a GeoJSON export, never unlinks it silently.
    @Test func aPhotoThatCouldNotBeCopiedIsNeverUnlinked() throws {
        let ws = try Workspace("csv-lost-photo")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)  // deliberate rejects
        let gone = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        d = db.locations.find_one({'importKey': 'ldn-001'})
        f = db.files.find_one({'_id': __import__('bson').ObjectId(d['imageId'])})
        print(d['imageId'] + f['ext'])
        """)
        try FileManager.default.removeItem(atPath: ws.path("uploads/" + gone))
        let exp = try ws.poi(["export", "-o", "a/p.csv", "--with-images", "a/img", "--quiet"])
        #expect(exp.status == 1, "\(exp.all)")  // a photo could not be copied
        let before = try ws.python(Self.placesScript)
        let links = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted((d['importKey'], d.get('imageId')) for d in db.locations.find()))
        """)
        let same = try ws.poi(["import", "a/p.csv", "--json", "--quiet"])
        let s = try ws.json(same)
        #expect(int(s, "updated") == 0 && int(s, "unchanged") == 19, "\(same.all)")
        #expect(try ws.python(Self.placesScript) == before)
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted((d['importKey'], d.get('imageId')) for d in db.locations.find()))
        """) == links)

        let fresh = try Workspace("csv-lost-photo-fresh")
        defer { fresh.cleanUp() }
        try FileManager.default.copyItem(atPath: ws.path("a"), toPath: fresh.path("a"))
        let f = try fresh.poi(["import", "a/p.csv", "--json", "--quiet"])
        #expect(f.status == 1, "\(f.all)")  // the one photo it could not have is said
        #expect(try fresh.python("""
        import pymongo, sys
        d = pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.find_one({'importKey': 'ldn-001'})
        print('imageId' in d, d.get('imageSource') is not None, d.get('imageError') is not None)
        """) == "False True True")
    }

    /// Second trial: the rejects file of a typed CSV export gets a `.csvt`, so a fixed row
    /// comes back with its types; `--fields` types a column whose values share one type.
    @Test func rejectsOfATypedExportKeepTheirTypes() throws {
        let ws = try Workspace("csv-rejects-typed")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"]).status == 0)
        let before = try ws.python(Self.placesScript)
        #expect(try ws.poi(["export", "-o", "x.csv", "--quiet"]).status == 0)
        var lines = try String(contentsOfFile: ws.path("x.csv"), encoding: .utf8).components(separatedBy: "\n")
        let latOfFirst = ",28.000000001,"
        #expect(lines[1].contains(latOfFirst))
        lines[1] = lines[1].replacingOccurrences(of: latOfFirst, with: ",abc,")
        try lines.joined(separator: "\n").write(toFile: ws.path("x.csv"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "x.csv", "--quiet"]).status == 1)
        #expect(FileManager.default.fileExists(atPath: ws.path("x.rejects.csvt")))
        let fixed = try String(contentsOfFile: ws.path("x.rejects.csv"), encoding: .utf8).replacingOccurrences(of: ",abc,", with: latOfFirst)
        try fixed.write(toFile: ws.path("x.rejects.csv"), atomically: true, encoding: .utf8)
        let again = try ws.poi(["import", "x.rejects.csv", "--json", "--quiet"])
        let s = try ws.json(again)
        #expect(again.status == 0 && int(s, "unchanged") == 1 && int(s, "updated") == 0, "\(again.all)")
        #expect(try ws.python(Self.placesScript) == before)

        #expect(try ws.poi(["export", "-o", "f.csv", "--fields", "name,five,flag,tags (extra),note", "--quiet"]).status == 0)
        #expect(try String(contentsOfFile: ws.path("f.csvt"), encoding: .utf8)
                == "\"String\",\"Integer64\",\"Integer(Boolean)\",\"String(JSON)\",\"String\"\n")
    }

    /// GDAL names `t.csv`'s and `t.tsv`'s types file alike, `t.csvt`: an export to one never
    /// replaces the other's (which would make it import with the wrong types, `1100.0` read as
    /// text, with exit 0). The second export is refused, naming both, and writes nothing.
    @Test func anExportNeverReplacesAnotherCSVsTypesFile() throws {
        let ws = try Workspace("csv-sidecars")
        defer { ws.cleanUp() }
        try Self.geojson.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"] + Self.types).status == 0)
        #expect(try ws.poi(["export", "-o", "t.csv", "--quiet"]).status == 0)
        let types = try String(contentsOfFile: ws.path("t.csvt"), encoding: .utf8)
        let second = try ws.poi(["export", "-o", "t.tsv", "--fields", "name,lat,lon"])
        #expect(second.status == 2, "\(second.all)")
        #expect(second.stderr.contains("the types of t.tsv go to t.csvt (GDAL's name for them), which is also what t.csv is read "
                                       + "with: it would replace t.csv's types, and t.csv would import with t.tsv's; nothing was written"),
                "\(second.stderr)")
        #expect(try String(contentsOfFile: ws.path("t.csvt"), encoding: .utf8) == types)
        #expect(!FileManager.default.fileExists(atPath: ws.path("t.tsv")))
        let again = try ws.poi(["import", "t.csv", "--json", "--quiet"])
        let s = try ws.json(again)
        #expect(again.status == 0 && int(s, "unchanged") == 2 && int(s, "updated") == 0, "\(again.all)")
        // Its own name is free: t.csv.gz has t.csv.csvt, and t.csv again replaces its own.
        #expect(try ws.poi(["export", "-o", "t.csv.gz", "--quiet"]).status == 0)
        #expect(try ws.poi(["export", "-o", "t.csv", "--quiet"]).status == 0)
    }

    /// A position's third value (the altitude) travels in an `alt` column, typed Real, written
    /// for a place that has one: the export imports back `unchanged` into the same database and
    /// as the same positions into another. An extra named `alt` is `"alt (extra)"` there.
    @Test func theAltitudeComesBackThroughACSVExport() throws {
        let ws = try Workspace("csv-alt")
        defer { ws.cleanUp() }
        try """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"h1","geometry":{"type":"Point","coordinates":[6.8652,45.8326,581.0]},"properties":{"name":"High"}},
        {"type":"Feature","id":"h2","geometry":{"type":"Point","coordinates":[2.35,48.85]},"properties":{"name":"Flat","alt":"photo of a roof"}},
        {"type":"Feature","id":"h3","geometry":{"type":"Point","coordinates":[14.5,35.9,-0.5]},"properties":{"name":"Low"}}
        ]}
        """.write(toFile: ws.path("h.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "h.geojson", "--quiet"]).status == 0)
        let before = try ws.python(Self.placesScript)
        #expect(before.contains(#"["double:6.8652", "double:45.8326", "double:581.0"]"#), "\(before)")
        #expect(try ws.poi(["export", "-o", "h.csv", "--quiet"]).status == 0)
        let lines = try String(contentsOfFile: ws.path("h.csv"), encoding: .utf8).components(separatedBy: "\n")
        #expect(lines[0] == "id,name,lat,lon,alt,placename,details,categories,importKey,imageId,thumbnailId,created_at,updated_at,"
                + "_source,alt (extra)")
        #expect(lines[1].contains(",High,45.8326,6.8652,581.0,"), "\(lines[1])")
        #expect(lines[2].contains(",Flat,48.85,2.35,,"), "\(lines[2])")
        #expect(try String(contentsOfFile: ws.path("h.csvt"), encoding: .utf8).hasPrefix("\"String\",\"String\",\"Real\",\"Real\",\"Real\","))
        let same = try ws.poi(["import", "h.csv", "--json", "--quiet"])
        let s = try ws.json(same)
        #expect(same.status == 0 && int(s, "unchanged") == 3 && int(s, "updated") == 0, "\(same.all)")
        #expect(try ws.python(Self.placesScript) == before)

        let fresh = try Workspace("csv-alt-fresh")
        defer { fresh.cleanUp() }
        for name in ["h.csv", "h.csvt"] { try FileManager.default.copyItem(atPath: ws.path(name), toPath: fresh.path(name)) }
        #expect(try fresh.poi(["import", "h.csv", "--quiet"]).status == 0)
        #expect(try fresh.python(Self.placesScript) == before)
    }

    /// `--fields` writes a null as the full export does (`null` in a String(JSON) column), so a
    /// typed column's nulls come back null, not missing; and a text column with nulls too.
    @Test func aNullThroughFieldsComesBackNull() throws {
        let ws = try Workspace("csv-fields-null")
        defer { ws.cleanUp() }
        try "importKey,name,lat,lon,elevation\nk1,A,1,2,1100.0\nk2,B,3,4,\n".write(toFile: ws.path("e.csv"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "e.csv", "--types", "elevation=double", "--quiet"]).status == 0)
        try """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[5,6]},"properties":{"importKey":"k3","name":"C","elevation":null,"note":"x"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[7,8]},"properties":{"importKey":"k4","name":"D","elevation":7.5,"note":null}}
        ]}
        """.write(toFile: ws.path("n.geojson"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "n.geojson", "--quiet"]).status == 0)
        let stored = """
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted((d['importKey'], sorted(d['extra'].items())) for d in db.locations.find()))
        """
        let before = try ws.python(stored)
        #expect(before == "[('k1', [('elevation', 1100.0)]), ('k2', [('elevation', None)]), ('k3', [('elevation', None), ('note', 'x')]), "
                + "('k4', [('elevation', 7.5), ('note', None)])]")
        #expect(try ws.poi(["export", "-o", "f.csv", "--fields", "importKey,name,lat,lon,elevation,note", "--quiet"]).status == 0)
        #expect(try String(contentsOfFile: ws.path("f.csvt"), encoding: .utf8)
                == "\"String\",\"String\",\"Real\",\"Real\",\"String(JSON)\",\"String(JSON)\"\n")
        // Rows come in `_id` order, and the two imports are two processes: ObjectIds made in the
        // same second by two processes differ in their per-process random bytes, so which
        // import's rows come first is chance (k3,k4 first in 2 of 6 parallel runs). The rows
        // are compared as a set, each exactly.
        let lines = try String(contentsOfFile: ws.path("f.csv"), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "importKey,name,lat,lon,elevation,note" && lines.last == "")
        #expect(lines.dropFirst().dropLast().sorted()
                == ["k1,A,1,2,1100.0,", "k2,B,3,4,null,", "k3,C,6,5,null,\"\"\"x\"\"\"", "k4,D,8,7,7.5,null"])
        let again = try ws.poi(["import", "f.csv", "--json", "--quiet"])
        let s = try ws.json(again)
        #expect(again.status == 0 && int(s, "unchanged") == 4 && int(s, "updated") == 0, "\(again.all)")
        #expect(try ws.python(stored) == before)
    }
}
