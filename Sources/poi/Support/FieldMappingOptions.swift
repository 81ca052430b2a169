import ArgumentParser
import PoiFiles
import PoiFormats
import PoiModel

/// `--field FIELD=COLUMN` (repeatable) and `--delimiter C`: how dumps map to place fields.
/// Shared by every command that reads dumps (check, convert, import) so they agree exactly.
struct FieldMappingOptions: ParsableArguments {
    // One line each in `--help` (docs/poi.md has the full rules); the rarer options are hidden
    // there and listed by `--help-hidden`.
    @Option(name: .customLong("field"),
            help: ArgumentHelp("Map a column to a field, e.g. name=Title (repeatable).", valueName: "field=column"))
    var fields: [FieldAssignment] = []

    @Option(help: ArgumentHelp("Delimiter, else detected.", valueName: "c"))
    var delimiter: Delimiter?

    @Option(help: ArgumentHelp("none: \" is plain text (GeoNames).", valueName: "q"))
    var quote: Quote?

    @Option(help: ArgumentHelp("Split categories on these, not ';|' ('': never).", valueName: "chars"))
    var categorySeparator: CategorySeparators?

    @Option(help: ArgumentHelp("Input encoding when not UTF-8, e.g. cp1252, latin1.", valueName: "name"))
    var encoding: String?

    @Option(help: ArgumentHelp("Column names of a CSV without a header, e.g. name,lat,lon.",
                               valueName: "names", visibility: .hidden))
    var columns: String?

    @Option(help: ArgumentHelp("Like --columns, one name a line, read from FILE.", valueName: "file", visibility: .hidden))
    var columnsFile: String?

    @Option(help: ArgumentHelp("Types of extra columns: int, double, bool, date.", valueName: "col=type,..."))
    var types: [String] = []

    @Flag(help: ArgumentHelp("Leave blank CSV cells of extra columns out of the place.", visibility: .hidden))
    var ignoreBlanks = false

    @Option(help: ArgumentHelp("Most bytes one .gz or zip member may inflate to (16G).", valueName: "size",
                               visibility: .hidden))
    var maxBytes: ByteCount?

    func validate() throws {
        if let encoding, !TextEncoding.isKnown(name: encoding) {
            throw ValidationError("--encoding \(encoding): unknown encoding; iconv names such as "
                                  + TextEncoding.examples.joined(separator: ", ") + " (iconv -l lists them all)")
        }
        if columns != nil && columnsFile != nil {
            throw ValidationError("--columns and --columns-file both name the columns: give one")
        }
        if let columns, columns.trimmingCharacters(in: " ").isEmpty {
            throw ValidationError("--columns: no column names given")
        }
        _ = try columnTypes()
        var seen: [PlaceField: String] = [:]
        for f in fields {
            if let old = seen[f.field], old != f.column {
                throw ValidationError("--field \(f.field.rawValue)=\(f.column): \(f.field.rawValue) is already mapped to '\(old)'")
            }
            seen[f.field] = f.column
        }
    }

    /// The reader options (reads --columns-file: a file that cannot be read is a usage error).
    func readOptions() throws -> ReadOptions {
        var options = ReadOptions(mapping: FieldMapping(overrides: Dictionary(fields.map { ($0.field, $0.column) }, uniquingKeysWith: { a, _ in a })),
                                  delimiter: delimiter?.byte)
        options.quoting = quote?.quoting
        options.columnTypes = try columnTypes()
        options.ignoreBlanks = ignoreBlanks
        if let categorySeparator { options.categorySeparators = categorySeparator.bytes }
        if let encoding { options.encoding = TextEncoding(name: encoding) }
        if let maxBytes { options.limits.maxInflatedBytes = maxBytes.bytes }
        if let columns {
            options.columns = columns.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: " ") }
        } else if let columnsFile {
            let bytes: [UInt8]
            do { bytes = try WholeFile.read(columnsFile, limit: 1 << 20) } catch {
                throw ValidationError("--columns-file \(columnsFile): \(error)")
            }
            guard var text = String(validating: bytes, as: UTF8.self) else {
                throw ValidationError("--columns-file \(columnsFile): not UTF-8 text")
            }
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            var names = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
                .map { $0.trimmingCharacters(in: " ") }
            while names.last?.isEmpty == true { names.removeLast() }
            guard !names.isEmpty else { throw ValidationError("--columns-file \(columnsFile): no column names in it") }
            options.columns = names
        }
        return options
    }

    /// `--types` as given: `name=type` items, comma-separated, repeatable.
    func columnTypes() throws -> ColumnTypes {
        var result = ColumnTypes()
        for item in types.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: true) }) {
            guard let eq = item.lastIndex(of: "=") else {
                throw ValidationError("--types \(item): give column=type, e.g. population=int")
            }
            let name = String(item[..<eq]).trimmingCharacters(in: " "), typeName = String(item[item.index(after: eq)...]).trimmingCharacters(in: " ")
            guard !name.isEmpty else { throw ValidationError("--types \(item): no column name before '='") }
            guard let type = ColumnType(name: typeName) else {
                throw ValidationError("--types \(item): unknown type '\(typeName)'; types: "
                                      + ColumnType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if let old = result[name], old != type {
                throw ValidationError("--types \(item): \(name) is already typed \(old.rawValue)")
            }
            result.add(name, type)
        }
        return result
    }

    /// The reading rules people most often need, in `--help` of every reading command (import,
    /// check); docs/poi.md has them all.
    static let readingRules = """
        Categories are split on ';' and '|', a JSON array is a list. A lone decimal comma \
        (1,234) is a decimal point. Other columns are kept under extra.
        """

    struct CategorySeparators: ExpressibleByArgument {
        var bytes: [UInt8]
        init?(argument: String) {
            let chars = argument == "tab" ? "\t" : argument
            // '' is no splitting at all: each text is one category.
            guard chars.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x22 }) else { return nil }
            bytes = Array(Set(chars.utf8)).sorted()
        }
    }

    /// `--max-bytes`: a byte count, with an optional K, M, G or T suffix (powers of 1024).
    struct ByteCount: ExpressibleByArgument {
        var bytes: Int
        init?(argument: String) {
            var digits = Substring(argument.uppercased())
            if digits.hasSuffix("B") { digits.removeLast() }
            var scale = 1
            if let last = digits.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][last] {
                scale = 1 << (10 * power)
                digits.removeLast()
            }
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let n = Int(digits), n > 0 else { return nil }
            let (product, overflow) = n.multipliedReportingOverflow(by: scale)
            guard !overflow else { return nil }
            bytes = product
        }
    }

    struct Quote: ExpressibleByArgument {
        var quoting: CSVQuoting
        init?(argument: String) {
            switch argument.lowercased() {
            case "\"", "double", "doublequote": quoting = .doubleQuote
            case "none", "off", "no": quoting = .none
            default: return nil
            }
        }
        static var allValueStrings: [String] { ["\"", "none"] }
    }

    struct Delimiter: ExpressibleByArgument {
        var byte: UInt8
        init?(argument: String) {
            switch argument {
            case "tab", "\\t", "\t": byte = 0x09
            case ",", ";", "|", ":": byte = argument.utf8.first!
            default: return nil
            }
        }
        static var allValueStrings: [String] { [",", ";", "|", ":", "tab"] }
    }
}

/// How a note is shown: `note: dump.csv: column "image_url" looks like the image; use --field
/// image=image_url`. Escaped: the names come from the dump.
func noteLine(_ n: ReadNote) -> String {
    var text = "note: \(n.file): \(n.message)"
    if let f = n.suggestedField { text += "; use --field \(f.rawValue)=\(n.name)" }
    return TerminalText.escaped(text)
}

/// `poi: skipped dump.zip:README.txt (documentation)`: a zip member that is not a dump.
func skippedMemberLine(_ m: SkippedMember) -> String {
    TerminalText.escaped("poi: skipped \(m.name) (\(m.reason))")
}

/// How a reject is shown in text output, the same in every command:
/// `places.csv:12: record 11: latitude: latitude 95.0 out of range [-90, 90]`. Everything in it
/// may come from the dump, so control characters are escaped.
func rejectLine(_ r: Reject) -> String {
    TerminalText.escaped("\(sourceLocation(r.source)): \(r.field.map { "\($0): " } ?? "")\(r.reason)")
}

/// `places.csv:12: record 11` or `dump.geojson: feature 3 (record 4)`: where a record came from.
func sourceLocation(_ source: PlaceSource) -> String {
    switch source.position {
    case .line(let l): return "\(source.file):\(l): record \(source.record)"
    case .feature(let f): return "\(source.file): feature \(f) (record \(source.record))"
    }
}

/// A reject in `--json` outputs.
struct RejectRecord: Encodable {
    var file: String
    var record: Int
    var line: Int?
    var feature: Int?
    var field: String?
    var reason: String

    init(_ r: Reject) {
        file = r.source.file
        record = r.source.record
        if case .line(let l) = r.source.position { line = l }
        if case .feature(let f) = r.source.position { feature = f }
        field = r.field
        reason = r.reason
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String { Substring(self).trimmingCharacters(in: set) }
}
