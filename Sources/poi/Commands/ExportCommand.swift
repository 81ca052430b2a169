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
        updated_at and the place's extra fields, so the file imports again as updates.

        With -o, the output is written to a temporary file and renamed into place only when \
        complete: an interrupted export leaves the previous file as it was.

        Filters combine with AND. --query takes MongoDB Extended JSON; server-side JavaScript \
        ($where, $function, $accumulator) is refused.

        Exit status: 0 done, 2 bad arguments or refused query, 3 database or disk failure.

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

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (default: stdout).", valueName: "file"))
    var out: String?

    @Flag(help: "Write GeoJSON Text Sequences (RFC 8142) instead of a FeatureCollection.")
    var seq = false

    @Option(help: "Decimals for coordinates (0-15).")
    var precision: Int = 7

    // Unconditional: the value usually starts with a minus sign (a western or southern edge).
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Only places inside this box (west,south,east,north; west > east crosses the antimeridian).",
                               valueName: "W,S,E,N"))
    var bbox: String?

    @Option(help: ArgumentHelp("Only places in this category (repeatable: any of them).", valueName: "name"))
    var category: [String] = []

    @Option(help: ArgumentHelp("Only places updated at or after this time (2026-11-01 or 2026-11-01T06:00:00Z).",
                               valueName: "date"))
    var since: String?

    @Option(help: ArgumentHelp("An extra MongoDB filter in Extended JSON.", valueName: "json"))
    var query: String?

    @Option(help: ArgumentHelp("Copy each place's original image into this folder and write relative image paths.",
                               valueName: "dir"))
    var withImages: String?

    func validate() throws {
        guard (0...15).contains(precision) else { throw ValidationError("--precision must be between 0 and 15") }
        if output.json && out == nil { throw ValidationError("--json prints the summary on stdout; give the GeoJSON a file with -o") }
    }

    func run() throws {
        var options = ExportOptions()
        options.style = seq ? .sequence : .featureCollection
        options.precision = precision
        options.outputPath = out
        options.imagesDir = withImages
        options.countTotal = output.showsProgress
        do {
            options.filter = PlaceFilter(
                bbox: try bbox.map(Self.parseBBox),
                categories: category,
                since: try since.map(Self.parseDate),
                userQuery: try query.map { json -> BSONDocument in
                    do throws(StoreError) { return try PlaceFilter.userQuery(json: json) } catch { throw ValidationError(error.description) }
                })
        }

        let connection = try database.connect()
        let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
        let store = withImages == nil ? nil : try storage.fileStore(database: db)
        let printer = EventPrinter(options: output, unit: "places")
        let job = ExportJob(database: db, fileStore: store, options: options, observer: printer.observer)
        let summary = try printer.run(server: connection.hosts) { () throws(JobError) in try job.run() }
        if output.json {
            try printJSON(summary)
        } else if output.showsSummary, out != nil {
            var text = "exported \(summary.features) places to \(out!)"
            if summary.skipped > 0 { text += " (\(summary.skipped) without a valid Point skipped)" }
            if withImages != nil { text += "; \(summary.imagesCopied) images copied, \(summary.imagesFailed) failed" }
            print(text)
        }
    }

    static func parseBBox(_ text: String) throws -> BoundingBox {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 4, let w = parts[0], let s = parts[1], let e = parts[2], let n = parts[3] else {
            throw ValidationError("--bbox must be four numbers W,S,E,N, got \(text)")
        }
        do { return try BoundingBox(west: w, south: s, east: e, north: n) } catch { throw ValidationError(error.description) }
    }

    /// A day (UTC midnight) or an ISO 8601 date-time with zone.
    static func parseDate(_ text: String) throws -> BSONDate {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for f in [full, plain, day] {
            if let date = f.date(from: text) { return BSONDate(date) }
        }
        throw ValidationError("--since must be a date like 2026-11-01 or 2026-11-01T06:00:00Z, got \(text)")
    }
}
