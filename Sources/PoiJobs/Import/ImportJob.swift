import Foundation
import PoiFormats
import PoiImaging
import PoiModel
import PoiStore

/// `poi import`: dumps → validated places → stored images → upserted `locations`.
///
/// Streaming: records are read one at a time and handled in windows of `batchSize` places; a
/// window's images are worked on by `jobs` threads, then its places go to the server in one bulk
/// upsert. Memory is bounded by the window, whatever the input size.
///
/// Crash safety comes from the order inside a window — image bytes, then their `files`
/// documents, then the places that point at them — and from idempotent keys: a rerun finds stored
/// images by SHA-256 and upserts places by `importKey`, so it completes the job without duplicates.
public final class ImportJob {
    public let options: ImportOptions
    private let places: (any PlaceRepository)?
    private let images: any ImageRepository
    private let observer: JobObserver
    private var summary = ImportSummary()
    private let gate = ThumbnailGate()
    private let started = Date()
    private var lastProgress = Date.distantPast

    /// Image links by content, and content by path, across windows (bounded by
    /// `options.imageCacheLimit`: cleared between windows when full; the repository lookup is the
    /// fallback).
    private var linksBySHA: [String: PlaceDocument.ImageLinks] = [:]
    private var shaByPath: [String: String] = [:]
    private var failureBySHA: [String: String] = [:]

    /// `places`/`images` nil with `options.dryRun`: nothing is written.
    public init(options: ImportOptions, places: (any PlaceRepository)?, images: (any ImageRepository)?,
                observer: @escaping JobObserver = { _ in }) {
        self.options = options
        self.places = options.dryRun ? nil : places
        self.images = options.dryRun ? DryRunImages() : (images ?? DryRunImages())
        self.observer = observer
        summary.dryRun = options.dryRun
    }

    /// For the progress fraction: input bytes of the files already done, of all files (nil when
    /// one has no size, e.g. standard input), and the reader at work.
    private var bytesDone = 0
    private var bytesTotal: Int?
    private var currentReader: PlaceReader?

    public func run(files: [String]) throws(JobError) -> ImportSummary {
        bytesTotal = files.reduce(Optional(0)) { sum, file in
            var st = stat()
            guard let sum, stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return sum + Int(st.st_size)
        }
        if files.count > 1 && options.rejectsPath != nil {
            throw .configuration("--rejects names one file, but \(files.count) inputs were given; leave it out to write NAME.rejects.* beside each input")
        }
        for file in files {
            try importFile(file)
            summary.files += 1
        }
        summary.seconds = Date().timeIntervalSince(started)
        report(force: true)
        return summary
    }

    // MARK: One file

    private struct Pending {
        var place: Place
        var links: PlaceDocument.ImageLinks?
    }

    private func importFile(_ file: String) throws(JobError) {
        let reader: PlaceReader
        do { reader = try PlaceReader(path: file, options: options.read) } catch { throw .input(error) }
        currentReader = reader
        defer {
            bytesDone += reader.totalBytes ?? reader.bytesRead
            currentReader = nil
        }
        let rejectsPath = options.rejectsPath ?? ImportOptions.defaultRejectsPath(for: file, format: reader.format)
        // A dry run writes nothing the user did not ask for: no default rejects file, and a
        // rejects file from an earlier real run is left as it is.
        let writesRejects = !options.dryRun || options.rejectsPath != nil
        let style: RejectsWriter.Style = reader.format == .csv
            ? .csv(header: reader.csvHeader ?? [], delimiter: reader.csvDelimiter ?? UInt8(ascii: ","))
            : .geojson
        let rejects = RejectsWriter(path: rejectsPath, style: style, enabled: writesRejects)
        let imagesRoot = options.imagesDir ?? Self.folder(of: file)
        let resolver = Result { () throws(ImageReferenceError) in try ImagePathResolver(root: imagesRoot) }
        let rebuilder = RawRecordRebuilder(format: reader.format, header: reader.csvHeader, mapping: options.read.mapping)

        var window: [Place] = []
        do throws(JobError) {
            while true {
                let item: ReadItem?
                do { item = try reader.next() } catch { throw JobError.input(error) }
                guard let item else { break }
                summary.rowsRead += 1
                switch item {
                case .reject(let reject, let raw):
                    try addReject(reject, raw: raw, to: rejects)
                case .place(let place):
                    guard options.shard.contains(key: place.importKey) else { summary.skippedByShard += 1; continue }
                    window.append(place)
                    if window.count >= options.batchSize {
                        try flush(window, resolver: resolver, rejects: rejects, rebuilder: rebuilder)
                        window.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !window.isEmpty { try flush(window, resolver: resolver, rejects: rejects, rebuilder: rebuilder) }
            do { try rejects.finish() } catch { throw JobError.output("cannot write rejects file \(rejectsPath): \(error)") }
        } catch {
            // Keep what the rejects file has so far from replacing a complete one.
            rejects.abandon()
            throw error
        }
        if rejects.count > 0 && writesRejects { summary.rejectsFiles.append(rejectsPath) }
    }

    private func addReject(_ reject: Reject, raw: RawRecord?, to rejects: RejectsWriter) throws(JobError) {
        summary.rejected += 1
        observer(.rejected(reject))
        do { try rejects.add(reject, raw: raw) } catch { throw .output("cannot write rejects file \(rejects.path): \(error)") }
    }

    // MARK: One window

    private func flush(_ window: [Place], resolver: Result<ImagePathResolver, ImageReferenceError>,
                       rejects: RejectsWriter, rebuilder: RawRecordRebuilder) throws(JobError) {
        var pending = window.map { Pending(place: $0, links: nil) }
        var imageFailures: [Int: String] = [:]
        try attachImages(&pending, failures: &imageFailures, resolver: resolver)

        var writes: [PlaceWrite] = []
        var writeIndex: [Int] = []
        for (i, item) in pending.enumerated() {
            if let reason = imageFailures[i] {
                summary.imagesFailed += 1
                if options.requireImages {
                    try addReject(Reject(source: item.place.source, field: "image", reason: reason),
                                  raw: rebuilder.raw(for: item.place), to: rejects)
                    continue
                }
                observer(.imageProblem(ImageProblem(source: item.place.source, location: item.place.source.description,
                                                    image: item.place.image ?? "", reason: reason)))
            }
            let fields = PlaceDocument.fields(for: item.place, links: item.links)
            writes.append(PlaceWrite(importKey: item.place.importKey, set: fields.set, unset: fields.unset,
                                     untracked: fields.untracked))
            writeIndex.append(i)
        }

        guard let places else {
            summary.inserted += writes.count  // dry run: every valid place would be written
            report()
            return
        }
        let outcomes: [PlaceWriteOutcome]
        do { outcomes = try places.upsert(writes) } catch { throw JobError.from(store: error) }
        for (k, outcome) in outcomes.enumerated() {
            switch outcome {
            case .inserted: summary.inserted += 1
            case .updated: summary.updated += 1
            case .unchanged: summary.unchanged += 1
            case .failed(let reason):
                let place = pending[writeIndex[k]].place
                try addReject(Reject(source: place.source, field: nil, reason: "refused by the server: \(reason)"),
                              raw: rebuilder.raw(for: place), to: rejects)
            }
        }
        report()
    }

    /// Resolves, hashes and stores each distinct image of the window once.
    private func attachImages(_ pending: inout [Pending], failures: inout [Int: String],
                              resolver: Result<ImagePathResolver, ImageReferenceError>) throws(JobError) {
        // The caches are trimmed between windows, never while this window relies on them.
        if shaByPath.count >= options.imageCacheLimit || linksBySHA.count >= options.imageCacheLimit {
            shaByPath.removeAll()
            linksBySHA.removeAll()
            failureBySHA.removeAll()
        }
        // 1. References → real paths (or the reason they are refused).
        var pathOf: [Int: String] = [:]
        for (i, item) in pending.enumerated() {
            guard let reference = item.place.image, !reference.isEmpty else { continue }
            do {
                pathOf[i] = try resolver.get().resolve(reference)
            } catch {
                failures[i] = error.description
            }
        }
        // 2. Hash each distinct path not known yet (in parallel). The bytes are dropped as soon as
        //    they are hashed: memory holds `jobs` images at a time, not a window's worth.
        let unseen = Array(Set(pathOf.values).filter { path in
            guard let sha = shaByPath[path] else { return true }
            return linksBySHA[sha] == nil && failureBySHA[sha] == nil
        }).sorted()
        let ingest = ImageIngest(repository: images, gate: gate, spec: options.thumbnail,
                                 specIsExplicit: options.thumbnailIsExplicit, decode: options.decode,
                                 maxFileBytes: options.maxImageFileBytes)
        let hashes = WorkerPool.map(count: unseen.count, jobs: options.jobs) { k in
            ingest.read(path: unseen[k]).map(ImageIngest.sha256Hex)
        }
        var readErrors: [String: String] = [:]
        var pathBySHA: [String: String] = [:]  // one path per content not stored yet
        for (k, hash) in hashes.enumerated() {
            switch hash {
            case .success(let sha):
                shaByPath[unseen[k]] = sha
                if linksBySHA[sha] == nil && failureBySHA[sha] == nil && pathBySHA[sha] == nil { pathBySHA[sha] = unseen[k] }
            case .failure(let error):
                readErrors[unseen[k]] = error.reason
            }
        }
        // 3. Store each new content (in parallel). The file is read again — from the page cache —
        //    and checked against its hash, so a file changed in between is never stored under
        //    another file's hash.
        let work = pathBySHA.keys.sorted().map { (sha: $0, path: pathBySHA[$0]!) }
        let outcomes = WorkerPool.map(count: work.count, jobs: options.jobs) { k -> IngestOutcome in
            switch ingest.read(path: work[k].path) {
            case .failure(let error): return .failed(reason: error.reason)
            case .success(let bytes):
                guard ImageIngest.sha256Hex(bytes) == work[k].sha else {
                    return .failed(reason: "the file changed while it was being imported")
                }
                return ingest.ingest(bytes: bytes, sha256: work[k].sha, name: (work[k].path as NSString).lastPathComponent)
            }
        }
        var fresh: Set<String> = []
        for (k, outcome) in outcomes.enumerated() {
            switch outcome {
            case .stored(let links, let newOriginal, let newThumbnail):
                linksBySHA[work[k].sha] = links
                if newOriginal { summary.imagesStored += 1; fresh.insert(work[k].sha) }
                if newThumbnail { summary.thumbnailsMade += 1 }
                // A new recipe for a stored image: places that show it, in this input or not,
                // switch to the new thumbnail now (an unchanged place is not rewritten below).
                if newThumbnail && !newOriginal, let places, let thumb = links.thumbnailId {
                    do { try places.relinkThumbnail(imageId: links.imageId, thumbnailId: thumb) } catch {
                        throw JobError.from(store: error)
                    }
                }
            case .failed(let reason):
                failureBySHA[work[k].sha] = reason
            case .storeFailure(let error):
                throw JobError.from(store: error)
            }
        }
        var firstUse: Set<String> = []
        for (i, path) in pathOf.sorted(by: { $0.key < $1.key }) {
            if let error = readErrors[path] { failures[i] = error; continue }
            guard let sha = shaByPath[path] else { failures[i] = "unreadable"; continue }
            if let reason = failureBySHA[sha] { failures[i] = reason; continue }
            guard let links = linksBySHA[sha] else { failures[i] = "image could not be stored"; continue }
            pending[i].links = links
            // The first place to use a freshly stored image did not reuse it; every other did.
            if fresh.contains(sha) && !firstUse.contains(sha) { firstUse.insert(sha) } else { summary.imagesReused += 1 }
        }
    }

    private func report(force: Bool = false) {
        let now = Date()
        guard force || now.timeIntervalSince(lastProgress) >= 0.2 else { return }
        lastProgress = now
        let fraction = bytesTotal.flatMap { total in
            total > 0 ? min(1, Double(bytesDone + (currentReader?.bytesRead ?? 0)) / Double(total)) : nil
        }
        observer(.progress(JobProgress(items: summary.rowsRead, total: nil,
                                       images: summary.imagesStored + summary.imagesReused,
                                       seconds: now.timeIntervalSince(started), fraction: fraction)))
    }

    static func folder(of file: String) -> String {
        let dir = (file as NSString).deletingLastPathComponent
        return dir.isEmpty ? "." : dir
    }
}
