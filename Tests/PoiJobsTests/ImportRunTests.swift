import Foundation
import PoiStore
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiJobs

/// An `ImportJob` is only its configuration; each `run` keeps its own state (`ImportRun`). Once
/// the summary, the keys seen and the image caches lived on the job, so a second run of the same
/// job added to the first run's numbers and took every key as a repeat of the first run's.
@Suite(.tags(.live)) struct ImportRunTests {
    /// The twelve places of `ImportJobTests.fixture()` (six photos, each shown by two places),
    /// in windows of four, run twice by one job: the first run stores everything, the second
    /// finds every place unchanged and every photo stored — and each summary says only its own run.
    @Test(.liveServer)
    func runningOneImportJobTwiceGivesTwoHonestSummaries() throws {
        let dir = try ImportJobTests.fixture()
        defer { try? FileManager.default.removeItem(at: dir) }
        var connectionOptions = ConnectionOptions()
        connectionOptions.serverSelectionTimeoutMS = 5_000
        let connection = try MongoConnection(uri: try #require(LiveDatabase.uri), options: connectionOptions)
        let database = MongoDatabase(connection: connection, name: "poikit_test_rerun_\(ObjectId().hex.suffix(10))")
        defer { _ = try? database.drop() }
        let uploads = try DiskUploads(database: database, directory: dir.appendingPathComponent("uploads").path)
        var options = ImportOptions()
        options.jobs = 2
        options.batchSize = 4  // three windows, two of them at the server at once
        let progress = Mutex<[JobProgress]>([])
        let job = ImportJob(options: options, places: LocationsRepository(database: database),
                            images: FilesRepository(store: uploads, retryingOn: connection)) { event in
            if case .progress(let p) = event, p.isFinal { progress.withLock { $0.append(p) } }
        }
        let csv = dir.appendingPathComponent("places.csv").path

        let first = try job.run(files: [csv])
        #expect(Self.counts(first) == Counts(files: 1, rowsRead: 12, inserted: 12, updated: 0, unchanged: 0, rejected: 0, duplicates: 0,
                                             imagesStored: 6, imagesReused: 6, imagesMissing: 0, imagesFailed: 0, thumbnailsMade: 6))
        #expect(first.rejectsFiles.isEmpty)

        let secondStarted = Date()
        let second = try job.run(files: [csv])
        let secondTook = Date().timeIntervalSince(secondStarted)
        #expect(Self.counts(second) == Counts(files: 1, rowsRead: 12, inserted: 0, updated: 0, unchanged: 12, rejected: 0, duplicates: 0,
                                              imagesStored: 0, imagesReused: 12, imagesMissing: 0, imagesFailed: 0, thumbnailsMade: 0))
        #expect(second.rejectsFiles.isEmpty)
        // Its duration is its own, not counted from the first run's start.
        #expect(second.seconds <= secondTook)

        // Each run ends with one final report of its own twelve records.
        #expect(progress.withLock { $0.map(\.items) } == [12, 12])
        #expect(progress.withLock { $0.map(\.fraction) } == [1, 1])
        #expect(try database.locations.count() == 12)
    }

    /// The same without a server (in-memory repositories): the run's state is the run's.
    @Test func runningOneImportJobTwiceInMemoryGivesTwoHonestSummaries() throws {
        let dir = try ImportJobTests.fixture()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = ImportOptions()
        options.jobs = 2
        options.batchSize = 4
        let job = ImportJob(options: options, places: InMemoryPlaces(), images: InMemoryImages())
        let csv = dir.appendingPathComponent("places.csv").path
        let first = try job.run(files: [csv])
        let second = try job.run(files: [csv])
        #expect(Self.counts(first) == Counts(files: 1, rowsRead: 12, inserted: 12, updated: 0, unchanged: 0, rejected: 0, duplicates: 0,
                                             imagesStored: 6, imagesReused: 6, imagesMissing: 0, imagesFailed: 0, thumbnailsMade: 6))
        #expect(Self.counts(second) == Counts(files: 1, rowsRead: 12, inserted: 0, updated: 0, unchanged: 12, rejected: 0, duplicates: 0,
                                              imagesStored: 0, imagesReused: 12, imagesMissing: 0, imagesFailed: 0, thumbnailsMade: 0))
    }

    /// The numbers of a summary that say what a run did (its duration and paths aside).
    struct Counts: Equatable, CustomStringConvertible {
        var files, rowsRead, inserted, updated, unchanged, rejected, duplicates: Int
        var imagesStored, imagesReused, imagesMissing, imagesFailed, thumbnailsMade: Int
        var description: String {
            "files \(files), read \(rowsRead), inserted \(inserted), updated \(updated), unchanged \(unchanged), "
                + "rejected \(rejected), duplicates \(duplicates), images stored \(imagesStored), reused \(imagesReused), "
                + "missing \(imagesMissing), failed \(imagesFailed), thumbnails \(thumbnailsMade)"
        }
    }

    static func counts(_ s: ImportSummary) -> Counts {
        Counts(files: s.files, rowsRead: s.rowsRead, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged,
               rejected: s.rejected, duplicates: s.duplicates, imagesStored: s.imagesStored, imagesReused: s.imagesReused,
               imagesMissing: s.imagesMissing, imagesFailed: s.imagesFailed, thumbnailsMade: s.thumbnailsMade)
    }
}
