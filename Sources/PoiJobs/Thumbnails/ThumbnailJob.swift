import Foundation
import PoiImaging
import PoiStore

public struct ThumbnailJobOptions: Sendable {
    public var spec = try! ThumbnailSpec()
    public var decode = DecodeOptions()
    /// Regenerate every thumbnail, not only missing or outdated ones.
    public var all = false
    public var jobs = 1
    /// Bytes the image work may reserve at once (`ThumbnailBudget`); nil: 100 MB + 60 MB per job.
    public var memory: Int?
    public var memoryBytes: Int { memory ?? ThumbnailBudget.defaultBytes(jobs: jobs) }
    public var shard = Shard.all
    /// Only the images of places matching this filter; nil: every stored original.
    public var placeFilter: PlaceFilter?
    /// Originals per window of parallel work (bounds memory).
    public var window = 32

    public init() {}
}

/// More than ten stored properties: each is one number of the `--json` summary that scripts read by name.
public struct ThumbnailSummary: Sendable, Codable, Equatable {
    public var originals = 0
    public var thumbnailsMade = 0
    public var upToDate = 0
    /// Originals that could not be thumbnailed (corrupt, missing or damaged bytes); reported, skipped.
    public var failed = 0
    /// Of `failed`, originals whose bytes are not in the file store at all (another uploads
    /// folder, or GridFS read as a folder?).
    public var bytesMissing = 0
    /// Thumbnails made as if untagged: the original's ICC profile could not be used (damaged,
    /// truncated, over the cap). Said per original, as `poi import` and `poi thumb` say it.
    public var colorUnmanaged = 0
    public var placesRelinked = 0
    /// Places that linked to a thumbnail that was gone (a run that overlapped an import or
    /// another thumbnail run, an older PoiKit), pointed at their image's newest thumbnail.
    public var brokenLinksRepaired = 0
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
    private let budget: ThumbnailBudget

    public init(database: MongoDatabase, store: any FileStore, options: ThumbnailJobOptions,
                observer: @escaping JobObserver = { _ in }) {
        self.database = database
        self.store = store
        self.options = options
        budget = ThumbnailBudget(bytes: options.memoryBytes)
        self.observer = observer
    }

    private enum Work: Sendable {
        case upToDate
        case made(original: ObjectId, thumbnail: ObjectId, name: String, colorWarning: String?)
        /// Up to date, but an interrupted run left the relink and the deletion of older ones undone.
        case resumed(original: ObjectId, thumbnail: ObjectId)
        case failed(original: ObjectId, name: String, error: any Error & Sendable)
        case storeFailure(StoreError)
    }

    public func run() throws(JobError) -> ThumbnailSummary {
        let started = Date()
        // One `updated_at` for every place this run relinks, as an import stamps its places.
        let runStarted = BSONDate.now()
        var summary = ThumbnailSummary()
        let source: OriginalSource
        do { source = try OriginalSource(database: database, store: store, filter: options.placeFilter) } catch {
            throw .store(error)
        }
        let progress = ProgressCounter(total: source.total, started: started, observer: observer)
        var window: [StoredFile] = []
        do throws(StoreError) {
            summary.brokenLinksRepaired = try repairBrokenThumbnailLinks(updatedAt: runStarted)
        } catch {
            throw .store(error)
        }

        func process() throws(JobError) {
            let items = window
            window.removeAll(keepingCapacity: true)
            let (opts, fileStore, budget) = (options, store, budget)
            let results = WorkerPool.map(count: items.count, jobs: options.jobs) { i in
                Self.work(on: items[i], options: opts, store: fileStore, budget: budget)
            }
            // Every thumbnail the window made is linked before a store failure of another one is
            // thrown: stopping at the first would leave the later ones stored and unreferenced.
            var storeFailure: StoreError?
            for result in results {
                switch result {
                case .upToDate: summary.upToDate += 1
                case .failed(let original, let name, let error):
                    summary.failed += 1
                    if case .bytesMissing? = error as? StoreError { summary.bytesMissing += 1 }
                    observer(.imageProblem(ImageProblem(source: nil, location: "original \(original.hex)", image: name,
                                                        reason: String(describing: error))))
                case .storeFailure(let error): storeFailure = storeFailure ?? error
                case .made(let original, let thumbnail, _, _), .resumed(let original, let thumbnail):
                    if case .made(_, _, let name, let warning) = result {
                        summary.thumbnailsMade += 1
                        if let warning {
                            summary.colorUnmanaged += 1
                            observer(.imageProblem(ImageProblem(source: nil, location: "original \(original.hex)", image: name,
                                                                reason: warning + " (thumbnail made as if untagged)")))
                        }
                    } else {
                        summary.upToDate += 1
                    }
                    do throws(StoreError) {
                        // Retried within --retry-for: a relink to a fixed value and deletes of
                        // fixed ids, each as good done twice as once.
                        var retries = 0
                        try database.connection.retrying(retries: &retries) { () throws(StoreError) in
                            summary.placesRelinked += try database.setThumbnail(thumbnail, forImage: original, updatedAt: runStarted)
                            // Read now, not from the list this run started with: a run that
                            // overlaps this one may have stored a thumbnail since.
                            summary.oldThumbnailsDeleted += try database.deleteUnusedThumbnails(of: original, in: store)
                        }
                    } catch {
                        throw .store(error)
                    }
                }
            }
            if let storeFailure { throw .store(storeFailure) }
            progress.update(items: summary.originals, images: summary.thumbnailsMade)
        }

        while true {
            let next: StoredFile?
            do { next = try source.next() } catch { throw .store(error) }
            guard let original = next else { break }
            guard options.shard.contains(key: original.id.hex) else { summary.skippedByShard += 1; continue }
            summary.originals += 1
            window.append(original)
            if window.count >= max(options.window, options.jobs * 2) { try process() }
        }
        if !window.isEmpty { try process() }
        summary.seconds = Date().timeIntervalSince(started)
        progress.finish(items: summary.originals, images: summary.thumbnailsMade, seconds: summary.seconds)
        return summary
    }

    /// Places whose `thumbnailId` names a file that is gone are pointed at their image's newest
    /// thumbnail, or lose the link when it has none (the originals pass below then makes one and
    /// links them). First, so that pass sees the repaired links. Retried within --retry-for: a
    /// link replaced by a fixed value, twice as good as once.
    private func repairBrokenThumbnailLinks(updatedAt: BSONDate) throws(StoreError) -> Int {
        var retries = 0
        let links = try database.connection.retrying(retries: &retries) { () throws(StoreError) in try database.thumbnailLinks() }
        var repaired = 0
        let ids = links.keys.sorted()
        var start = 0
        while start < ids.count {
            let batch = Array(ids[start..<min(start + 1000, ids.count)])
            start += batch.count
            let present = try database.connection.retrying(retries: &retries) { () throws(StoreError) in try store.existingFileIds(batch) }
            for gone in batch where !present.contains(gone) {
                guard let image = links[gone] else { continue }
                repaired += try database.connection.retrying(retries: &retries) { () throws(StoreError) -> Int in
                    let newest = try store.thumbnails(of: image).map(\.id).max()
                    return try database.replaceThumbnailLink(gone, with: newest, updatedAt: updatedAt)
                }
            }
        }
        return repaired
    }

    /// Runs on a worker thread: decide, decode, encode, store the new thumbnail.
    private static func work(on original: StoredFile, options: ThumbnailJobOptions, store: any FileStore,
                             budget: ThumbnailBudget) -> Work {
        let canonical = options.spec.canonical
        let name = original.originalName ?? original.fileName
        do throws(StoreError) {
            let existing = try store.thumbnails(of: original.id)
            // Up to date: made with this recipe, and its bytes are there with their length (a
            // thumbnail whose bytes are gone or cut short is made again).
            if !options.all, let current = existing.last(where: { options.spec.isMet(by: $0) }), try store.hasBytes(current) {
                // Other thumbnails beside an up-to-date one mean a run stopped between storing it
                // and relinking the places / deleting the old ones: finish that now, or the places
                // would keep showing the old recipe and the old files would never be deleted.
                let others = existing.filter { $0.id != current.id }.map(\.id)
                return others.isEmpty ? .upToDate : .resumed(original: original.id, thumbnail: current.id)
            }
            let bytes: [UInt8]
            do {
                bytes = try store.bytes(of: original)
            } catch {
                switch error {
                case .io, .bytesMissing, .bytesDamaged: return .failed(original: original.id, name: name, error: error)
                default: throw error
                }
            }
            let thumbnail: Thumbnail
            do { thumbnail = try budget.make(from: bytes, spec: options.spec, options: options.decode) } catch {
                return .failed(original: original.id, name: name, error: error)
            }
            // Retried within --retry-for; a retry first looks for the thumbnail a lost reply stored.
            var retries = 0, first = true
            let stored = try store.database.connection.retrying(retries: &retries) { () throws(StoreError) -> StoredFile in
                if !first, let made = try store.thumbnails(of: original.id).last(where: { $0.spec == canonical }),
                   !(existing.map(\.id).contains(made.id)) { return made }
                first = false
                // Greater than every thumbnail it replaces, whichever process made them this
                // second: the relink and the delete below go by that order.
                return try store.add(thumbnail.data, info: FileInfo(thumbnail: thumbnail, of: original.id, spec: canonical),
                                     id: ObjectId.greater(than: existing.map(\.id)))
            }
            return .made(original: original.id, thumbnail: stored.id, name: name,
                         colorWarning: thumbnail.source.colorWarning)
        } catch {
            return .storeFailure(error)
        }
    }
}

extension ThumbnailSpec {
    /// Whether a stored thumbnail was made with this recipe: its `spec` is this canonical text,
    /// or it is a PNG made with another `--quality` only (PNG ignores the quality, so remaking
    /// it would give the same pixels).
    func isMet(by thumbnail: StoredFile) -> Bool { isMet(bySpec: thumbnail.spec, contentType: thumbnail.contentType) }

    /// The same for a stored `spec` and content type (nil when unknown: then only a spec whose
    /// format is `png` says the output is PNG).
    func isMet(bySpec stored: String?, contentType: String?) -> Bool {
        guard let stored else { return false }
        if stored == canonical { return true }
        guard var parsed = try? ThumbnailSpec(parsing: stored), parsed.format == .png || contentType == "image/png" else {
            return false
        }
        parsed.quality = quality
        return parsed.canonical == canonical
    }
}

extension FileInfo {
    /// The `files` fields of a thumbnail of `original` made with the recipe `spec` (its
    /// canonical text: how an outdated thumbnail is recognised).
    init(thumbnail: Thumbnail, of original: ObjectId, spec: String) {
        self.init(contentType: thumbnail.contentType, role: .thumbnail, width: thumbnail.width,
                  height: thumbnail.height, thumbnailOf: original, spec: spec)
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
