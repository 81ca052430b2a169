import ArgumentParser
import PoiFormats
import PoiModel

/// `--field FIELD=COLUMN` (repeatable) and `--delimiter C`: how dumps map to place fields.
/// Shared by every command that reads dumps (check, convert, import) so they agree exactly.
struct FieldMappingOptions: ParsableArguments {
    @Option(name: .customLong("field"),
            help: ArgumentHelp("Map a column/property to a field, e.g. name=Title or id=source_id (repeatable). "
                               + "Fields: name, placename, latitude, longitude, details, categories, image, id, importKey.",
                               valueName: "field=column"))
    var fields: [String] = []

    @Option(help: ArgumentHelp("CSV delimiter: ',', ';', '|' or 'tab' (default: detected from the header).",
                               valueName: "c"))
    var delimiter: String?

    /// The reader options, or a `ValidationError` (exit 2) naming the bad argument.
    func readOptions() throws -> ReadOptions {
        let mapping: FieldMapping
        do {
            mapping = try FieldMapping(arguments: fields)
        } catch {
            throw ValidationError(error.description)
        }
        return ReadOptions(mapping: mapping, delimiter: try delimiterByte())
    }

    private func delimiterByte() throws -> UInt8? {
        guard let d = delimiter else { return nil }
        switch d {
        case "tab", "\\t", "\t": return 0x09
        case ",", ";", "|", ":": return d.utf8.first
        default:
            throw ValidationError("--delimiter \(d): expected ',', ';', '|' or 'tab'")
        }
    }
}

/// How a reject is shown in text output, the same in every command:
/// `places.csv:12: record 11: latitude: latitude 95.0 out of range [-90, 90]`.
func rejectLine(_ r: Reject) -> String {
    "\(sourceLocation(r.source)): \(r.field.map { "\($0): " } ?? "")\(r.reason)"
}

/// `places.csv:12: record 11` or `dump.geojson: feature 3 (record 4)`: where a record came from.
func sourceLocation(_ source: PlaceSource) -> String {
    switch source.position {
    case .line(let l): return "\(source.file):\(l): record \(source.record)"
    case .feature(let f): return "\(source.file): feature \(f) (record \(source.record))"
    }
}

/// A reject as a JSON object, for `--json` outputs.
func rejectJSON(_ r: Reject) -> JSONValue {
    var o = JSONObject()
    o.append("file", .string(r.source.file))
    o.append("record", .integer(Int64(r.source.record)))
    switch r.source.position {
    case .line(let l): o.append("line", .integer(Int64(l)))
    case .feature(let f): o.append("feature", .integer(Int64(f)))
    }
    o.append("field", r.field.map(JSONValue.string) ?? .null)
    o.append("reason", .string(r.reason))
    return .object(o)
}
