import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// WebP thumbnails end to end: `poi import --thumbnail-format webp` stores them as the
/// backend names files (`content-type: image/webp`, `ext: .webp`, bytes at uploads/<id>.webp),
/// `poi serve` sends them as image/webp, and `poi thumbnails` tells a WebP recipe from the
/// default one (up to date with the same recipe, remade with another).
@Suite(.tags(.live, .process), .liveServer) struct WebPThumbnailServeTests {
    @Test func importedWebPThumbnailsAreStoredAndServedAsWebP() throws {
        let s = try ServeHarness("webp")
        let uri = try #require(LiveDatabase.uri)
        let images = s.scratch + "/images"
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        for name in ["coffee.jpg", "chelsea-cutout.png"] {
            try Data(ServeHarness.sample(name)).write(to: URL(fileURLWithPath: images + "/" + name))
        }
        let csv = s.scratch + "/places.csv"
        try """
            id,name,lat,lon,image
            w1,Cafe,51.5,-0.12,images/coffee.jpg
            w2,Cat,51.51,-0.13,images/chelsea-cutout.png

            """.write(toFile: csv, atomically: true, encoding: .utf8)
        let database = ["--uri", uri, "--db", s.databaseName, "--uploads", s.uploads]
        let imported = try runToEnd(ServeHarness.binary, ["import", csv, "--thumbnail-format", "webp", "--quality", "80",
                                                          "--quiet"] + database, stderr: true)
        #expect(imported.status == 0, "\(imported.text)")

        let thumbnails = try s.database.files.find(["role": .string("thumbnail")]).collect()
        #expect(thumbnails.count == 2)
        for doc in thumbnails {
            #expect(doc["content-type"] == .string("image/webp"))
            #expect(doc["ext"] == .string(".webp"))
            #expect(doc["spec"] == .string("256x256 inside webp q80"))
            let id = try #require(doc["_id"]?.objectIdValue)
            let onDisk = try #require(FileManager.default.contents(atPath: s.uploads + "/\(id.hex).webp"))
            #expect(onDisk.starts(with: Array("RIFF".utf8)) && Array(onDisk[8..<12]) == Array("WEBP".utf8))
            #expect(doc["length"]?.int64Value == Int64(onDisk.count))
        }

        let places = try #require(try s.get("/locations", headers: ["Accept": "application/json"]).json as? [[String: Any]])
        #expect(places.count == 2)
        for place in places {
            let imageId = try #require(place["imageId"] as? String)
            let thumbnailId = try #require(place["thumbnailId"] as? String)
            for path in ["/files/\(imageId)/thumbnail", "/files/\(thumbnailId)"] {
                let r = try s.get(path)
                #expect(r.status == 200, "\(path)")
                #expect(r.header("content-type") == "image/webp", "\(path)")
                #expect(r.header("x-content-type-options") == "nosniff")
                #expect(r.body.starts(with: Array("RIFF".utf8)) && Array(r.body[8..<12]) == Array("WEBP".utf8))
                #expect(r.body == FileManager.default.contents(atPath: s.uploads + "/\(thumbnailId).webp").map { [UInt8]($0) })
            }
            // The original is served as what it is.
            #expect(try s.get("/files/\(imageId)").header("content-type") != "image/webp")
        }
        // The cat's alpha survives: a VP8X header with the alpha flag.
        let cat = try #require(places.first { $0["name"] as? String == "Cat" })
        let catThumb = try s.get("/files/\(cat["thumbnailId"] as? String ?? "")")
        #expect(String(decoding: catThumb.body[12..<16], as: UTF8.self) == "VP8X" && catThumb.body[20] & 0x10 != 0)

        // Outdated detection: the same WebP recipe is up to date, the default one remakes both.
        func thumbnailsRun(_ recipe: [String]) throws -> [String: Any] {
            let r = try runToEnd(ServeHarness.binary, ["thumbnails", "--json"] + recipe + database)
            #expect(r.status == 0, "\(r.text)")
            return try #require(try JSONSerialization.jsonObject(with: Data(r.text.utf8)) as? [String: Any])
        }
        let same = try thumbnailsRun(["--format", "webp", "--quality", "80"])
        #expect(same["upToDate"] as? Int == 2 && same["thumbnailsMade"] as? Int == 0)
        let back = try thumbnailsRun([])
        #expect(back["thumbnailsMade"] as? Int == 2)
        let types = try s.database.files.find(["role": .string("thumbnail")]).collect().compactMap { $0["content-type"]?.stringValue }
        #expect(types.sorted() == ["image/jpeg", "image/png"])
        #expect(s.stop() == 0)
    }
}
