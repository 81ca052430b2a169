import ArgumentParser
import Foundation
import PoiFormats
import PoiJobs
import PoiStore

enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    case geojson, csv, tsv
}

/// More than ten stored properties: swift-argument-parser declares each option of the command as one.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export places as RFC 7946 GeoJSON or as CSV.",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Streams `locations` by _id; filters combine with AND. An -o file is replaced \
        only when complete; -o NAME.csv writes CSV and its .csvt column types. Exit \
        status 1: some images could not be copied. All rules: docs/poi.md#poi-export.

        Examples:
          poi export -o places.geojson
          poi export --bbox -0.51,51.28,0.33,51.69 --category museum -o museums.csv
          poi export --since 2026-11-01 --seq > changes.geojsons
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (default: standard output).", valueName: "file"))
    var out: String?

    /// The output file; nil for standard output.
    private var outputFile: String? { out == "-" ? nil : out }

    @Option(help: ArgumentHelp("Else from the -o name (.csv, .tsv).", valueName: "format"))
    var format: ExportFormat?

    @Flag(help: "GeoJSON Text Sequences (RFC 8142), not a collection.")
    var seq = false

    @Option(help: ArgumentHelp("CSV: only these columns, in this order.", valueName: "a,b,c"))
    var fields: [String] = []

    @Flag(help: "CSV for Excel: BOM, CRLF, formulas shown as text.")
    var excel = false

    @Flag(help: "gzip the output (implied by -o NAME.gz).")
    var gzip = false

    @Option(help: ArgumentHelp("Round coordinates to n decimals (default: exact).",
                               valueName: "n"))
    var precision: Int?

    // Unconditional: the value usually starts with a minus sign (a western or southern edge).
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Only places in this box (decimal degrees).",
                               valueName: "W,S,E,N"))
    var bbox: BoundingBox?

    @Option(help: ArgumentHelp("Only places in this category (repeatable).", valueName: "name"))
    var category: [String] = []

    @Option(help: ArgumentHelp("Only places updated since: 2026-11-01[T06:00:00Z].",
                               valueName: "date"))
    var since: SinceDate?

    @Option(help: ArgumentHelp("A MongoDB filter, Extended JSON (repeatable: all).",
                               valueName: "json"))
    var query: [String] = []

    @Flag(help: "Replace the -o file even when no place matches.")
    var allowEmpty = false

    @Option(help: ArgumentHelp("Copy the photos here; the file names them.",
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
