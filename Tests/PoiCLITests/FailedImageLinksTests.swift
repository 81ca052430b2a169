import Foundation
import PoiTestSupport
import Testing

/// An image that fails to import leaves its reference and reason on the place, and never unlinks
/// an image stored for that place earlier; the run exits 1.
@Suite(.tags(.live, .process))
struct FailedImageLinksTests {
    /// A failed image leaves its reference and reason on the place, and the run exits 1.
    @Test(.liveServer) func failedImageIsKeptOnThePlaceAndExits1() throws {
        let ws = try Workspace("imgfail")
        defer { ws.cleanUp() }
        try "name,lat,lon,image\nA,1,2,missing.jpg\nB,1,3,\n".write(toFile: ws.path("f.csv"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", ws.path("f.csv"), "--json"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(int(try ws.json(r), "imagesFailed") == 1)
        let out = try ws.python("""
            import pymongo, sys
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            a = db.locations.find_one({"name": "A"}); b = db.locations.find_one({"name": "B"})
            print(a.get("imageSource"), a.get("imageError"), "imageError" in b)
            """)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "missing.jpg no such file False")
    }

    /// A place with a stored photo, then a dump whose image for it fails (the images folder not
    /// mounted tonight, a file being rewritten): the import unlinks the stored photo
    /// (`imageId`/`thumbnailId` removed, only `imageSource`/`imageError` left), so the next
    /// `poi gc --delete` deletes a photo that was fine. A failed reference is not "an image column
    /// that is present and empty": the existing link must stay.
    @Test(.liveServer) func aFailedImageNeverUnlinksTheStoredOne() throws {
        let ws = try Workspace("t2keepimg")
        defer { ws.cleanUp() }
        try "id,name,lat,lon,photo\n1,A,1,2,images/rocket.jpg\n".write(toFile: ws.path("Samples/good.csv"), atomically: true, encoding: .utf8)
        try "id,name,lat,lon,photo\n1,A,1,2,images/not-mounted.jpg\n".write(toFile: ws.path("Samples/bad.csv"), atomically: true, encoding: .utf8)
        #expect(try ws.poi(["import", "Samples/good.csv", "--quiet"]).status == 0)
        let link = "import pymongo,sys; d=pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.find_one({'importKey':'1'}); print(d.get('imageId'), d.get('imageError'))"
        let before = try ws.python(link)
        #expect(!before.hasPrefix("None"), "\(before)")
        let r = try ws.poi(["import", "Samples/bad.csv", "--quiet"])
        #expect(r.status == 1, "\(r.all)")
        let after = try ws.python(link)
        #expect(after.hasPrefix(String(before.prefix(24))), "the stored photo was unlinked: before \(before), after \(after)")
        let gc = try PoiProcess.run(["gc", "--db", ws.database, "--uploads", ws.path("uploads"), "--min-age", "0"],
                                    environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
        #expect(!gc.stdout.contains("files no place uses"), "gc --delete would remove the photo: \(gc.stdout)")
    }
}
