import ArgumentParser
import PoiFiles
import PoiFormats
import PoiModel

/// `--field FIELD=COLUMN` (repeatable) and `--delimiter C`: how dumps map to place fields.
/// Shared by every command that reads dumps (check, convert, import) so they agree exactly.
struct FieldMappingOptions: ParsableArguments {
    @Option(name: .customLong("field"),
            help: ArgumentHelp("Map a column/property to a field, e.g. name=Title or id=source_id (repeatable). "
                               + "Fields: \(PlaceField.allCases.map(\.rawValue).joined(separator: ", ")).",
                               valueName: "field=column"))
    var fields: [FieldAssignment] = []

    @Option(help: ArgumentHelp("CSV delimiter: ',', ';', '|', ':' or 'tab' (default: detected from the header).",
                               valueName: "c"))
    var delimiter: Delimiter?

    @Option(help: ArgumentHelp("How CSV fields are quoted: '\"' (the default, RFC 4180: a field in double quotes may "
                               + "hold delimiters and line breaks) or none (\" is plain text, as in GeoNames' and other "
                               + "tab-separated dumps, where a name may hold a bare \"). Read a file made that way with "
                               + "none, or one bare quote swallows the lines after it.",
                               valueName: "q"))
    var quote: Quote?

    @Option(help: ArgumentHelp("Characters categories text is split on, e.g. ',' or ',;' (default ';|'; '' "
                               + "for no splitting). Categories are split on ';' and '|' unless this says "
                               + "otherwise, then trimmed, empties and repeats dropped; a cell or property "
                               + "holding a JSON array (e.g. [\"a\",\"b\"]) is that list, its items never split.",
                               valueName: "chars"))
    var categorySeparator: CategorySeparators?

    @Option(help: ArgumentHelp("Text encoding of the input when it is not UTF-8, as iconv names it: cp1252, "
                               + "windows-1252, latin1, iso-8859-15, utf-16le... (default: UTF-8, or what a UTF-16 "
                               + "or UTF-32 byte-order mark says). Rejects files are written back in it.",
                               valueName: "name"))
    var encoding: String?

    @Option(help: ArgumentHelp("Names of the columns of a CSV file without a header line, in order, e.g. "
                               + "name,lat,lon (as mongoimport --fields): the first line is then a record; "
                               + "--field maps these names. Its rejects file gets a header line naming them.",
                               valueName: "names"))
    var columns: String?

    @Option(help: ArgumentHelp("Like --columns, one name a line, read from FILE.", valueName: "file"))
    var columnsFile: String?

    @Option(help: ArgumentHelp("Types for columns kept under extra, e.g. population=int,elevation=double,opened=date "
                               + "(repeatable): int, double, bool, date (ISO 8601: 2024-03-01 or 2024-03-01T14:30:00Z, "
                               + "stored as a date) or string. A CSV cell is text without one. A value that is not of "
                               + "its type rejects the row, naming the column; a blank cell is null. In GeoJSON, a "
                               + "string property is read as its type, a value of the type kept (an export's dates "
                               + "are ISO strings: import it with the same --types).",
                               valueName: "column=type,..."))
    var types: [String] = []

    @Flag(help: ArgumentHelp("Leave blank CSV cells of columns kept under extra out of the place (as mongoimport "
                             + "--ignoreBlanks) instead of storing \"\" (or null, for a typed column)."))
    var ignoreBlanks = false

    @Option(help: ArgumentHelp("Cap on the bytes one compressed input (a .gz file or stream, a zip member) may "
                               + "decompress to, e.g. 20G, 500M (default 16G). Past it, reading stops with a message "
                               + "after the records before it; a zip member declaring more, or over \(ReadLimits().maxInflateRatio):1 "
                               + "decompressed to compressed, is refused as a decompression bomb.",
                               valueName: "size"))
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

    /// The rules `--help` of every reading command states (issue 18 §5).
    static let readingRules = """
        Columns and properties: common names are recognised (name/title; lat, latitude, y, \
        latitude_deg, decimalLatitude, geo_lat, Lat.; lon, lng, long, x and the same forms; \
        placename/address; details/description; categories/category/tags; image/photo/picture/\
        image_path/img; id; importKey), --field maps any other. Every other column is kept under \
        extra with its name, including names PoiKit writes itself (created_at, updated_at, \
        imageId, thumbnailId, _line, _feature, _field, _reason) and a second column naming a field \
        already taken (address and placename: the first is the placename, the other is kept under \
        extra as extra.placename; a repeated name gets #2). A note on stderr says so once per file, \
        and names columns that look like an unmapped field (use --field image=image_url). \
        Colliding names in GeoJSON: poi export and poi convert write an extra named like a field \
        (any name above: name, title, address, lat, image, id, importKey...), like a property \
        PoiKit writes itself (imageId, thumbnailId, created_at, updated_at, _source, imageSource, \
        imageError, _line, _feature, _field, _reason) or ending in " (extra)" as "NAME (extra)", \
        whether or not the place has that property; every reader takes one " (extra)" off and \
        keeps the rest as extra.NAME, so an export imports back with extra unchanged.

        name, placename, details and the image reference are trimmed of leading and trailing \
        Unicode whitespace (NBSP and U+3000 included), quoted or not; extra columns are kept as \
        given.

        Categories given as text are split on ';' and '|' (not ','; --category-separator changes \
        that, and --category-separator '' keeps each text whole), trimmed, with empties and repeats \
        dropped; a cell or property holding a JSON array (["a","b"]) is that list, its items never \
        split again. Coordinates are plain decimals ([+-]digits[.digits][e[+-]digits]); A lone \
        decimal comma (1,234) is a decimal point, read as 1.234; NaN, Infinity, hex, out-of-range \
        values and values too small to be told from 0 (1e-400) are rejects. A GeoJSON altitude \
        (third position value) is kept. A CSV row with fewer cells than the header has the missing \
        ones empty; a row of empty cells is skipped like a blank line. Extra columns are text \
        unless --types says int, double, bool or date.
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
