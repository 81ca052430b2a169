import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

/// More than ten stored properties: swift-argument-parser declares each option of the command as one.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import CSV/GeoJSON dumps and their images; reruns change nothing.",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        \(FieldMappingOptions.readingRules) All rules and options: \
        docs/poi.md#poi-import.

        Examples:
          poi import Samples/places.csv Samples/landmarks.geojson
          poi import dump.csv --field name=Title --images-dir photos/ --dry-run
          poi import dumps/*.csv --quiet; [ $? -le 1 ] && poi export -o places.geojson
        """
    )

    @Argument(help: ArgumentHelp("CSV/GeoJSON files, .gz or .zip too ('-': stdin).", valueName: "file"))
    var files: [String]

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var mapping: FieldMappingOptions
    @OptionGroup var thumbnails: ThumbnailRecipeOptions
    @OptionGroup var parallel: ParallelOptions
    @OptionGroup var output: OutputOptions

    @Option(help: ArgumentHelp("Image paths' folder (default: each input's).", valueName: "dir"))
    var imagesDir: String?

    @Option(help: ArgumentHelp("Rejects file (one input only; default: NAME.rejects.csv/.geojson beside the input).",
                               valueName: "file", visibility: .hidden))
    var rejects: String?

    @Flag(help: "Reject a record whose image is missing or broken.")
    var requireImages = false

    @Flag(help: "Validate and decode everything, write nothing.")
    var dryRun = false

    @Option(help: ArgumentHelp("Import only the records whose key hashes to shard I of N.", valueName: "I/N",
                               visibility: .hidden))
    var shard: Shard?

    @Option(help: ArgumentHelp("A key seen before: reject, keep first or last.", valueName: "rule"))
    var onDuplicate: DuplicatePolicy = .reject

    @Option(help: ArgumentHelp("Places per bulk write.", visibility: .hidden))
    var batchSize: Int = 500

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file to import") }
        guard (1...100_000).contains(batchSize) else { throw ValidationError("--batch-size must be between 1 and 100000") }
        if rejects != nil && files.count > 1 { throw ValidationError("--rejects names one file; give one input, or leave it out") }
    }

    func run() throws {
        var options = ImportOptions()
        options.read = try mapping.readOptions()
        options.imagesDir = imagesDir
        options.thumbnail = try thumbnails.spec()
        options.thumbnailIsExplicit = thumbnails.isExplicit
        options.decode = thumbnails.decodeOptions
        options.requireImages = requireImages
        options.rejectsPath = rejects
        options.dryRun = dryRun
        options.jobs = parallel.resolvedJobs
        options.memory = parallel.memoryBytes
        options.shard = shard ?? .all
        options.batchSize = batchSize
        options.onDuplicate = onDuplicate

        var placesRepo: (any PlaceRepository)?
        var imagesRepo: (any ImageRepository)?
        var server: String?
        if !dryRun {
            let connection = try database.connect()
            let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
            server = connection.hosts
            placesRepo = LocationsRepository(database: db)
            imagesRepo = FilesRepository(store: try storage.fileStore(database: db), retryingOn: db.connection)
        }

        let printer = EventPrinter(options: output, unit: "records")
        let job = ImportJob(options: options, places: placesRepo, images: imagesRepo, observer: printer.observer)
        let summary = try printer.run(server: server) { () throws(JobError) in try job.run(files: files) }
        if !output.quiet {
            for file in summary.skippedRejectsFiles {
                Console.writeError("poi: skipped \(TerminalText.escaped(file)): a rejects file of an earlier import, "
                    + "not a dump (import it alone once fixed)\n")
            }
            for member in summary.skippedMembers { Console.writeError(skippedMemberLine(member) + "\n") }
        }
        if output.json {
            try printJSON(summary)
        } else if output.showsSummary {
            try printOut(Self.text(summary))
        }
        if summary.imagesMissing > 0 {
            printError(CLIHints.missingBytes("The images of \(summary.imagesMissing) records", storage: storage))
        }
        // A failed image is a failed file (README: exit 1 "with rejected rows or files"); the place
        // carries imageSource and imageError to find and retry it.
        if summary.rejected > 0 || summary.imagesMissing > 0 || summary.imagesFailed > 0 { throw ExitStatus.rejects }
    }

    static func text(_ s: ImportSummary) -> String {
        var lines = ["\(s.dryRun ? "dry run: " : "")\(s.files) file(s), \(s.rowsRead) records: "
            + "\(s.inserted) \(s.dryRun ? "valid" : "inserted"), \(s.updated) updated, \(s.unchanged) unchanged, \(s.rejected) rejected"
            + (s.skippedByShard > 0 ? ", \(s.skippedByShard) left to other shards" : "")
            + (s.duplicates > 0 ? ", \(s.duplicates) duplicate keys set aside" : "")]
        lines.append("images: \(s.imagesStored) stored, \(s.imagesReused) reused, "
            + (s.imagesMissing > 0 ? "\(s.imagesMissing) missing from the file store, " : "") + "\(s.imagesFailed) failed; "
            + "\(s.thumbnailsMade) thumbnails made; \(String(format: "%.1f", s.seconds)) s")
        if !s.rejectsFiles.isEmpty { lines.append("rejects written to: " + s.rejectsFiles.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }
}
