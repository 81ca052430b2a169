#if canImport(Glibc)
import Glibc
#endif
import PoiFormats
import PoiModel
import PoiStore

/// The columns of `poi export --format csv` and how each cell is written.
///
/// One row per place: `id` (the `_id`), `name`, `lat`, `lon`, `alt` (only when some place has
/// an altitude), `placename`, `details`, `categories`, `importKey`, `imageId`, `thumbnailId`,
/// `created_at`, `updated_at`, then every other property the GeoJSON export would write
/// (`_source`, `imageSource`, `image` with `--with-images`, the extras under the same
/// `NAME (extra)` rule) as a column of its own, in the order first seen over the exported
/// places. `--fields` picks and orders columns instead.
///
/// Cells: text as it is, and an empty text as `""`; nothing at all for a place without the
/// property (PostgreSQL's CSV convention, which `poi import` follows for its own exports);
/// numbers and booleans as JSON writes them; dates in ISO 8601; lists and objects as compact
/// JSON. A column whose values mix kinds (or hold null, or integers beyond 64 bits) is typed
/// `String(JSON)` in the `.csvt`, and then its text values are written as JSON strings too, so
/// each value comes back as it was.
enum CSVExportColumns {
    /// The columns every export has, in order (`alt` goes after `lon` when a place has one).
    static let fixed = ["id", "name", "lat", "lon", "placename", "details", "categories", "importKey",
                        "imageId", "thumbnailId", "created_at", "updated_at"]
    /// Fixed columns filled from the feature's properties of the same name.
    static let fixedProperties: Set<String> = ["name", "placename", "details", "categories", "importKey",
                                               "imageId", "thumbnailId", "created_at", "updated_at"]

    /// A property's column: its name, but `alt`, the altitude's column in an export (read back
    /// as the altitude), for an extra named so is `"alt (extra)"`, which readers take back as
    /// `extra.alt` (PoiKitProperties' rule, in CSV only: GeoJSON has the altitude in the Point).
    static func columnName(forProperty key: String) -> String {
        key == PoiKitProperties.altitudeColumn ? key + FieldMapping.extraSuffix : key
    }

    /// The type a column's `.csvt` entry gives it, from the kinds of value written in it.
    static func type(of name: String, kinds: CSVColumnKinds.Kinds) -> ColumnType? {
        switch name {
        case "lat", "lon", PoiKitProperties.altitudeColumn: return .double
        case "created_at", "updated_at": return .date
        default:
            if fixed.contains(name) { return nil }
            return CSVColumnKinds.type(of: kinds, key: name)
        }
    }
}

/// The kinds of value a column holds, and the type that brings them back.
enum CSVColumnKinds {
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
    /// place without it), or JSON for lists and objects and for a mix of kinds (null included:
    /// written `null`, it comes back null).
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
}

/// Writes places as CSV rows in one pass over the collection.
///
/// The header comes first in the file, but which columns there are (the full export) and how a
/// column's text values must be written (as JSON in a `String(JSON)` column, which only the last
/// place may decide) are known only at the end. So the rows are held back: each row's cells go to
/// a spool, an unnamed temporary file beside the output, as they are made, and `finish` writes the
/// header and then every row from the spool, each cell in the form its column's type needs. The
/// collection is read once (a first pass over it to find the columns cost as much again: 253,678
/// places took 28–31 s against 11 s for the GeoJSON export); the spool is read back from the
/// local disk, and memory stays one row plus the buffers, whatever the number of places.
///
/// `--fields` without a `.csvt` (standard output) needs neither: its columns are named and its
/// values written as a person reads them, so each row is written as it comes.
/// More than ten stored properties: the sink, the column plan and the per-row scratch buffers reused across rows, so that a row costs no allocation.
struct CSVPlaceWriter<Sink: ByteSink> {
    private(set) var writer: CSVWriter<Sink>
    let precision: Int?
    /// A `.csvt` goes with the file: `.json` columns write their text values as JSON. Without
    /// one, every value is written as a person reads it.
    let typed: Bool
    /// The full export: a property not seen before is a new column. `--fields`: the columns named.
    private let discovers: Bool
    /// The columns in the order they were met (the full export's fixed ones first, `alt` among
    /// them), and each one's index by name.
    private(set) var names: [String]
    private var index: [String: Int]
    /// The kinds of value written in each column (for the `.csvt` and the empty-column warning).
    private(set) var kinds: [CSVColumnKinds.Kinds]
    private let idColumn: Int?, latColumn: Int?, lonColumn: Int?, altColumn: Int?, categoriesColumn: Int?
    /// Rows held back until `finish` (nil: written at once).
    private var spool: CSVRowSpool?
    /// One row's cells, by column: where each one's bytes are in `rowBytes`, reused.
    private var cells: [CSVCell?]
    private var rowBytes: [UInt8] = []
    /// The previous row's property names and their columns: rows of one export mostly carry
    /// their properties in the same order, and comparing a name with the one at its position is
    /// cheaper than hashing it (a third of the row's cost in a profile).
    private var lastKeys: [String] = []
    private var lastColumns: [Int?] = []

    /// The full export, its rows spooled in `folder` (the output's; nil: the temporary folder).
    init(sink: Sink, dialect: CSVDialect, precision: Int?, typed: Bool, spoolFolder: String?) throws(CSVPlaceWriterError) {
        try self.init(sink: sink, dialect: dialect, names: CSVExportColumns.fixed + [PoiKitProperties.altitudeColumn],
                      discovers: true, precision: precision, typed: typed, spoolFolder: spoolFolder)
    }

    /// `--fields`: these columns; spooled only when typed (a `.csvt` goes with the file).
    init(sink: Sink, dialect: CSVDialect, fields: [String], precision: Int?, typed: Bool, spoolFolder: String?) throws(CSVPlaceWriterError) {
        try self.init(sink: sink, dialect: dialect, names: fields, discovers: false, precision: precision, typed: typed,
                      spoolFolder: spoolFolder)
    }

    private init(sink: Sink, dialect: CSVDialect, names: [String], discovers: Bool, precision: Int?, typed: Bool,
                 spoolFolder: String?) throws(CSVPlaceWriterError) {
        writer = CSVWriter(sink: sink, dialect: dialect)
        self.precision = precision
        self.typed = typed
        self.discovers = discovers
        self.names = names
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        self.index = index
        idColumn = index["id"]
        latColumn = index["lat"]
        lonColumn = index["lon"]
        altColumn = index[PoiKitProperties.altitudeColumn]
        categoriesColumn = index["categories"]
        kinds = Array(repeating: CSVColumnKinds.Kinds(), count: names.count)
        cells = Array(repeating: nil, count: names.count)
        if discovers || typed {
            do { spool = try CSVRowSpool(folder: spoolFolder) } catch { throw .spool(error.reason) }
        } else {
            do { try writer.row(names) } catch { throw .format(error) }
        }
    }

    /// The columns as the header names them: the full export's `alt` only when some place has
    /// one, after `lon`.
    var columns: [String] { order.map { names[$0] } }

    /// Column indexes in header order.
    private var order: [Int] {
        guard discovers, let altColumn, let lonColumn else { return Array(names.indices) }
        var order = names.indices.filter { $0 != altColumn }
        if !kinds[altColumn].isEmpty { order.insert(altColumn, at: order.firstIndex(of: lonColumn)! + 1) }
        return order
    }

    /// Which columns (in header order) got a value in some row.
    var filled: [Bool] { order.map { !kinds[$0].isEmpty } }

    /// The `.csvt` text for the columns, in header order.
    var sidecarText: String {
        CSVTypeSidecar.text(order.map { CSVExportColumns.type(of: names[$0], kinds: kinds[$0]) })
    }

    /// One row.
    mutating func write(_ f: GeoJSONFeature) throws(CSVPlaceWriterError) {
        for i in cells.indices { cells[i] = nil }
        rowBytes.removeAll(keepingCapacity: true)
        for (j, m) in f.properties.members.enumerated() {
            var column: Int?
            if j < lastKeys.count, lastKeys[j] == m.key {
                column = lastColumns[j]
            } else {
                let name = CSVExportColumns.columnName(forProperty: m.key)
                column = index[name]
                if column == nil, discovers, !CSVExportColumns.fixedProperties.contains(m.key) {
                    column = addColumn(name)
                }
                if j < lastKeys.count {
                    lastKeys[j] = m.key
                    lastColumns[j] = column
                } else {
                    lastKeys.append(m.key)
                    lastColumns.append(column)
                }
            }
            guard let i = column, i != idColumn, i != latColumn, i != lonColumn, i != altColumn else { continue }
            set(i, m.value)
        }
        if let idColumn, let id = f.id { set(idColumn, id) }
        if let latColumn { setCoordinate(latColumn, f.coordinate.latitude) }
        if let lonColumn { setCoordinate(lonColumn, f.coordinate.longitude) }
        if let altColumn, let altitude = f.altitude, altitude.isFinite {
            // As the GeoJSON export writes it (`581.0`); nothing for a place without one.
            let start = rowBytes.count
            JSONEncoding.append(.double(altitude), to: &rowBytes)
            cells[altColumn] = CSVCell(kind: .coordinate, start: start, end: rowBytes.count)
            kinds[altColumn].insert(.double)
        }
        if var spool {
            self.spool = nil  // no copy of its buffer while it is written to
            defer { self.spool = spool }
            do { try spool.append(cells: cells, bytes: rowBytes) } catch { throw .spool(error.reason) }
        } else {
            rowBytes.withUnsafeBufferPointer { bytes in
                for i in names.indices { render(cells[i], type: nil, bytes: bytes) }
            }
            do { try writer.endRow() } catch { throw .format(error) }
        }
    }

    /// The header, then the rows held back, then the end of the file.
    mutating func finish() throws(CSVPlaceWriterError) {
        if var spool {
            self.spool = nil
            let order = self.order
            do { try writer.row(order.map { names[$0] }) } catch { throw .format(error) }
            let types = names.indices.map { typed ? CSVExportColumns.type(of: names[$0], kinds: kinds[$0]) : nil }
            var failure: CSVPlaceWriterError?
            do throws(CSVRowSpool.Failure) {
                try spool.replay(columns: names.count) { cells, bytes in
                    for i in order { render(cells[i], type: types[i], bytes: bytes) }
                    do throws(FormatError) { try writer.endRow() } catch { failure = .format(error); return false }
                    return true
                }
            } catch {
                throw .spool(error.reason)
            }
            if let failure { throw failure }
        }
        do { try writer.finish() } catch { throw .format(error) }
    }

    private mutating func addColumn(_ name: String) -> Int {
        names.append(name)
        index[name] = names.count - 1
        kinds.append(CSVColumnKinds.Kinds())
        cells.append(nil)
        return names.count - 1
    }

    /// A value's cell: its text as a person reads it (text as it is, numbers and booleans as
    /// JSON writes them, dates in ISO 8601, lists and objects as compact JSON, null as nothing),
    /// with its kind, from which `render` makes the JSON form where the column needs it.
    private mutating func set(_ i: Int, _ value: JSONValue) {
        let start = rowBytes.count
        let kind = CSVColumnKinds.kind(value)
        kinds[i].insert(kind)
        let cellKind: CSVCell.Kind
        switch value {
        case .string(let s):
            rowBytes.append(contentsOf: s.utf8)
            cellKind = .text
        case .null:
            cellKind = .null
        case .date(let ms):
            rowBytes.append(contentsOf: ISO8601.string(millisecondsSince1970: ms).utf8)
            cellKind = .date
        case .array(let items) where i == categoriesColumn:
            rowBytes.append(contentsOf: Self.categoriesCell(items.compactMap(\.stringValue)).utf8)
            cellKind = .categories
        default:
            JSONEncoding.append(value, to: &rowBytes)
            cellKind = .json
        }
        cells[i] = CSVCell(kind: cellKind, start: start, end: rowBytes.count)
    }

    private mutating func setCoordinate(_ i: Int, _ d: Double) {
        let start = rowBytes.count
        if let precision { FixedDecimal.append(d, places: precision, trimZeros: true, to: &rowBytes) } else { ShortestDecimal.appendFixed(d, to: &rowBytes) }
        cells[i] = CSVCell(kind: .coordinate, start: start, end: rowBytes.count)
        kinds[i].insert(.double)
    }

    /// Writes one cell in the form its column's type needs: in a `String(JSON)` column a text or
    /// a date is written as a JSON string and null as `null`, so each comes back as it was.
    private mutating func render(_ cell: CSVCell?, type: ColumnType?, bytes: UnsafeBufferPointer<UInt8>) {
        guard let cell else {
            writer.field(utf8: UnsafeBufferPointer(rebasing: bytes[0..<0]), isText: true)
            return
        }
        let p = UnsafeBufferPointer(rebasing: bytes[cell.start..<cell.end])
        switch cell.kind {
        case .categories:
            writer.field(utf8: p)
        case .coordinate, .json:
            writer.field(utf8: p, isText: false)
        case .text where type == .json, .date where type == .json:
            var json: [UInt8] = []
            JSONEncoding.append(.string(String(decoding: p, as: UTF8.self)), to: &json)
            json.withUnsafeBufferPointer { writer.field(utf8: $0, isText: false) }
        case .text:
            writer.field(utf8: p, quoteEmpty: true)
        case .date:
            writer.field(utf8: p, isText: false)
        case .null:
            if type == .json {
                Self.null.withUnsafeBufferPointer { writer.field(utf8: $0, isText: false) }
            } else {
                writer.field(utf8: p, isText: false)
            }
        }
    }

    private static var null: [UInt8] { Array("null".utf8) }

    /// Categories joined with `;`, what the import splits on; as a JSON array when one holds a
    /// separator (`;` or `|`) or the joined text would read as a JSON array, so each comes
    /// back as one.
    static func categoriesCell(_ items: [String]) -> String {
        let joined = items.joined(separator: ";")
        if items.contains(where: { Categories.containsSeparator($0, Categories.defaultSeparators) })
            || (joined.hasPrefix("[") && joined.hasSuffix("]")) {
            var b: [UInt8] = []
            JSONEncoding.append(.array(items.map(JSONValue.string)), to: &b)
            return String(decoding: b, as: UTF8.self)
        }
        return joined
    }
}

enum CSVPlaceWriterError: Error {
    case format(FormatError)
    /// The spool (rows held back until the columns are known) could not be written or read.
    case spool(String)
}

enum ProcessInfoEnvironment {
    /// `$TMPDIR`, else `/tmp`.
    static var temporaryFolder: String {
        if let t = getenv("TMPDIR"), t.pointee != 0 { return String(cString: t) }
        return "/tmp"
    }
}
