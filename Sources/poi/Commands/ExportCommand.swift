import ArgumentParser
import Foundation
import PoiFormats
import PoiJobs
import PoiStore

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export places as RFC 7946 GeoJSON.",
        discussion: """
        Streams `locations`, sorted by _id, as a GeoJSON FeatureCollection (or, with --seq, \
        GeoJSON Text Sequences, RFC 8142). Feature ids are the places' _id; properties carry \
        name, placename, details, categories, importKey, imageId, thumbnailId, created_at, \
        updated_at, _source (the place's provenance) and the place's extra fields, so the file \
        imports again unchanged: into the same database every place counts as unchanged and \
        keeps its photo (the file names no image, so links stay), into another one (with \
        --with-images) it gives the same documents, ids and timestamps aside. Without \
        --with-images the photos stay behind: an import into another database says so for each \
        place that had one (imageSource, imageError) and exits 1.

        Extras are plain properties under their own names, except one named like a field (name, \
        title, address, lat, image, id, importKey and the other recognised names), like a \
        property the export writes itself (imageId, thumbnailId, created_at, updated_at, \
        _source, imageSource, imageError) or a rejects column (_line, _feature, _field, _reason), \
        or ending in " (extra)": that one is written as "NAME (extra)", whether or not the place \
        has that property, and `poi import` takes it back as extra.NAME.

        Coordinates are written exactly as stored: the shortest decimal that reads back as the \
        same number (what any language's JSON writer gives), without exponent. --precision N \
        rounds them to N decimals instead (7 is about 1 cm; a rounded file no longer imports \
        back unchanged). Other numbers keep their type and sign (5, 5.0, -0.0), and integers \
        beyond 64 bits (stored as Decimal128) their digits.

        With -o, the output is written to a temporary file and renamed into place only when \
        complete: an interrupted export leaves the previous file as it was.

        Filters combine with AND. --query takes a MongoDB Extended JSON object; server-side \
        JavaScript ($where, $function, $accumulator) is refused, and so is a query the server \
        finds malformed (an unknown operator such as $badop), with the server's reason. \
        --query may be repeated: the queries combine with $and.

        A database without a `locations` collection (a mistyped --db) is an error naming the \
        databases that have one. An export that matches no place does not replace a non-empty \
        -o file unless --allow-empty is given (it exits 2 and leaves the file as it was).

        Exit status: 0 done, 1 some images could not be copied (--with-images), 2 bad arguments, refused query, no `locations` collection or an \
        empty result refused, 3 database or disk failure.

        Examples:
          poi export -o out/places.geojson
          poi export --bbox -0.51,51.28,0.33,51.69 --category museum -o london-museums.geojson
          poi export --since 2026-11-01 --seq > changes.geojsons
          poi export --query '{"extra.wheelchair": true}' -o accessible.geojson
          poi export -o out/places.geojson --with-images out/images
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file ('-' or none: standard output).", valueName: "file"))
    var out: String?

    /// The output file; nil for standard output.
    private var outputFile: String? { out == "-" ? nil : out }

    @Flag(help: "Write GeoJSON Text Sequences (RFC 8142) instead of a FeatureCollection.")
    var seq = false

    @Flag(help: "gzip the output (implied by an -o name ending in .gz).")
    var gzip = false

    @Option(help: ArgumentHelp("Round coordinates to this many decimals, 0-15 (default: exact, as stored).",
                               valueName: "n"))
    var precision: Int?

    // Unconditional: the value usually starts with a minus sign (a western or southern edge).
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Only places inside this box: four decimal degrees west,south,east,north, "
                               + "south <= north; west > east crosses the antimeridian.",
                               valueName: "W,S,E,N"))
    var bbox: BoundingBox?

    @Option(help: ArgumentHelp("Only places in this category (repeatable: any of them).", valueName: "name"))
    var category: [String] = []

    @Option(help: ArgumentHelp("Only places updated at or after this time: a day (2026-11-01, midnight UTC) or a "
                               + "date-time with its zone (2026-11-01T06:00:00Z, 2026-11-01T08:00:00+02:00).",
                               valueName: "date"))
    var since: SinceDate?

    @Option(help: ArgumentHelp("An extra MongoDB filter: a JSON object in Extended JSON (repeatable: all must match).",
                               valueName: "json"))
    var query: [String] = []

    @Flag(help: "Replace a non-empty -o file even when no place matches.")
    var allowEmpty = false

    @Option(help: ArgumentHelp("Copy each place's original image into this folder and write relative image paths.",
                               valueName: "dir"))
    var withImages: String?

    func validate() throws {
        guard precision.map({ (0...15).contains($0) }) ?? true else { throw ValidationError("--precision must be between 0 and 15") }
        if output.json && outputFile == nil { throw ValidationError("--json prints the summary on stdout; give the GeoJSON a file with -o") }
        if out == "" { throw ValidationError("-o needs a file name, or - for standard output") }
    }

    func run() throws {
        var options = ExportOptions()
        options.style = seq ? .sequence : .featureCollection
        options.precision = precision
        options.outputPath = outputFile
        options.gzip = gzip || (outputFile?.lowercased().hasSuffix(".gz") ?? false)
        if outputFile == nil && Console.closedAtStart.contains(1) {
            printError("standard output is closed; give the GeoJSON a file with -o")
            throw ExitStatus.failure
        }
        options.imagesDir = withImages
        options.countTotal = output.showsProgress
        options.allowEmpty = allowEmpty
        let queries = try query.map { json -> BSONDocument in
            do throws(StoreError) { return try PlaceFilter.userQuery(json: json) } catch { throw ValidationError(error.description) }
        }
        options.filter = PlaceFilter(
            bbox: bbox,
            categories: category,
            since: since?.date,
            // Repeated: every one must match (never just the last one, silently).
            userQuery: queries.count <= 1 ? queries.first : ["$and": .array(queries.map(BSONValue.document))])

        let connection = try database.connect()
        let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
        let store = withImages == nil ? nil : try storage.fileStore(database: db, creating: false)
        let printer = EventPrinter(options: output, unit: "places")
        let job = ExportJob(database: db, fileStore: store, options: options, observer: printer.observer)
        let summary = try printer.run(server: connection.hosts) { () throws(JobError) in try job.run() }
        if output.json {
            try printJSON(summary)
        } else if output.showsSummary, let outputFile {
            var text = "exported \(summary.features) places to \(outputFile)"
            if summary.skipped > 0 { text += " (\(summary.skipped) without a valid Point skipped)" }
            if withImages != nil { text += "; \(summary.imagesCopied) images copied, \(summary.imagesFailed) failed" }
            try printOut(text)
        }
        // Images that could not be copied are failed files (exit 1), like rejected rows.
        if summary.imagesFailed > 0 { throw ExitStatus.rejects }
    }
}
