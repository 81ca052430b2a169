import ArgumentParser
import Foundation
import PoiFormats
import PoiJobs
import PoiStore

enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    case geojson, csv, tsv
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export places as RFC 7946 GeoJSON or as CSV.",
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

        CSV (--format csv, or an -o name ending in .csv, .csv.gz, .tsv or .tsv.gz): one row per \
        place, columns id (the _id), name, lat, lon (exact, as in GeoJSON), alt (the altitude, when a \
        place has one), placename, details, \
        categories (joined with ";", what the import splits on; as a JSON array when a category \
        holds ";" or "|"), importKey, imageId, thumbnailId, created_at, updated_at (ISO 8601), then \
        every other property the GeoJSON export would write (_source, imageSource, image with \
        --with-images, each extra under the same "NAME (extra)" rule) as a column of its own, in the \
        order first seen. Text is written as it is, an empty text as "", and a place without the \
        property gets nothing at all; numbers and booleans as JSON writes them; lists and objects as \
        compact JSON. The places are read once: rows wait in a temporary file beside the output \
        until the columns are known. --fields a,b,c picks and orders the columns instead (as \
        mongoexport --fields). --excel writes what \
        Excel opens right by double-click: a UTF-8 byte-order mark, CRLF, and text starting with = + \
        - @ prefixed with ' so it is not run as a formula (for people: the prefix is part of the \
        text to any other reader).

        Beside an -o CSV file goes its GDAL .csvt (places.csv -> places.csvt, places.csv.gz -> \
        places.csv.csvt, as ogr2ogr names and writes it with -lco CREATE_CSVT=YES; an export whose \
        .csvt would be another CSV's too, t.tsv beside t.csv, is refused): each column's \
        type. `poi import` and ogr2ogr read it, so numbers, booleans and dates come back typed. A \
        column of lists or objects, or whose values differ in type, is String(JSON), and each of its \
        values is written as JSON ("text" in quotes, null as null); GDAL 3.6 does not know that type, \
        says so, and reads the column as text. Imported back, the CSV leaves every place unchanged, \
        its altitude included; moved without its .csvt, typed values come \
        back as text. Standard output, a device or a pipe gets no .csvt. A CSV with more columns \
        (4096) or a longer row (1 MiB) than `poi import` reads is written with a warning.

        Exit status: 0 done, 1 some images could not be copied (--with-images), 2 bad arguments, refused query, no `locations` collection or an \
        empty result refused, 3 database or disk failure.

        Examples:
          poi export -o out/places.geojson
          poi export --bbox -0.51,51.28,0.33,51.69 --category museum -o london-museums.geojson
          poi export --since 2026-11-01 --seq > changes.geojsons
          poi export --query '{"extra.wheelchair": true}' -o accessible.geojson
          poi export -o out/places.geojson --with-images out/images
          poi export -o places.csv                      # and places.csvt, the column types
          poi export --format csv --fields name,lat,lon,categories --category museum > museums.csv
          poi export -o marketing.csv --excel --fields name,placename,lat,lon
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file ('-' or none: standard output).", valueName: "file"))
    var out: String?

    /// The output file; nil for standard output.
    private var outputFile: String? { out == "-" ? nil : out }

    @Option(help: ArgumentHelp("Output format: geojson (default), csv or tsv; an -o name ending in .csv or .tsv "
                               + "(also .gz) chooses csv or tsv.", valueName: "format"))
    var format: ExportFormat?

    @Flag(help: "Write GeoJSON Text Sequences (RFC 8142) instead of a FeatureCollection.")
    var seq = false

    @Option(help: ArgumentHelp("CSV: only these columns, in this order (comma-separated, repeatable).", valueName: "a,b,c"))
    var fields: [String] = []

    @Flag(help: "CSV: a byte-order mark, CRLF and formulas shown as text, for Excel.")
    var excel = false

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

    /// The format asked for, else the one the -o name says.
    private var effectiveFormat: ExportFormat {
        if let format { return format }
        guard var name = outputFile?.lowercased() else { return .geojson }
        if name.hasSuffix(".gz") { name.removeLast(3) }
        if name.hasSuffix(".csv") { return .csv }
        if name.hasSuffix(".tsv") { return .tsv }
        return .geojson
    }

    /// `--fields a,b --fields c` as one list.
    private var fieldList: [String] {
        fields.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) } }
    }

    func validate() throws {
        let isCSV = effectiveFormat != .geojson
        if isCSV && seq { throw ValidationError("--seq is a GeoJSON output; CSV has one row per place anyway") }
        if !isCSV && !fields.isEmpty { throw ValidationError("--fields picks CSV columns; add --format csv (or -o NAME.csv)") }
        if !isCSV && excel { throw ValidationError("--excel shapes a CSV file; add --format csv (or -o NAME.csv)") }
        if fieldList.contains("") { throw ValidationError("--fields has an empty name; give names separated by commas, as in --fields name,lat,lon") }
        if let dup = fieldList.enumerated().first(where: { fieldList[..<$0.offset].contains($0.element) })?.element {
            throw ValidationError("--fields names \(dup) twice")
        }
        guard precision.map({ (0...15).contains($0) }) ?? true else { throw ValidationError("--precision must be between 0 and 15") }
        if output.json && outputFile == nil { throw ValidationError("--json prints the summary on stdout; give the export a file with -o") }
        if out == "" { throw ValidationError("-o needs a file name, or - for standard output") }
    }

    func run() throws {
        var options = ExportOptions()
        options.style = seq ? .sequence : .featureCollection
        options.precision = precision
        options.outputPath = outputFile
        options.gzip = gzip || (outputFile?.lowercased().hasSuffix(".gz") ?? false)
        if effectiveFormat != .geojson {
            options.csv = CSVExportOptions(tabs: effectiveFormat == .tsv, excel: excel, fields: fields.isEmpty ? nil : fieldList)
        }
        if outputFile == nil && Console.closedAtStart.contains(1) {
            printError("standard output is closed; give the export a file with -o")
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
            if let columns = summary.columns { text += "; \(columns.count) columns" }
            if let typesFile = summary.typesFile { text += ", their types in \(typesFile)" }
            try printOut(text)
        }
        if let beyond = summary.beyondImportLimits, !output.quiet {
            printError("warning: the CSV has \(beyond): it will not import back; export GeoJSON to move these places between databases")
        }
        // A --fields name no place had: a typo, most likely (mongoexport says nothing).
        for column in summary.emptyColumns ?? [] where !output.quiet {
            printError("warning: column \(column) is empty in every row: no exported place has a property of that name")
        }
        // Images that could not be copied are failed files (exit 1), like rejected rows.
        if summary.imagesFailed > 0 { throw ExitStatus.rejects }
    }
}
