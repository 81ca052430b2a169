import Foundation
import PoiFiles
import PoiFormats
import PoiModel
import PoiStore

public struct ExportOptions: Sendable {
    public var filter = PlaceFilter()
    public var style = GeoJSONWriter<FileDescriptorSink>.Style.featureCollection
    /// Decimals coordinates are rounded to; nil: exact, as stored.
    public var precision: Int? = nil
    /// Output file, written to a temp file and renamed into place when complete; nil: stdout.
    public var outputPath: String?
    /// Copy each place's original image into this folder and write a relative `image`
    /// property, so the export re-imports with its images.
    public var imagesDir: String?
    public var batchSize = 1_000
    /// Count the matching places first, for progress with an ETA. Costs the server a second pass
    /// over the filter, so only worth it when someone watches the progress.
    public var countTotal = false
    /// Replace a non-empty output file even when no place matched. Off: an empty result leaves
    /// such a file as it was and fails (`ConfigurationProblem.emptyResultWouldReplace`), so a
    /// typo in a filter does not wipe yesterday's export.
    public var allowEmpty = false
    /// gzip the output (still temp + rename for a file).
    public var gzip = false
    /// CSV (or TSV) instead of GeoJSON; nil: GeoJSON in `style`.
    public var csv: CSVExportOptions?

    public init() {}
}

/// `poi export --format csv|tsv`.
public struct CSVExportOptions: Sendable, Equatable {
    /// Tab-separated instead of comma-separated.
    public var tabs = false
    /// `--excel`: a byte-order mark, CRLF, formulas shown as text (`CSVWriter.Dialect.excel`).
    public var excel = false
    /// `--fields`: these columns in this order; nil: every column the places have (found while
    /// the rows are written, `CSVPlaceWriter`).
    public var fields: [String]?

    public init(tabs: Bool = false, excel: Bool = false, fields: [String]? = nil) {
        self.tabs = tabs
        self.excel = excel
        self.fields = fields
    }
}

public struct ExportSummary: Sendable, Codable, Equatable {
    public var features = 0
    /// Stored places without a usable Point (e.g. created by hand in the app); not exported.
    public var skipped = 0
    /// Image files written into `--with-images` (ones already there are not copied again).
    public var imagesCopied = 0
    public var imagesFailed = 0
    public var output: String?
    /// CSV: the header's columns, and the `.csvt` written beside an `-o` file.
    public var columns: [String]?
    public var typesFile: String?
    /// CSV: `--fields` columns no exported place had a value for (a misspelt name, most likely).
    public var emptyColumns: [String]?
    /// CSV: why `poi import` could not read the file back (more columns, or a longer row, than
    /// its limits); nil when it can.
    public var beyondImportLimits: String?
    public var seconds = 0.0
    public init() {}
}

/// `poi export`: `locations` (filtered, sorted by `_id`) → RFC 7946 GeoJSON, streamed.
///
/// Writing to a file goes through `AtomicFile`: a cron job that dies halfway (server gone, disk
/// full, killed) leaves the previous export untouched, and readers never see half a file.
public final class ExportJob {
    public let options: ExportOptions
    private let database: MongoDatabase
    private let fileStore: (any FileStore)?
    private let observer: JobObserver

    public init(database: MongoDatabase, fileStore: (any FileStore)?, options: ExportOptions,
                observer: @escaping JobObserver = { _ in }) {
        self.database = database
        self.fileStore = fileStore
        self.options = options
        self.observer = observer
    }

    /// Runs the export; a transient database error (a dropped connection, an election) while
    /// writing a file starts it again from the top, with backoff, within --retry-for: the
    /// output is a temporary file until the last feature, so a second pass replaces the first
    /// whole. Standard output cannot be taken back, and is not retried.
    public func run() throws(JobError) -> ExportSummary {
        let began = ContinuousClock.now
        let deadline = began + .milliseconds(database.connection.retryForMS)
        var backoff = 100
        var attempts = 1
        while true {
            do {
                return try runPass()
            } catch {
                guard options.outputPath != nil, case .store(let storeError) = error, storeError.isTransient else { throw error }
                if case .unreachable = storeError, !database.connection.hasBeenReached { throw error }
                guard ContinuousClock.now + .milliseconds(backoff) < deadline else {
                    if attempts == 1 { throw error }
                    throw .store(.retried(attempts: attempts, seconds: Int((ContinuousClock.now - began).components.seconds),
                                          last: storeError))
                }
                usleep(UInt32(backoff) * 1000)
                backoff = min(backoff * 2, 2000)
                attempts += 1
            }
        }
    }

    private func runPass() throws(JobError) -> ExportSummary {
        let started = Date()
        var summary = ExportSummary()
        summary.output = options.outputPath
        // Before anything is read: the `.csvt` would be another file's too.
        if options.csv != nil, let output = options.outputPath, let other = CSVTypeSidecar.otherCSV(sharingSidecarWith: output),
           let sidecar = CSVTypeSidecar.path(besideOutput: output) {
            throw .configuration(.sidecarShared(output: output, sidecar: sidecar, other: other))
        }

        let filter: BSONDocument
        let total: Int?
        let cursor: MongoCursor
        do {
            filter = try options.filter.document()
            // A mistyped database name is a new, empty database to MongoDB: an error here, not an
            // empty export.
            if !(try database.connection.collectionExists(StoreLayout.locations, database: database.name)) {
                throw JobError.configuration(.noSuchCollection(
                    database: database.name, collection: StoreLayout.locations,
                    holders: database.connection.databases(holding: StoreLayout.locations)))
            }
            database.connection.markReached()
            total = options.countTotal ? try Self.countForProgress(database.locations, filter) : nil
            cursor = try database.locations.find(filter, sort: ["_id": 1], batchSize: options.batchSize)
        } catch let error as JobError {
            throw error
        } catch let error as StoreError {
            throw .store(queryError(error))
        } catch {
            throw .output(path: "-", reason: "\(error)")  // not reached: only the two above are thrown
        }
        defer { cursor.close() }

        let images = try options.imagesDir.map { (dir) throws(JobError) in try ImageCopier(dir: dir, outputPath: options.outputPath) }
        if images != nil && fileStore == nil { throw .configuration(.imagesNeedFileStore) }

        let file: AtomicFile?
        let outputName = options.outputPath ?? "-"
        do { file = try options.outputPath.map { (p) throws(FileError) in try AtomicFile(path: p) } } catch {
            throw .file(error)
        }
        // A new file is fsync'd when complete: its pages go to disk as it grows.
        let sink = FileDescriptorSink(fd: file?.fd ?? 1, name: options.outputPath ?? "stdout", gzip: options.gzip,
                                      writesBackAhead: file?.temporaryPath != nil)
        let sidecar = options.csv == nil ? nil : CSVTypeSidecar.path(besideOutput: options.outputPath)
        var writer: PlaceOutput
        do {
            // A CSV's rows wait beside the output, on the disk that will hold it (not beside a device).
            writer = try PlaceOutput(sink: sink, options: options, typed: sidecar != nil,
                                     spoolFolder: sidecar.flatMap { _ in options.outputPath.map(FilePaths.folder(of:)) })
        } catch {
            file?.abandon()
            switch error {
            case .format(let e): throw JobError.output(path: outputName, reason: e.reasonWithoutFile)
            case .spool(let reason): throw JobError.output(path: outputName, reason: reason)
            }
        }
        let progress = ProgressCounter(total: total, started: started, observer: observer)
        do throws(JobError) {
            while true {
                let doc: BSONDocument?
                do { doc = try cursor.next() } catch { throw JobError.store(queryError(error)) }
                guard let doc else { break }
                var image: (path: String, name: String?)?
                if let images, let fileStore, let hex = doc["imageId"]?.stringValue, let id = ObjectId(hex: hex) {
                    switch images.copy(id: id, from: fileStore) {
                    case .success(let copy):
                        image = (copy.path, copy.originalName)
                        if copy.written { summary.imagesCopied += 1 }
                    case .failure(let problem):
                        summary.imagesFailed += 1
                        observer(.imageProblem(ImageProblem(source: nil, location: "place \(doc["_id"]?.objectIdValue?.hex ?? "?")",
                                                            image: hex, reason: problem.reason)))
                    }
                }
                guard let feature = PlaceDocument.feature(from: doc, image: image) else {
                    summary.skipped += 1
                    continue
                }
                do { try writer.write(feature) } catch {
                    switch error {
                    case .format(let e): throw JobError.output(path: outputName, reason: e.reasonWithoutFile)
                    case .spool(let reason): throw JobError.output(path: outputName, reason: reason)
                    }
                }
                summary.features += 1
                progress.update(items: summary.features + summary.skipped, images: summary.imagesCopied)
            }
            do { try writer.finish() } catch {
                switch error {
                case .format(let e): throw JobError.output(path: outputName, reason: e.reasonWithoutFile)
                case .spool(let reason): throw JobError.output(path: outputName, reason: reason)
                }
            }
            summary.columns = writer.csvColumns
            if summary.features == 0, !options.allowEmpty, let path = options.outputPath,
               options.csv != nil ? Self.holdsCSVRows(path) : Self.holdsMoreThanAnEmptyExport(path, style: options.style) {
                throw JobError.configuration(.emptyResultWouldReplace(path: path))
            }
            // The `.csvt` goes in first: a reader that finds the new CSV finds its types.
            if let sidecar, let text = writer.sidecarText {
                do { try AtomicFile.write(Array(text.utf8), to: sidecar) } catch { throw JobError.file(error) }
                summary.typesFile = sidecar
            }
            do { try file?.commit() } catch { throw JobError.file(error) }
            if let csvColumns = writer.csvColumns {
                let limits = ReadLimits()
                if csvColumns.count > limits.maxFields {
                    summary.beyondImportLimits = "\(csvColumns.count) columns, more than the \(limits.maxFields) poi import reads"
                } else if writer.longestRow > limits.maxRecordBytes {
                    summary.beyondImportLimits = "a row of \(writer.longestRow) bytes, more than the \(limits.maxRecordBytes) poi import reads"
                }
            }
            if options.csv?.fields != nil, summary.features > 0, let csvColumns = writer.csvColumns {
                summary.emptyColumns = zip(csvColumns, writer.filledColumns).filter { !$0.1 }.map(\.0)
            }
        } catch {
            file?.abandon()
            throw error
        }
        summary.seconds = Date().timeIntervalSince(started)
        progress.finish(items: summary.features + summary.skipped, images: summary.imagesCopied, seconds: summary.seconds)
        return summary
    }

    /// The server's "this query is malformed" (an unknown operator such as `$badop`, an operator
    /// given the wrong type) for a user's query is the user's mistake, like a query PoiKit
    /// refuses itself: a refused query with the server's reason.
    private func queryError(_ error: StoreError) -> StoreError {
        guard options.filter.userQuery != nil, case .server(let code, let codeName, let message, _) = error,
              ServerErrorCode.malformedQuery.contains(code) else { return error }
        return .refusedQuery(reason: "the server refused it: \(message) (\(codeName.isEmpty ? "code \(code)" : codeName))")
    }

    /// Whether `path` is a regular file (links followed) holding more than an empty export of
    /// this style would: what an empty result may not replace without `allowEmpty`. A missing
    /// or empty file, a device or FIFO, or yesterday's equally empty export may be replaced — a
    /// gzip'd one too (`-o x.geojson.gz` behaves as `-o x.geojson`: its content is compared).
    static func holdsMoreThanAnEmptyExport(_ path: String, style: GeoJSONWriter<FileDescriptorSink>.Style) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0 else { return false }
        var empty = GeoJSONWriter(sink: MemorySink(), style: style == .sequence ? .sequence : .featureCollection, precision: 7)
        try? empty.finish()
        let emptyBytes = empty.sink.bytes
        if Gzip.isGzip(file: path) {
            // An empty gzip member holds nothing: as a file of 0 bytes, it may be replaced.
            guard let content = Gzip.contents(ofFile: path, limit: emptyBytes.count) else { return true }
            return !content.isEmpty && content != emptyBytes
        }
        guard Int(st.st_size) == emptyBytes.count else { return true }
        guard let existing = try? WholeFile.read(path, limit: emptyBytes.count) else { return true }
        return existing != emptyBytes
    }

    /// Whether a CSV `path` (gzip'd or not) holds a row after its header: what an empty CSV
    /// result may not replace without `allowEmpty`. Yesterday's header-only file may be replaced.
    static func holdsCSVRows(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0 else { return false }
        let limit = 1 << 20
        let head: [UInt8]
        if Gzip.isGzip(file: path) {
            guard let content = Gzip.contents(ofFile: path, limit: limit) else { return true }
            head = content
        } else {
            guard let bytes = try? WholeFile.read(path, limit: limit) else { return true }
            head = bytes
        }
        // A header longer than the limit holds more than a header anyway, as far as is known.
        guard let end = head.firstIndex(where: { $0 == 0x0A }) else { return head.count >= limit }
        return head[(end + 1)...].contains { $0 != 0x0A && $0 != 0x0D }
    }

    /// The total for progress and ETA. A count the server refuses (some stand-ins cannot count
    /// every filter) only loses the ETA; an unreachable server ends the job right here instead of
    /// making the user wait out the server-selection timeout a second time on the cursor.
    static func countForProgress(_ collection: MongoCollection, _ filter: BSONDocument) throws(StoreError) -> Int? {
        do {
            return try collection.count(filter)
        } catch {
            switch error {
            case .unreachable, .network, .authentication: throw error
            default: return nil
            }
        }
    }
}

/// Copies originals next to an export: `<dir>/<id hex><ext>`, written atomically, skipped when
/// already there with the right size (so a cron export only copies new photos).
struct ImageCopier {
    let dir: String
    /// How `image` properties name the copies: relative to the export file's folder when the
    /// images folder is inside it (the re-import default), otherwise relative to `dir` itself.
    let prefix: String

    init(dir: String, outputPath: String?) throws(JobError) {
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw .output(path: dir, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        self.dir = dir
        AtomicFile.removeStaleTemporaries(inFolder: dir)
        let outputFolder = ImagePathResolver.realPath(
            outputPath.map(FilePaths.folder(of:)) ?? ".") ?? "."
        let realDir = ImagePathResolver.realPath(dir) ?? dir
        if realDir.hasPrefix(outputFolder + "/") {
            prefix = String(realDir.dropFirst(outputFolder.count + 1)) + "/"
        } else {
            prefix = ""
        }
    }

    struct Problem: Error { var reason: String }

    /// The `image` property for the copy, whether it had to be written, and the name the photo
    /// was stored under.
    func copy(id: ObjectId, from store: any FileStore) -> Result<(path: String, written: Bool, originalName: String?), Problem> {
        do {
            guard let file = try store.file(id) else { return .failure(Problem(reason: "no files document with this id")) }
            let target = FilePaths.join(dir, file.fileName)
            var st = stat()
            if stat(target, &st) == 0, Int(st.st_size) == file.length, file.length > 0 {
                return .success((prefix + file.fileName, false, file.originalName))
            }
            try AtomicFile.write(try store.bytes(of: file), to: target, removingStale: false)
            return .success((prefix + file.fileName, true, file.originalName))
        } catch {
            return .failure(Problem(reason: String(describing: error)))
        }
    }
}

/// Where an export's places go: a GeoJSON writer, or a CSV one. Two optionals, not an enum: a
/// writer taken out of an enum case to write is a copy, and its 64 KiB buffer would be copied on
/// every feature.
private struct PlaceOutput {
    private var geojson: GeoJSONWriter<FileDescriptorSink>?
    private var csv: CSVPlaceWriter<FileDescriptorSink>?

    init(sink: FileDescriptorSink, options: ExportOptions, typed: Bool, spoolFolder: String?) throws(CSVPlaceWriterError) {
        if let csv = options.csv {
            var dialect = csv.tabs ? CSVDialect.tsv : .csv
            dialect.excel = csv.excel
            if let fields = csv.fields {
                self.csv = try CSVPlaceWriter(sink: sink, dialect: dialect, fields: fields, precision: options.precision, typed: typed,
                                              spoolFolder: spoolFolder)
            } else {
                self.csv = try CSVPlaceWriter(sink: sink, dialect: dialect, precision: options.precision, typed: typed,
                                              spoolFolder: spoolFolder)
            }
        } else {
            geojson = GeoJSONWriter(sink: sink, style: options.style, precision: options.precision)
        }
    }

    mutating func write(_ feature: GeoJSONFeature) throws(CSVPlaceWriterError) {
        if geojson != nil {
            do { try geojson!.write(feature) } catch { throw .format(error) }
            return
        }
        try csv!.write(feature)
    }

    mutating func finish() throws(CSVPlaceWriterError) {
        if geojson != nil {
            do { try geojson!.finish() } catch { throw .format(error) }
            return
        }
        try csv!.finish()
    }

    /// CSV: the header's columns, and the `.csvt` text for them.
    var csvColumns: [String]? { csv?.columns }
    var sidecarText: String? { csv?.sidecarText }

    /// CSV: the longest row written, in bytes.
    var longestRow: Int { csv?.writer.longestRow ?? 0 }

    /// CSV: which columns got a value in some row.
    var filledColumns: [Bool] { csv?.filled ?? [] }
}
