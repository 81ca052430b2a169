import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import CSV or GeoJSON dumps, with their images, into MongoDB.",
        discussion: """
        Reads each file (CSV or GeoJSON FeatureCollection / text sequence, detected from the \
        content), validates every record, stores each referenced image once (original bytes \
        unchanged plus a thumbnail) and upserts the places into `locations` by their import key, \
        so running the same import again changes nothing.

        Rejected records are listed on stderr and written to NAME.rejects.csv (or \
        .rejects.geojson) beside the input: the same format plus _line/_feature, _field and \
        _reason, ready to fix and import again. A missing or broken image does not reject its \
        place unless --require-images is given.

        Exit status: 0 all imported, 1 some records rejected, 2 bad arguments or unreadable \
        input, 3 database or disk failure (rerun to finish: nothing is duplicated).

        Examples:
          poi import Samples/places.csv Samples/landmarks.geojson
          poi import dump.csv --field name=Title --field id=source_id --images-dir photos/
          poi import big.geojson --gridfs --jobs 8 --json > summary.json
          poi import new.csv --dry-run
          poi import big.csv --shard 0/2     # and --shard 1/2 on a second machine
        """
    )

    @Argument(help: ArgumentHelp("CSV or GeoJSON files.", valueName: "file"))
    var files: [String]

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var mapping: FieldMappingOptions
    @OptionGroup var thumbnails: ThumbnailRecipeOptions
    @OptionGroup var parallel: ParallelOptions
    @OptionGroup var output: OutputOptions

    @Option(help: ArgumentHelp("Folder image paths are relative to (default: each input file's folder).", valueName: "dir"))
    var imagesDir: String?

    @Option(help: ArgumentHelp("Rejects file (one input only; default: NAME.rejects.csv/.geojson beside the input).",
                               valueName: "file"))
    var rejects: String?

    @Flag(help: "Reject a record whose image is missing or broken, instead of importing it without.")
    var requireImages = false

    @Flag(help: "Validate everything, decode every image, write nothing (no database needed).")
    var dryRun = false

    @Option(help: ArgumentHelp("Import only the records whose key hashes to shard I of N.", valueName: "I/N"))
    var shard: String?

    @Option(help: "Places per bulk write.")
    var batchSize: Int = 500

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file to import") }
        if let shard, Shard(parsing: shard) == nil { throw ValidationError("--shard must be I/N with 0 <= I < N, got \(shard)") }
        guard (1...100_000).contains(batchSize) else { throw ValidationError("--batch-size must be between 1 and 100000") }
        if rejects != nil && files.count > 1 { throw ValidationError("--rejects names one file; give one input, or leave it out") }
    }

    func run() throws {
        var options = ImportOptions()
        options.read = try mapping.readOptions()
        options.imagesDir = imagesDir
        options.thumbnail = try thumbnails.spec()
        options.thumbnailIsExplicit = thumbnails.isExplicit
        options.decode = try thumbnails.decodeOptions()
        options.requireImages = requireImages
        options.rejectsPath = rejects
        options.dryRun = dryRun
        options.jobs = parallel.resolvedJobs
        options.shard = shard.flatMap(Shard.init(parsing:)) ?? .all
        options.batchSize = batchSize

        var placesRepo: (any PlaceRepository)?
        var imagesRepo: (any ImageRepository)?
        var server: String?
        if !dryRun {
            let connection = try database.connect()
            let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
            server = connection.hosts
            do { try db.ensureIndexes() } catch {
                printError(naming(server: server, in: error.description))
                throw ExitStatus.failure
            }
            placesRepo = LocationsRepository(database: db)
            imagesRepo = FilesRepository(store: try storage.fileStore(database: db))
        }

        let printer = EventPrinter(options: output, unit: "records")
        let job = ImportJob(options: options, places: placesRepo, images: imagesRepo, observer: printer.observer)
        let summary = try printer.run(server: server) { () throws(JobError) in try job.run(files: files) }
        if output.json {
            try printJSON(summary)
        } else if output.showsSummary {
            print(Self.text(summary))
        }
        if summary.rejected > 0 { throw ExitStatus.rejects }
    }

    static func text(_ s: ImportSummary) -> String {
        var lines = ["\(s.dryRun ? "dry run: " : "")\(s.files) file(s), \(s.rowsRead) records: "
            + "\(s.inserted) \(s.dryRun ? "valid" : "inserted"), \(s.updated) updated, \(s.unchanged) unchanged, \(s.rejected) rejected"
            + (s.skippedByShard > 0 ? ", \(s.skippedByShard) left to other shards" : "")]
        lines.append("images: \(s.imagesStored) stored, \(s.imagesReused) reused, \(s.imagesFailed) failed; "
            + "\(s.thumbnailsMade) thumbnails made; \(String(format: "%.1f", s.seconds)) s")
        if !s.rejectsFiles.isEmpty { lines.append("rejects written to: " + s.rejectsFiles.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }
}
