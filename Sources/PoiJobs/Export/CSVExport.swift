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
///
/// Cells: text as it is, and an empty text as `""`; nothing at all for a place without the
/// property (PostgreSQL's CSV convention, which `poi import` follows for its own exports);
/// numbers and booleans as JSON writes them; dates in ISO 8601; lists and objects as compact
/// JSON. A column whose values mix kinds (or hold null, or integers beyond 64 bits) is typed
/// `String(JSON)` in the `.csvt`, and then its text values are written as JSON strings too, so
/// each value comes back as it was.
struct CSVExportColumns: Sendable, Equatable {
    /// The columns every export has, in order.
    static let fixed = ["id", "name", "lat", "lon", "placename", "details", "categories", "importKey",
                        "imageId", "thumbnailId", "created_at", "updated_at"]
    /// Fixed columns filled from the feature's properties of the same name.
    static let fixedProperties: Set<String> = ["name", "placename", "details", "categories", "importKey",
                                               "imageId", "thumbnailId", "created_at", "updated_at"]

    struct Column: Sendable, Equatable {
        var name: String
        /// What the `.csvt` says the column holds; nil: text. Decided before the rows only for a
        /// column of `.json` (its text values are then written as JSON).
        var type: ColumnType?
    }

    var columns: [Column]
    /// The types were chosen from a first pass over the places (every column but `--fields`'):
    /// a row that no longer fits them means the place changed in between.
    var surveyed: Bool

    var names: [String] { columns.map(\.name) }

    /// `--fields`: the columns named, in that order; their types are learnt while writing.
    init(fields: [String]) {
        columns = fields.map { Column(name: $0, type: nil) }
        surveyed = false
    }

    init(columns: [Column], surveyed: Bool) {
        self.columns = columns
        self.surveyed = surveyed
    }

    /// The `.csvt` text for these columns, typed by `kinds` where the first pass did not type them.
    func sidecarText(kinds: [CSVColumnSurvey.Kinds]) -> String {
        CSVTypeSidecar.text(columns.enumerated().map { i, column in
            switch column.name {
            case "lat", "lon": return .double
            case "created_at", "updated_at": return .date
            default:
                if CSVExportColumns.fixed.contains(column.name) { return nil }
                if surveyed { return column.type }
                // `--fields`: values were written as a person reads them (text as it is, null as
                // nothing), so a column is typed only where that reads back: one scalar type
                // (nulls aside, which come back missing), or lists and objects alone.
                var written = kinds[i]
                written.remove(.null)
                let type = CSVColumnSurvey.type(of: written, key: column.name)
                return type == .json && written.contains(.text) ? nil : type
            }
        })
    }
}

/// What a pass over the places learns: which properties they carry beyond the fixed columns,
/// in first-seen order, and of what kinds, so the header is known before the first row and each
/// column gets the type that brings its values back.
struct CSVColumnSurvey {
    /// `bigInteger`: beyond 64 bits, which GDAL's Integer64 would clamp: such a column is JSON
    /// (digits GDAL keeps as text, PoiKit reads back as the number).
    enum Kind: UInt8, Hashable, Sendable, CaseIterable { case text, integer, bigInteger, double, bool, date, null, nested }

    /// A set of kinds as bits: asked for every cell, where a `Set` would hash each time.
    struct Kinds: Equatable, Sendable {
        private(set) var bits: UInt8 = 0
        static let empty = Kinds()
        init() {}
        init(_ kinds: [Kind]) { for k in kinds { insert(k) } }
        var isEmpty: Bool { bits == 0 }
        var count: Int { bits.nonzeroBitCount }
        mutating func insert(_ k: Kind) { bits |= 1 << k.rawValue }
        mutating func remove(_ k: Kind) { bits &= ~(1 << k.rawValue) }
        func contains(_ k: Kind) -> Bool { bits & (1 << k.rawValue) != 0 }
        /// The only kind, when there is exactly one.
        var only: Kind? { count == 1 ? Kind(rawValue: UInt8(bits.trailingZeroBitCount)) : nil }
    }

    /// The stored fields the survey reads: those `PlaceDocument.feature` turns into properties
    /// beyond the fixed columns, `imageId` (the `image` column), and the Point.
    static let projection: BSONDocument = ["location": 1, "imageId": 1, "source": 1, "imageSource": 1, "imageError": 1, "extra": 1]

    private var order: [String] = []
    private var kinds: [String: Kinds] = [:]

    mutating func add(_ feature: GeoJSONFeature) {
        for m in feature.properties.members where !CSVExportColumns.fixedProperties.contains(m.key) {
            if kinds[m.key] == nil { order.append(m.key) }
            kinds[m.key, default: Kinds()].insert(Self.kind(m.value))
        }
    }

    static func kind(_ v: JSONValue) -> Kind {
        switch v {
        case .string: return .text
        case .integer: return .integer
        case .bigInteger: return .bigInteger
        case .double: return .double
        case .bool: return .bool
        case .date: return .date
        case .null: return .null
        case .array, .object: return .nested
        }
    }

    /// The type that brings a column's values back: text, one scalar type (a blank cell is a
    /// place without it), or JSON for lists and objects and for a mix of kinds.
    static func type(of kinds: Kinds, key: String) -> ColumnType? {
        // PoiKit's own columns are read back by name (ColumnRole.own), whatever the .csvt says.
        if key == PoiKitProperties.source { return .json }
        if PoiKitProperties.exportColumns.contains(key) || key == "image" { return nil }
        if kinds.isEmpty || kinds == Kinds([.text]) { return nil }
        if let only = kinds.only {
            switch only {
            case .integer: return .int
            case .double: return .double
            case .bool: return .bool
            case .date: return .date
            default: return .json
            }
        }
        return .json
    }

    /// The export's columns: the fixed ones, then one per property seen.
    func columns() -> CSVExportColumns {
        var columns = CSVExportColumns.fixed.map { CSVExportColumns.Column(name: $0, type: nil) }
        for key in order { columns.append(CSVExportColumns.Column(name: key, type: Self.type(of: kinds[key]!, key: key))) }
        return CSVExportColumns(columns: columns, surveyed: true)
    }
}

/// A place changed between the survey and the rows (a new property, another type): the header
/// no longer fits it.
struct CSVColumnsChanged: Error {
    var place: String
    var property: String
}

/// Writes places as rows of `CSVExportColumns`.
struct CSVPlaceWriter<Sink: ByteSink> {
    private(set) var writer: CSVWriter<Sink>
    let columns: CSVExportColumns
    let precision: Int?
    /// A `.csvt` goes with the file: `.json` columns write their text values as JSON. Without
    /// one, every value is written as a person reads it.
    let typed: Bool
    /// Each column's index by name, and the kinds of value written in each (for `--fields`' `.csvt`
    /// and the empty-column warning).
    private let index: [String: Int]
    private(set) var kinds: [CSVColumnSurvey.Kinds]
    private let idColumn: Int?, latColumn: Int?, lonColumn: Int?
    /// One row's values, reused.
    private var cells: [JSONValue?]
    /// The previous row's property names and their columns: rows of one export mostly carry
    /// their properties in the same order, and comparing a name with the one at its position is
    /// cheaper than hashing it (a third of the row's cost in a profile).
    private var lastKeys: [String] = []
    private var lastColumns: [Int?] = []

    init(sink: Sink, dialect: CSVDialect, columns: CSVExportColumns, precision: Int?, typed: Bool) {
        writer = CSVWriter(sink: sink, dialect: dialect)
        self.columns = columns
        self.precision = precision
        self.typed = typed
        var index: [String: Int] = [:]
        for (i, name) in columns.names.enumerated() where index[name] == nil { index[name] = i }
        self.index = index
        idColumn = index["id"]
        latColumn = index["lat"]
        lonColumn = index["lon"]
        kinds = Array(repeating: CSVColumnSurvey.Kinds(), count: columns.columns.count)
        cells = Array(repeating: nil, count: columns.columns.count)
    }

    /// Which columns got a value in some row.
    var filled: [Bool] { kinds.map { !$0.isEmpty } }

    mutating func header() throws(FormatError) {
        try writer.row(columns.names)
    }

    /// One row. Throws `CSVColumnsChanged` when a surveyed header does not fit the place: a
    /// property it lacks, or a value its column's type cannot bring back.
    mutating func write(_ f: GeoJSONFeature) throws(CSVPlaceWriterError) {
        for i in cells.indices { cells[i] = nil }
        for (j, m) in f.properties.members.enumerated() {
            let column: Int?
            if j < lastKeys.count, lastKeys[j] == m.key {
                column = lastColumns[j]
            } else {
                column = index[m.key]
                if j < lastKeys.count {
                    lastKeys[j] = m.key
                    lastColumns[j] = column
                } else {
                    lastKeys.append(m.key)
                    lastColumns.append(column)
                }
            }
            guard let i = column, i != idColumn, i != latColumn, i != lonColumn else {
                if columns.surveyed && !CSVExportColumns.fixedProperties.contains(m.key) {
                    throw .changed(CSVColumnsChanged(place: Self.text(f.id ?? .null), property: m.key))
                }
                continue
            }
            if columns.surveyed, !Self.fits(m.value, columns.columns[i]) {
                throw .changed(CSVColumnsChanged(place: Self.text(f.id ?? .null), property: m.key))
            }
            cells[i] = m.value
        }
        if let idColumn { cells[idColumn] = f.id }
        for (i, column) in columns.columns.enumerated() {
            if i == latColumn || i == lonColumn {
                var b: [UInt8] = []
                let d = i == latColumn ? f.coordinate.latitude : f.coordinate.longitude
                if let precision { FixedDecimal.append(d, places: precision, trimZeros: true, to: &b) } else { ShortestDecimal.appendFixed(d, to: &b) }
                writer.field(String(decoding: b, as: UTF8.self), isText: false)
                kinds[i].insert(.double)
                continue
            }
            guard let value = cells[i] else {
                writer.field("")
                continue
            }
            kinds[i].insert(CSVColumnSurvey.kind(value))
            if column.name == "categories", i != idColumn, case .array(let items) = value {
                writer.field(Self.categoriesCell(items.compactMap(\.stringValue)))
            } else if typed && column.type == .json {
                writer.field(Self.json(value), isText: false)
            } else if case .string(let s) = value {
                writer.field(s, quoteEmpty: true)
            } else {
                writer.field(Self.text(value), isText: false)
            }
        }
        do { try writer.endRow() } catch { throw .format(error) }
    }

    mutating func finish() throws(FormatError) { try writer.finish() }

    /// Whether `column`'s type brings `value` back as it is.
    static func fits(_ value: JSONValue, _ column: CSVExportColumns.Column) -> Bool {
        if CSVExportColumns.fixedProperties.contains(column.name) { return true }
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
