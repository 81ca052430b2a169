import Foundation
import PoiImaging
import PoiStore
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiJobs

/// `locations` as ImportJob sees it, in memory: upserts by `importKey` with the outcomes the
/// store gives (inserted / updated / unchanged by the tracked fields, untracked `thumbnailId`
/// written but never a change), relinks, and refusals or failures on demand. It stands in for
/// `LocationsRepository` to test ImportJob's own logic; the store itself is tested live.
final class InMemoryPlaces: PlaceRepository {
    struct StoredPlace: Sendable, Equatable {
        var fields: BSONDocument
        var unset: [String]
        var thumbnailId: String?
        var imageId: String? { fields["imageId"]?.stringValue }
    }

    struct State: Sendable {
        var places: [String: StoredPlace] = [:]
        var relinks: [(imageId: ObjectId, thumbnailId: ObjectId)] = []
        var batches = 0
        /// `prepare()` calls, and the batches written before the first of them.
        var prepared = 0
        var batchesBeforePrepare = 0
    }

    let state = Mutex(State())
    /// Keys the "server" refuses, with its code and message.
    let refused: [String: (code: Int, message: String)]
    /// Thrown by every upsert: the whole batch failed.
    let failure: StoreError?

    init(refused: [String: (code: Int, message: String)] = [:], failure: StoreError? = nil) {
        self.refused = refused
        self.failure = failure
    }

    /// A place another input stored earlier.
    func seed(key: String, imageId: ObjectId, thumbnailId: ObjectId?) {
        state.withLock {
            $0.places[key] = StoredPlace(fields: ["importKey": .string(key), "imageId": .string(imageId.hex)], unset: [],
                                         thumbnailId: thumbnailId?.hex)
        }
    }

    func prepare() throws(StoreError) {
        if let failure { throw failure }
        state.withLock {
            if $0.prepared == 0 { $0.batchesBeforePrepare = $0.batches }
            $0.prepared += 1
        }
    }

    func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome] {
        if let failure { throw failure }
        return state.withLock { state in
            state.batches += 1
            return items.map { item -> UpsertOutcome in
                let key = item.key.stringValue ?? ""
                if let refusal = refused[key] { return .failed(code: refusal.code, message: refusal.message) }
                let old = state.places[key]
                // Kept fields (`imageId` of a file without an image column) stay as stored and
                // count in the comparison as stored, as the live store's digest does.
                let tracked = item.tracked { old?.fields[$0] }
                let thumbnail = item.untracked["thumbnailId"]?.stringValue
                    ?? (item.untrackedUnset.contains("thumbnailId") ? nil : old?.thumbnailId)
                state.places[key] = StoredPlace(fields: tracked.fields, unset: tracked.unset, thumbnailId: thumbnail)
                guard let old else { return .inserted(id: .objectId(ObjectId())) }
                return old.fields == tracked.fields && old.unset == tracked.unset ? .unchanged : .updated
            }
        }
    }

    func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError) {
        state.withLock { state in
            state.relinks.append((imageId, thumbnailId))
            for (key, place) in state.places where place.imageId == imageId.hex { state.places[key]?.thumbnailId = thumbnailId.hex }
        }
    }

    var places: [String: StoredPlace] { state.withLock { $0.places } }
    var relinks: [(imageId: ObjectId, thumbnailId: ObjectId)] { state.withLock { $0.relinks } }
}

/// The byte store + `files` as ImportJob sees it, in memory: originals by SHA-256 with their
/// thumbnails (oldest first), and a count of every call.
final class InMemoryImages: ImageRepository {
    struct Original: Sendable, Equatable {
        var id: ObjectId
        var name: String
        var thumbnails: [StoredFileRef]
        /// The file name of bytes that are not in the store (another uploads folder, say).
        var missingBytes: String? = nil
    }

    struct State: Sendable {
        var originals: [String: Original] = [:]
        var lookups = 0
        var originalsStored = 0
        var thumbnailsStored: [(of: ObjectId, spec: String)] = []
    }

    let state = Mutex(State())
    let failure: StoreError?

    init(failure: StoreError? = nil) { self.failure = failure }

    /// An original stored by an earlier run, with thumbnails made with `specs` (oldest first).
    @discardableResult
    func seed(bytes: [UInt8], name: String, specs: [String], missingBytes: String? = nil) -> Original {
        let original = Original(id: ObjectId(), name: name, thumbnails: specs.map { StoredFileRef(id: ObjectId(), spec: $0) },
                                missingBytes: missingBytes)
        state.withLock { $0.originals[ContentDigest.sha256Hex(bytes)] = original }
        return original
    }

    func findOriginal(sha256: String) throws(StoreError) -> StoredImage? {
        if let failure { throw failure }
        return state.withLock { state in
            state.lookups += 1
            return state.originals[sha256].map { StoredImage(id: $0.id, thumbnails: $0.thumbnails, missingBytes: $0.missingBytes) }
        }
    }

    func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws(StoreError) -> StoredOriginal {
        state.withLock { state in
            state.originalsStored += 1
            let id = ObjectId()
            state.originals[sha256] = Original(id: id, name: originalName, thumbnails: [])
            return StoredOriginal(id: id)
        }
    }

    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws(StoreError) -> ObjectId {
        state.withLock { state in
            let id = ObjectId()
            state.thumbnailsStored.append((original, spec))
            for (sha, stored) in state.originals where stored.id == original {
                state.originals[sha]?.thumbnails.append(StoredFileRef(id: id, spec: spec))
            }
            return id
        }
    }

    func storedIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId> {
        if let failure { throw failure }
        return state.withLock { state in
            let stored = Set(state.originals.values.flatMap { [$0.id] + $0.thumbnails.map(\.id) })
            return Set(ids.filter(stored.contains))
        }
    }

    func original(named name: String) -> Original? { state.withLock { $0.originals.values.first { $0.name == name } } }
    var snapshot: State { state.withLock { $0 } }
}

/// ImportJob's own decisions — reuse, relink, `requireImages`, server refusals, store failures —
/// against the in-memory repositories, with exact numbers.
@Suite(.tags(.unit)) struct ImportJobRepositoryTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/images")

    /// A folder with `coffee.jpg` and `coins.png` and `places.csv` holding `rows`.
    struct Fixture {
        let dir: URL
        var csv: String { dir.appendingPathComponent("places.csv").path }
        var rejects: String { dir.appendingPathComponent("rejects.csv").path }

        init(rows: [String]) throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-importrepo-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            do {
                for name in ["coffee.jpg", "coins.png"] {
                    try FileManager.default.copyItem(at: samples.appendingPathComponent(name), to: dir.appendingPathComponent(name))
                }
                try (["id,name,lat,lon,image"] + rows).joined(separator: "\n").appending("\n")
                    .write(to: dir.appendingPathComponent("places.csv"), atomically: true, encoding: .utf8)
            } catch {
                try? FileManager.default.removeItem(at: dir)  // no fixture, so no remove() to do it
                throw error
            }
        }

        func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: dir.appendingPathComponent(name))) }
        func remove() { try? FileManager.default.removeItem(at: dir) }

        func options(_ change: (inout ImportOptions) -> Void = { _ in }) -> ImportOptions {
            var options = ImportOptions()
            options.rejectsPath = rejects
            options.jobs = 2
            change(&options)
            return options
        }

        /// The rejects file's lines (CSV rows end in CRLF or LF, whichever the writer keeps).
        func rejectsLines() throws -> [String] {
            try String(contentsOfFile: rejects, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
        }
    }

    static let defaultSpec = (try! ThumbnailSpec()).canonical

    /// The unique importKey index is what makes reruns safe: the job makes sure of it before its
    /// first write, so a library caller gets the guarantee without knowing about indexes.
    @Test func theJobPreparesItsRepositoryBeforeTheFirstWrite() throws {
        let fx = try Fixture(rows: ["a,A,1,2,", "b,B,1,3,"])
        defer { fx.remove() }
        let places = InMemoryPlaces()
        _ = try ImportJob(options: fx.options(), places: places, images: InMemoryImages()).run(files: [fx.csv])
        let state = places.state.withLock { $0 }
        #expect(state.prepared == 1)
        #expect(state.batchesBeforePrepare == 0)
        #expect(state.batches >= 1)
    }

    @Test func newImagesAreStoredOnceAndReusedByLaterRows() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coffee.jpg", "b,B,1,3,coffee.jpg", "c,C,1,4,coins.png", "d,D,1,5,"])
        defer { fx.remove() }
        let places = InMemoryPlaces(), images = InMemoryImages()
        let summary = try ImportJob(options: fx.options(), places: places, images: images).run(files: [fx.csv])
        #expect(summary.rowsRead == 4)
        #expect(summary.inserted == 4)
        #expect(summary.imagesStored == 2)
        #expect(summary.imagesReused == 1)
        #expect(summary.thumbnailsMade == 2)
        #expect(summary.imagesFailed == 0)
        #expect(summary.rejected == 0)
        let snapshot = images.snapshot
        #expect(snapshot.lookups == 2)  // one per distinct content
        #expect(snapshot.originalsStored == 2)
        #expect(snapshot.thumbnailsStored.map(\.spec) == [Self.defaultSpec, Self.defaultSpec])
        let coffee = try #require(images.original(named: "coffee.jpg"))
        let stored = places.places
        #expect(stored["a"]?.imageId == coffee.id.hex)
        #expect(stored["b"]?.imageId == coffee.id.hex)
        #expect(stored["a"]?.thumbnailId == coffee.thumbnails.first?.id.hex)
        #expect(stored["d"]?.imageId == nil)
        #expect(stored["d"]?.unset == ["imageSource", "imageError", "imageId"])  // thumbnailId goes with it, untracked
        #expect(places.relinks.isEmpty)

        // A rerun reads every image again but stores nothing and changes no place.
        let rerun = try ImportJob(options: fx.options(), places: places, images: images).run(files: [fx.csv])
        #expect(rerun.unchanged == 4)
        #expect(rerun.imagesStored == 0)
        #expect(rerun.imagesReused == 3)
        #expect(rerun.thumbnailsMade == 0)
        #expect(images.snapshot.originalsStored == 2)
    }

    /// Without an explicit recipe the stored image's newest thumbnail is kept, whatever its spec
    /// (what `poi thumbnails` made last), and nothing is relinked.
    @Test func storedImageIsReusedWithItsNewestThumbnail() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coffee.jpg", "b,B,1,3,coffee.jpg"])
        defer { fx.remove() }
        let images = InMemoryImages()
        let seeded = images.seed(bytes: try fx.bytes("coffee.jpg"), name: "coffee.jpg",
                                 specs: ["64x64 inside jpeg q85", "128x128 cover jpeg q85"])
        let places = InMemoryPlaces()
        let summary = try ImportJob(options: fx.options(), places: places, images: images).run(files: [fx.csv])
        #expect(summary.inserted == 2)
        #expect(summary.imagesStored == 0)
        #expect(summary.imagesReused == 2)
        #expect(summary.thumbnailsMade == 0)
        #expect(images.snapshot.originalsStored == 0)
        #expect(images.snapshot.thumbnailsStored.isEmpty)
        #expect(places.places["a"]?.imageId == seeded.id.hex)
        #expect(places.places["a"]?.thumbnailId == seeded.thumbnails[1].id.hex)
        #expect(places.places["b"]?.thumbnailId == seeded.thumbnails[1].id.hex)
        #expect(places.relinks.isEmpty)
    }

    /// An explicit recipe for an image stored earlier makes one thumbnail with that recipe and
    /// relinks every place of the image, including places this input does not mention.
    @Test func explicitRecipeRelinksEveryPlaceOfAStoredImage() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coffee.jpg", "b,B,1,3,coffee.jpg"])
        defer { fx.remove() }
        let images = InMemoryImages()
        let seeded = images.seed(bytes: try fx.bytes("coffee.jpg"), name: "coffee.jpg", specs: [Self.defaultSpec])
        let places = InMemoryPlaces()
        places.seed(key: "elsewhere", imageId: seeded.id, thumbnailId: seeded.thumbnails[0].id)
        let spec = try ThumbnailSpec(width: 64, height: 64, fit: .cover, format: .png)
        let summary = try ImportJob(options: fx.options { $0.thumbnail = spec; $0.thumbnailIsExplicit = true },
                                    places: places, images: images).run(files: [fx.csv])
        #expect(summary.inserted == 2)
        #expect(summary.imagesStored == 0)
        #expect(summary.imagesReused == 2)
        #expect(summary.thumbnailsMade == 1)
        let made = images.snapshot.thumbnailsStored
        #expect(made.count == 1)
        #expect(made.first?.of == seeded.id)
        #expect(made.first?.spec == "64x64 cover png q85")
        let newThumbnail = try #require(images.original(named: "coffee.jpg")?.thumbnails.last?.id)
        #expect(places.relinks.count == 1)
        #expect(places.relinks.first?.imageId == seeded.id)
        #expect(places.relinks.first?.thumbnailId == newThumbnail)
        for key in ["a", "b", "elsewhere"] { #expect(places.places[key]?.thumbnailId == newThumbnail.hex) }

        // The same recipe again: the thumbnail it made is found, nothing is made or relinked.
        let again = try ImportJob(options: fx.options { $0.thumbnail = spec; $0.thumbnailIsExplicit = true },
                                  places: places, images: images).run(files: [fx.csv])
        #expect(again.thumbnailsMade == 0)
        #expect(again.unchanged == 2)
        #expect(places.relinks.count == 1)
    }

    /// PNG ignores the quality: an explicit recipe that differs from a stored PNG thumbnail's
    /// only by quality finds it, makes nothing and relinks nothing.
    @Test func explicitRecipeDifferingOnlyByQualityKeepsAPNGThumbnail() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coins.png"])
        defer { fx.remove() }
        let images = InMemoryImages()
        let seeded = images.seed(bytes: try fx.bytes("coins.png"), name: "coins.png", specs: ["64x64 cover png q85"])
        let places = InMemoryPlaces()
        let spec = try ThumbnailSpec(width: 64, height: 64, fit: .cover, format: .png, quality: 50)
        let summary = try ImportJob(options: fx.options { $0.thumbnail = spec; $0.thumbnailIsExplicit = true },
                                    places: places, images: images).run(files: [fx.csv])
        #expect(summary.thumbnailsMade == 0)
        #expect(places.relinks.isEmpty)
        #expect(places.places["a"]?.thumbnailId == seeded.thumbnails[0].id.hex)
        // JPEG does use the quality.
        let jpeg = try ThumbnailSpec(width: 64, height: 64, fit: .cover, format: .jpeg, quality: 50)
        images.seed(bytes: try fx.bytes("coins.png"), name: "coins.png", specs: ["64x64 cover jpeg q85"])
        let again = try ImportJob(options: fx.options { $0.thumbnail = jpeg; $0.thumbnailIsExplicit = true },
                                  places: places, images: images).run(files: [fx.csv])
        #expect(again.thumbnailsMade == 1)
    }

    /// An original found by content whose bytes are not in the store is linked as before but
    /// counted (and reported, once per record) as missing, never as reused.
    @Test func storedOriginalWithoutBytesIsReportedMissingNotReused() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coffee.jpg", "b,B,1,3,coffee.jpg"])
        defer { fx.remove() }
        let images = InMemoryImages()
        let seeded = images.seed(bytes: try fx.bytes("coffee.jpg"), name: "coffee.jpg", specs: [Self.defaultSpec],
                                 missingBytes: "0123456789abcdef01234567.jpeg")
        let places = InMemoryPlaces()
        let problems = Mutex<[String]>([])
        let summary = try ImportJob(options: fx.options(), places: places, images: images, observer: { event in
            if case .imageProblem(let p) = event { problems.withLock { $0.append(p.image + ": " + p.reason) } }
        }).run(files: [fx.csv])
        #expect(summary.imagesMissing == 2)
        #expect(summary.imagesReused == 0)
        #expect(summary.imagesFailed == 0)
        #expect(summary.inserted == 2)
        #expect(places.places["a"]?.imageId == seeded.id.hex)
        #expect(problems.withLock { $0 } == Array(repeating: "coffee.jpg: stored earlier as 0123456789abcdef01234567.jpeg, "
            + "but its bytes are missing from the file store", count: 2))
    }

    @Test func requireImagesRejectsRowsWhoseImageFails() throws {
        let fx = try Fixture(rows: ["a,A,1.5,2.5,coffee.jpg", "b,B,1.5,3.25,missing.jpg", "c,C,1.5,4.5,"])
        defer { fx.remove() }
        let places = InMemoryPlaces(), images = InMemoryImages()
        let summary = try ImportJob(options: fx.options { $0.requireImages = true }, places: places, images: images)
            .run(files: [fx.csv])
        #expect(summary.rowsRead == 3)
        #expect(summary.inserted == 2)
        #expect(summary.rejected == 1)
        #expect(summary.imagesFailed == 1)
        #expect(summary.imagesStored == 1)
        #expect(Set(places.places.keys) == ["a", "c"])
        #expect(try fx.rejectsLines() == ["id,name,lat,lon,image,_line,_field,_reason", "b,B,1.5,3.25,missing.jpg,3,image,no such file"])

        // Without it the place is imported without the image.
        let lenient = InMemoryPlaces()
        let imported = try ImportJob(options: fx.options(), places: lenient, images: InMemoryImages()).run(files: [fx.csv])
        #expect(imported.inserted == 3)
        #expect(imported.rejected == 0)
        #expect(imported.imagesFailed == 1)
        #expect(lenient.places["b"]?.imageId == nil)
    }

    @Test func placesTheServerRefusesAreRejectedAndTheOthersLand() throws {
        let fx = try Fixture(rows: ["a,A,1.5,2.5,coffee.jpg", "b,B,1.5,3.25,", "c,C,1.5,4.5,"])
        defer { fx.remove() }
        let places = InMemoryPlaces(refused: ["b": (ServerErrorCode.duplicateKey, "E11000 duplicate key error")])
        let summary = try ImportJob(options: fx.options(), places: places, images: InMemoryImages()).run(files: [fx.csv])
        #expect(summary.inserted == 2)
        #expect(summary.rejected == 1)
        #expect(Set(places.places.keys) == ["a", "c"])
        #expect(try fx.rejectsLines() == ["id,name,lat,lon,image,_line,_field,_reason",
                                          "b,B,1.5,3.25,,3,,refused by the server: E11000 duplicate key error (code 11000)"])
    }

    /// A failing store ends the job with the `StoreError` itself, not its text.
    @Test func storeFailuresArriveTyped() throws {
        let fx = try Fixture(rows: ["a,A,1,2,coffee.jpg"])
        defer { fx.remove() }
        let down = StoreError.network(reason: "socket closed")
        #expect(throws: JobError.self) {
            _ = try ImportJob(options: fx.options(), places: InMemoryPlaces(failure: down), images: InMemoryImages()).run(files: [fx.csv])
        }
        do {
            _ = try ImportJob(options: fx.options(), places: InMemoryPlaces(failure: down), images: InMemoryImages()).run(files: [fx.csv])
        } catch {
            guard case .store(let e) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(e == down)
        }
        do {
            _ = try ImportJob(options: fx.options(), places: InMemoryPlaces(), images: InMemoryImages(failure: down)).run(files: [fx.csv])
            Issue.record("a failing image store did not stop the job")
        } catch {
            guard case .store(let e) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(e == down)
        }
    }
}
