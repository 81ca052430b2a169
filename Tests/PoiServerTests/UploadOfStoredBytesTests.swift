import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// An upload is never refused for bytes already stored: a phone that retries after a lost
/// response, an app that uses one photo for two places, and photos an import stored all get their
/// 201 with an id of their own; deleting one never takes bytes another id or a place serves.
/// Each case runs with the uploads folder and with GridFS.
@Suite("poi serve uploads of stored bytes", .tags(.live, .process), .serialized, .liveServer)
struct UploadOfStoredBytesTests {
    static let stores: [Bool] = [false, true]

    static func storage(_ gridFS: Bool, _ s: ServeHarness) -> [String] {
        gridFS ? ["--gridfs"] : ["--uploads", s.uploads]
    }

    static func poi(_ arguments: [String]) throws -> (text: String, status: Int32) {
        try runToEnd(ServeHarness.binary, arguments, stderr: true)
    }

    /// `poi gc --verify --json` over the server's database: exit 0, nothing to report.
    static func expectGCClean(_ s: ServeHarness, gridFS: Bool) throws {
        let (text, status) = try runToEnd(ServeHarness.binary, ["gc", "--verify", "--json", "--uri", LiveDatabase.uri!,
                                                                "--db", s.databaseName] + storage(gridFS, s))
        #expect(status == 0, "gc --verify: exit \(status): \(text)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        for key in ["bytesWithoutDocument", "documentsWithoutBytes", "damagedBytes", "danglingReferences",
                    "thumbnailsWithoutOriginal"] {
            #expect((report[key] as? [Any] ?? []).isEmpty, "gc --verify reports \(key): \(report[key] ?? "")")
        }
    }

    static func upload(_ s: ServeHarness, _ bytes: [UInt8], type: String) throws -> String {
        let r = try s.request("POST", "/files", headers: ["Content-Type": type], body: bytes)
        #expect(r.status == 201, "upload: \(r.status) \(r.text)")
        return try FileTests.uploadedId(r)
    }

    @Test(arguments: stores)
    func samePhotoUploadedThirtyTwoTimesAtOnceGetsThirtyTwoIds(gridFS: Bool) async throws {
        let s = try ServeHarness("same32", extraArguments: gridFS ? ["--gridfs"] : [])
        let jpeg = try ServeHarness.sample("coffee.jpg")
        let replies = try await withThrowingTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<32 {
                group.addTask { try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: jpeg) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.map(\.status) == [Int](repeating: 201, count: 32), "\(replies.map { "\($0.status) \($0.text)" })")
        let ids = try replies.map(FileTests.uploadedId)
        #expect(Set(ids).count == 32)
        for id in ids {
            let got = try s.get("/files/\(id)")
            #expect(got.status == 200 && got.body == jpeg, "GET /files/\(id): \(got.status), \(got.body.count) bytes")
        }
        #expect(try s.count("files", ["role": "original"]) == 32)

        for id in ids.dropLast() {
            let deleted = try s.request("DELETE", "/files/\(id)")
            #expect(deleted.status == 200, "DELETE /files/\(id): \(deleted.status) \(deleted.text)")
        }
        let last = ids.last!
        let kept = try s.get("/files/\(last)")
        #expect(kept.status == 200 && kept.body == jpeg, "the last upload after 31 deletes: \(kept.status), \(kept.body.count) bytes")
        let thumbnail = try s.get("/files/\(last)/thumbnail")
        #expect(thumbnail.status == 200 && thumbnail.body.starts(with: [0xFF, 0xD8, 0xFF]), "thumbnail: \(thumbnail.status)")
        #expect(try s.count("files", ["role": "original"]) == 1)
        #expect(try s.count("files", ["role": "thumbnail"]) == 1)
        // The app makes a place of it, so that nothing is left for gc to report.
        let place = try s.postJSON("/locations", #"{"name":"Cafe","location":{"type":"Point","coordinates":[-0.1,51.5]},"imageId":"\#(last)"}"#)
        #expect(place.status == 201)
        try Self.expectGCClean(s, gridFS: gridFS)
        #expect(s.stop() == 0)
    }

    /// Photos an import stored, uploaded again; photos uploaded first, then imported: every place
    /// and every id is served byte for byte, and the app deleting its uploads takes no place's photo.
    @Test(arguments: stores)
    func uploadsAndImportsOfTheSamePhotosServeEachOther(gridFS: Bool) throws {
        let s = try ServeHarness("shared", extraArguments: gridFS ? ["--gridfs"] : [])
        let images = s.scratch + "/images"
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        let photos = ["coffee.jpg": "image/jpeg", "coins.png": "image/png", "rocket.jpg": "image/jpeg"]
        var bytes: [String: [UInt8]] = [:]
        for name in photos.keys {
            bytes[name] = try ServeHarness.sample(name)
            try Data(bytes[name]!).write(to: URL(fileURLWithPath: images + "/" + name))
        }
        let database = ["--uri", LiveDatabase.uri!, "--db", s.databaseName] + Self.storage(gridFS, s)

        // rocket.jpg is uploaded before any import; coffee.jpg and coins.png are imported first.
        let uploadedFirst = try Self.upload(s, bytes["rocket.jpg"]!, type: "image/jpeg")
        let first = s.scratch + "/first.csv"
        try "id,name,lat,lon,image\na,Cafe,51.5,-0.12,images/coffee.jpg\nb,Coins,51.51,-0.13,images/coins.png\n"
            .write(toFile: first, atomically: true, encoding: .utf8)
        let imported = try Self.poi(["import", first, "--quiet"] + database)
        #expect(imported.status == 0, "\(imported.text)")

        // Uploads of the photos the import stored: each its own id.
        var uploads: [String: String] = ["rocket.jpg": uploadedFirst]
        for name in ["coffee.jpg", "coins.png"] {
            uploads[name] = try Self.upload(s, bytes[name]!, type: photos[name]!)
        }
        // An import of the photo uploaded before, twice over, and of one it stored itself.
        let second = s.scratch + "/second.csv"
        try "id,name,lat,lon,image\nc,Rocket,51.52,-0.14,images/rocket.jpg\nd,Rocket again,51.53,-0.15,images/rocket.jpg\ne,Cafe again,51.54,-0.16,images/coffee.jpg\n"
            .write(toFile: second, atomically: true, encoding: .utf8)
        let again = try Self.poi(["import", second, "--quiet"] + database)
        #expect(again.status == 0, "\(again.text)")

        let places = try s.database.locations.find(BSONDocument(), sort: ["importKey": 1]).collect()
        #expect(places.map { $0["importKey"]?.stringValue } == ["a", "b", "c", "d", "e"])
        let photoOf = ["a": "coffee.jpg", "b": "coins.png", "c": "rocket.jpg", "d": "rocket.jpg", "e": "coffee.jpg"]
        func expectEveryPlaceAndUploadServed(_ when: String) throws {
            for place in places {
                let key = place["importKey"]!.stringValue!
                let imageId = try #require(place["imageId"]?.stringValue)
                let got = try s.get("/files/\(imageId)")
                #expect(got.status == 200 && got.body == bytes[photoOf[key]!], "\(when): place \(key)'s photo: \(got.status)")
                #expect(try s.get("/files/\(imageId)/thumbnail").status == 200, "\(when): place \(key)'s thumbnail")
            }
        }
        try expectEveryPlaceAndUploadServed("before the deletes")
        for (name, id) in uploads {
            let got = try s.get("/files/\(id)")
            #expect(got.status == 200 && got.body == bytes[name], "upload of \(name): \(got.status)")
        }
        // The places link the import's own files, one per content, never an upload's.
        let linked = Set(places.compactMap { $0["imageId"]?.stringValue })
        #expect(linked.count == 3)
        #expect(linked.isDisjoint(with: uploads.values), "a place links an upload the app may delete")

        // The app deletes every upload: every place still shows its photo.
        for id in uploads.values { #expect(try s.request("DELETE", "/files/\(id)").status == 200) }
        for id in uploads.values { #expect(try s.get("/files/\(id)").status == 404) }
        try expectEveryPlaceAndUploadServed("after the app deleted its uploads")
        try Self.expectGCClean(s, gridFS: gridFS)
        #expect(s.stop() == 0)
    }

    /// In the uploads folder, an import of a photo the app uploaded takes no second copy of its
    /// bytes: the import's file is a hard link to the upload's.
    @Test func importOfAnUploadedPhotoSharesItsBytesOnDisk() throws {
        let s = try ServeHarness("hardlink")
        let jpeg = try ServeHarness.sample("rocket.jpg")
        let uploaded = try Self.upload(s, jpeg, type: "image/jpeg")
        try Data(jpeg).write(to: URL(fileURLWithPath: s.scratch + "/rocket.jpg"))
        let csv = s.scratch + "/places.csv"
        try "id,name,lat,lon,image\nr,Rocket,51.5,-0.12,rocket.jpg\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let imported = try Self.poi(["import", csv, "--quiet", "--uri", LiveDatabase.uri!, "--db", s.databaseName, "--uploads", s.uploads])
        #expect(imported.status == 0, "\(imported.text)")
        let place = try #require(try s.database.locations.findOne(["importKey": "r"]))
        let imageId = try #require(place["imageId"]?.stringValue)
        #expect(imageId != uploaded)
        let doc = try #require(try s.database.files.findOne(["_id": .objectId(ObjectId(hex: imageId)!)]))
        #expect(doc["storedBy"] == .string("import"))
        let upload = try #require(try s.database.files.findOne(["_id": .objectId(ObjectId(hex: uploaded)!)]))
        #expect(upload["storedBy"] == .string("upload"))
        var a = stat(), b = stat()
        #expect(stat(s.uploads + "/\(uploaded).jpeg", &a) == 0 && stat(s.uploads + "/\(imageId).jpeg", &b) == 0)
        #expect(a.st_ino == b.st_ino && a.st_nlink == 2, "the import stored a second copy of an uploaded photo")
        #expect(s.stop() == 0)
    }

    /// A database set up by an earlier PoiKit has the index that made every original unique by
    /// content: `poi serve` drops it at start (saying so), and a second upload gets its 201.
    @Test func serverDropsTheRetiredIndexThatRefusedUploads() throws {
        let uri = try #require(LiveDatabase.uri)
        let name = "poikit_test_serve_retired_\(ObjectId().hex.suffix(8))"
        let db = MongoDatabase(connection: try MongoConnection(uri: uri), name: name)
        defer { _ = try? db.drop() }
        try db.files.createIndexes([IndexModel(name: "sha256_1_original_unique", keys: ["sha256": 1], unique: true,
                                               partialFilter: ["role": "original"])])
        let s = try ServeHarness("retired", databaseName: name)
        let jpeg = try ServeHarness.sample("coffee.jpg")
        let first = try Self.upload(s, jpeg, type: "image/jpeg")
        let second = try Self.upload(s, jpeg, type: "image/jpeg")
        #expect(first != second)
        #expect(try db.files.indexNames().contains("sha256_1_original_unique") == false)
        #expect(s.log.contains("poi serve: dropped index sha256_1_original_unique of \(name).files"), "\(s.log)")
        #expect(s.stop() == 0)
    }
}
