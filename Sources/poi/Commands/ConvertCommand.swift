import ArgumentParser
import PoiFormats
import PoiJobs

/// `poi convert`: CSV/GeoJSON in, RFC 7946 GeoJSON (or RFC 8142 sequence) out, no database.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a dump to GeoJSON, validating as import would.",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Writes the valid places as an RFC 7946 FeatureCollection (--seq: RFC 8142), \
        replacing OUT only when complete; rejects are reported as by `poi check` (exit \
        status 1). All rules and options: docs/poi.md#poi-convert.

        Examples:
          poi convert Samples/places.csv -o places.geojson
          poi convert dump.csv -o dump.geojsons --seq --field name=Title
          poi convert landmarks.geojson -o - | jq '.features | length'
        """
    )

    @Argument(help: ArgumentHelp("CSV/GeoJSON input, .gz or .zip too ('-': stdin).", valueName: "in"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file ('-' for standard output).", valueName: "out"))
    var output: String

    @Flag(help: "GeoJSON Text Sequences (RFC 8142), not a collection.")
    var seq = false

    @Flag(help: "gzip the output (implied by -o NAME.gz).")
    var gzip = false

    @Option(help: ArgumentHelp("Round coordinates to n decimals (default: exact).",
                               valueName: "n"))
    var precision: Int?

    @OptionGroup var mapping: FieldMappingOptions

    @Option(help: ArgumentHelp("A key seen before: reject, write first or last.",
                               valueName: "rule"))
    var onDuplicate: DuplicatePolicy = .reject

    @Flag(name: .shortAndLong, help: "Do not print each reject, only the summary.")
    var quiet = false

    @Flag(help: "Print one JSON summary on stdout (needs -o FILE).")
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
