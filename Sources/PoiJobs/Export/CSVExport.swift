import PoiFormats
import PoiModel
import PoiStore

/// The columns of `poi export --format csv` and how each cell is written (issue 27).
///
/// One row per place: `id` (the `_id`), `name`, `lat`, `lon`, `placename`, `details`,
/// `categories`, `importKey`, `imageId`, `thumbnailId`, `created_at`, `updated_at`, then every
/// other property the GeoJSON export would write (`_source`, `imageSource`, `image` with
/// `--with-images`, the extras under the same `NAME (extra)` rule) as a column of its own, in
/// the order first seen over the exported places. `--fields` picks and orders columns instead.
struct CSVExportColumns: Sendable, Equatable {
    /// The columns every export has, in order.
    static let fixed = ["id", "name", "lat", "lon", "placename", "details", "categories", "importKey",
                        "imageId", "thumbnailId", "created_at", "updated_at"]
    /// Fixed columns filled from the feature's properties of the same name.
    static let fixedProperties: Set<String> = ["name", "placename", "details", "categories", "importKey",
                                               "imageId", "thumbnailId", "created_at", "updated_at"]

    struct Column: Sendable, Equatable {
        var name: String
        /// What the `.csvt` says the column holds; nil: text. A `.json` column writes every
        /// value as JSON (a string in quotes), so a sparse or mixed column reads back exactly.
        var type: ColumnType?
        /// Every place has a value here (a text column's empty cell then means "").
        var everywhere = true
    }

    var columns: [Column]
    /// Whether a `.csvt` goes with the file: then cells are written for it (`.json` columns as
    /// JSON); without one, every value is written as a person reads it (text as it is).
    var typed: Bool

    var names: [String] { columns.map(\.name) }

    /// The `.csvt` text: the columns' GDAL types.
    var sidecarText: String {
        CSVTypeSidecar.text(columns.map { column in
            switch column.name {
            case "lat", "lon": return .double
            case "created_at", "updated_at": return .date
            default: return CSVExportColumns.fixed.contains(column.name) ? nil : column.type
            }
        })
    }

    /// `--fields`: the columns named, in that order, all written as text.
    init(fields: [String]) {
        columns = fields.map { Column(name: $0, type: nil) }
        typed = false
    }

    init(columns: [Column], typed: Bool) {
        self.columns = columns
        self.typed = typed
    }
}

/// What the first pass over the places learns: which properties they carry beyond the fixed
/// columns, in first-seen order, and of what kinds, so the header is known before the first
/// row and each column gets the type that brings its values back.
struct CSVColumnSurvey {
    private struct Seen {
        var kinds: Set<Kind> = []
        var count = 0
    }
    enum Kind: Hashable { case text, integer, double, bool, date, null, nested }

    /// The stored fields the survey reads: those `PlaceDocument.feature` turns into properties
    /// beyond the fixed columns, `imageId` (the `image` column), and the Point.
    static let projection: BSONDocument = ["location": 1, "imageId": 1, "source": 1, "imageSource": 1, "imageError": 1, "extra": 1]

    private var order: [String] = []
    private var seen: [String: Seen] = [:]
    private(set) var places = 0

    mutating func add(_ feature: GeoJSONFeature) {
        places += 1
        for m in feature.properties.members where !CSVExportColumns.fixedProperties.contains(m.key) {
            if seen[m.key] == nil { order.append(m.key) }
            seen[m.key, default: Seen()].count += 1
            seen[m.key]!.kinds.insert(Self.kind(m.value))
        }
    }

    static func kind(_ v: JSONValue) -> Kind {
        switch v {
        case .string: return .text
        case .integer, .bigInteger: return .integer
        case .double: return .double
        case .bool: return .bool
        case .date: return .date
        case .null: return .null
        case .array, .object: return .nested
        }
    }

    /// The export's columns: the fixed ones, then one per property seen.
    func columns(typed: Bool) -> CSVExportColumns {
        var columns = CSVExportColumns.fixed.map { CSVExportColumns.Column(name: $0, type: nil) }
        for key in order {
            let s = seen[key]!
            let everywhere = s.count == places
            let type: ColumnType?
            // PoiKit's own columns are read back by name (ColumnRole.own), whatever the .csvt says.
            if key == PoiKitProperties.source {
                type = .json
            } else if PoiKitProperties.exportColumns.contains(key) || key == "image" {
                type = nil
            } else if s.kinds == [.text] && everywhere {
                type = nil
            } else if s.kinds.count == 1, let only = s.kinds.first, only != .text, only != .null, only != .nested {
                // One scalar type: a blank cell is a place without it (GDAL's unset field).
                switch only {
                case .integer: type = .int
                case .double: type = .double
                case .bool: type = .bool
                default: type = .date
                }
            } else {
                type = .json
            }
            columns.append(CSVExportColumns.Column(name: key, type: type, everywhere: everywhere))
        }
        return CSVExportColumns(columns: columns, typed: typed)
    }
}

/// A place changed between the survey and the rows (a new property, another type, a property
/// gone): the header no longer fits it.
struct CSVColumnsChanged: Error {
    var place: String
    var property: String
}

/// Writes places as rows of `CSVExportColumns`.
struct CSVPlaceWriter<Sink: ByteSink> {
    private(set) var writer: CSVWriter<Sink>
    let columns: CSVExportColumns
    let precision: Int?
    /// Columns (by index) that got a value in some row: what a `--fields` typo never gets.
    private(set) var filled: [Bool]

    init(sink: Sink, dialect: CSVDialect, columns: CSVExportColumns, precision: Int?) {
        writer = CSVWriter(sink: sink, dialect: dialect)
        self.columns = columns
        self.precision = precision
        filled = Array(repeating: false, count: columns.columns.count)
    }

    mutating func header() throws(FormatError) {
        try writer.row(columns.names)
    }

    /// One row. Throws `CSVColumnsChanged` when the place has a property the header lacks, or
    /// a value its column's type cannot bring back (only with a survey's columns).
    mutating func write(_ f: GeoJSONFeature) throws(CSVPlaceWriterError) {
        let props = f.properties
        if columns.typed {
            for m in props.members where !CSVExportColumns.fixedProperties.contains(m.key) {
                guard let column = columns.columns.first(where: { $0.name == m.key }), Self.fits(m.value, column) else {
                    throw .changed(CSVColumnsChanged(place: Self.text(f.id ?? .null), property: m.key))
                }
            }
        }
        for (i, column) in columns.columns.enumerated() {
            let value: JSONValue?
            switch column.name {
            case "id": value = f.id
            case "lat", "lon":
                var b: [UInt8] = []
                let d = column.name == "lat" ? f.coordinate.latitude : f.coordinate.longitude
                if let precision { FixedDecimal.append(d, places: precision, trimZeros: true, to: &b) } else { ShortestDecimal.appendFixed(d, to: &b) }
                writer.field(String(decoding: b, as: UTF8.self), isText: false)
                filled[i] = true
                continue
            case "categories":
                if case .array(let items)? = props["categories"] {
                    writer.field(Self.categoriesCell(items.compactMap(\.stringValue)))
                    filled[i] = filled[i] || !items.isEmpty
                } else {
                    writer.field("")
                }
                continue
            default: value = props[column.name]
            }
            guard let value else {
                if columns.typed, column.type == nil, column.everywhere, !CSVExportColumns.fixed.contains(column.name) {
                    throw .changed(CSVColumnsChanged(place: Self.text(f.id ?? .null), property: column.name))
                }
                writer.field("")
                continue
            }
            filled[i] = true
            if columns.typed, column.type == .json {
                writer.field(Self.json(value), isText: false)
            } else {
                if case .string(let s) = value { writer.field(s) } else { writer.field(Self.text(value), isText: false) }
            }
        }
        do { try writer.endRow() } catch { throw .format(error) }
    }

    mutating func finish() throws(FormatError) { try writer.finish() }

    /// Whether `column`'s type brings `value` back as it is.
    static func fits(_ value: JSONValue, _ column: CSVExportColumns.Column) -> Bool {
        switch (column.type, CSVColumnSurvey.kind(value)) {
        case (.json?, _): return true
        case (nil, .text): return true
        case (.int?, .integer), (.double?, .double), (.bool?, .bool), (.date?, .date): return true
        default: return false
        }
    }

    /// A value as a person reads it: text as it is, numbers and booleans as JSON writes them,
    /// dates in ISO 8601, lists and objects as compact JSON, null as nothing.
    static func text(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return s
        case .null: return ""
        case .date(let ms): return ISO8601.string(millisecondsSince1970: ms)
        default: return json(v)
        }
    }

    static func json(_ v: JSONValue) -> String {
        var b: [UInt8] = []
        JSONEncoding.append(v, to: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// Categories joined with `;`, what the import splits on; as a JSON array when one holds a
    /// separator (`;` or `|`) or the joined text would read as a JSON array, so each comes
    /// back as one.
    static func categoriesCell(_ items: [String]) -> String {
        let joined = items.joined(separator: ";")
        if items.contains(where: { Categories.containsSeparator($0, Categories.defaultSeparators) })
            || (joined.hasPrefix("[") && joined.hasSuffix("]")) {
            return json(.array(items.map(JSONValue.string)))
        }
        return joined
    }
}

enum CSVPlaceWriterError: Error {
    case changed(CSVColumnsChanged)
    case format(FormatError)
}
