import ArgumentParser
import PoiFormats
import PoiModel

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

        The output is written to a temporary file beside OUT and renamed into place only when \
        complete, so OUT is never left half-written. '-o -' streams to standard output instead.

        Exit status: 0 all records converted, 1 some records rejected, 2 IN cannot be read or \
        bad arguments, 3 OUT cannot be written.

        Examples:
          poi convert Samples/places.csv -o places.geojson
          poi convert dump.csv -o dump.geojsons --seq --precision 6 --field name=Title
          poi convert landmarks.geojson -o - | jq '.features | length'
        """
    )

    @Argument(help: ArgumentHelp("CSV or GeoJSON input ('-' reads standard input).", valueName: "in"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file ('-' for standard output).", valueName: "out"))
    var output: String

    @Flag(help: "Write GeoJSON Text Sequences (RFC 8142) instead of a FeatureCollection.")
    var seq = false

    @Option(help: ArgumentHelp("Decimals of coordinates, 0 to 15.", valueName: "n"))
    var precision: Int = 7

    @OptionGroup var mapping: FieldMappingOptions

    @Flag(help: "Do not print each reject, only the summary.")
    var quiet = false

    func validate() throws {
        guard (0...15).contains(precision) else { throw ValidationError("--precision must be between 0 and 15") }
    }

    func run() throws {
        let options = try mapping.readOptions()
        let reader: PlaceReader
        do {
            reader = try PlaceReader(path: input, options: options)
        } catch {
            printError(error.description)
            throw ExitStatus.usage
        }
        let atomic: AtomicFile?
        let sink: FileDescriptorSink
        if output == "-" {
            atomic = nil
            sink = FileDescriptorSink(fd: 1, name: "stdout")
        } else {
            do {
                atomic = try AtomicFile(path: output)
            } catch {
                printError(error.description)
                throw ExitStatus.failure
            }
            sink = atomic!.sink
        }
        var writer = GeoJSONWriter(sink: sink, style: seq ? .sequence : .featureCollection, precision: precision)
        var rejected = 0
        do {
            while let item = try reader.next() {
                switch item {
                case .place(let p): try writer.write(p)
                case .reject(let r, _):
                    rejected += 1
                    if !quiet { printError(rejectLine(r)) }
                }
            }
            try writer.finish()
            try atomic?.commit()
        } catch {
            atomic?.abandon()
            printError(error.description)
            if case .readFailed = error { throw ExitStatus.usage }
            throw ExitStatus.failure
        }
        if output != "-" || rejected > 0 {
            printError("\(writer.featureCount) places written to \(output), \(rejected) rejected")
        }
        if rejected > 0 { throw ExitStatus.rejects }
    }
}
