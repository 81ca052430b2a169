import Foundation
import PoiFiles
import PoiFormats
import PoiImaging
import PoiModel
import PoiStore
import Synchronization

/// Gives a window's places their stored images: resolves each place's image reference to a
/// file, reads and hashes each distinct file once, stores each new content (original, then
/// thumbnail) once, and says for each place which stored image it shows, or why it has none.
///
/// Files are worked on by `jobs` threads, and each one's bytes are dropped as soon as they are
/// hashed: memory holds `jobs` images at a time, never a window's worth. What was learnt is kept
/// in the run's `ImageLinkCache` for the next windows.
struct ImageAttacher {
    /// For each place (by its index in the window) the stored image it shows, and for each
    /// place whose image failed the reason (a place may have both: an export's image id the
    /// store lacks, beside an image file that was stored).
    struct Attached {
        var links: [Int: PlaceDocument.ImageLinks] = [:]
        var failures: [Int: String] = [:]
    }

    private let ingest: ImageIngest
    private let images: any ImageRepository
    /// Where a new thumbnail recipe is applied to places already stored; nil in a dry run.
    private let places: (any PlaceRepository)?
    private let jobs: Int
    private let observer: JobObserver
    private var cache: ImageLinkCache

    init(options: ImportOptions, images: any ImageRepository, places: (any PlaceRepository)?, observer: @escaping JobObserver) {
        // One budget for the run's workers: their decodes together stay within `--memory`.
        ingest = ImageIngest(repository: images, budget: ThumbnailBudget(bytes: options.memoryBytes), spec: options.thumbnail,
                             specIsExplicit: options.thumbnailIsExplicit, decode: options.decode,
                             maxFileBytes: options.maxImageFileBytes)
        self.images = images
        self.places = places
        jobs = options.jobs
        self.observer = observer
        cache = ImageLinkCache(limit: options.imageCacheLimit)
    }

    /// An original deleted while this run linked places to it is not linked again.
    mutating func forget(imageId: ObjectId) { cache.forget(imageId: imageId) }

    /// Resolves, hashes and stores each distinct image of the window once. Counts what it stored,
    /// reused or found missing in `summary`; a failed image is only returned, for the caller to
    /// count, report or reject.
    mutating func attach(to window: [Place], resolver: Result<ImagePathResolver, ImageReferenceError>,
                         summary: inout ImportSummary) throws(JobError) -> Attached {
        cache.trimIfFull()
        var attached = Attached()
        // 1. References → real paths (or the reason they are refused).
        var pathOf: [Int: String] = [:]
        // The name a photo is stored under: the file's own, unless the place comes from an
        // export with images, whose copies are named by id and which names the photo beside it.
        var storedNameOf: [String: String] = [:]
        for (i, place) in window.enumerated() {
            guard let reference = place.image, !reference.isEmpty else { continue }
            do {
                let path = try resolver.get().resolve(reference)
                pathOf[i] = path
                if case .string(let name)? = place.poiKitProperties[PoiKitProperties.imageOriginalName], !name.isEmpty,
                   storedNameOf[path] == nil {
                    storedNameOf[path] = name
                }
            } catch {
                attached.failures[i] = error.description
            }
        }
        try checkExportedImageIds(of: window, failures: &attached.failures)
        // 2. Hash each distinct path not known yet.
        let unseen = Array(Set(pathOf.values).filter { cache.needsHashing(path: $0) }).sorted()
        let hashes = WorkerPool.map(count: unseen.count, jobs: jobs) { [ingest] k in
            ingest.read(path: unseen[k]).map(ContentDigest.sha256Hex)
        }
        var readErrors: [String: String] = [:]
        var pathBySHA: [String: String] = [:]  // one path per content not stored yet
        for (k, hash) in hashes.enumerated() {
            switch hash {
            case .success(let sha):
                cache.remember(sha: sha, ofPath: unseen[k])
                if !cache.isSettled(sha: sha) && pathBySHA[sha] == nil { pathBySHA[sha] = unseen[k] }
            case .failure(let error):
                readErrors[unseen[k]] = error.reason
            }
        }
        // 3. Store each new content.
        let fresh = try store(pathBySHA, storedNameOf: storedNameOf, summary: &summary)
        // 4. Each place's link, or why it has none.
        var firstUse: Set<String> = []
        for (i, path) in pathOf.sorted(by: { $0.key < $1.key }) {
            if let error = readErrors[path] { attached.failures[i] = error; continue }
            guard let sha = cache.sha(ofPath: path) else { attached.failures[i] = "unreadable"; continue }
            if let reason = cache.failure(of: sha) { attached.failures[i] = reason; continue }
            guard let links = cache.links(of: sha) else { attached.failures[i] = "image could not be stored"; continue }
            attached.links[i] = links
            // The first place to use a freshly stored image did not reuse it; every other did,
            // unless the bytes it would reuse are not in this store.
            if let missing = cache.missingBytes(of: sha) {
                summary.imagesMissing += 1
                let place = window[i]
                observer(.imageProblem(ImageProblem(source: place.source, location: place.source.description, image: place.image ?? "",
                                                    reason: "stored earlier as \(missing), but its bytes are missing from the file store")))
            } else if fresh.contains(sha) && !firstUse.contains(sha) { firstUse.insert(sha) } else { summary.imagesReused += 1 }
        }
        return attached
    }

    /// An export's feature that names its database's image by id, without the image (exported
    /// without image files, or its photo could not be copied): where this store holds that image
    /// the stored link stays; anywhere else the photo is missing, which the place and the summary
    /// say, as for any other image that fails. One query per window, for the ids not asked yet.
    private mutating func checkExportedImageIds(of window: [Place], failures: inout [Int: String]) throws(JobError) {
        var exported: [Int: ObjectId] = [:]
        for (i, place) in window.enumerated() {
            if let hex = PlaceDocument.exportedImageId(place), let id = ObjectId(hex: hex) { exported[i] = id }
        }
        guard !exported.isEmpty else { return }
        let unknown = cache.unknown(exported.values)
        if !unknown.isEmpty {
            let stored: Set<ObjectId>
            do { stored = try images.storedIds(unknown) } catch { throw .store(error) }
            cache.remember(stored: stored, of: unknown)
        }
        for (i, id) in exported where cache.isHeld(id) == false {
            failures[i] = "the export names image \(id.hex) without a copy of it, and this database has no such image"
        }
    }

    /// Stores each new content (`pathBySHA`: one file for each) with its thumbnail, under the
    /// name `storedNameOf` gives its file or else the file's own, on `jobs` threads, and returns
    /// the contents this run stored first. The file is read again — from
    /// the page cache — and checked against its hash, so a file changed in between is never
    /// stored under another file's hash.
    private mutating func store(_ pathBySHA: [String: String], storedNameOf: [String: String],
                                summary: inout ImportSummary) throws(JobError) -> Set<String> {
        let work = pathBySHA.keys.sorted().map { sha in
            let path = pathBySHA[sha]!
            return (sha: sha, path: path, name: storedNameOf[path] ?? FilePaths.lastComponent(of: path))
        }
        // The first store failure ends the window: the job stops on it anyway, and each further
        // image would wait out the server timeout again (a dead server took 15 s, not 3, to report).
        let storeFailed = Mutex<StoreError?>(nil)
        let outcomes = WorkerPool.map(count: work.count, jobs: jobs) { [ingest] k -> IngestOutcome in
            if let failure = storeFailed.withLock({ $0 }) { return .storeFailure(failure) }
            let outcome = Self.ingestOne(work[k], ingest: ingest)
            if case .storeFailure(let error) = outcome { storeFailed.withLock { if $0 == nil { $0 = error } } }
            return outcome
        }
        if let failure = storeFailed.withLock({ $0 }) { throw .store(failure) }
        var fresh: Set<String> = []
        for (k, outcome) in outcomes.enumerated() {
            switch outcome {
            case .stored(let links, let newOriginal, let newThumbnail, let missingBytes, let colorWarning):
                cache.remember(links: links, missingBytes: missingBytes, of: work[k].sha)
                if let colorWarning {
                    summary.imagesColorUnmanaged += 1
                    observer(.imageProblem(ImageProblem(source: nil, location: work[k].path, image: FilePaths.lastComponent(of: work[k].path),
                                                        reason: colorWarning + " (thumbnail made as if untagged)")))
                }
                if newOriginal { summary.imagesStored += 1; fresh.insert(work[k].sha) }
                if newThumbnail { summary.thumbnailsMade += 1 }
                // A new recipe for a stored image: places that show it, in this input or not,
                // switch to the new thumbnail now (an unchanged place is not rewritten later).
                if newThumbnail && !newOriginal, let places, let thumb = links.thumbnailId {
                    do { try places.relinkThumbnail(imageId: links.imageId, thumbnailId: thumb) } catch { throw .store(error) }
                }
            case .failed(let reason):
                cache.remember(failure: reason, of: work[k].sha)
            case .storeFailure(let error):
                throw .store(error)
            }
        }
        return fresh
    }

    /// Reads one new content again, checks it is still the hashed one, and stores it with its
    /// thumbnail.
    private static func ingestOne(_ item: (sha: String, path: String, name: String), ingest: ImageIngest) -> IngestOutcome {
        switch ingest.read(path: item.path) {
        case .failure(let error): return .failed(reason: error.reason)
        case .success(let bytes):
            guard ContentDigest.sha256Hex(bytes) == item.sha else {
                return .failed(reason: "the file changed while it was being imported")
            }
            return ingest.ingest(bytes: bytes, sha256: item.sha, name: item.name)
        }
    }
}
