import Foundation
import PoiFiles
import PoiFormats
import PoiImaging
import PoiModel
import PoiStore

/// One run of an `ImportJob`. It holds everything that belongs to a single pass over the
/// inputs — the summary, the keys seen, the image-link cache, the windows at the server, the
/// progress — so running one job twice starts the second run from nothing.
///
/// The order of work: every input is checked before anything is written; each dump is read a
/// record at a time; each valid record's key is judged (`admit`) before it joins a window of
/// `batchSize` places; a full window gets its images (`ImageAttacher`), then its places go to the
/// server while the next window is read (`WritesInFlight`); each written window is counted.
///
/// `ImportJob.run` makes a new one for each run, and uses it once.
final class ImportRun {
    private let job: ImportJob
    private let options: ImportOptions
    private var summary = ImportSummary()
    /// Every key of the run so far (duplicate detection; bounded, see `SeenKeys`), and the files
    /// its positions refer to.
    private var keys: KeyRule
    /// The run's inputs, which no rejects file may replace or delete (`ImportInputs.inputs`).
    private var inputs: [String] = []
    private var rejectsPaths = DefaultRejectsPaths()
    private var position = InputPosition(files: [])
    private let progress: ProgressCounter
    private var attacher: ImageAttacher
    /// nil in a dry run: nothing goes to a server.
    private let writes: WritesInFlight?

    init(job: ImportJob) {
        self.job = job
        options = job.options
        keys = KeyRule(policy: job.options.onDuplicate)
        summary.dryRun = job.options.dryRun
        progress = ProgressCounter(total: nil, observer: job.observer)
        attacher = ImageAttacher(options: job.options, images: job.images, places: job.places, observer: job.observer)
        writes = job.places.map { WritesInFlight(places: $0, images: job.images) }
    }

    func run(files: [String]) throws(JobError) -> ImportSummary {
        position = InputPosition(files: files)
        let checked = try ImportInputs(files: files, options: options)
        inputs = checked.inputs
        summary.skippedMembers = checked.skippedMembers
        if options.onDuplicate == .last { keys.lastRecords = try findLastRecords(in: checked.dumps) }
        do {
            try job.places?.prepare()
            try job.images.prepare()
        } catch { throw .store(error) }
        for file in files {
            if checked.skippedRejectsFiles.contains(file) { summary.skippedRejectsFiles.append(file); continue }
            for dump in checked.dumpsByInput[file] ?? [] {
                try importFile(dump)
                summary.files += 1
            }
        }
        try keys.checkLastRecordsKept(files: inputs.count == 1 ? inputs[0] : inputs.joined(separator: ", "))
        summary.seconds = progress.seconds
        reportProgress(final: true)
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
    private func findLastRecords(in dumps: [DumpInput]) throws(JobError) -> SeenKeys {
        let shard = options.shard
        return try KeyRule.lastRecords(of: dumps, options: options.read) { shard.contains(key: $0.importKey) }
    }

    // MARK: One file

    private func importFile(_ dump: DumpInput) throws(JobError) {
        let file = dump.name
        // A dry run writes nothing the user did not ask for: no default rejects file, and a
        // rejects file from an earlier real run is left as it is.
        let writesRejects = !options.dryRun || options.rejectsPath != nil
        let reader: PlaceReader
        var readOptions = RejectsLocation.readOptions(options.read, for: dump)
        readOptions.keepRawRecords = writesRejects
        do { reader = try dump.reader(options: readOptions) } catch { throw .input(error) }
        position.begin(reader, rowsRead: summary.rowsRead)
        defer { position.end(reader) }
        let rejectsPath = options.rejectsPath ?? rejectsPaths.unique(for: dump, format: reader.format)
        let rejects = RejectsWriter(path: rejectsPath, style: RejectsWriter.Style(matching: reader), enabled: writesRejects,
                                    inputs: inputs, encoding: reader.encoding,
                                    columnTypes: reader.format == .geojson ? nil : readOptions.sidecarTypes)
        let fileIndex = keys.beginFile(file, format: reader.format)
        var keyAnnouncement = KeyAnnouncement(file: file, reader: reader, mapping: options.read.mapping)
        if let notice = keyAnnouncement.atStart() { job.observer(.keyNotice(notice)) }
        // A zip member's images resolve against the archive's folder, as the archive's own would.
        let imagesRoot = options.imagesDir ?? FilePaths.folder(of: dump.path)
        let resolver = Result { () throws(ImageReferenceError) in try ImagePathResolver(root: imagesRoot) }

        var window: [PendingPlace] = []
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
                    if let notice = keyAnnouncement.on(place) { job.observer(.keyNotice(notice)) }
                    guard try admit(place, raw: raw, fileIndex: fileIndex, rejects: rejects) else { continue }
                    window.append(PendingPlace(place: place, raw: raw, links: nil))
                    if window.count >= options.batchSize {
                        try flush(window, resolver: resolver, rejects: rejects)
                        window.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !window.isEmpty { try flush(window, resolver: resolver, rejects: rejects) }
            try completeWrites(leaving: 0, rejects: rejects)
            for note in reader.notes { job.observer(.note(note)) }
            do { try rejects.finish() } catch { throw JobError.output(path: rejectsPath, reason: "\(error)") }
        } catch {
            writes?.abandon()
            // Keep what the rejects file has so far from replacing a complete one.
            rejects.abandon()
            throw error
        }
        if rejects.count > 0 && writesRejects { summary.rejectsFiles.append(rejectsPath) }
        if let readFailure { throw .input(readFailure) }
    }

    /// A key appears once per run (ARCHITECTURE.md §4; `KeyRule`, shared with check and convert).
    /// Returns whether the record goes on to be written.
    private func admit(_ place: Place, raw: RawRecord?, fileIndex: Int, rejects: RejectsWriter) throws(JobError) -> Bool {
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
        job.observer(.rejected(reject))
        do { try rejects.add(reject, raw: raw) } catch { throw .output(path: rejects.path, reason: "\(error)") }
    }

    // MARK: One window

    private func flush(_ window: [PendingPlace], resolver: Result<ImagePathResolver, ImageReferenceError>,
                       rejects: RejectsWriter) throws(JobError) {
        let prepared = try prepare(window, resolver: resolver, rejects: rejects)
        guard let writes else {
            summary.inserted += prepared.writes.count  // dry run: every valid place would be written
            reportProgress()
            return
        }
        try completeWrites(leaving: writes.depth - 1, rejects: rejects)
        guard !prepared.writes.isEmpty else { return }
        writes.send(prepared)
    }

    /// Counts the oldest windows at the server until at most `limit` are left there.
    private func completeWrites(leaving limit: Int, rejects: RejectsWriter) throws(JobError) {
        guard let writes else { return }
        while let done = try writes.collectOldest(leaving: limit, imageGone: imageGone) {
            try count(done.outcomes, of: done.window, rejects: rejects)
        }
    }

    /// Gives the window's places their images, and turns each place that is not refused for its
    /// image into the write that stores it.
    private func prepare(_ window: [PendingPlace], resolver: Result<ImagePathResolver, ImageReferenceError>,
                         rejects: RejectsWriter) throws(JobError) -> PreparedWindow {
        var pending = window
        let attached = try attacher.attach(to: window.map(\.place), resolver: resolver, summary: &summary)
        for (i, links) in attached.links { pending[i].links = links }
        var writes: [UpsertItem] = []
        var writeIndex: [Int] = []
        for (i, item) in pending.enumerated() {
            let imageError = attached.failures[i]
            if let reason = imageError {
                summary.imagesFailed += 1
                if options.requireImages {
                    try addReject(Reject(source: item.place.source, field: "image", reason: reason), raw: item.raw, to: rejects)
                    continue
                }
                job.observer(.imageProblem(ImageProblem(source: item.place.source, location: item.place.source.description,
                                                        image: item.place.image ?? PlaceDocument.exportedImageId(item.place) ?? "",
                                                        reason: reason)))
            }
            writes.append(PlaceDocument.fields(for: item.place, links: item.links, imageError: imageError).item(key: item.place.importKey))
            writeIndex.append(i)
        }
        return PreparedWindow(pending: pending, writes: writes, writeIndex: writeIndex)
    }

    /// Counts a written window's outcomes; a place the server refused goes to the rejects file.
    private func count(_ outcomes: [UpsertOutcome], of window: PreparedWindow, rejects: RejectsWriter) throws(JobError) {
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
        reportProgress()
    }

    /// An image deleted from the database while a window linked `count` places to it (a
    /// `poi gc --delete` running beside the import): a failed image, said, and not linked again.
    private func imageGone(_ gone: ObjectId, count: Int) {
        summary.imagesFailed += 1
        job.observer(.imageProblem(ImageProblem(source: nil, location: "image \(gone.hex)", image: gone.hex,
            reason: "was deleted from the database while this import linked \(count) place\(count == 1 ? "" : "s") to it "
                + "(a poi gc --delete running beside it?); run the import again to store it anew")))
        attacher.forget(imageId: gone)
    }

    /// Progress counts records done (written, unchanged, rejected, duplicates or left to another
    /// shard), never records merely read; the share done is `InputPosition`'s estimate.
    private func reportProgress(final: Bool = false) {
        let done = summary.inserted + summary.updated + summary.unchanged + summary.rejected + summary.skippedByShard
            + summary.duplicates
        let images = summary.imagesStored + summary.imagesReused
        if final {
            progress.finish(items: done, images: images, fraction: position.fraction(done: done, rowsRead: summary.rowsRead, final: true),
                            seconds: summary.seconds)
        } else {
            progress.update(items: done, images: images) {
                position.fraction(done: done, rowsRead: summary.rowsRead, final: false)
            }
        }
    }
}
