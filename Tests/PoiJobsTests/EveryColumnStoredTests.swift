import Foundation
import PoiFormats
import PoiModel
import PoiStore
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiJobs

/// Storage side: every column the user gave reaches the document.
@Suite(.tags(.unit)) struct EveryColumnStoredTests {
    static func place(extra: [(String, JSONValue)], line: Int = 2) -> Place {
        Place(name: "A", coordinate: Coordinate(longitude: 2, latitude: 1), importKey: "k",
              extra: JSONObject(extra.map { JSONMember($0.0, $0.1) }), source: PlaceSource(file: "f.csv", record: 1, position: .line(line)))
    }

    /// CSV columns named like what PoiKit writes itself are kept under `extra`.
    @Test func csvColumnsPoiKitAlsoWritesAreKeptUnderExtra() throws {
        let names = ["created_at", "updated_at", "imageId", "thumbnailId", "_line", "_feature", "_field", "_reason"]
        let p = Self.place(extra: names.enumerated().map { ($0.element, .string("v\($0.offset)")) })
        let extra = try #require(PlaceDocument.fields(for: p, links: nil).set["extra"]?.documentValue)
        #expect(extra.map(\.key) == names)
        #expect(extra["_reason"]?.stringValue == "v7")
    }

    /// A failed image leaves its reference and reason on the place.
    @Test func failedImageKeepsReferenceAndReason() throws {
        let fx = try ImportJobRepositoryTests.Fixture(rows: ["a,A,1.5,2.5,coffee.jpg", "b,B,1.5,3.25,missing.jpg", "c,C,1.5,4.5,"])
        defer { fx.remove() }
        let places = InMemoryPlaces()
        let summary = try ImportJob(options: fx.options(), places: places, images: InMemoryImages()).run(files: [fx.csv])
        #expect(summary.imagesFailed == 1)
        let b = try #require(places.places["b"])
        #expect(b.fields["imageSource"]?.stringValue == "missing.jpg")
        #expect(b.fields["imageError"]?.stringValue == "no such file")
        #expect(b.imageId == nil)
        let a = try #require(places.places["a"])
        #expect(a.fields["imageError"] == nil)
        #expect(a.unset.contains("imageError") && a.unset.contains("imageSource"))
    }

    /// The export side of the rule for colliding names: a stored place whose extras are named like
    /// what the export writes itself (present on this place or not) exports them as
    /// "name (extra)", and the feature reads back with the same `extra`.
    @Test func exportedExtrasReadBackUnchanged() throws {
        let extra: BSONDocument = ["created_at": "yesterday", "imageId": "abc", "_reason": "why", "name": "A2",
                                   "thumbnailId": .int32(3), "plain": "p", "_source": "survey"]
        let doc: BSONDocument = [
            "_id": .objectId(ObjectId()), "importKey": "1", "name": "A", "placename": "", "details": "",
            "location": .document(["type": "Point", "coordinates": [2.0, 1.0]]), "categories": [],
            "extra": .document(extra), "created_at": .date(BSONDate(millisecondsSinceEpoch: 0)),
            "source": .document(["file": "cols.csv", "line": .int64(2)]),
        ]
        let feature = try #require(PlaceDocument.feature(from: doc))
        #expect(feature.properties.members.suffix(7).map(\.key) == ["created_at (extra)", "imageId (extra)", "_reason (extra)",
                                                                    "name (extra)", "thumbnailId (extra)", "plain", "_source (extra)"])
        var w = GeoJSONWriter(sink: MemorySink())
        try w.write(feature)
        try w.finish()
        let reader = try PlaceReader(source: ByteSource(bytes: w.sink.bytes, name: "rt.geojson"), options: ReadOptions())
        let place = try #require(try reader.next()?.place)
        let write = PlaceDocument.fields(for: place, links: nil)
        #expect(write.set["extra"] == .document(extra))
        #expect(write.untracked["source"] == .document(["file": "cols.csv", "line": .int64(2)]))
    }

    /// An export's feature naming its database's image by id, without the image: where the store
    /// holds that image the stored link stays (same database); elsewhere the place keeps the id
    /// and the reason as imageSource/imageError and the image counts as failed.
    @Test func anExportedImageIdTheStoreDoesNotHoldIsAFailedImage() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-exported-id-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let images = InMemoryImages()
        let held = images.seed(bytes: [1, 2, 3], name: "held.jpg", specs: ["s"])
        let gone = ObjectId()
        func feature(_ key: String, _ imageId: ObjectId) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"\#(key)","importKey":"\#(key)","imageId":"\#(imageId.hex)"}}"#
        }
        let file = dir.appendingPathComponent("export.geojson").path
        try (#"{"type":"FeatureCollection","features":["# + [feature("a", held.id), feature("b", gone), feature("c", gone)].joined(separator: ",") + "]}")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let places = InMemoryPlaces()
        var options = ImportOptions()
        options.jobs = 2
        let seen = Mutex<[String]>([])
        let summary = try ImportJob(options: options, places: places, images: images, observer: { event in
            if case .imageProblem(let p) = event { seen.withLock { $0.append(p.image + ": " + p.reason) } }
        }).run(files: [file])
        let problems = seen.withLock { $0 }
        #expect(summary.imagesFailed == 2 && summary.inserted == 3)
        let reason = "the export names image \(gone.hex) without a copy of it, and this database has no such image"
        #expect(problems == [gone.hex + ": " + reason, gone.hex + ": " + reason])
        let b = try #require(places.places["b"])
        #expect(b.fields["imageSource"] == .string(gone.hex) && b.fields["imageError"] == .string(reason))
        let a = try #require(places.places["a"])
        #expect(a.fields["imageError"] == nil && a.unset.contains("imageError"))
    }
}
