import ArgumentParser
import PoiFormats
import PoiModel

/// `poi check`: reads and validates dumps exactly as `poi import` would, without a database.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate CSV/GeoJSON dumps exactly as import would, without a database.",
        discussion: """
        Reads each file (CSV, GeoJSON FeatureCollection, Feature or RFC 8142 sequence; detected \
        from the content), maps columns/properties to fields and validates every record. Prints \
        each rejected record (file, record number, line or feature index, field, reason) and the \
        counts of valid and rejected records per file.

        Exit status: 0 all records valid, 1 some records rejected, 2 a file cannot be read at all \
        (missing, empty, no name/latitude/longitude column) or bad arguments.

        Examples:
          poi check Samples/places.csv Samples/landmarks.geojson
          poi check dump.csv --field name=Title --field id=source_id --delimiter ';'
          poi check export.geojson --json | jq .rejected
        """
    )

    @Argument(help: ArgumentHelp("CSV or GeoJSON files ('-' reads standard input).", valueName: "file"))
    var files: [String]

    @OptionGroup var mapping: FieldMappingOptions

    @Flag(help: "Print one JSON object on stdout: per-file counts, totals and every reject.")
    var json = false

    func run() throws {
        let options = try mapping.readOptions()
        var out = FileDescriptorSink(fd: 1, name: "stdout")
        var buffer: [UInt8] = []
        func emit(_ text: String) {
            buffer.append(contentsOf: text.utf8)
            if buffer.count > 64 * 1024 { flush() }
        }
        func flush() {
            buffer.withUnsafeBytes { b in try? out.write(b) }
            buffer.removeAll(keepingCapacity: true)
        }

        var totalValid = 0, totalRejected = 0, unreadable = 0
        var summaries: [JSONValue] = []
        if json { emit("{\"rejects\":[") }
        var firstReject = true
        for file in files {
            var valid = 0, rejected = 0
            var summary = JSONObject()
            summary.append("file", .string(file))
            do {
                let reader = try PlaceReader(path: file, options: options)
                summary.append("format", .string(reader.format.rawValue))
                // Counted as they come, so a file that breaks off midway still reports its counts.
                try reader.validateRemaining(valid: &valid) { r, _ in
                    rejected += 1
                    if json {
                        var b: [UInt8] = Array((firstReject ? "\n" : ",\n").utf8)
                        JSONEncoding.append(rejectJSON(r), to: &b)
                        emit(String(decoding: b, as: UTF8.self))
                        firstReject = false
                    } else {
                        emit(rejectLine(r) + "\n")
                    }
                }
                summary.append("valid", .integer(Int64(valid)))
                summary.append("rejected", .integer(Int64(rejected)))
                if !json { emit("\(file): \(valid) valid, \(rejected) rejected\n") }
            } catch {
                unreadable += 1
                summary.append("valid", .integer(Int64(valid)))
                summary.append("rejected", .integer(Int64(rejected)))
                summary.append("error", .string(error.description))
                if json { flush() } else { flush() }
                printError(error.description)
            }
            totalValid += valid
            totalRejected += rejected
            summaries.append(.object(summary))
        }
        if json {
            var tail = JSONObject()
            tail.append("files", .array(summaries))
            tail.append("valid", .integer(Int64(totalValid)))
            tail.append("rejected", .integer(Int64(totalRejected)))
            tail.append("unreadable", .integer(Int64(unreadable)))
            var b: [UInt8] = Array("\n],".utf8)
            var t: [UInt8] = []
            JSONEncoding.append(.object(tail), to: &t)
            b.append(contentsOf: t.dropFirst())  // splice the members after "rejects"
            b.append(0x0A)
            emit(String(decoding: b, as: UTF8.self))
        } else if files.count > 1 {
            emit("total: \(totalValid) valid, \(totalRejected) rejected"
                 + (unreadable > 0 ? ", \(unreadable) file(s) unreadable" : "") + "\n")
        }
        flush()
        if unreadable > 0 { throw ExitStatus.usage }
        if totalRejected > 0 { throw ExitStatus.rejects }
    }
}
