import Foundation
import PoiTestSupport
import Testing

/// Exit codes a cron wrapper acts on: an export whose images cannot all be copied exits 1, and an
/// import with an input it cannot open exits 2 before writing anything.
@Suite(.tags(.live, .process))
struct CronExitCodesTests {
    /// `poi export --with-images DIR` with a stored original whose bytes are gone prints
    /// `image: place …: … missing` and counts `imagesFailed: 1`, but exits 0: a cron job copying
    /// the photos to a web server never learns one is missing. The feature still carries the old
    /// database's `imageId` and no image path, so an import of that export into a fresh database
    /// drops the photo without a word (`imagesFailed: 0`, no `imageError` on the place, exit 0).
    @Test(.liveServer) func exportWithImagesThatCannotCopyOneExitsOne() throws {
        let ws = try Workspace("t2expimg")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        _ = try ws.python("""
        import pymongo, sys, os
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        f = db.files.find_one({'originalName': 'coffee.jpg', 'role': 'original'})
        os.remove(os.path.join('\(ws.path("uploads"))', str(f['_id']) + f['ext']))
        """)
        let r = try ws.poi(["export", "-o", "out/places.geojson", "--with-images", "out/images", "--json"])
        let summary = try ws.json(r)
        #expect((int(summary, "imagesFailed") ?? 0) >= 1, "\(r.all)")  // one per place using coffee.jpg
        #expect(r.status == 1, "imagesFailed but exit \(r.status): \(r.stderr)")

        let fresh = ws.database + "_fresh"
        defer { _ = try? PoiProcess.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])", [ws.uri, fresh]) }
        let i = try PoiProcess.run(["import", "out/places.geojson", "--db", fresh, "--uploads", ws.path("uploads2"), "--json"],
                                   environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
        #expect(i.status == 1, "the photo that could not be exported is dropped silently: \(i.all)")
        #expect(int(try ws.json(i), "imagesFailed") == int(summary, "imagesFailed"), "\(i.all)")
        // Each place of the photo says so: the image it named and why it is not here.
        let traces = try PoiProcess.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(sorted({(d['imageSource'], d['imageError']) for d in db.locations.find({'imageError': {'$regex': '^the export'}})}))
        print(db.locations.count_documents({'imageError': {'$regex': '^the export'}}), db.locations.count_documents({'imageId': {'$exists': True}}))
        """, [ws.uri, fresh])
        let coffee = try ws.python("""
        import pymongo, sys
        print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].files.find_one({'originalName': 'coffee.jpg', 'role': 'original'})['_id'])
        """)
        let places = int(summary, "imagesFailed") ?? 0
        let withImage = try ws.python("import pymongo,sys; print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.count_documents({'imageId': {'$exists': True}}))")
        #expect(traces == "[('\(coffee)', 'the export names image \(coffee) without a copy of it, and this database has no such image')]"
            + "\n\(places) \((Int(withImage) ?? 0) - places)", "\(traces)")

        // Into the same database, where the image's document is still there, nothing changes.
        let same = try ws.poi(["import", "out/places.geojson", "--json", "--quiet"])
        #expect(same.status == 0, "\(same.all)")
        let again = try ws.json(same)
        #expect(int(again, "updated") == 0 && int(again, "imagesFailed") == 0, "\(same.all)")
    }

    /// `poi import q.csv missing.csv --json` (a dump rotated away between cron's glob and the
    /// open, or `- -`): q.csv is imported, then the run ends with exit 2 ("usage or configuration
    /// error") and `{"error":…}` only: the places it did write are in no summary. Either every
    /// input is opened before anything is written, or the summary says what was done.
    @Test(.liveServer) func aMissingSecondInputDoesNotHideWhatTheFirstImported() throws {
        let ws = try Workspace("t2missing")
        defer { ws.cleanUp() }
        try "id,name,lat,lon\nq1,Q,1,2\n".write(toFile: ws.path("q.csv"), atomically: true, encoding: .utf8)
        let count = "import pymongo,sys; print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.count_documents({}))"
        // Every input is checked first: nothing is written, and the error names the missing one.
        let r = try ws.poi(["import", "q.csv", "missing.csv", "--json"])
        #expect(r.status == 2, "\(r.all)")
        #expect(try ws.python(count) == "0", "a place was written before the run failed: \(r.stdout)")
        #expect(r.stdout.contains("missing.csv: cannot open: No such file or directory"), "\(r.stdout)")
        // Standard input twice: the second could only ever read nothing.
        let twice = try ws.poi(["import", "q.csv", "-", "-"])
        #expect(twice.status == 2, "\(twice.all)")
        #expect(twice.stderr.contains("standard input is named more than once"), "\(twice.stderr)")
        #expect(try ws.python(count) == "0")
        // A folder among the inputs is refused up front as well.
        try FileManager.default.createDirectory(atPath: ws.path("adir"), withIntermediateDirectories: true)
        #expect(try ws.poi(["import", "q.csv", "adir"]).status == 2)
        #expect(try ws.python(count) == "0")
    }
}
