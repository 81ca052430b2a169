import Foundation
import PoiFiles
import PoiFormats
import PoiImaging
import PoiModel
import PoiStore
import Synchronization

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
    private let budget: ThumbnailBudget
    private let started = Date()
    private var lastProgress = Date.distantPast

    /// Image links by content, and content by path, across windows (bounded by
    /// `options.imageCacheLimit`: cleared between windows when full; the repository lookup is the
    /// fallback).
    private var linksBySHA: [String: PlaceDocument.ImageLinks] = [:]
    private var shaByPath: [String: String] = [:]
    private var failureBySHA: [String: String] = [:]
    /// Contents found stored whose bytes are not in this run's file store (their file names).
    private var missingBySHA: [String: String] = [:]
    /// Whether this run's store holds an image an export names by id only.
    private var storedById: [ObjectId: Bool] = [:]

    /// Every key of the run so far (duplicate detection; bounded, see `SeenKeys`), and the files
    /// its positions refer to.
    private var keys: KeyRule

    /// `places`/`images` nil with `options.dryRun`: nothing is written.
    public init(options: ImportOptions, places: (any PlaceRepository)?, images: (any ImageRepository)?,
                observer: @escaping JobObserver = { _ in }) {
        self.options = options
        budget = ThumbnailBudget(bytes: options.memoryBytes)
        self.places = options.dryRun ? nil : places
        self.images = options.dryRun ? DryRunImages() : (images ?? DryRunImages())
        self.observer = observer
        keys = KeyRule(policy: options.onDuplicate)
        summary.dryRun = options.dryRun
    }

    /// For the progress fraction: input bytes of the files already done, of all files (nil when
    /// one has no size, e.g. standard input), and the reader at work.
    private var bytesDone = 0
    private var bytesTotal: Int?
    private var currentReader: PlaceReader?
    /// `summary.rowsRead` when the current file started.
    private var rowsReadAtFileStart = 0

    public func run(files: [String]) throws(JobError) -> ImportSummary {
        bytesTotal = files.reduce(Optional(0)) { sum, file in
            var st = stat()
            guard let sum, stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return sum + Int(st.st_size)
        }
        if files.count > 1 && options.rejectsPath != nil {
            throw .configuration(.oneRejectsFileForManyInputs(inputs: files.count))
        }
        if let rejects = options.rejectsPath, let input = files.first(where: { FileIdentity.same($0, rejects) }) {
            throw .file(.outputIsInput(path: rejects, input: input))
        }
        // Yesterday's rejects beside the dumps (`dumps/*.csv` matches them): not a dump. Named
        // alone, a fixed rejects file is imported (fix and import again). A skipped one is not an
        // input either: tonight's rejects replace it (or, on a clean night, remove it).
        let skipped = files.count > 1 ? Set(files.filter(RejectsLocation.isOwnRejectsFile)) : []
        self.inputs = files.filter { !skipped.contains($0) }
        // Every input is checked before anything is written: a dump rotated away between cron's
        // glob and the open (or `- -`) is refused while nothing is imported, not after the first
        // inputs were, when the error would be all the run could say.
        if inputs.filter({ $0 == "-" }).count > 1 {
            throw .input(.cannotOpen(file: "-", reason: "standard input is named more than once"))
        }
        // A zip archive is its dump members in name order, each imported as a file of its own.
        var expanded: [String: [DumpInput]] = [:]
        for file in inputs {
            do { try ByteSource.checkReadable(path: file) } catch { throw .input(error) }
            do {
                let (members, skippedMembers) = try DumpInput.expand(file)
                expanded[file] = members
                summary.skippedMembers += skippedMembers
            } catch { throw .input(error) }
        }
        dumps = inputs.flatMap { expanded[$0] ?? [] }
        if dumps.count > 1 && options.rejectsPath != nil {
            throw .configuration(.oneRejectsFileForManyInputs(inputs: dumps.count))
        }
        if options.onDuplicate == .last {
            if let once = inputs.first(where: FilePaths.isReadOnce) { throw .configuration(.lastWinsNeedsFiles(input: once)) }
            keys.lastRecords = try findLastRecords()
        }
        do {
            try places?.prepare()
            try images.prepare()
        } catch { throw .store(error) }
        for file in files {
            if skipped.contains(file) { summary.skippedRejectsFiles.append(file); continue }
            for dump in expanded[file] ?? [] {
                try importFile(dump)
                summary.files += 1
            }
        }
        try keys.checkLastRecordsKept(files: inputs.count == 1 ? inputs[0] : inputs.joined(separator: ", "))
        summary.seconds = Date().timeIntervalSince(started)
        report(final: true)
        return summary
    }

    /// `--on-duplicate last` keeps the last record of each key. Writing every record as it comes
    /// and letting the later one overwrite the earlier would store the same place, but each rerun
    /// would then write the earlier record over the stored last one and back again: `updated` on
    /// every run, `updated_at` moved, and the place in every `export --since`; and the counts
    /// would depend on where the windows happen to end. So the inputs are read once first, to
    /// learn where each key's last record is (by file and line/feature, with its content's
    /// fingerprint; the same bounded table as duplicate detection), and only that record is
    /// written. Reading twice costs a second parse; standard input cannot be read twice.
    private func findLastRecords() throws(JobError) -> SeenKeys {
        let shard = options.shard
        return try KeyRule.lastRecords(of: dumps, options: options.read) { shard.contains(key: $0.importKey) }
    }

    // MARK: One file

    private struct Pending {
        var place: Place
        /// The record as read, for the rejects file if the place is refused later.
        var raw: RawRecord?
        var links: PlaceDocument.ImageLinks?
    }

    private func importFile(_ dump: DumpInput) throws(JobError) {
        let file = dump.name
        // A dry run writes nothing the user did not ask for: no default rejects file, and a
        // rejects file from an earlier real run is left as it is.
        let writesRejects = !options.dryRun || options.rejectsPath != nil
        let reader: PlaceReader
        var readOptions = RejectsLocation.readOptions(options.read, for: dump)
        readOptions.keepRawRecords = writesRejects
        do { reader = try dump.reader(options: readOptions) } catch { throw .input(error) }
        currentReader = reader
        rowsReadAtFileStart = summary.rowsRead
        defer {
            bytesDone += reader.totalBytes ?? reader.bytesRead
            currentReader = nil
        }
        let rejectsPath = options.rejectsPath ?? uniqueDefaultRejectsPath(for: dump, format: reader.format)
        let delimiter = reader.csvDelimiter ?? UInt8(ascii: ",")
        let style: RejectsWriter.Style
        if reader.format == .geojson {
            style = .geojson
        } else if reader.csvHasHeaderLine {
            style = .csv(header: reader.csvRawHeader ?? RawCSVRecord(bytes: [], lineEndLength: 0, fieldCount: 0), delimiter: delimiter,
                         quoting: reader.csvQuoting)
        } else {
            // Header-less (its columns named by the options): the rejects file names them in a
            // header line all the same (why: RejectsWriter).
            style = .csv(header: RejectsWriter.headerNaming(columns: reader.csvHeader ?? [], delimiter: delimiter,
                                                            quoting: reader.csvQuoting, bom: reader.csvHasBOM),
                         delimiter: delimiter, quoting: reader.csvQuoting)
        }
        let rejects = RejectsWriter(path: rejectsPath, style: style, enabled: writesRejects, inputs: inputs,
                                    encoding: reader.encoding,
                                    columnTypes: reader.format == .geojson ? nil : readOptions.sidecarTypes)
        let fileIndex = keys.beginFile(file, format: reader.format)
        var keyAnnouncement = KeyAnnouncement(file: file, reader: reader, mapping: options.read.mapping)
        if let notice = keyAnnouncement.atStart() { observer(.keyNotice(notice)) }
        // A zip member's images resolve against the archive's folder, as the archive's own would.
        let imagesRoot = options.imagesDir ?? Self.folder(of: dump.path)
        let resolver = Result { () throws(ImageReferenceError) in try ImagePathResolver(root: imagesRoot) }

        var window: [Pending] = []
        // A read error midway (a damaged gzip, a failing disk) ends the file, but the rows read
        // before it are good rows: they are written, and their rejects kept, before it is thrown.
        var readFailure: FormatError?
        do throws(JobError) {
            while true {
                let item: ReadItem?
                do { item = try reader.next() } catch { readFailure = error; break }
                guard let item else { break }
                summary.rowsRead += 1
                switch item {
                case .reject(let reject, let raw):
                    try addReject(reject, raw: raw, to: rejects)
                case .place(let place, let raw):
                    guard options.shard.contains(key: place.importKey) else { summary.skippedByShard += 1; continue }
                    if let notice = keyAnnouncement.on(place) { observer(.keyNotice(notice)) }
                    guard try admit(place, raw: raw, fileIndex: fileIndex, window: &window, rejects: rejects) else { continue }
                    window.append(Pending(place: place, raw: raw, links: nil))
                    if window.count >= options.batchSize {
                        try flush(window, resolver: resolver, rejects: rejects)
                        window.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !window.isEmpty { try flush(window, resolver: resolver, rejects: rejects) }
            try completeWrites(upTo: 0, rejects: rejects)
            for note in reader.notes { observer(.note(note)) }
            do { try rejects.finish() } catch { throw JobError.output(path: rejectsPath, reason: "\(error)") }
        } catch {
            abandonWrites()
            // Keep what the rejects file has so far from replacing a complete one.
            rejects.abandon()
            throw error
        }
        if rejects.count > 0 && writesRejects { summary.rejectsFiles.append(rejectsPath) }
        if let readFailure { throw .input(readFailure) }
    }

    /// A key appears once per run (ARCHITECTURE.md §4; `KeyRule`, shared with check and convert).
    /// Returns whether the record goes on to be written.
    private func admit(_ place: Place, raw: RawRecord?, fileIndex: Int, window: inout [Pending],
                       rejects: RejectsWriter) throws(JobError) -> Bool {
        switch try keys.judge(place, fileIndex: fileIndex) {
        case .keep: return true
        case .unchanged: summary.unchanged += 1
        case .duplicate: summary.duplicates += 1
        case .reject(let reject): try addReject(reject, raw: raw, to: rejects)
        }
        return false
    }

    private func addReject(_ reject: Reject, raw: RawRecord?, to rejects: RejectsWriter) throws(JobError) {
        summary.rejected += 1
        observer(.rejected(reject))
        do { try rejects.add(reject, raw: raw) } catch { throw .output(path: rejects.path, reason: "\(error)") }
    }

    // MARK: One window

    /// A window whose images are stored and whose places are ready to be written.
    private struct PreparedWindow {
        var pending: [Pending]
        var writes: [UpsertItem]
        /// For each write, its place's index in `pending`.
        var writeIndex: [Int]
    }

    /// Windows whose places are at the server, oldest first, with the work that writes them.
    private var inFlight: [(window: PreparedWindow, write: BackgroundWork<Result<[UpsertOutcome], StoreError>>)] = []
    /// How many windows may be written at once while the next one is read and prepared: the
    /// server works on one (or reads the next one's digests) while the client reads, hashes
    /// images and encodes the next. Each window in flight holds its places in memory, so this
    /// bounds memory at `writeDepth + 1` windows.
    private let writeDepth = 2

    private func flush(_ window: [Pending], resolver: Result<ImagePathResolver, ImageReferenceError>,
                       rejects: RejectsWriter) throws(JobError) {
        let prepared = try prepare(window, resolver: resolver, rejects: rejects)
        guard let places else {
            summary.inserted += prepared.writes.count  // dry run: every valid place would be written
            report()
            return
        }
        try completeWrites(upTo: writeDepth - 1, rejects: rejects)
        guard !prepared.writes.isEmpty else { return }
        // Each key is written at most once per run (`admit`; with `--on-duplicate last` only
        // the last record is), so windows in flight never write the same place, and their order
        // at the server does not matter.
        let writes = prepared.writes
        inFlight.append((prepared, BackgroundWork { Result { () throws(StoreError) in try places.upsert(writes) } }))
    }

    /// Collects the oldest windows' outcomes until at most `limit` are in flight.
    private func completeWrites(upTo limit: Int, rejects: RejectsWriter) throws(JobError) {
        while inFlight.count > limit {
            let (window, write) = inFlight.removeFirst()
            let outcomes: [UpsertOutcome]
            switch write.wait() {
            case .success(let value): outcomes = value
            case .failure(let error): throw .store(error)
            }
            try count(outcomes, of: window, rejects: rejects)
        }
    }

    /// After a window's write, each image it links to ends with one thumbnail, the newest, that
    /// every place showing it links to. Runs beside this import can leave it otherwise:
    /// - a `poi thumbnails` run may have replaced the thumbnail this import looked up before the
    ///   write, relinked the places that existed then (not these) and deleted the old one;
    /// - another import storing the same new photo at once may have made a thumbnail of its own.
    /// Read after the write, the newest thumbnail is either one made since (its places are
    /// relinked here) or one made before the write (whose run's relink, which follows its store,
    /// covered these places): no place is left on a deleted thumbnail, and the older ones no
    /// place shows go. One lookup per image of the window; writes only when there is more than
    /// one thumbnail.
    private func linkNewestThumbnails(_ outcomes: [UpsertOutcome], of window: PreparedWindow) throws(JobError) {
        guard let places else { return }
        var shownImages = Set<ObjectId>()
        var linked: [ObjectId: ObjectId] = [:]  // per image, the newest thumbnail the window linked
        var shown: [ObjectId: Int] = [:]  // places written (inserted or updated) per image
        for (k, outcome) in outcomes.enumerated() {
            if case .failed = outcome { continue }
            guard let links = window.pending[window.writeIndex[k]].links else { continue }
            switch outcome {
            case .inserted, .updated: shown[links.imageId, default: 0] += 1
            default: break
            }
            shownImages.insert(links.imageId)
            if let thumbnail = links.thumbnailId { linked[links.imageId] = max(linked[links.imageId] ?? thumbnail, thumbnail) }
        }
        guard !shownImages.isEmpty else { return }
        do throws(StoreError) {
            // An original deleted after this import found it (a `poi gc --delete` beside it that
            // judged it before the import marked it reused): said, never a silent broken link;
            // a rerun stores the content anew.
            let present = try images.storedIds(shown.keys.sorted())
            for (gone, count) in shown.sorted(by: { $0.key < $1.key }) where !present.contains(gone) {
                summary.imagesFailed += 1
                observer(.imageProblem(ImageProblem(source: nil, location: "image \(gone.hex)", image: gone.hex,
                    reason: "was deleted from the database while this import linked \(count) place\(count == 1 ? "" : "s") to it "
                        + "(a poi gc --delete running beside it?); run the import again to store it anew")))
                // Later windows look the content up again instead of linking to it.
                linksBySHA = linksBySHA.filter { $0.value.imageId != gone }
            }
            let thumbnails = try images.thumbnailIds(of: shownImages.sorted())
            for (original, ids) in thumbnails.sorted(by: { $0.key < $1.key }) {
                guard let newest = ids.max(), ids.count > 1 || linked[original].map({ $0 < newest }) ?? true else { continue }
                try places.relinkThumbnail(imageId: original, thumbnailId: newest)
                _ = try images.deleteUnusedThumbnails(of: original)
            }
        } catch {
            throw .store(error)
        }
    }

    /// After a failure: lets the writes at the server finish (their outcomes no longer matter),
    /// so nothing of the job is still writing once it has returned.
    private func abandonWrites() {
        for (_, write) in inFlight { _ = write.wait() }
        inFlight.removeAll()
    }

    private func prepare(_ window: [Pending], resolver: Result<ImagePathResolver, ImageReferenceError>,
                         rejects: RejectsWriter) throws(JobError) -> PreparedWindow {
        var pending = window
        var imageFailures: [Int: String] = [:]
        try attachImages(&pending, failures: &imageFailures, resolver: resolver)

        var writes: [UpsertItem] = []
        var writeIndex: [Int] = []
        for (i, item) in pending.enumerated() {
            if let reason = imageFailures[i] {
                summary.imagesFailed += 1
                if options.requireImages {
                    try addReject(Reject(source: item.place.source, field: "image", reason: reason),
                                  raw: item.raw, to: rejects)
                    continue
                }
                observer(.imageProblem(ImageProblem(source: item.place.source, location: item.place.source.description,
                                                    image: item.place.image ?? PlaceDocument.exportedImageId(item.place) ?? "",
                                                    reason: reason)))
            }
            writes.append(PlaceDocument.fields(for: item.place, links: item.links, imageError: imageFailures[i])
                .item(key: item.place.importKey))
            writeIndex.append(i)
        }
        return PreparedWindow(pending: pending, writes: writes, writeIndex: writeIndex)
    }

    private func count(_ outcomes: [UpsertOutcome], of window: PreparedWindow, rejects: RejectsWriter) throws(JobError) {
        try linkNewestThumbnails(outcomes, of: window)
        for (k, outcome) in outcomes.enumerated() {
            switch outcome {
            case .inserted: summary.inserted += 1
            case .updated: summary.updated += 1
            case .unchanged: summary.unchanged += 1
            case .failed(let code, let message):
                let item = window.pending[window.writeIndex[k]]
                try addReject(Reject(source: item.place.source, field: nil, reason: "refused by the server: \(message) (code \(code))"),
                              raw: item.raw, to: rejects)
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
            missingBySHA.removeAll()
        }
        if storedById.count >= options.imageCacheLimit { storedById.removeAll() }
        // 1. References → real paths (or the reason they are refused).
        var pathOf: [Int: String] = [:]
        // The name a photo is stored under: the file's own, unless the place comes from an
        // export with images, whose copies are named by id and which names the photo beside it.
        var storedNameOf: [String: String] = [:]
        for (i, item) in pending.enumerated() {
            guard let reference = item.place.image, !reference.isEmpty else { continue }
            do {
                let path = try resolver.get().resolve(reference)
                pathOf[i] = path
                if case .string(let name)? = item.place.poiKitProperties[PoiKitProperties.imageOriginalName], !name.isEmpty,
                   storedNameOf[path] == nil {
                    storedNameOf[path] = name
                }
            } catch {
                failures[i] = error.description
            }
        }
        // An export's feature that names its database's image by id, without the image (exported
        // without image files, or its photo could not be copied): where this store holds that
        // image the stored link stays; anywhere else the photo is missing, which the place and
        // the summary say, as for any other image that fails.
        var exported: [Int: ObjectId] = [:]
        for (i, item) in pending.enumerated() {
            if let hex = PlaceDocument.exportedImageId(item.place), let id = ObjectId(hex: hex) { exported[i] = id }
        }
        if !exported.isEmpty {
            let unknown = Array(Set(exported.values.filter { storedById[$0] == nil }))
            if !unknown.isEmpty {
                let stored: Set<ObjectId>
                do { stored = try images.storedIds(unknown) } catch { throw .store(error) }
                for id in unknown { storedById[id] = stored.contains(id) }
            }
            for (i, id) in exported where storedById[id] == false {
                failures[i] = "the export names image \(id.hex) without a copy of it, and this database has no such image"
            }
        }
        // 2. Hash each distinct path not known yet (in parallel). The bytes are dropped as soon as
        //    they are hashed: memory holds `jobs` images at a time, not a window's worth.
        let unseen = Array(Set(pathOf.values).filter { path in
            guard let sha = shaByPath[path] else { return true }
            return linksBySHA[sha] == nil && failureBySHA[sha] == nil
        }).sorted()
        let ingest = ImageIngest(repository: images, budget: budget, spec: options.thumbnail,
                                 specIsExplicit: options.thumbnailIsExplicit, decode: options.decode,
                                 maxFileBytes: options.maxImageFileBytes)
        let hashes = WorkerPool.map(count: unseen.count, jobs: options.jobs) { k in
            ingest.read(path: unseen[k]).map(ContentDigest.sha256Hex)
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
        let work = pathBySHA.keys.sorted().map { sha in
            let path = pathBySHA[sha]!
            return (sha: sha, path: path, name: storedNameOf[path] ?? FilePaths.lastComponent(of: path))
        }
        // The first store failure ends the window: the job stops on it anyway, and each further
        // image would wait out the server timeout again (a dead server took 15 s, not 3, to report).
        let storeFailed = Mutex<StoreError?>(nil)
        let outcomes = WorkerPool.map(count: work.count, jobs: options.jobs) { k -> IngestOutcome in
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
                linksBySHA[work[k].sha] = links
                missingBySHA[work[k].sha] = missingBytes
                if let colorWarning {
                    summary.imagesColorUnmanaged += 1
                    observer(.imageProblem(ImageProblem(source: nil, location: work[k].path, image: FilePaths.lastComponent(of: work[k].path),
                                                        reason: colorWarning + " (thumbnail made as if untagged)")))
                }
                if newOriginal { summary.imagesStored += 1; fresh.insert(work[k].sha) }
                if newThumbnail { summary.thumbnailsMade += 1 }
                // A new recipe for a stored image: places that show it, in this input or not,
                // switch to the new thumbnail now (an unchanged place is not rewritten below).
                if newThumbnail && !newOriginal, let places, let thumb = links.thumbnailId {
                    do { try places.relinkThumbnail(imageId: links.imageId, thumbnailId: thumb) } catch {
                        throw .store(error)
                    }
                }
            case .failed(let reason):
                failureBySHA[work[k].sha] = reason
            case .storeFailure(let error):
                throw .store(error)
            }
        }
        var firstUse: Set<String> = []
        for (i, path) in pathOf.sorted(by: { $0.key < $1.key }) {
            if let error = readErrors[path] { failures[i] = error; continue }
            guard let sha = shaByPath[path] else { failures[i] = "unreadable"; continue }
            if let reason = failureBySHA[sha] { failures[i] = reason; continue }
            guard let links = linksBySHA[sha] else { failures[i] = "image could not be stored"; continue }
            pending[i].links = links
            // The first place to use a freshly stored image did not reuse it; every other did,
            // unless the bytes it would reuse are not in this store.
            if let missing = missingBySHA[sha] {
                summary.imagesMissing += 1
                let place = pending[i].place
                observer(.imageProblem(ImageProblem(source: place.source, location: place.source.description, image: place.image ?? "",
                                                    reason: "stored earlier as \(missing), but its bytes are missing from the file store")))
            } else if fresh.contains(sha) && !firstUse.contains(sha) { firstUse.insert(sha) } else { summary.imagesReused += 1 }
        }
    }

    /// Progress counts records done (written, unchanged, rejected or left to another shard),
    /// never records merely read: the reader runs ahead of the writes. The share done is that
    /// count over the records the input is estimated to hold: records scanned so far by the
    /// reader over the bytes it has read (both include its read-ahead, so their ratio is sound),
    /// times the input's size. 100 % appears only at the end.
    private func report(final: Bool = false) {
        let now = Date()
        guard final || now.timeIntervalSince(lastProgress) >= 0.2 else { return }
        lastProgress = now
        let done = summary.inserted + summary.updated + summary.unchanged + summary.rejected + summary.skippedByShard
            + summary.duplicates
        var fraction: Double?
        if let total = bytesTotal, total > 0 {
            // Files done count whole; the current one by its bytes per record so far.
            let current = currentReader
            let bytesSeen = current?.bytesRead ?? 0
            let scanned = current?.recordsScanned ?? 0
            let estimated: Double
            if let current, scanned > 0, bytesSeen > 0 {
                let perRecord = Double(bytesSeen) / Double(scanned)
                let remainingBytes = Double(total - bytesDone - min(bytesSeen, current.totalBytes ?? bytesSeen))
                estimated = Double(rowsReadAtFileStart) + Double(scanned) + max(0, remainingBytes) / perRecord
            } else {
                estimated = Double(summary.rowsRead)
            }
            fraction = final ? 1 : min(0.999, Double(done) / max(estimated, 1))
        }
        observer(.progress(JobProgress(items: done, total: nil,
                                       images: summary.imagesStored + summary.imagesReused,
                                       seconds: now.timeIntervalSince(started), fraction: fraction, isFinal: final)))
    }

    static func folder(of file: String) -> String { FilePaths.folder(of: file) }

    /// Reads one new content again (from the page cache), checks it is still the hashed one, and
    /// stores it with its thumbnail.
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

    /// The run's inputs, which no rejects file may replace or delete.
    private var inputs: [String] = []
    /// What is read, in order: the inputs, a zip archive expanded into its dump members.
    private var dumps: [DumpInput] = []
    /// Default rejects paths taken earlier in this run (`shops.csv` and `shops.txt` both map to
    /// `shops.rejects.csv`: the second one's must not replace or delete the first one's).
    private var rejectsPathsTaken: Set<String> = []

    private func uniqueDefaultRejectsPath(for dump: DumpInput, format: InputFormat) -> String {
        let file = dump.name
        var path = dump.memberName.map { RejectsLocation.defaultPath(forMember: $0, of: dump.path, format: format) }
            ?? RejectsLocation.defaultPath(for: file, format: format)
        if rejectsPathsTaken.contains(path) {
            // Keep the input's whole name: `shops.txt.rejects.csv`, then numbered if need be.
            let suffix = format == .csv ? ".rejects.csv" : ".rejects.geojson"
            let base = FilePaths.join(FilePaths.folder(of: path), FilePaths.lastComponent(of: file == "-" ? "stdin" : file))
            path = base + suffix
            var n = 2
            while rejectsPathsTaken.contains(path) { path = base + ".\(n)" + suffix; n += 1 }
        }
        rejectsPathsTaken.insert(path)
        return path
    }
}

/// Says once per file where the keys come from (ARCHITECTURE.md §4: a key appears once per run, so the
/// user must know what the key is): the column found by its name when none was mapped
/// explicitly, or, at the first place without any id, that keys come from name + coordinates,
/// naming the columns that look like ids.
struct KeyAnnouncement {
    let file: String
    let format: InputFormat
    let header: [String]?
    let plan: [ColumnRole]?
    let explicit: Bool
    private var derivedAnnounced = false

    init(file: String, reader: PlaceReader, mapping: FieldMapping) {
        self.file = file
        format = reader.format
        header = reader.csvHeader
        plan = reader.csvHeader.map { mapping.plan(header: $0) }
        explicit = mapping.overrides[.id] != nil || mapping.overrides[.importKey] != nil
    }

    /// CSV: the column the keys come from, when it was found by its name.
    func atStart() -> KeyNotice? {
        guard !explicit, let header, let plan else { return nil }
        for field in [PlaceField.importKey, .id] {
            if let i = plan.firstIndex(of: .field(field)) { return KeyNotice(file: file, source: .column(header[i])) }
        }
        return nil
    }

    mutating func on(_ place: Place) -> KeyNotice? {
        guard place.keySource == .derived, !derivedAnnounced else { return nil }
        derivedAnnounced = true
        if let header, let plan, let i = plan.firstIndex(of: .field(.importKey)) ?? plan.firstIndex(of: .field(.id)) {
            return KeyNotice(file: file, source: .blankID(column: header[i], line: place.source.line))
        }
        let names: [String]
        if let header, let plan {
            names = zip(header, plan).compactMap { name, role in
                if case .extra = role { return name } else { return nil }
            }
        } else {
            names = place.extra.members.map(\.key)
        }
        return KeyNotice(file: file, source: .derived(idLikeColumns: names.filter(ImportKey.looksLikeID)))
    }
}
