import Foundation
import PoiTestSupport
import Testing

@Suite(.tags(.live, .process), .serialized, .liveServer) struct ExportAndThumbnailsTests {
    /// Imports the samples into the workspace's database (5 rejects, so exit 1).
    static func importSamples(_ ws: Workspace) throws {
        let r = try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
    }

    static func keys(_ features: [[String: Any]]) -> [String] {
        features.compactMap { ($0["properties"] as? [String: Any])?["importKey"] as? String }.sorted()
    }

    @Test func filtersReturnExactlyTheExpectedPlaces() throws {
        let ws = try Workspace("filters")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)

        func export(_ args: [String]) throws -> [String] {
            let r = try ws.poi(["export", "-o", "out.geojson", "--quiet"] + args)
            #expect(r.status == 0, "stderr: \(r.stderr)")
            return Self.keys(try ws.features("out.geojson"))
        }
        #expect(try export(["--bbox", "-0.2,51.45,0,51.55"]) == ["ldn-001", "ldn-002", "ldn-003", "ldn-004", "ldn-005"])
        #expect(try export(["--category", "museum"]) ==
            ["ber-002", "geo-ams-1", "geo-ams-2", "ldn-003", "ldn-005", "par-002"])
        #expect(try export(["--category", "cafe", "--category", "music"]) == ["ldn-004", "par-003", "syd-001"])
        #expect(try export(["--bbox", "179,-17,-179,-16"]) == ["geo-fji-1", "geo-fji-2"])  // crosses the antimeridian
        #expect(try export(["--bbox", "-10,35,30,60", "--category", "museum"]) ==
            ["ber-002", "geo-ams-1", "geo-ams-2", "ldn-003", "ldn-005", "par-002"])
        #expect(try export(["--query", #"{"extra.wheelchair": true}"#]) == ["geo-ams-1"])
        #expect(try export(["--since", "2000-01-01"]).count == 32)
        #expect(try export(["--since", "2999-01-01", "--allow-empty"]).isEmpty)  // replaces a non-empty file

        for forbidden in [#"{"$where": "true"}"#, #"{"$and": [{"x": {"$function": {"body": "f", "args": [], "lang": "js"}}}]}"#] {
            let r = try ws.poi(["export", "--query", forbidden])
            #expect(r.status == 2)
            #expect(r.stderr.contains("runs JavaScript on the database server"))
        }
        #expect(try ws.poi(["export", "--bbox", "1,2,3"]).status == 2)
    }

    @Test func exportIsValidGeoJSONAndAtomic() throws {
        let ws = try Workspace("export")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)
        let r = try ws.poi(["export", "-o", "places.geojson", "--json"])
        #expect(r.status == 0)
        #expect(int(try ws.json(r), "features") == 32)
        let features = try ws.features("places.geojson")
        #expect(features.count == 32)
        let first = try #require(features.first)
        #expect((first["id"] as? String)?.count == 24)
        #expect(((first["geometry"] as? [String: Any])?["coordinates"] as? [Double]) == [-0.1246254, 51.5007292])
        // Sorted by _id: the ids come out in ascending order.
        let ids = features.compactMap { $0["id"] as? String }
        #expect(ids == ids.sorted())

        // A failed export (server unreachable) leaves the previous file untouched.
        let before = try Data(contentsOf: ws.root.appendingPathComponent("places.geojson"))
        let failed = try PoiProcess.run(["export", "-o", ws.path("places.geojson"), "--uri", "mongodb://127.0.0.1:1",
                                         "--server-timeout", "1"])
        #expect(failed.status == 3)
        #expect(try Data(contentsOf: ws.root.appendingPathComponent("places.geojson")) == before)
        #expect(ws.files(in: ".").filter { $0.contains(".tmp-") }.isEmpty)

        let seq = try ws.poi(["export", "--seq", "--category", "bridge"])
        #expect(seq.status == 0)
        #expect(seq.stdout.split(separator: "\n").count == 3)
        #expect(seq.stdout.hasPrefix("\u{1E}{\"type\":\"Feature\""))
    }

    @Test func roundTripThroughASecondDatabaseIsIdenticalButForIdsAndTimes() throws {
        let ws = try Workspace("roundtrip")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)
        let a = try ws.poi(["export", "-o", "a/places.geojson", "--with-images", "a/images", "--json"])
        #expect(a.status == 0, "stderr: \(a.stderr)")
        #expect(int(try ws.json(a), "imagesCopied") == 10)
        #expect(ws.files(in: "a/images").count == 10)

        let second = try Workspace("roundtrip2")
        defer { second.cleanUp() }
        try FileManager.default.copyItem(atPath: ws.path("a"), toPath: second.path("a"))
        let imported = try second.poi(["import", "a/places.geojson", "--json"])
        #expect(imported.status == 0, "stderr: \(imported.stderr)")
        let s = try second.json(imported)
        #expect(int(s, "inserted") == 32)
        #expect(int(s, "imagesStored") == 10)
        #expect(int(s, "imagesFailed") == 0)
        #expect(second.poiExport(["export", "-o", "b/places.geojson", "--with-images", "b/images"]) == 0)

        func normalized(_ features: [[String: Any]]) -> [String] {
            features.map { f in
                var props = f["properties"] as? [String: Any] ?? [:]
                for k in ["imageId", "thumbnailId", "created_at", "updated_at", "image"] { props.removeValue(forKey: k) }
                let geometry = f["geometry"] as? [String: Any] ?? [:]
                let data = try! JSONSerialization.data(withJSONObject: ["g": geometry, "p": props], options: [.sortedKeys])
                return String(decoding: data, as: UTF8.self)
            }.sorted()
        }
        let first = normalized(try ws.features("a/places.geojson"))
        let again = normalized(try second.features("b/places.geojson"))
        #expect(first.count == 32)
        #expect(again.count == 32)
        // Compared one by one so a failure names the first differing place, not two whole files.
        for (x, y) in zip(first, again) where x != y {
            Issue.record("first export: \(x)\nsecond export: \(y)")
            break
        }
        // The photos themselves survive byte for byte.
        let sizesA = try ws.files(in: "a/images").map { try Data(contentsOf: ws.root.appendingPathComponent("a/images/\($0)")).count }.sorted()
        let sizesB = try second.files(in: "b/images").map { try Data(contentsOf: second.root.appendingPathComponent("b/images/\($0)")).count }.sorted()
        #expect(sizesA == sizesB)
    }

    /// Overlapping `poi thumbnails --all` runs (a slow weekly run still going when
    /// the next starts) leave every place linked to a thumbnail that exists, and nothing for gc.
    @Test func overlappingThumbnailRunsLeaveNoDanglingLinks() throws {
        let ws = try Workspace("thumbrace")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)
        for round in 0..<3 {
            let runs = try (0..<3).map { _ in
                let p = Process()
                p.executableURL = PoiProcess.binary
                p.arguments = ["thumbnails", "--all", "--size", "\(100 + round)x\(100 + round)", "--quiet",
                               "--db", ws.database, "--uploads", ws.path("uploads")]
                p.environment = ProcessInfo.processInfo.environment.merging(["MONGODB_URI": ws.uri]) { $1 }
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                try p.run()
                return p
            }
            for run in runs {
                run.waitUntilExit()
                #expect(run.terminationStatus == 0, "round \(round)")
            }
            #expect(try ws.python("""
            import pymongo, sys, bson
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            places = list(db.locations.find({'imageId': {'$exists': True}}))
            dangling = [p['name'] for p in places if db.files.find_one({'_id': bson.ObjectId(p['thumbnailId'])}) is None]
            print(len(places), dangling)
            """) == "25 []", "round \(round)")
            let gc = try ws.poi(["gc", "--uploads", ws.path("uploads"), "--db", ws.database])
            #expect(gc.all.contains("consistent"), "round \(round): \(gc.all)")
        }
    }

    /// A place linked to a thumbnail that is gone (what a thumbnails run deleting it
    /// while an import wrote places left behind, before imports relinked after their writes)
    /// is repaired by a plain `poi thumbnails`: pointed at its image's newest thumbnail, or
    /// given a new one when the image has none left.
    @Test func aPlainThumbnailsRunRepairsLinksToThumbnailsThatAreGone() throws {
        let ws = try Workspace("thumbrepair")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)
        // Two places of one image on a made-up (gone) thumbnail; the thumbnails of another
        // image deleted outright (document and bytes), its places still linking to it.
        #expect(try ws.python("""
        import pymongo, sys, os, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        images = sorted({p['imageId'] for p in db.locations.find({'imageId': {'$exists': True}})})
        a, b = images[0], images[1]
        db.locations.update_many({'imageId': a}, {'$set': {'thumbnailId': str(bson.ObjectId())}})
        for t in db.files.find({'thumbnailOf': bson.ObjectId(b)}):
            db.files.delete_one({'_id': t['_id']})
            os.remove(os.path.join('\(ws.path("uploads"))', str(t['_id']) + t['ext']))
        print(db.locations.count_documents({'imageId': {'$in': [a, b]}}))
        """).isEmpty == false)
        let r = try ws.poi(["thumbnails", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let s = try ws.json(r)
        #expect(int(s, "thumbnailsMade") == 1, "the image left without a thumbnail gets one")
        #expect(int(s, "brokenLinksRepaired") ?? 0 > 0)
        #expect(try ws.python("""
        import pymongo, sys, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        places = list(db.locations.find({'imageId': {'$exists': True}}))
        dangling = [p['name'] for p in places if db.files.find_one({'_id': bson.ObjectId(p.get('thumbnailId', '0' * 24))}) is None]
        print(len(places), dangling)
        """) == "25 []")
        let gc = try ws.poi(["gc", "--uploads", ws.path("uploads"), "--db", ws.database])
        #expect(gc.all.contains("consistent"), "\(gc.all)")
    }

    @Test func thumbnailsAreReplacedWithoutOrphans() throws {
        let ws = try Workspace("thumbs")
        defer { ws.cleanUp() }
        try Self.importSamples(ws)
        let r = try ws.poi(["thumbnails", "--size", "64x64", "--fit", "cover", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let s = try ws.json(r)
        #expect(int(s, "originals") == 10)
        #expect(int(s, "thumbnailsMade") == 10)
        #expect(int(s, "oldThumbnailsDeleted") == 10)
        #expect(int(s, "placesRelinked") == 25)
        #expect(ws.files(in: "uploads").count == 20)
        #expect(try ws.python("""
        import pymongo, sys, os, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        thumbs = list(db.files.find({'role': 'thumbnail'}))
        specs = sorted({t['spec'] for t in thumbs})
        dims = sorted({(t['width'], t['height']) for t in thumbs})
        linked = all(db.files.find_one({'_id': bson.ObjectId(p['thumbnailId']), 'role': 'thumbnail'}) is not None
                     for p in db.locations.find({'imageId': {'$exists': True}}))
        on_disk = set(os.listdir('\(ws.path("uploads"))'))
        docs = {str(f['_id']) + f['ext'] for f in db.files.find()}
        print(len(thumbs), specs, dims, linked, on_disk == docs)
        """) == "10 ['64x64 cover auto q85'] [(64, 64)] True True")

        let again = try ws.json(try ws.poi(["thumbnails", "--size", "64x64", "--fit", "cover", "--json"]))
        #expect(int(again, "upToDate") == 10)
        #expect(int(again, "thumbnailsMade") == 0)

        // A plain rerun of the import keeps the regenerated thumbnails: nothing changes.
        let rerun = try ws.json(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--json", "--quiet"]))
        #expect(int(rerun, "unchanged") == 32)
        #expect(int(rerun, "thumbnailsMade") == 0)
        let still = try ws.json(try ws.poi(["thumbnails", "--size", "64x64", "--fit", "cover", "--json"]))
        #expect(int(still, "upToDate") == 10)
        #expect(int(still, "oldThumbnailsDeleted") == 0)
        // An import that names a recipe gets it.
        let explicit = try ws.json(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--size", "100x100", "--json", "--quiet"]))
        #expect(int(explicit, "thumbnailsMade") == 10)
        #expect(int(explicit, "unchanged") == 32)  // the places' own data did not change
        #expect(try ws.python("""
        import pymongo, sys, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        specs = {db.files.find_one({'_id': bson.ObjectId(p['thumbnailId'])})['spec']
                 for p in db.locations.find({'thumbnailId': {'$exists': True}})}
        print(sorted(specs))
        """) == "['100x100 inside auto q85']")
        let some = try ws.json(try ws.poi(["thumbnails", "--size", "32x32", "--category", "bridge", "--json"]))
        #expect(int(some, "originals") == 2)  // Tower Bridge → hubble, Karlův most → rocket (Golden Gate's image is refused)
        #expect(int(some, "thumbnailsMade") == 2)
    }
}

extension Workspace {
    func poiExport(_ args: [String]) -> Int32 { (try? poi(args + ["--quiet"]).status) ?? -1 }
}
