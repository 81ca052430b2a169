import Foundation
import PoiFormats
import PoiModel
import PoiStore
import PoiTestSupport
import Testing
@testable import PoiJobs

@Suite(.tags(.unit)) struct ShardTests {
    @Test func parsesOnlyValidShards() {
        #expect(Shard(parsing: "0/2")?.description == "0/2")
        #expect(Shard(parsing: "1/2")?.index == 1)
        for bad in ["2/2", "-1/2", "0/0", "1", "a/b", "1/2/3", ""] { #expect(Shard(parsing: bad) == nil, "\(bad)") }
    }

    @Test func shardsPartitionEveryKeyExactlyOnce() throws {
        let shards = try (0..<3).map { try #require(Shard(parsing: "\($0)/3")) }
        var counts = [0, 0, 0]
        for i in 0..<3000 {
            let owners = shards.indices.filter { shards[$0].contains(key: "key-\(i)") }
            #expect(owners.count == 1)
            counts[owners[0]] += 1
        }
        // FNV-1a spreads sequential keys evenly: each shard within 10% of a third.
        for c in counts { #expect(abs(c - 1000) < 100, "\(counts)") }
        #expect(Shard.all.contains(key: "anything"))
    }

    @Test func hashIsTheDocumentedFNV1a() {
        // Published FNV-1a 64 test vectors: "" and "a".
        #expect(Shard.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(Shard.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
    }
}

@Suite(.tags(.unit)) struct ImagePathResolverTests {
    let root: URL
    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("poi-resolver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("images/sub"), withIntermediateDirectories: true)
        do {
            try Data([1]).write(to: root.appendingPathComponent("images/a.jpg"))
            try Data([2]).write(to: root.appendingPathComponent("images/sub/b.png"))
            try Data([3]).write(to: root.appendingPathComponent("secret.txt"))
            try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("images/link.jpg").path,
                                                       withDestinationPath: root.appendingPathComponent("secret.txt").path)
        } catch {
            try? FileManager.default.removeItem(at: root)  // the test that would remove it never runs
            throw error
        }
    }

    @Test func resolvesInsideAndRefusesEveryEscape() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let resolver = try ImagePathResolver(root: root.appendingPathComponent("images").path)
        let realRoot = resolver.root
        #expect(try resolver.resolve("a.jpg") == realRoot + "/a.jpg")
        #expect(try resolver.resolve("sub/../sub/b.png") == realRoot + "/sub/b.png")
        #expect(throws: ImageReferenceError.escapesImagesDir("../secret.txt")) { try resolver.resolve("../secret.txt") }
        #expect(throws: ImageReferenceError.escapesImagesDir("link.jpg")) { try resolver.resolve("link.jpg") }
        #expect(throws: ImageReferenceError.escapesImagesDir("../../nope/x.jpg")) { try resolver.resolve("../../nope/x.jpg") }
        #expect(throws: ImageReferenceError.absolutePath("/etc/passwd")) { try resolver.resolve("/etc/passwd") }
        #expect(throws: ImageReferenceError.unsupportedURL("http://example.com/a.jpg")) { try resolver.resolve("http://example.com/a.jpg") }
        #expect(throws: ImageReferenceError.notFound("missing.jpg")) { try resolver.resolve("missing.jpg") }
        #expect(throws: ImageReferenceError.imagesDirMissing("/nonexistent-poikit")) { try ImagePathResolver(root: "/nonexistent-poikit") }
    }

    /// "." was "refused, the path leads outside --images-dir". It is the folder itself.
    @Test func aFolderIsSaidToBeAFolder() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let resolver = try ImagePathResolver(root: root.appendingPathComponent("images").path)
        for reference in [".", "./", "sub", "sub/"] {
            #expect(throws: ImageReferenceError.notAFile(reference)) { try resolver.resolve(reference) }
        }
        #expect(ImageReferenceError.notAFile(".").description == "a folder, not an image file")
    }
}

@Suite(.tags(.unit)) struct PlaceDocumentTests {
    /// An integer beyond Int64 is stored as Decimal128 and read back as the same digits; a
    /// Decimal128 someone else stored comes out as the number it is.
    @Test func integersBeyondInt64AreDecimal128() throws {
        let big = PlaceDocument.bson(.bigInteger("-12345678901234567890"))
        #expect(big == .decimal128(BSONDecimal128(exactly: "-12345678901234567890")!))
        #expect(PlaceDocument.json(big) == .bigInteger("-12345678901234567890"))
        #expect(PlaceDocument.json(.decimal128(BSONDecimal128(exactly: "42")!)) == .integer(42))
        #expect(PlaceDocument.json(.decimal128(BSONDecimal128(exactly: "-1.5")!)) == .double(-1.5))
        #expect(PlaceDocument.json(.decimal128(BSONDecimal128(exactly: "NaN")!)) == .null)
    }

    @Test func placeMapsToTheBackendLayout() throws {
        let place = Place(name: "Big Ben", placename: nil, coordinate: Coordinate(longitude: -0.1246254, latitude: 51.5007292),
                          details: "Clock", categories: ["landmark", "clock"], image: "a.jpg", importKey: "ldn-001",
                          extra: JSONObject([JSONMember("opening_hours", .string("9-5")), JSONMember("_reason", .string("old")),
                                             JSONMember("imageId", .string("stale"))]),
                          source: PlaceSource(file: "/x/places.csv", record: 1, position: .line(2)))
        let image = ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!
        let write = PlaceDocument.fields(for: place, links: .init(imageId: image, thumbnailId: nil))
        let set = write.set
        // Provenance and the thumbnail are written with the place but are not content.
        #expect(write.untracked == ["source": .document(["file": "places.csv", "line": .int64(2)])])
        // imageId last: a file without an image column keeps it (`keep`), digested in that place.
        #expect(set.keys == ["importKey", "name", "placename", "location", "details", "categories", "extra", "imageId"])
        #expect(set["location"] == .document(["type": "Point", "coordinates": [-0.1246254, 51.5007292]]))
        #expect(set["imageId"] == .string("5f1d7a0c9b1e8a0012345678"))
        #expect(set["placename"] == .string(""))
        #expect(set["categories"] == ["landmark", "clock"])
        // Columns named like what PoiKit writes are kept under extra.
        #expect(set["extra"] == .document(["opening_hours": "9-5", "_reason": "old", "imageId": "stale"]))
        #expect(write.unset == ["imageSource", "imageError"] && write.untrackedUnset == ["thumbnailId"] && write.keep.isEmpty)
        // A failed image (or an empty image cell) removes the link; no image column keeps it.
        let failed = PlaceDocument.fields(for: place, links: nil)
        #expect(failed.unset == ["imageSource", "imageError", "imageId"] && failed.untrackedUnset == ["thumbnailId"] && failed.keep.isEmpty)
        // A failed reference is kept with its reason, to find and retry it.
        let traced = PlaceDocument.fields(for: place, links: nil, imageError: "no such file")
        #expect(traced.set["imageSource"] == .string("a.jpg") && traced.set["imageError"] == .string("no such file"))
        var noColumn = place
        noColumn.image = nil
        noColumn.hasImageField = false
        let kept = PlaceDocument.fields(for: noColumn, links: nil)
        #expect(kept.unset == ["imageSource", "imageError"] && kept.untrackedUnset.isEmpty && kept.keep == ["imageId"])
        #expect(kept.set["imageId"] == nil)
        // The thumbnail is written with the place but is not part of what counts as a change.
        let thumb = ObjectId(hex: "5f1d7a0c9b1e8a0012345679")!
        let withThumb = PlaceDocument.fields(for: place, links: .init(imageId: image, thumbnailId: thumb))
        #expect(withThumb.set == set)
        #expect(withThumb.unset == ["imageSource", "imageError"] && withThumb.untrackedUnset.isEmpty)
        #expect(withThumb.untracked == ["thumbnailId": "5f1d7a0c9b1e8a0012345679",
                                        "source": .document(["file": "places.csv", "line": .int64(2)])])
    }

    @Test func storedDocumentBecomesAFeature() throws {
        let id = ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!
        let doc: BSONDocument = [
            "_id": .objectId(id), "name": "X", "location": .document(["type": "Point", "coordinates": [10.5, -20.25]]),
            "categories": ["a"], "extra": .document(["name": "shadowed", "n": 3]),
            "updated_at": .date(BSONDate(millisecondsSinceEpoch: 0)),
        ]
        let feature = try #require(PlaceDocument.feature(from: doc, image: ("images/x.jpeg", nil)))
        #expect(feature.id == .string("5f1d7a0c9b1e8a0012345678"))
        #expect(feature.coordinate == Coordinate(longitude: 10.5, latitude: -20.25))
        // The extra named like a property of the export comes out renamed, never dropped.
        #expect(feature.properties.members.map(\.key) == ["name", "categories", "image", "updated_at", "name (extra)", "n"])
        #expect(feature.properties["name (extra)"] == .string("shadowed"))
        #expect(PlaceDocument.feature(from: ["_id": .objectId(id), "name": "no location"]) == nil)
        #expect(PlaceDocument.feature(from: ["location": .document(["type": "Point", "coordinates": [200.0, 0.0]])]) == nil)
    }
}

@Suite(.tags(.unit)) struct RejectsWriterTests {
    @Test func csvRejectsKeepTheInputColumnsAndQuoteCorrectly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-rejects-\(UUID().uuidString).csv").path
        defer { unlink(path) }
        let header = RawCSVRecord(bytes: Array("name;lat;note\r\n".utf8), lineEndLength: 2, fieldCount: 3)
        let writer = RejectsWriter(path: path, style: .csv(header: header, delimiter: UInt8(ascii: ";")))
        let source = PlaceSource(file: "in.csv", record: 3, position: .line(7))
        let raw = RawCSVRecord(bytes: Array("A;\"x;y\"\r\n".utf8), lineEndLength: 2, fieldCount: 2)
        try writer.add(Reject(source: source, field: "lat", reason: #"latitude "x;y" is not a number"#), raw: .csv(raw))
        try writer.finish()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "name;lat;note;_line;_field;_reason\r\nA;\"x;y\";;7;lat;\"latitude \"\"x;y\"\" is not a number\"\r\n")
    }

    @Test func noRejectsRemovesAStaleRejectsFileAndNothingElse() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-rejects-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An earlier run's rejects file: recognised by its name and content, removed.
        let stale = dir + "/x.rejects.geojson"
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"_feature":3}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: stale))
        try RejectsWriter(path: stale, style: .geojson).finish()
        #expect(!FileManager.default.fileExists(atPath: stale))
        // Anything else at the rejects path stays: a file that is not one, an input, a link.
        let other = dir + "/notes.rejects.geojson"
        try Data("my notes".utf8).write(to: URL(fileURLWithPath: other))
        try RejectsWriter(path: other, style: .geojson).finish()
        #expect(FileManager.default.fileExists(atPath: other))
        let input = dir + "/in.rejects.csv"
        try Data("name,lat,lon,_line,_field,_reason\n".utf8).write(to: URL(fileURLWithPath: input))
        try RejectsWriter(path: input, style: .geojson, inputs: [input]).finish()
        #expect(FileManager.default.fileExists(atPath: input))
        #expect(symlink(stale, dir + "/link.rejects.geojson") == 0)
        try RejectsWriter(path: dir + "/link.rejects.geojson", style: .geojson).finish()
        #expect(FileManager.default.fileExists(atPath: dir + "/link.rejects.geojson") || (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/link.rejects.geojson")) != nil)
    }
}

@Suite(.tags(.unit)) struct ProgressTests {
    @Test func etaFromItemsOrFromTheShareOfBytesRead() {
        #expect(JobProgress(items: 25, total: 100, images: 0, seconds: 10).eta == 30)
        #expect(JobProgress(items: 7, total: nil, images: 0, seconds: 10, fraction: 0.25).eta == 30)
        #expect(JobProgress(items: 7, total: nil, images: 0, seconds: 10).eta == nil)
    }

    @Test func readersCountTheBytesTheyRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-progress-\(UUID().uuidString).csv").path
        defer { unlink(path) }
        let text = "name,lat,lon\n" + (0..<2000).map { "P\($0),1,2\n" }.joined()
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let reader = try PlaceReader(path: path)
        #expect(reader.totalBytes == text.utf8.count)
        var count = 0
        while let item = try reader.next() { if item.place != nil { count += 1 } }
        #expect(count == 2000)
        #expect(reader.bytesRead == text.utf8.count)
    }
}

/// The run's key set stays compact and exact about what it has seen.
@Suite(.tags(.unit)) struct SeenKeysTests {
    @Test func remembersEveryKeyAndWhereItWasFirstSeen() {
        var seen = SeenKeys(capacity: 16)
        for i in 0..<100_000 {
            let e = SeenKeys.Entry(content: UInt32(i), position: UInt32(i + 2), file: 0)
            #expect(seen.insert(SeenKeys.fingerprint("key-\(i)"), e) == nil)
        }
        #expect(seen.count == 100_000)
        // 3/4 full at most, power-of-two slots: 18 bytes each.
        #expect(seen.slots == 1 << 18)
        for i in stride(from: 0, to: 100_000, by: 997) {
            let again = seen.insert(SeenKeys.fingerprint("key-\(i)"), SeenKeys.Entry(content: 0, position: 0, file: 1))
            #expect(again == SeenKeys.Entry(content: UInt32(i), position: UInt32(i + 2), file: 0))
        }
        // Keys are compared as bytes: NFC and NFD spellings are different keys, as in MongoDB.
        #expect(seen.insert(SeenKeys.fingerprint("Caf\u{E9}"), SeenKeys.Entry(content: 1, position: 1, file: 0)) == nil)
        #expect(seen.insert(SeenKeys.fingerprint("Cafe\u{301}"), SeenKeys.Entry(content: 1, position: 1, file: 0)) == nil)
        seen.replace(SeenKeys.fingerprint("key-5"), SeenKeys.Entry(content: 9, position: 99, file: 0))
        #expect(seen.insert(SeenKeys.fingerprint("key-5"), SeenKeys.Entry(content: 0, position: 0, file: 0))?.position == 99)
    }

    @Test func duplicateRulesOfOneRun() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("seen-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let csv = dir + "/d.csv"
        try "id,name,lat,lon\nA1,First,10,20\nA1,Second,11,21\nA1,First,10,20\nB,Other,1,1\n".write(toFile: csv, atomically: true, encoding: .utf8)
        func run(_ policy: DuplicatePolicy) throws -> (ImportSummary, [String: InMemoryPlaces.StoredPlace]) {
            var options = ImportOptions()
            options.onDuplicate = policy
            options.rejectsPath = dir + "/r.csv"
            let places = InMemoryPlaces()
            let summary = try ImportJob(options: options, places: places, images: InMemoryImages()).run(files: [csv])
            return (summary, places.places)
        }
        let (reject, r) = try run(.reject)
        #expect(reject.inserted == 2 && reject.rejected == 1 && reject.unchanged == 1 && reject.duplicates == 0)
        #expect(r["A1"]?.fields["name"] == .string("First"))
        let (first, f) = try run(.first)
        #expect(first.inserted == 2 && first.rejected == 0 && first.duplicates == 1 && first.unchanged == 1)
        #expect(f["A1"]?.fields["name"] == .string("First"))
        let (last, l) = try run(.last)
        // Line 4 is the last of A1 and the only one written; line 2 is an exact copy of it
        // (unchanged), line 3 a duplicate it replaces: the same counts as `.first` gives.
        #expect(last.inserted == 2 && last.rejected == 0 && last.duplicates == 1 && last.unchanged == 1)
        #expect(l["A1"]?.fields["name"] == .string("First") && l["A1"]?.fields["location"] != nil)
    }
}
