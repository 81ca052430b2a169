import ArgumentParser
import PoiFormats
import PoiJobs

/// `poi convert`: CSV/GeoJSON in, RFC 7946 GeoJSON (or RFC 8142 sequence) out, no database.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a CSV/GeoJSON dump to RFC 7946 GeoJSON, validating as import would.",
        discussion: """
        Reads IN with the same mapping and validation as `poi import` and writes the valid places \
        as a GeoJSON FeatureCollection (or, with --seq, GeoJSON Text Sequences, RFC 8142). \
        Properties: name, placename, details, categories, image, importKey, then the unmapped \
        columns/properties. Rejected records are reported on stderr as in `poi check`.

        OUT is written to a temporary file beside it and renamed into place only when complete, \
        so it is never left half-written; a symlink is followed, a device or FIFO is written in \
        place, an existing file keeps its permissions, and OUT may not be IN. '-o -' streams to \
        standard output instead.

        Exit status: 0 all records converted, 1 some records rejected, 2 IN cannot be read or \
        bad arguments, 3 OUT cannot be written.

        Examples:
          poi convert Samples/places.csv -o places.geojson
          poi convert dump.csv -o dump.geojsons --seq --precision 6 --field name=Title
          poi convert landmarks.geojson -o - | jq '.features | length'
        """
    )

    @Argument(help: ArgumentHelp("CSV or GeoJSON input, gzip'd or not; a .zip converts its CSV/GeoJSON members in name order into one output ('-' reads standard input).", valueName: "in"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file ('-' for standard output).", valueName: "out"))
    var output: String

    @Flag(help: "Write GeoJSON Text Sequences (RFC 8142) instead of a FeatureCollection.")
    var seq = false

    @Flag(help: "gzip the output (implied by an -o name ending in .gz).")
    var gzip = false

    @Option(help: ArgumentHelp("Round coordinates to this many decimals, 0 to 15 (default: exact, as read).",
                               valueName: "n"))
    var precision: Int?

    @OptionGroup var mapping: FieldMappingOptions

    @Option(help: ArgumentHelp("A record whose key an earlier record had: reject it, write the first, or write "
                               + "the last (as import stores them; last needs a file, read twice).",
                               valueName: "reject|first|last"))
    var onDuplicate: DuplicatePolicy = .reject

    @Flag(name: .shortAndLong, help: "Do not print each reject, only the summary.")
    var quiet = false

    @Flag(help: "Print one JSON summary object on stdout (needs -o FILE).")
    var json = false

    func validate() throws {
        guard precision.map({ (0...15).contains($0) }) ?? true else { throw ValidationError("--precision must be between 0 and 15") }
        guard !output.isEmpty else { throw ValidationError("-o needs a file name, or - for standard output") }
        if json && output == "-" { throw ValidationError("--json prints the summary on stdout; give the GeoJSON a file with -o") }
    }

    func run() throws {
        var options = ConvertOptions()
        options.read = try mapping.readOptions()
        options.style = seq ? .sequence : .featureCollection
        options.precision = precision
        options.onDuplicate = onDuplicate
        options.gzip = gzip || output.lowercased().hasSuffix(".gz")
        let quiet = quiet
        let job = ConvertJob(input: input, output: output == "-" ? nil : output, options: options) { event in
            if case .rejected(let r) = event, !quiet { printError(rejectLine(r)) }
            if case .note(let n) = event, !quiet { Console.writeError(noteLine(n) + "\n") }
        }
        if output == "-" && Console.closedAtStart.contains(1) {
            printError("standard output is closed; give the GeoJSON a file with -o")
            throw ExitStatus.failure
        }
        let summary: ConvertSummary
        do { summary = try job.run() } catch {
            printError(CLIHints.message(for: error))
            throw ExitStatus.of(error)
        }
        if !quiet && !json {
            for member in summary.skippedMembers { Console.writeError(skippedMemberLine(member) + "\n") }
        }
        if json {
            try printJSON(summary)
        } else if output != "-" || summary.rejected > 0 || summary.unchanged > 0 || summary.duplicates > 0 {
            var line = "\(summary.features) places written to \(output == "-" ? "standard output" : output), \(summary.rejected) rejected"
            if summary.unchanged > 0 { line += ", \(summary.unchanged) exact repeat(s) written once" }
            if summary.duplicates > 0 { line += ", \(summary.duplicates) duplicate key(s) left out (--on-duplicate \(onDuplicate.rawValue))" }
            printError(line)
        }
        if summary.rejected > 0 { throw ExitStatus.rejects }
    }
}
