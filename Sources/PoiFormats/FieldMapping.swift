import PoiModel

/// Maps input column/property names to place fields: explicit `--field FIELD=COLUMN` overrides
/// first, then the common names of `PlaceField.aliases`, compared case- and space-insensitively.
/// Anything unmapped goes to `Place.extra`.
public struct FieldMapping: Sendable, Equatable {
    /// field → column name, from `--field`.
    public private(set) var overrides: [PlaceField: String] = [:]

    public init() {}

    public init(overrides: [PlaceField: String]) { self.overrides = overrides }

    /// The field a column/property name maps to before first-come-first-served conflicts are
    /// resolved, or nil for `extra`. An overridden field is no longer matched by its aliases.
    public func field(forColumn column: String) -> PlaceField? {
        let n = PlaceField.normalizeColumnName(column)
        for (field, col) in overrides where col == column || PlaceField.normalizeColumnName(col) == n {
            return field
        }
        for field in PlaceField.allCases where overrides[field] == nil && field.aliases.contains(n) {
            return field
        }
        return nil
    }

    /// What each column of a header becomes: the first column claiming a field gets it, later
    /// ones go to `extra`. Extra keys are made unique ("a", "a#2") and blank names become
    /// "column N" so no value is lost. A name ending in " (extra)" — how `poi convert` and
    /// `poi export` write an extra whose name collides with a property they write — is an extra
    /// under the name without it.
    public func plan(header: [String]) -> [ColumnRole] {
        var taken = Set<PlaceField>()
        var keys = Set<String>()
        var roles: [ColumnRole] = []
        for (i, raw) in header.enumerated() {
            let name = trimWhitespace(raw)
            if let own = FieldMapping.extraName(name), !keys.contains(own) {
                keys.insert(own)
                roles.append(.extra(own))
                continue
            }
            if let f = field(forColumn: name), !taken.contains(f) {
                taken.insert(f)
                roles.append(.field(f))
                continue
            }
            var key = name.isEmpty ? "column \(i + 1)" : name
            if keys.contains(key) {
                var k = 2
                while keys.contains("\(key)#\(k)") { k += 1 }
                key = "\(key)#\(k)"
            }
            keys.insert(key)
            roles.append(.extra(key))
        }
        return roles
    }
}

extension FieldMapping {
    /// The suffix a writer gives an extra whose name collides with a property it writes itself.
    public static let extraSuffix = " (extra)"

    /// The field the default mapping (no `--field`) gives a column or property name: what
    /// `PoiKitProperties.propertyName(forExtra:)` keeps an extra's name clear of. Called for every
    /// extra a writer writes, so an ASCII name is normalised into two integers (no alias has
    /// more than 16 letters) and looked up without allocating.
    static func defaultField(forColumn name: String) -> PlaceField? {
        var key = PackedName()
        var count = 0
        for b in name.utf8 where !(b == 0x20 || (b >= 0x09 && b <= 0x0D) || b == 0x5F || b == 0x2D) {
            if b >= 0x80 { return FieldMapping().field(forColumn: name) }  // Unicode spaces and case
            if count == 16 { return nil }
            let lower = b >= 0x41 && b <= 0x5A ? b + 0x20 : b
            // Most extras (`opening_hours`) start with a letter no alias starts with.
            if count == 0 && !aliasInitials.contains(lower) { return nil }
            key.set(count, lower)
            count += 1
        }
        return defaultFields[key]
    }

    /// The ASCII bytes some alias starts with, one bit each.
    private static let aliasInitials = ASCIISet(PlaceField.allCases.flatMap(\.aliases).compactMap(\.utf8.first))

    struct ASCIISet {
        private var low: UInt64 = 0
        private var high: UInt64 = 0
        init(_ bytes: [UInt8]) {
            for b in bytes where b < 0x80 {
                if b < 64 { low |= 1 << UInt64(b) } else { high |= 1 << UInt64(b - 64) }
            }
        }
        func contains(_ b: UInt8) -> Bool { b < 64 ? low & (1 << UInt64(b)) != 0 : b < 0x80 && high & (1 << UInt64(b - 64)) != 0 }
    }

    /// Up to 16 non-zero bytes, zero-padded.
    struct PackedName: Hashable {
        var low: UInt64 = 0
        var high: UInt64 = 0
        mutating func set(_ i: Int, _ byte: UInt8) {
            if i < 8 { low |= UInt64(byte) << (8 * i) } else { high |= UInt64(byte) << (8 * (i - 8)) }
        }
        init() {}
        init?(_ text: String) {
            guard text.utf8.count <= 16 else { return nil }
            for (i, b) in text.utf8.enumerated() { set(i, b) }
        }
    }

    /// Normalised alias → field, the first field claiming an alias winning (as `field(forColumn:)`).
    private static let defaultFields: [PackedName: PlaceField] = {
        var map: [PackedName: PlaceField] = [:]
        for field in PlaceField.allCases {
            for alias in field.aliases {
                guard let key = PackedName(alias) else { preconditionFailure("alias \(alias) longer than 16 letters") }
                if map[key] == nil { map[key] = field }
            }
        }
        return map
    }()

    /// "placename (extra)" → "placename"; nil for a name without the suffix.
    public static func extraName(_ name: String) -> String? {
        // Bytes, not `hasSuffix` (which compares by Unicode equivalence): asked of every extra written.
        let utf8 = name.utf8, suffix = extraSuffix.utf8
        guard utf8.count > suffix.count, utf8.last == suffix.last, utf8.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        return String(decoding: utf8.dropLast(suffix.count), as: UTF8.self)
    }

    /// Names PoiKit writes itself, on documents (`created_at`, `updated_at`, `imageId`,
    /// `thumbnailId`) or in rejects files (`_line`, `_feature`, `_field`, `_reason`). A CSV
    /// column with one of these names is kept under `extra` like any other, with a note.
    public static let reservedNames: [String] = ["created_at", "updated_at", "imageId", "thumbnailId"]
        + PoiKitProperties.rejectsAnnotations

    /// The notes a CSV header earns: columns named like what PoiKit writes, columns that name a
    /// field another column already took, and unmapped columns that look like an unmapped field.
    public func notes(header: [String], roles: [ColumnRole], file: String) -> [ReadNote] {
        var notes: [ReadNote] = []
        let mapped = Set(roles.compactMap { if case .field(let f) = $0 { return f } else { return nil } })
        var firstColumn: [PlaceField: String] = [:]
        for (i, role) in roles.enumerated() {
            let name = trimWhitespace(header[i])
            switch role {
            case .field(let f): firstColumn[f] = name
            case .ignored, .pointWKT, .own, .altitude: continue
            case .extra(let key):
                if FieldMapping.extraName(name) != nil { continue }
                if FieldMapping.reservedNames.contains(name) {
                    notes.append(ReadNote(file: file, kind: .reservedName, name: name, key: key))
                } else if let f = field(forColumn: name), let first = firstColumn[f] {
                    notes.append(ReadNote(file: file, kind: .alreadyTaken(f, by: first), name: name, key: key))
                } else if field(forColumn: name) == nil, let f = PlaceField.lookalike(column: name), !mapped.contains(f) {
                    notes.append(ReadNote(file: file, kind: .looksLike(f), name: name, key: key))
                }
            }
        }
        return notes
    }
}

/// Something a reader kept but could not map, said once per file so nothing is lost silently
/// (the CLI prints it, adding the `--field` that would map it). `message` names no flags.
public struct ReadNote: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A name PoiKit writes itself (`FieldMapping.reservedNames`): kept under `extra`.
        case reservedName
        /// Names `field`, which an earlier column/property (`by`) already gave: kept under `extra`.
        case alreadyTaken(PlaceField, by: String)
        /// Unmapped, but looks like `field`, which nothing mapped: kept under `extra`.
        case looksLike(PlaceField)
        /// A property named like `field` holding a JSON type the field cannot take: kept under `extra`.
        case wrongType(PlaceField, type: String)
        /// Column names were given for a CSV file without a header line (`ReadOptions.columns`),
        /// but the file is GeoJSON: they are not used.
        case columnNamesIgnored
        /// `records` records were rejected because a quoted field joined `lines` physical lines,
        /// `wholeRecordLines` of them records by themselves (`JoinedLines`): the merge a file
        /// with bare `"` in its text suffers, counted so a summary never hides it.
        case quotedLines(records: Int, lines: Int, wholeRecordLines: Int)
        /// The `.csvt` beside the file (`name`) is not used, or names types PoiKit reads as text.
        case sidecarIgnored(reason: String)
        /// Holds GDAL's text for a list (`(3:a,b,c)`, `GDALListText`): read as its items.
        case gdalList
    }
    public var file: String
    public var kind: Kind
    /// The column or property as the input names it.
    public var name: String
    /// Its key under `extra`.
    public var key: String
    /// "column" (CSV) or "property" (GeoJSON).
    public var noun: String

    public init(file: String, kind: Kind, name: String, key: String, noun: String = "column") {
        self.file = file
        self.kind = kind
        self.name = name
        self.key = key
        self.noun = noun
    }

    /// The field a `--field FIELD=NAME` would give this column, when that is the likely fix.
    public var suggestedField: PlaceField? { if case .looksLike(let f) = kind { return f } else { return nil } }

    /// `column "image_url" looks like the image`.
    public var message: String {
        let what = "\(noun) \"\(name)\""
        switch kind {
        case .reservedName: return "\(what) is a name PoiKit writes itself; kept as extra.\(key)"
        case .alreadyTaken(let f, let by):
            return "\(what) names the \(f.rawValue), already taken by \(noun) \"\(by)\"; kept as extra.\(key)"
        case .looksLike(let f): return "\(what) looks like the \(f.rawValue)"
        case .columnNamesIgnored:
            return "column names were given for a CSV file without a header line, but this file is GeoJSON; not used"
        case .quotedLines(let records, let lines, let whole):
            return "\(records) record\(records == 1 ? "" : "s") rejected because a quoted field spans lines: together "
                + "\(lines) lines, \(whole) of them records by themselves; if \" is plain text in this file, read it with "
                + "--quote none"
        case .sidecarIgnored(let reason): return "\(name): \(reason)"
        case .gdalList:
            return "\(what) holds GDAL's text for a list, \"(N:a,b,…)\"; read as its N items (a list that cannot be "
                + "read so is refused)"
        case .wrongType(let f, let type): return "\(what) looks like the \(f.rawValue) but holds \(type == "object" || type == "array" ? "an" : "a") \(type); kept as extra.\(key)"
        }
    }
}

/// What a column becomes.
public enum ColumnRole: Sendable, Equatable {
    case field(PlaceField)
    case extra(String)
    /// Not read: the reason columns of one of PoiKit's own rejects files
    /// (`ReadOptions.isRejectsFile`), which describe the run that wrote it.
    case ignored
    /// The coordinates, as a WKT `POINT (x y)` (`WKTPoint`): a `WKT` or `geometry` column of a
    /// file that has no latitude and longitude columns.
    case pointWKT
    /// One of PoiKit's own properties (`PoiKitProperties`: `imageId`, `created_at`, `_source`…)
    /// in a CSV file that `poi export --format csv` wrote (`CSVPlaceReader.isPoiKitExport`):
    /// about the database it comes from, kept apart as a GeoJSON export's are.
    case own(String)
    /// The third value of the position (`alt`) in a CSV file that `poi export --format csv`
    /// wrote: a number, or nothing for a place without one. In any other file an `alt` column is
    /// the user's, kept under extra.
    case altitude
}

/// A record exactly as it is in the input (with `ReadOptions.keepRawRecords`), so PoiJobs can
/// give a record refused at any stage back unchanged in a rejects file.
public enum RawRecord: Sendable, Hashable {
    case csv(RawCSVRecord)
    /// The feature's bytes as written, from its `{` to its `}` (no RS, separator or indentation
    /// around it).
    case feature([UInt8])
}

/// A CSV record's bytes as in the input: from its first byte (after blank lines and the LF of
/// the line end before it) to the end of its own line end, quotes, doubled quotes and line breaks
/// inside quotes included.
///
/// Sixteen bytes besides the bytes themselves: every item of a reader has room for one, and an
/// allocation per record is all keeping them costs (a boxed one cost a second).
public struct RawCSVRecord: Sendable, Hashable {
    public var bytes: [UInt8]
    private var fields: UInt32
    private var lineEndCount: UInt8
    /// The input ended inside a quoted field of this record.
    public var unterminatedQuote: Bool

    /// How many of the last `bytes` are the line end: 2 for CRLF, 1 for LF or CR, 0 when the
    /// input ends without one (or inside quotes).
    public var lineEndLength: Int { Int(lineEndCount) }
    /// Fields in the record, as the tokenizer split it; for a record refused because its quotes
    /// look like plain text (a quoted field joining whole lines, text after a closing quote),
    /// the fields of its last line read without quoting, as a --quote none read of a rejects file does.
    public var fieldCount: Int { Int(fields) }

    public init(bytes: [UInt8], lineEndLength: Int, fieldCount: Int, unterminatedQuote: Bool = false) {
        precondition((0...2).contains(lineEndLength) && fieldCount >= 0)
        self.bytes = bytes
        self.lineEndCount = UInt8(lineEndLength)
        self.fields = UInt32(clamping: fieldCount)
        self.unterminatedQuote = unterminatedQuote
    }

    /// The record without its line end.
    public var content: ArraySlice<UInt8> { bytes.dropLast(lineEndLength) }
    public var lineEnd: ArraySlice<UInt8> { bytes.suffix(lineEndLength) }
}

/// One result of a reader: a valid place or a reject, each with its record's raw bytes when
/// `ReadOptions.keepRawRecords` asked for them (nil otherwise, and for records over the size
/// limits or whose framing is broken). Readers keep going after rejects.
public enum ReadItem: Sendable {
    case place(Place, raw: RawRecord? = nil)
    case reject(Reject, raw: RawRecord?)

    public var place: Place? { if case .place(let p, _) = self { return p } else { return nil } }
    public var reject: Reject? { if case .reject(let r, _) = self { return r } else { return nil } }
    public var raw: RawRecord? {
        switch self {
        case .place(_, let raw), .reject(_, let raw): return raw
        }
    }
}

/// Options shared by every reader (and by `poi check`, `convert`, `import`).
/// More than ten stored properties: one per reading option of the commands, set independently of the others.
public struct ReadOptions: Sendable, Equatable {
    public var mapping: FieldMapping
    /// CSV delimiter; nil detects it from the header among `,` `;` tab `|`.
    public var delimiter: UInt8?
    public var limits: ReadLimits
    /// Hand out each record's raw bytes with its item (`ReadItem.raw`), for rejects files. Off,
    /// reading copies nothing extra: `poi check` and `poi convert` leave it off.
    public var keepRawRecords: Bool
    /// ASCII bytes categories text is split on (default `;` and `|`; a cell or property holding
    /// a JSON array of strings is a list whatever these are).
    public var categorySeparators: [UInt8] = Categories.defaultSeparators
    /// The input's text encoding when it is not UTF-8 (nil: UTF-8, unless a UTF-16 or UTF-32
    /// byte-order mark says otherwise). Applies to CSV and GeoJSON alike; given, it wins over a BOM.
    public var encoding: TextEncoding?
    /// Names of the columns of a CSV file without a header line (as `mongoimport --fields`): the
    /// first line is then a record like the others, and mapping applies to these names. nil: the
    /// first line is the header. GeoJSON ignores it.
    public var columns: [String]?
    /// Whether `"` quotes CSV fields; nil: it does (RFC 4180). Tab-separated dumps such as
    /// GeoNames' are not quoted and hold bare `"` in names: read as quotes, one of them swallows
    /// the lines after it, hence `.none`.
    public var quoting: CSVQuoting?
    /// The input is one of PoiKit's own rejects files: a CSV header ending in `_line`, `_field`,
    /// `_reason` has those columns ignored (they say why an earlier run refused the row, and kept
    /// under `extra` they would make the fixed row a different place from the same row in the
    /// dump). GeoJSON never keeps these bare names anyway.
    public var isRejectsFile = false
    /// Types of columns/properties kept under `extra` (`--types`): a CSV cell is text without
    /// one; a GeoJSON property's string is read as the type, a value of the type kept.
    public var columnTypes = ColumnTypes()
    /// Column types from a GDAL `.csvt` beside the CSV file (`CSVTypeSidecar`), in column order;
    /// `--types` wins for a column it names. A typed column's empty cell is no value at all
    /// (the key is left out), as GDAL reads it, so an export's sparse columns come back sparse.
    public var sidecarTypes: [ColumnType?]?
    /// Names in the `.csvt` that GDAL does not define (their columns are read as text).
    public var sidecarUnknownNames: [String] = []
    /// The `.csvt` file's name, for messages.
    public var sidecarName: String?
    /// Leave blank CSV cells of columns kept under `extra` out of the place (`--ignore-blanks`,
    /// as mongoimport's `--ignoreBlanks`) instead of storing "" (or null, for a typed column).
    public var ignoreBlanks = false

    public init(mapping: FieldMapping = FieldMapping(), delimiter: UInt8? = nil, limits: ReadLimits = ReadLimits(),
                keepRawRecords: Bool = false) {
        self.mapping = mapping
        self.delimiter = delimiter
        self.limits = limits
        self.keepRawRecords = keepRawRecords
    }
}

/// How a CSV input quotes fields.
public enum CSVQuoting: String, Sendable, Equatable, CaseIterable {
    /// `"` opens and closes a field that may hold delimiters, line ends and doubled `""` (RFC 4180).
    case doubleQuote = "\""
    /// No quoting: `"` is text, a field ends at the delimiter, a record at its line end (IANA
    /// text/tab-separated-values, GeoNames, PostgreSQL's text COPY).
    case none
}
