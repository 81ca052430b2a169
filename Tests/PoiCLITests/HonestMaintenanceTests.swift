import Foundation
import PoiTestSupport
import Testing

/// `poi thumbnails` and `poi gc` tell the truth about damaged, missing and relinked
/// files. Each test damages a sample database the way the issue reproduced it (pymongo, or the
/// uploads folder by hand) and checks exact numbers.
@Suite(.serialized, .liveServer) struct HonestMaintenanceTests {
    func gc(_ ws: Workspace, _ args: [String]) throws -> PoiProcess.Result {
        try PoiProcess.run(["gc", "--db", ws.database, "--uploads", ws.path("uploads")] + args,
                           environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
    }

    static func damaged(_ json: [String: Any]) -> [[String: String]] {
        (json["damagedBytes"] as? [[String: Any]] ?? []).map { entry in
            var flat: [String: String] = [:]
            for (k, v) in entry {
                if let s = v as? String { flat[k] = s }
                if let a = v as? [String] { flat[k] = a.joined(separator: ",") }
            }
            return flat
        }
    }

    /// One GridFS original missing a chunk is skipped and named; the rest are made and
    /// linked; exit 1 with a `--json` summary (was: exit 3, "MongoDB driver error: Missing chunk 0.").
    @Test func gridFSOriginalMissingAChunkIsSkippedNamedAndTheOthersLinked() throws {
        let ws = try Workspace("thumbchunk")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--quiet"]).status == 1)
        let setup = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        f = db.files.find_one({'originalName': 'hubble-deep-field.jpg', 'role': 'original'})
        r = db['fs.chunks'].delete_one({'files_id': f['_id'], 'n': 0})
        withImage = db.locations.count_documents({'imageId': {'$exists': True}})
        print(f['_id'], r.deleted_count, db.locations.count_documents({'imageId': str(f['_id'])}), withImage)
        """).split(separator: " ").map(String.init)
        try #require(setup.count == 4 && setup[1] == "1", "setup: \(setup)")
        let (hubble, hubblePlaces, withImage) = (setup[0], Int(setup[2])!, Int(setup[3])!)

        let r = try ws.poi(["thumbnails", "--gridfs", "--all", "--json"])
        #expect(r.status == 1, "\(r.all)")
        let s = try ws.json(r)
        #expect(int(s, "originals") == 10)
        #expect(int(s, "thumbnailsMade") == 9)
        #expect(int(s, "failed") == 1)
        #expect(int(s, "placesRelinked") == withImage - hubblePlaces)
        #expect(int(s, "oldThumbnailsDeleted") == 9)
        #expect(r.stderr == "image: original \(hubble): image hubble-deep-field.jpg: file \(hubble): "
            + "its bytes (\(hubble).jpeg) are damaged: Missing chunk 0.\n")
        // Every thumbnail made is linked: nothing was left unreferenced.
        #expect(try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        linked = set(db.locations.distinct('thumbnailId'))
        thumbs = [str(t['_id']) for t in db.files.find({'role': 'thumbnail'})]
        print(len(thumbs), sum(1 for t in thumbs if t not in linked))
        """) == "10 0")
    }

    /// Sizes are compared always, sha256 with --verify, GridFS chunks always; damaged bytes
    /// are their own class, named with the places using them, never deleted, exit 1.
    @Test func gcReportsDamagedBytesWithThePlacesUsingThem() throws {
        let ws = try Workspace("gcdamaged")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let uploads = ws.path("uploads")
        let setup = try ws.python("""
        import pymongo, sys, os
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        up = '\(uploads)'
        def keys(field, i): return ','.join(sorted(p['importKey'] for p in db.locations.find({field: str(i)})))
        o = db.files.find_one({'originalName': 'hubble-deep-field.jpg', 'role': 'original'})
        with open(os.path.join(up, str(o['_id']) + o['ext']), 'r+b') as f: f.truncate(5000)
        c = db.files.find_one({'originalName': 'coffee.jpg', 'role': 'original'})
        t = db.files.find_one({'thumbnailOf': c['_id']})
        open(os.path.join(up, str(t['_id']) + t['ext']), 'wb').write(b'junk')
        r = db.files.find_one({'originalName': 'rocket.jpg', 'role': 'original'})
        p = os.path.join(up, str(r['_id']) + r['ext'])
        b = bytearray(open(p, 'rb').read()); b[1000] ^= 0xFF; open(p, 'wb').write(bytes(b))
        print(o['_id'], o['length'], keys('imageId', o['_id']), t['_id'], t['length'], keys('thumbnailId', t['_id']),
              r['_id'], keys('imageId', r['_id']))
        """).split(separator: " ").map(String.init)
        try #require(setup.count == 8, "setup: \(setup)")
        let truncated: [String: String] = ["id": setup[0], "file": setup[0] + ".jpeg", "role": "original",
                                           "problem": "5000 of \(setup[1]) bytes", "places": setup[2]]
        let junk: [String: String] = ["id": setup[3], "file": setup[3] + ".jpeg", "role": "thumbnail",
                                      "problem": "4 of \(setup[4]) bytes", "places": setup[5]]
        let flipped: [String: String] = ["id": setup[6], "file": setup[6] + ".jpeg", "role": "original",
                                         "problem": "content does not match its sha256", "places": setup[7]]
        func sorted(_ list: [[String: String]]) -> [[String: String]] { list.sorted { $0["id"]! < $1["id"]! } }

        let cheap = try gc(ws, ["--json"])
        #expect(cheap.status == 1, "\(cheap.all)")
        #expect(Self.damaged(try ws.json(cheap)) == sorted([truncated, junk]))
        let verified = try gc(ws, ["--json", "--verify"])
        #expect(verified.status == 1)
        #expect(Self.damaged(try ws.json(verified)) == sorted([truncated, junk, flipped]))
        let text = try gc(ws, [])
        #expect(text.status == 1)
        #expect(text.stdout.contains("damaged bytes (never deleted): 2\n"))
        #expect(text.stdout.hasSuffix("2 found; nothing deleted (gc deletes neither damaged bytes nor dangling references)\n"))
        #expect(text.stdout.contains("\n  \(setup[0]).jpeg (original): 5000 of \(setup[1]) bytes; used by \(setup[2].replacingOccurrences(of: ",", with: ", "))\n"))
        // Never deleted, and still an inconsistency after --delete.
        let deleted = try gc(ws, ["--json", "--delete", "--min-age", "0"])
        #expect(deleted.status == 1)
        #expect(int(try ws.json(deleted), "deleted") == 0)
        #expect(ws.files(in: "uploads").count == 20)
    }

    @Test func gcFindsAGridFSFileWithoutChunks() throws {
        let ws = try Workspace("gcnochunks")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--quiet"]).status == 1)
        let setup = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        f = db.files.find_one({'originalName': 'retina.jpg', 'role': 'original'})
        n = db['fs.chunks'].delete_many({'files_id': f['_id']}).deleted_count
        print(f['_id'], n, ','.join(sorted(p['importKey'] for p in db.locations.find({'imageId': str(f['_id'])}))))
        """).split(separator: " ").map(String.init)
        try #require(setup.count == 3, "setup: \(setup)")
        let r = try gc(ws, ["--gridfs", "--json"])
        #expect(r.status == 1, "\(r.all)")
        #expect(Self.damaged(try ws.json(r)) == [["id": setup[0], "file": setup[0] + ".jpeg", "role": "original",
                                                  "problem": "0 of \(setup[1]) chunks", "places": setup[2]]])
    }

    /// A thumbnail whose bytes are gone is not up to date.
    @Test func thumbnailWithoutBytesIsRegenerated() throws {
        let ws = try Workspace("thumbgone")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let setup = try ws.python("""
        import pymongo, sys, os
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        c = db.files.find_one({'originalName': 'coffee.jpg', 'role': 'original'})
        t = db.files.find_one({'thumbnailOf': c['_id']})
        os.remove(os.path.join('\(ws.path("uploads"))', str(t['_id']) + t['ext']))
        print(db.locations.count_documents({'thumbnailId': str(t['_id'])}))
        """)
        let r = try ws.poi(["thumbnails", "--json"])
        #expect(r.status == 0, "\(r.all)")
        let s = try ws.json(r)
        #expect(int(s, "thumbnailsMade") == 1)
        #expect(int(s, "upToDate") == 9)
        #expect(int(s, "placesRelinked") == Int(setup))
        #expect(int(s, "oldThumbnailsDeleted") == 1)
        #expect(try gc(ws, []).stdout == "consistent: nothing to collect\n")
    }

    /// A relink moves `updated_at` (so `export --since` sends the new id); a plain rerun of
    /// the import still moves nothing.
    @Test func relinkMovesUpdatedAtButARerunDoesNot() throws {
        let ws = try Workspace("relinktime")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        // Whole seconds (what --since reads), strictly after the import's own timestamp.
        Thread.sleep(forTimeInterval: 1.1)
        let before = try ws.python("""
        import datetime; print(datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))
        """)
        #expect(try ws.poi(["thumbnails", "--size", "64x64", "--quiet"]).status == 0)
        let since = try ws.poi(["export", "--since", before, "-o", "since.geojson", "--quiet"])
        #expect(since.status == 0, "\(since.all)")
        let features = try ws.features("since.geojson")
        #expect(features.count == 25)
        let newThumbs = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted(str(f['_id']) for f in db.files.find({'role': 'thumbnail', 'spec': '64x64 inside auto q85'})) ==
              sorted(set(p['thumbnailId'] for p in db.locations.find({'thumbnailId': {'$exists': True}}))),
              db.locations.count_documents({'updated_at': {'$gte': __import__('datetime').datetime.fromisoformat('\(before)'.replace('Z', '+00:00'))}}))
        """)
        #expect(newThumbs == "True 25")
        let exported = Set(features.compactMap { ($0["properties"] as? [String: Any])?["thumbnailId"] as? String })
        #expect(exported.count == 10)
        let stamp = "import pymongo, sys; db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]; "
            + "print(sorted((p['importKey'], p['updated_at'].isoformat()) for p in db.locations.find()))"
        let stamps = try ws.python(stamp)
        let rerun = try ws.json(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--json", "--quiet"]))
        #expect(int(rerun, "unchanged") == 32)
        #expect(try ws.python(stamp) == stamps)
        // Rerunning the same recipe relinks nothing and moves nothing either.
        #expect(try ws.poi(["thumbnails", "--size", "64x64", "--quiet"]).status == 0)
        #expect(try ws.python(stamp) == stamps)
    }

    /// Images found by content whose bytes are not in the store given now are "missing",
    /// with a hint naming --uploads and --gridfs.
    @Test func reusedImagesMissingFromTheGivenStoreAreReportedWithAHint() throws {
        let ws = try Workspace("reusedmissing")
        defer { ws.cleanUp() }
        let first = try ws.json(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--json", "--quiet"]))
        let uses = int(first, "imagesStored")! + int(first, "imagesReused")!
        let hint = "Give --uploads the folder they were stored in, or --gridfs if they were stored in GridFS."

        // A folder that is not there is refused outright (the files listed are elsewhere); one
        // that is there but is not where they were stored is what this test is about.
        let missing = try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--quiet"], uploads: "other")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("other: the uploads folder does not exist, and the files collection lists files"), "\(missing.stderr)")
        try FileManager.default.createDirectory(atPath: ws.path("other"), withIntermediateDirectories: false)
        let elsewhere = try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--json"], uploads: "other")
        #expect(elsewhere.status == 1)
        let s = try ws.json(elsewhere)
        #expect(int(s, "imagesMissing") == uses)
        #expect(int(s, "imagesReused") == 0)
        #expect(elsewhere.stderr.components(separatedBy: "\n").filter { $0.contains("its bytes are missing from the file store") }.count == uses)
        #expect(elsewhere.stderr.contains(hint), "\(elsewhere.stderr)")

        // The same for a GridFS database read without --gridfs.
        let gws = try Workspace("reusedgridfs")
        defer { gws.cleanUp() }
        #expect(try gws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--quiet"]).status == 1)
        let noFolder = try gws.poi(["import"] + ImportCommandTests.sampleFiles + ["--quiet"])
        #expect(noFolder.status == 2)
        #expect(noFolder.stderr.contains("or use --gridfs"), "\(noFolder.stderr)")
        try FileManager.default.createDirectory(atPath: gws.path("uploads"), withIntermediateDirectories: false)
        let plain = try gws.poi(["import"] + ImportCommandTests.sampleFiles + ["--json"])
        #expect(int(try gws.json(plain), "imagesMissing") == uses)
        #expect(plain.stderr.contains(hint), "\(plain.stderr)")
        // With --gridfs they are found again.
        let right = try gws.json(try gws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--json", "--quiet"]))
        #expect(int(right, "imagesMissing") == 0)
        #expect(int(right, "imagesReused") == uses)
    }

    /// A mistyped `--uploads` for maintenance that only reads what is stored: `poi gc` made the
    /// folder on the spot and said "consistent: nothing to collect" (exit 0), export and
    /// thumbnails likewise made it. Now each names the folder and exits 2, creating nothing.
    @Test func aMistypedUploadsFolderIsAnErrorNotAnEmptyStore() throws {
        let ws = try Workspace("uploadstypo")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let message = "uploadz: the uploads folder does not exist. Name the backend's uploads folder with --uploads, or use --gridfs."
        let gc = try PoiProcess.run(["gc", "--db", ws.database, "--uploads", "uploadz"],
                                    environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
        #expect(gc.status == 2, "\(gc.all)")
        #expect(gc.stderr.contains(message), "\(gc.stderr)")
        for command in [["export", "-o", "x.geojson", "--with-images", "imgs"], ["thumbnails", "--all"]] {
            let r = try PoiProcess.run(command + ["--db", ws.database, "--uploads", "uploadz"],
                                       environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
            #expect(r.status == 2, "\(command): \(r.all)")
            #expect(r.stderr.contains(message), "\(command): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: ws.path("uploadz")), "a folder was made for the typo")
        // Import and serve would store new images where the backend never looks: with files
        // listed, a missing folder is refused there too (it was made on the spot).
        let listed = "fresh: the uploads folder does not exist, and the files collection lists files, whose bytes must "
            + "be in another folder; not created. Name the backend's uploads folder with --uploads, or use --gridfs; "
            + "if those files really are gone, create the folder first."
        let typo = try ws.poi(["import", "Samples/places.csv", "--quiet"], uploads: "fresh")
        #expect(typo.status == 2, "\(typo.all)")
        #expect(typo.stderr.contains(listed), "\(typo.stderr)")
        // Under `timeout`: a server that starts anyway fails the test (124) instead of hanging it.
        let serve = try PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/timeout"),
                                           ["20", PoiProcess.binary.path, "serve", "--db", ws.database,
                                            "--uploads", ws.path("fresh"), "--port", "0"],
                                           environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
        #expect(serve.status == 2, "\(serve.all)")
        #expect(serve.stderr.contains(listed), "\(serve.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ws.path("fresh")))
        // A new store (no files listed) still gets its folder made.
        let fresh = try PoiProcess.run(["import", "Samples/places.csv", "--quiet", "--db", ws.database + "_new",
                                        "--uploads", ws.path("fresh")], environment: ["MONGODB_URI": ws.uri],
                                       currentDirectory: ws.root)
        #expect(fresh.status <= 1, "\(fresh.all)")
        #expect(FileManager.default.fileExists(atPath: ws.path("fresh")))
        _ = try PoiProcess.python("import pymongo, sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])",
                                  [ws.uri, ws.database + "_new"])
    }

    /// PNG ignores --quality, so a PNG thumbnail made with another quality is up to date;
    /// a JPEG one is not.
    @Test func qualityChangeRegeneratesJPEGButNotPNGThumbnails() throws {
        let ws = try Workspace("pngquality")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        #expect(int(try ws.json(try ws.poi(["thumbnails", "--format", "png", "--json"])), "thumbnailsMade") == 10)
        let png = try ws.json(try ws.poi(["thumbnails", "--format", "png", "--quality", "50", "--json"]))
        #expect(int(png, "thumbnailsMade") == 0)
        #expect(int(png, "upToDate") == 10)
        #expect(int(try ws.json(try ws.poi(["thumbnails", "--format", "jpeg", "--json"])), "thumbnailsMade") == 10)
        let jpeg = try ws.json(try ws.poi(["thumbnails", "--format", "jpeg", "--quality", "50", "--json"]))
        #expect(int(jpeg, "thumbnailsMade") == 10)
    }

    @Test func helpSaysWhatChanged() throws {
        let gcHelp = try PoiProcess.run(["gc", "--help"]).stdout
        #expect(gcHelp.contains("--verify"))
        #expect(gcHelp.contains("damaged bytes"))
        let thumbHelp = try PoiProcess.run(["thumbnails", "--help"]).stdout
        #expect(thumbHelp.contains("updated_at"))
    }
}
