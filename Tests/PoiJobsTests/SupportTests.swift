import Foundation
import PoiFormats
import PoiModel
import PoiStore
import Testing
@testable import PoiJobs

@Suite struct ShardTests {
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

@Suite struct ImagePathResolverTests {
    let root: URL
    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("poi-resolver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("images/sub"), withIntermediateDirectories: true)
        try Data([1]).write(to: root.appendingPathComponent("images/a.jpg"))
        try Data([2]).write(to: root.appendingPathComponent("images/sub/b.png"))
        try Data([3]).write(to: root.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("images/link.jpg").path,
                                                   withDestinationPath: root.appendingPathComponent("secret.txt").path)
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
}

@Suite struct PlaceDocumentTests {
    @Test func iso8601IsUTCWithMilliseconds() {
        #expect(PlaceDocument.iso8601(BSONDate(millisecondsSinceEpoch: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(PlaceDocument.iso8601(BSONDate(millisecondsSinceEpoch: 1_700_000_000_123)) == "2023-11-14T22:13:20.123Z")
        #expect(PlaceDocument.iso8601(BSONDate(millisecondsSinceEpoch: -1)) == "1969-12-31T23:59:59.999Z")
    }

    @Test func placeMapsToTheBackendLayout() throws {
        let place = Place(name: "Big Ben", placename: nil, coordinate: Coordinate(longitude: -0.1246254, latitude: 51.5007292),
                          details: "Clock", categories: ["landmark", "clock"], image: "a.jpg", importKey: "ldn-001",
                          extra: JSONObject([JSONMember("opening_hours", .string("9-5")), JSONMember("_reason", .string("old")),
                                             JSONMember("imageId", .string("stale"))]),
                          source: PlaceSource(file: "/x/places.csv", record: 1, position: .line(2)))
        let image = ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!
        let (set, unset, untracked) = PlaceDocument.fields(for: place, links: .init(imageId: image, thumbnailId: nil))
        #expect(untracked.isEmpty)
        #expect(set.keys == ["importKey", "name", "placename", "location", "details", "categories", "imageId", "extra", "source"])
        #expect(set["location"] == .document(["type": "Point", "coordinates": [-0.1246254, 51.5007292]]))
        #expect(set["imageId"] == .string("5f1d7a0c9b1e8a0012345678"))
        #expect(set["placename"] == .string(""))
        #expect(set["categories"] == ["landmark", "clock"])
        #expect(set["extra"] == .document(["opening_hours": "9-5"]))
        #expect(set["source"] == .document(["file": "places.csv", "line": .int64(2)]))
        #expect(unset == ["thumbnailId"])
        #expect(PlaceDocument.fields(for: place, links: nil).unset == ["imageId", "thumbnailId"])
        // The thumbnail is written with the place but is not part of what counts as a change.
        let thumb = ObjectId(hex: "5f1d7a0c9b1e8a0012345679")!
        let withThumb = PlaceDocument.fields(for: place, links: .init(imageId: image, thumbnailId: thumb))
        #expect(withThumb.set == set)
        #expect(withThumb.unset.isEmpty)
        #expect(withThumb.untracked == ["thumbnailId": "5f1d7a0c9b1e8a0012345679"])
    }

    @Test func storedDocumentBecomesAFeature() throws {
        let id = ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!
        let doc: BSONDocument = [
            "_id": .objectId(id), "name": "X", "location": .document(["type": "Point", "coordinates": [10.5, -20.25]]),
            "categories": ["a"], "extra": .document(["name": "shadowed", "n": 3]),
            "updated_at": .date(BSONDate(millisecondsSinceEpoch: 0)),
        ]
        let feature = try #require(PlaceDocument.feature(from: doc, imagePath: "images/x.jpeg"))
        #expect(feature.id == .string("5f1d7a0c9b1e8a0012345678"))
        #expect(feature.coordinate == Coordinate(longitude: 10.5, latitude: -20.25))
        #expect(feature.properties.members.map(\.key) == ["name", "categories", "image", "updated_at", "n"])
        #expect(PlaceDocument.feature(from: ["_id": .objectId(id), "name": "no location"]) == nil)
        #expect(PlaceDocument.feature(from: ["location": .document(["type": "Point", "coordinates": [200.0, 0.0]])]) == nil)
    }
}

@Suite struct RejectsWriterTests {
    @Test func csvRejectsKeepTheInputColumnsAndQuoteCorrectly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-rejects-\(UUID().uuidString).csv").path
        defer { unlink(path) }
        let writer = RejectsWriter(path: path, style: .csv(header: ["name", "lat", "note"], delimiter: UInt8(ascii: ";")))
        let source = PlaceSource(file: "in.csv", record: 3, position: .line(7))
        try writer.add(Reject(source: source, field: "lat", reason: #"latitude "x;y" is not a number"#), raw: .csv(["A", "x;y"]))
        try writer.finish()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "name;lat;note;_line;_field;_reason\r\nA;\"x;y\";;7;lat;\"latitude \"\"x;y\"\" is not a number\"\r\n")
    }

    @Test func noRejectsRemovesAStaleFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-rejects-\(UUID().uuidString).geojson").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let writer = RejectsWriter(path: path, style: .geojson)
        try writer.finish()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

@Suite struct ProgressTests {
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
