import Foundation
import PoiTestSupport
import Testing

/// An `--uploads` folder (or `--gridfs`) that is not where the stored files are: a folder that does
/// not exist is refused, never made; images missing from the store given are said, with a hint.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct UploadsFolderChoiceTests {
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
}
