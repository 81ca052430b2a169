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

        Keys: each place is upserted by its import key — an importKey column or property \
        (PoiKit's exports carry one), else the id column or the GeoJSON Feature id, else a hash \
        of name + coordinates (announced once per file, with the columns that look like ids). \
        A key is text: the ids 7, "7" and 7.0 are the same key "7" (a CSV has only text, and a \
        number id of a GeoJSON file must match the same place's CSV id); text is compared byte \
        for byte, after trimming.

        Duplicates: a key appears once per run. A record whose key an earlier record of the run \
        (any of its files) already had is rejected with "duplicate key of line N" (or feature \
        N), unless --on-duplicate first keeps the earlier one or --on-duplicate last keeps \
        the last one (the others counted as "duplicates"; last reads the inputs twice, so \
        only the last record is ever written, and cannot read standard input). An exact copy \
        of the record kept counts as unchanged.

        Change detection: a rerun compares each record with a digest of what PoiKit last \
        wrote for it, not with the stored fields, so nothing is written unless the dump \
        changed. An app's edit of a field PoiKit writes (a new name, say) therefore stays \
        until the dump changes that place, which then writes the dump's fields again; fields \
        PoiKit does not write (a rating, say) are never touched.

        Images: an image column or property sets the place's image link; present but empty, it \
        removes the link; a file without one leaves the stored link as it is (so re-importing \
        an export keeps the photos). A feature of an export made without --with-images (or \
        whose photo could not be copied) names its database's imageId and no image: where this \
        database holds that image the link stays; elsewhere the photo is missing, so the place \
        gets imageSource (the id) and imageError and the run exits 1. Provenance (source file and line) is stored with the \
        place but is not content: a renamed or reordered dump leaves places unchanged.

        Thumbnails: JPEG, or PNG for an image with alpha, unless --thumbnail-format (also \
        --format: the thumbnails', not the input's) says jpeg, png or webp: lossy WebP at \
        --quality with alpha kept, stored as image/webp with ext .webp. Photos are JPEG or PNG.

        Rejected records are listed on stderr and written to NAME.rejects.csv (or \
        .rejects.geojson) beside the input: the same format plus _line/_feature, _field and \
        _reason, ready to fix and import again. When the input has no folder to write beside \
        (standard input, <(cmd), /dev/fd/N, a read-only folder) it goes to the current folder \
        (stdin.rejects.csv, fd63.rejects.csv), else to $TMPDIR; the summary names it. A missing \
        or broken image does not reject its place unless --require-images is given: the place is \
        stored without it, with the reference and the reason in imageSource and imageError, and \
        the run exits 1.

        One of PoiKit's own rejects files (named *.rejects.csv or *.rejects.geojson, with the \
        _line,_field,_reason columns or _feature properties) given among other inputs is \
        skipped with one line saying so, so `poi import dumps/*.csv` never imports yesterday's \
        rejects as a dump; named alone, a fixed rejects file is imported, its _line, _field and \
        _reason columns ignored.

        \(FieldMappingOptions.readingRules)

        Exit status: 0 all imported, 1 finished, some records or images rejected (the rest is \
        imported: chain the next step on `[ $? -le 1 ]`, not on &&), 2 bad arguments or unreadable \
        input, 3 database or disk failure (rerun to finish: nothing is duplicated). With \
        --json a failure prints {"error": ..., "exitStatus": N} on stdout instead of the summary.

        Examples:
          poi import Samples/places.csv Samples/landmarks.geojson
          poi import dump.csv --field name=Title --field id=source_id --images-dir photos/
          poi import big.geojson --gridfs --jobs 8 --json > summary.json
          poi import places.csv --thumbnail-format webp --quality 80
          poi import new.csv --dry-run
          poi import cities.csv --types population=int,elevation=double,opened=date   # typed extra columns
          poi import /data/dumps/*.csv --quiet; [ $? -le 1 ] && poi export -o places.geojson --quiet
          poi import monthly.csv fixes.csv --on-duplicate last   # a later row corrects an earlier one
          poi import big.csv --shard 0/2     # and --shard 1/2 on a second machine
        """
    )

    @Argument(help: ArgumentHelp("CSV or GeoJSON files, gzip'd or not; a .zip imports each CSV/GeoJSON member in name order ('-' reads standard input).", valueName: "file"))
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
    var shard: Shard?

    @Option(help: ArgumentHelp("A record whose key an earlier record of the run had: reject it, keep the first, "
                               + "or keep the last.", valueName: "reject|first|last"))
    var onDuplicate: DuplicatePolicy = .reject

    @Option(help: "Places per bulk write.")
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
