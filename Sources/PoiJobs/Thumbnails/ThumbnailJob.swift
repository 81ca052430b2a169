import Foundation
import PoiImaging
import PoiStore

public struct ThumbnailJobOptions: Sendable {
    public var spec = try! ThumbnailSpec()
    public var decode = DecodeOptions()
    /// Regenerate every thumbnail, not only missing or outdated ones.
    public var all = false
    public var jobs = 1
    public var shard = Shard.all
    /// Only the images of places matching this filter; nil: every stored original.
    public var placeFilter: PlaceFilter?
    /// Originals per window of parallel work (bounds memory).
    public var window = 32

    public init() {}
}

public struct ThumbnailSummary: Sendable, Codable, Equatable {
    public var originals = 0
    public var thumbnailsMade = 0
    public var upToDate = 0
    /// Originals that could not be thumbnailed (corrupt, missing bytes); reported, skipped.
    public var failed = 0
    public var placesRelinked = 0
    public var oldThumbnailsDeleted = 0
    public var skippedByShard = 0
    public var seconds = 0.0
    public init() {}
}

/// `poi thumbnails`: makes thumbnails for stored originals with a new recipe — missing ones,
/// ones made with another spec (outdated), or all.
///
/// Order per original, so a reader never follows a broken link: the new thumbnail is stored
/// (bytes, then document) → every place showing the original is switched to it → only then are
/// the old thumbnails deleted (document, then bytes). A crash between steps leaves an extra
/// thumbnail at worst, which the next run deletes.
public final class ThumbnailJob {
    public let options: ThumbnailJobOptions
    private let database: MongoDatabase
    private let store: any FileStore
    private let observer: JobObserver
    private let gate = ThumbnailGate()

    public init(database: MongoDatabase, store: any FileStore, options: ThumbnailJobOptions,
                observer: @escaping JobObserver = { _ in }) {
        self.database = database
        self.store = store
        self.options = options
        self.observer = observer
    }

    private enum Work: Sendable {
        case upToDate
        case made(original: ObjectId, thumbnail: ObjectId, old: [ObjectId])
        /// Up to date, but an interrupted run left the relink and deletion of `old` undone.
        case resumed(original: ObjectId, thumbnail: ObjectId, old: [ObjectId])
        case failed(original: ObjectId, name: String, reason: String)
        case storeFailure(String)
    }

    public func run() throws(JobError) -> ThumbnailSummary {
        let started = Date()
        var summary = ThumbnailSummary()
        let source: OriginalSource
        do { source = try OriginalSource(database: database, store: store, filter: options.placeFilter) } catch {
            throw ExportJob.storeOrQuery(error)
        }
        var lastProgress = Date.distantPast
        var window: [StoredFile] = []

        func process() throws(JobError) {
            let items = window
            window.removeAll(keepingCapacity: true)
            let (opts, fileStore, gate) = (options, store, gate)
            let results = WorkerPool.map(count: items.count, jobs: options.jobs) { i in
                Self.work(on: items[i], options: opts, store: fileStore, gate: gate)
            }
            for result in results {
                switch result {
                case .upToDate: summary.upToDate += 1
                case .failed(let original, let name, let reason):
                    summary.failed += 1
                    observer(.imageProblem(ImageProblem(source: nil, location: "original \(original.hex)", image: name, reason: reason)))
                case .storeFailure(let message): throw JobError.store(message)
                case .made(let original, let thumbnail, let old), .resumed(let original, let thumbnail, let old):
                    if case .made = result { summary.thumbnailsMade += 1 } else { summary.upToDate += 1 }
                    do {
                        summary.placesRelinked += try database.locations.updateMany(
                            filter: ["imageId": .string(original.hex)],
                            update: ["$set": .document(["thumbnailId": .string(thumbnail.hex)])])
                        for id in old where try store.delete(id) { summary.oldThumbnailsDeleted += 1 }
                    } catch {
                        throw JobError.from(store: error)
                    }
                }
            }
            if Date().timeIntervalSince(lastProgress) >= 0.2 {
                lastProgress = Date()
                observer(.progress(JobProgress(items: summary.originals, total: source.total,
                                               images: summary.thumbnailsMade, seconds: Date().timeIntervalSince(started))))
            }
        }

        while true {
            let next: StoredFile?
            do { next = try source.next() } catch { throw JobError.from(store: error) }
            guard let original = next else { break }
            guard options.shard.contains(key: original.id.hex) else { summary.skippedByShard += 1; continue }
            summary.originals += 1
            window.append(original)
            if window.count >= max(options.window, options.jobs * 2) { try process() }
        }
        if !window.isEmpty { try process() }
        summary.seconds = Date().timeIntervalSince(started)
        observer(.progress(JobProgress(items: summary.originals, total: source.total,
                                       images: summary.thumbnailsMade, seconds: summary.seconds)))
        return summary
    }

    /// Runs on a worker thread: decide, decode, encode, store the new thumbnail.
    private static func work(on original: StoredFile, options: ThumbnailJobOptions, store: any FileStore,
                             gate: ThumbnailGate) -> Work {
        let canonical = options.spec.canonical
        let name = original.originalName ?? original.fileName
        do {
            let existing = try store.thumbnails(of: original.id)
            if !options.all, let current = existing.last(where: { $0.spec == canonical }) {
                // Other thumbnails beside an up-to-date one mean a run stopped between storing it
                // and relinking the places / deleting the old ones: finish that now, or the places
                // would keep showing the old recipe and the old files would never be deleted.
                let others = existing.filter { $0.id != current.id }.map(\.id)
                return others.isEmpty ? .upToDate : .resumed(original: original.id, thumbnail: current.id, old: others)
            }
            let bytes: [UInt8]
            do {
                guard let b = try store.get(original.id) else { return .failed(original: original.id, name: name, reason: "no files document") }
                bytes = b
            } catch {
                if case .io = error { return .failed(original: original.id, name: name, reason: error.description) }
                throw error
            }
            let thumbnail: Thumbnail
            do { thumbnail = try gate.make(from: bytes, spec: options.spec, options: options.decode) } catch {
                return .failed(original: original.id, name: name, reason: error.description)
            }
            let newId = try FilesRepository(store: store).storeThumbnail(thumbnail, of: original.id, spec: canonical)
            return .made(original: original.id, thumbnail: newId, old: existing.map(\.id))
        } catch {
            return .storeFailure(String(describing: error))  // every error here is CustomStringConvertible
        }
    }
}

/// The originals to work on: every stored original (streamed), or the distinct images of the
/// places matching a filter.
private final class OriginalSource {
    private let store: any FileStore
    private var cursor: FileCursor?
    private var ids: [ObjectId] = []
    private var position = 0
    let total: Int?

    init(database: MongoDatabase, store: any FileStore, filter: PlaceFilter?) throws(StoreError) {
        self.store = store
        if let filter {
            // Distinct image ids of the matching places (one id per image, however many places).
            var seen = Set<ObjectId>()
            let places = try database.locations.find(try filter.document(), projection: ["imageId": 1], batchSize: 1000)
            while let doc = try places.next() {
                if let hex = doc["imageId"]?.stringValue, let id = ObjectId(hex: hex) { seen.insert(id) }
            }
            ids = seen.sorted()
            total = ids.count
        } else {
            cursor = try store.files(role: .original)
            total = try ExportJob.countForProgress(database.files, ["role": "original"])
        }
    }

    func next() throws(StoreError) -> StoredFile? {
        if let cursor { return try cursor.next() }
        while position < ids.count {
            let id = ids[position]
            position += 1
            if let file = try store.file(id), file.role != .thumbnail { return file }
        }
        return nil
    }
}
