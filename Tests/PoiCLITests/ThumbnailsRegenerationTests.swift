import Foundation
import PoiTestSupport
import Testing

/// `poi thumbnails` on damaged, missing and relinked files: what is made, what is up to date, what
/// is relinked, with exact numbers and exit codes.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct ThumbnailsRegenerationTests: MaintenanceRuns {
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
}
