import Foundation
import PoiTestSupport
import Testing

/// `poi import` end to end: the built binary against the live server, on a copy of Samples/.
@Suite(.tags(.live, .process), .serialized) struct ImportCommandTests {
    static let sampleFiles = ["Samples/places.csv", "Samples/landmarks.geojson"]

    @Test(.liveServer) func samplesImportWithExactCountsAndARerunChangesNothing() throws {
        let ws = try Workspace("import")
        defer { ws.cleanUp() }

        let first = try ws.poi(["import"] + Self.sampleFiles + ["--json"])
        #expect(first.status == 1, "stderr: \(first.stderr)")  // 1: finished with rejects
        let s1 = try ws.json(first)
        #expect(int(s1, "rowsRead") == 37)
        #expect(int(s1, "inserted") == 32)
        #expect(int(s1, "rejected") == 5)
        #expect(int(s1, "imagesStored") == 10)
        #expect(int(s1, "imagesReused") == 15)
        #expect(int(s1, "imagesFailed") == 3)
        #expect(int(s1, "thumbnailsMade") == 10)
        #expect(ws.files(in: "uploads").count == 20)
        #expect(first.stderr.contains("places.csv:20: record 18: ../../etc/passwd: refused, the path leads outside the images folder"))
        #expect(first.stderr.contains("places.csv:19: record 17: images/truncated.jpg: damaged JPEG: Premature end of JPEG file"))
        #expect(first.stderr.contains("places.csv:21: record 19: name: name is empty"))
        #expect(first.stderr.contains("landmarks.geojson: feature 12 (record 13): geometry: geometry type LineString not supported, Point required"))

        let second = try ws.poi(["import"] + Self.sampleFiles + ["--json"])
        let s2 = try ws.json(second)
        #expect(second.status == 1)
        #expect(int(s2, "inserted") == 0)
        #expect(int(s2, "updated") == 0)
        #expect(int(s2, "unchanged") == 32)
        #expect(int(s2, "imagesStored") == 0)
        #expect(int(s2, "thumbnailsMade") == 0)
        #expect(ws.files(in: "uploads").count == 20)

        // What the backend sees, read with another driver: exact layout, and every imageId is a
        // `files` document whose bytes are at uploads/<id><ext>.
        let check = try ws.python("""
        import pymongo, sys, os
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        places = list(db.locations.find())
        bad = []
        for p in places:
            if not isinstance(p.get('name'), str) or not p['name']: bad.append(('name', p['_id']))
            loc = p.get('location', {})
            if loc.get('type') != 'Point' or len(loc.get('coordinates', [])) != 2: bad.append(('location', p['_id']))
            if not isinstance(p.get('categories'), list): bad.append(('categories', p['_id']))
            if 'imageId' in p:
                f = db.files.find_one({'_id': __import__('bson').ObjectId(p['imageId'])})
                if f is None or f['ext'] != '.' + f['content-type'].split('/')[1] or f.get('role') != 'original': bad.append(('file', p['imageId']))
                elif not os.path.exists(os.path.join('\(ws.path("uploads"))', p['imageId'] + f['ext'])): bad.append(('bytes', p['imageId']))
        with_images = sum(1 for p in places if 'imageId' in p)
        dup = len(places) - len({p['importKey'] for p in places})
        print(len(places), with_images, dup, db.files.count_documents({}), bad)
        """)
        #expect(check == "32 25 0 20 []")
    }

    @Test(.liveServer) func rejectsFileReimportsOnceFixed() throws {
        let ws = try Workspace("rejects")
        defer { ws.cleanUp() }
        let first = try ws.poi(["import", "Samples/places.csv", "--json", "--quiet"])
        #expect(first.status == 1)
        #expect(int(try ws.json(first), "rejected") == 3)
        let rejectsPath = ws.path("Samples/places.rejects.csv")
        var text = try String(contentsOfFile: rejectsPath, encoding: .utf8)
        // The input's own line ends (LF), like the rest of its bytes.
        #expect(text.hasPrefix("id,name,address,lat,lon,description,tags,photo,opening_hours,_line,_field,_reason\n"))
        text = text.replacingOccurrences(of: "bad-001,,", with: "bad-001,Named now,")
            .replacingOccurrences(of: ",95,10,", with: ",85,10,")
            .replacingOccurrences(of: ",48.85,abc,", with: ",48.85,2.35,")
        try text.write(toFile: rejectsPath, atomically: true, encoding: .utf8)

        let fixed = try ws.poi(["import", "Samples/places.rejects.csv", "--json", "--images-dir", "Samples"])
        #expect(fixed.status == 0, "stderr: \(fixed.stderr)")
        let s = try ws.json(fixed)
        #expect(int(s, "inserted") == 3)
        #expect(int(s, "rejected") == 0)
        #expect(!FileManager.default.fileExists(atPath: ws.path("Samples/places.rejects.rejects.csv")))
        // Every column of the dump is kept, but not the rejects file's own reason
        // columns: they describe the run that refused the row (they were kept as extra._line…).
        #expect(!fixed.stderr.contains("_reason"), "stderr: \(fixed.stderr)")
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted(db.locations.find_one({'importKey': 'bad-002'})['extra'].keys()), db.locations.count_documents({}))
        """) == "['opening_hours'] 22")
        // So a fixed row is the same place as the same row fixed in the dump: all unchanged.
        let dump = ws.path("Samples/places.csv")
        try String(contentsOfFile: dump, encoding: .utf8)
            .replacingOccurrences(of: "bad-001,,", with: "bad-001,Named now,")
            .replacingOccurrences(of: ",95,10,", with: ",85,10,")
            .replacingOccurrences(of: ",48.85,abc,", with: ",48.85,2.35,")
            .write(toFile: dump, atomically: true, encoding: .utf8)
        let again = try ws.json(try ws.poi(["import", "Samples/places.csv", "--json", "--quiet"]))
        #expect(int(again, "unchanged") == 22, "\(again)")
        #expect(int(again, "updated") == 0)
    }

    @Test(.liveServer) func changedRowIsUpdatedNotDuplicated() throws {
        let ws = try Workspace("update")
        defer { ws.cleanUp() }
        let csv = ws.path("small.csv")
        try "id,name,lat,lon\na,Alpha,1,2\nb,Beta,3,4\nc,Gamma,5,6\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(int(try ws.json(try ws.poi(["import", "small.csv", "--json"])), "inserted") == 3)
        try "id,name,lat,lon\na,Alpha,1,2\nb,Beta renamed,3,4\nc,Gamma,5,6\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let s = try ws.json(try ws.poi(["import", "small.csv", "--json"]))
        #expect(int(s, "inserted") == 0)
        #expect(int(s, "updated") == 1)
        #expect(int(s, "unchanged") == 2)
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        b = db.locations.find_one({'importKey': 'b'})
        print(db.locations.count_documents({}), b['name'], b['updated_at'] > b['created_at'])
        """) == "3 Beta renamed True")
    }

    @Test(.liveServer) func twoShardsTogetherImportExactlyTheWholeFile() throws {
        let ws = try Workspace("shard")
        defer { ws.cleanUp() }
        let a = try ws.json(try ws.poi(["import", "Samples/landmarks.geojson", "--shard", "0/2", "--json", "--quiet"]))
        let b = try ws.json(try ws.poi(["import", "Samples/landmarks.geojson", "--shard", "1/2", "--json", "--quiet"]))
        #expect(int(a, "inserted")! + int(b, "inserted")! == 13)
        #expect(int(a, "inserted")! > 0 && int(b, "inserted")! > 0)
        #expect(int(a, "skippedByShard") == int(b, "inserted"))
        let all = try ws.json(try ws.poi(["import", "Samples/landmarks.geojson", "--json", "--quiet"]))
        #expect(int(all, "inserted") == 0)
        #expect(int(all, "unchanged") == 13)
    }

    @Test(.liveServer) func requireImagesRejectsRowsWhoseImageFails() throws {
        let ws = try Workspace("require")
        defer { ws.cleanUp() }
        let r = try ws.poi(["import", "Samples/places.csv", "--require-images", "--json", "--quiet"])
        #expect(r.status == 1)
        let s = try ws.json(r)
        #expect(int(s, "inserted") == 16)
        #expect(int(s, "rejected") == 6)
        let rejects = try String(contentsOfFile: ws.path("Samples/places.rejects.csv"), encoding: .utf8)
        #expect(rejects.contains("syd-001,Sydney Opera House,"))
        #expect(rejects.contains(",image,no such file\n"))
    }

    @Test func dryRunNeedsNoDatabaseAndWritesNothing() throws {
        let ws = try Workspace("dry", uri: "mongodb://127.0.0.1:1")
        defer { try? FileManager.default.removeItem(at: ws.root) }
        let earlier = ws.path("Samples/landmarks.rejects.geojson")
        try "from an earlier run".write(toFile: earlier, atomically: true, encoding: .utf8)
        let r = try ws.poi(["import"] + Self.sampleFiles + ["--dry-run", "--json"])
        #expect(r.status == 1)
        let s = try ws.json(r)
        #expect(s["dryRun"] as? Bool == true)
        #expect(int(s, "inserted") == 32)
        #expect(int(s, "rejected") == 5)
        #expect(int(s, "imagesFailed") == 3)
        #expect(ws.files(in: "uploads").isEmpty)
        // No rejects file unless asked for, and an earlier one is left alone.
        #expect(!FileManager.default.fileExists(atPath: ws.path("Samples/places.rejects.csv")))
        #expect(try String(contentsOfFile: earlier, encoding: .utf8) == "from an earlier run")
        #expect((try ws.json(r))["rejectsFiles"] as? [String] == [])
    }

    @Test(.liveServer) func quietUnderCronUnlessAsked() throws {
        let ws = try Workspace("cron")
        defer { ws.cleanUp() }
        try "id,name,lat,lon\na,Alpha,1,2\n".write(toFile: ws.path("ok.csv"), atomically: true, encoding: .utf8)
        // The test's pipes are no terminal, as under cron: a clean run prints nothing at all.
        let silent = try ws.poi(["import", "ok.csv"])
        #expect(silent.status == 0)
        #expect(silent.stdout.isEmpty && silent.stderr.isEmpty, "\(silent.all)")
        let asked = try ws.poi(["import", "ok.csv", "--progress"])
        #expect(asked.stdout.contains("1 file(s), 1 records: 0 inserted, 0 updated, 1 unchanged, 0 rejected"))
        // Into a log, a short job's progress is one final line with the real numbers, after the
        // one line saying where the keys come from (shown to someone watching, never under cron).
        #expect(asked.stderr.hasPrefix("key: ok.csv: keys from column \"id\""), "\(asked.stderr)")
        let progress = asked.stderr.components(separatedBy: "\n").dropFirst().joined(separator: "\n")
        #expect(progress.hasPrefix("1 records (100%), "), "\(asked.stderr)")
        #expect(asked.stderr.contains(", done in "))
        #expect(asked.stderr.components(separatedBy: "\n").count == 3)
    }

    @Test func badArgumentsAndUnreadableInputExit2() throws {
        let missing = try PoiProcess.run(["import", "/nonexistent/places.csv", "--dry-run"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/places.csv"))
        #expect(try PoiProcess.run(["import", "x.csv", "--shard", "2/2"]).status == 2)
        #expect(try PoiProcess.run(["import"]).status == 2)
        let help = try PoiProcess.run(["import", "--help"])
        #expect(help.status == 0 && help.stdout.contains("Examples:"))
    }
}

@Suite(.tags(.live, .process), .liveServer) struct GridFSImportTests {
    @Test func importAndExportWithGridFS() throws {
        let ws = try Workspace("gridfs")
        defer { ws.cleanUp() }
        let probe = try PoiProcess.run(["doctor", "--db", ws.database, "--json", "--uploads", ws.path(".")],
                                       environment: ["MONGODB_URI": ws.uri])
        // Only known after connecting: a server without GridFS cancels the test, with the
        // probe's answer as the reason (reported, never a silent pass).
        if !probe.stdout.contains(#""gridFS":"yes""#) { try Test.cancel("the server's GridFS probe failed: \(probe.stdout)") }
        let r = try ws.poi(["import", "Samples/landmarks.geojson", "--gridfs", "--json"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let s = try ws.json(r)
        #expect(int(s, "inserted") == 13)
        #expect(int(s, "imagesStored") == 10)
        #expect(ws.files(in: "uploads").isEmpty)  // nothing on disk: the bytes are in GridFS
        // Every files document has a GridFS file with the same _id.
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        ids = {f['_id'] for f in db.files.find()}
        gridfs = {f['_id'] for f in db['fs.files'].find()}
        print(len(ids), ids == gridfs)
        """) == "20 True")
        let e = try ws.poi(["export", "--gridfs", "-o", "out/places.geojson", "--with-images", "out/images", "--json"])
        #expect(e.status == 0, "stderr: \(e.stderr)")
        #expect(int(try ws.json(e), "imagesCopied") == 10)
        #expect(ws.files(in: "out/images").count == 10)
    }

    /// Originals record their embedded ICC profile (`iccProfile`), so the photos that
    /// needed colour conversion can be found; untagged ones have no such field.
    @Test(.liveServer) func taggedOriginalsRecordTheirProfile() throws {
        let ws = try Workspace("iccprofile")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--quiet"]).status == 1)
        let script = "import pymongo,sys; f=pymongo.MongoClient(sys.argv[1])[sys.argv[2]].files; "
            + "print(sorted((d['originalName'], d.get('iccProfile')) for d in f.find({'role':'original', 'originalName': {'$in': ['rocket.jpg','coffee.jpg','hubble-deep-field.jpg']}})))"
        #expect(try ws.python(script)
                == "[('coffee.jpg', None), ('hubble-deep-field.jpg', 'sRGB IEC61966-2.1'), ('rocket.jpg', 'Adobe RGB (1998)')]")
    }

    /// A photo whose embedded profile cannot be used is still imported (exit 0), thumbnailed as
    /// if untagged, counted and named with the reason.
    @Test(.liveServer) func anUnusableProfileIsReportedNotFatal() throws {
        let ws = try Workspace("iccbroken")
        defer { ws.cleanUp() }
        // coffee.jpg with an APP2 ICC_PROFILE chunk Little CMS cannot read, right after SOI.
        var jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ws.path("Samples/images/coffee.jpg"))))
        let chunk = Array("ICC_PROFILE".utf8) + [0, 1, 1, 0, 0, 1, 0] + Array(String(repeating: "not a profile", count: 20).utf8)
        jpeg.insert(contentsOf: [0xFF, 0xE2, UInt8((chunk.count + 2) >> 8), UInt8((chunk.count + 2) & 0xFF)] + chunk, at: 2)
        try Data(jpeg).write(to: URL(fileURLWithPath: ws.path("Samples/images/broken-icc.jpg")))
        try "id,name,lat,lon,image\n1,A,1,2,images/broken-icc.jpg\n".write(toFile: ws.path("Samples/icc.csv"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", "Samples/icc.csv", "--json"])
        #expect(r.status == 0, "\(r.all)")
        let s = try ws.json(r)
        #expect(int(s, "imagesColorUnmanaged") == 1)
        #expect(int(s, "imagesStored") == 1)
        #expect(r.stderr.contains("broken-icc.jpg: ICC profile ignored: "), "\(r.stderr)")
        #expect(r.stderr.contains("(thumbnail made as if untagged)"), "\(r.stderr)")
    }

    /// `--field id=COLUMN` names the id for GeoJSON as for CSV: the same data set imported as
    /// CSV and as GeoJSON with the same flags is one place, keyed by that column, and a Feature
    /// `id` is kept as `extra.id`, as the CSV's `id` column is.
    @Test(.liveServer) func anExplicitIdMappingWinsOverAFeatureIdAsInCSV() throws {
        let ws = try Workspace("idmapping")
        defer { ws.cleanUp() }
        try "id,source_id,name,lat,lon\n42,geonames:2988507,Paris,48.85341,2.3488\n"
            .write(toFile: ws.path("p.csv"), atomically: true, encoding: .utf8)
        try """
        {"type":"FeatureCollection","features":[{"type":"Feature","id":"42","geometry":{"type":"Point","coordinates":[2.3488,48.85341]},
         "properties":{"source_id":"geonames:2988507","name":"Paris"}}]}
        """.write(toFile: ws.path("p.geojson"), atomically: true, encoding: .utf8)
        let csv = try ws.poi(["import", "p.csv", "--field", "id=source_id", "--json", "--quiet"])
        #expect(try csv.status == 0 && int(ws.json(csv), "inserted") == 1, "\(csv.all)")
        let geojson = try ws.poi(["import", "p.geojson", "--field", "id=source_id", "--json", "--quiet"])
        let g = try ws.json(geojson)
        #expect(geojson.status == 0 && int(g, "inserted") == 0 && int(g, "unchanged") == 1, "\(geojson.all)")
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted((d['importKey'], d['extra']) for d in db.locations.find()))
        """) == "[('geonames:2988507', {'id': '42'})]")
    }
}
