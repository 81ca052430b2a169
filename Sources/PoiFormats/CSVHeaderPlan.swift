import PoiModel

/// A CSV header made into the plan every record is read by: the column names (the header line's,
/// or those `ReadOptions.columns` gives), each column's role, what the header kept without mapping
/// it (`ReadNote`), and the record converter set up for those columns. Whatever is wrong here
/// fails the file before a single record is read. Kept apart from `CSVPlaceReader`, which then
/// only tokenizes records into batches and hands them to workers.
struct CSVHeaderPlan {
    let names: [String]
    /// False when `ReadOptions.columns` named the columns: the first line is a record.
    let hasHeaderLine: Bool
    /// The header line as in the input (see `CSVPlaceReader.rawHeader`).
    let rawHeader: RawCSVRecord
    let roles: [ColumnRole]
    let notes: [ReadNote]
    let converter: CSVRecordConverter
    /// What each field adds to a prepared batch beyond its text (`CSVPlaceReader.preparedFieldBytes`).
    let preparedFieldBytes: Int

    /// Reads the header line from `tokenizer` (none when `options.columns` names the columns) and
    /// tells the tokenizer how many fields a record has.
    init(tokenizer: CSVTokenizer, options: ReadOptions, file: String) throws(FormatError) {
        var names: [String] = []
        if let columns = options.columns {
            // No header line: the first line is a record, the names are the ones given.
            hasHeaderLine = false
            names = columns
            rawHeader = RawCSVRecord(bytes: tokenizer.hasBOM ? [0xEF, 0xBB, 0xBF] : [], lineEndLength: 0,
                                     fieldCount: columns.count, unterminatedQuote: false)
        } else {
            hasHeaderLine = true
            guard try tokenizer.nextHeader() else { throw .emptyFile(file: file) }
            if tokenizer.overflowed {
                let limits = options.limits
                let blank = tokenizer.fieldCount == 0 || (tokenizer.fieldCount == 1 && tokenizer.field(0).isEmpty)
                throw .invalidHeader(file: file, reason: tokenizer.firstLimitCrossed == .fields
                    ? "the header has more than \(limits.maxFields) columns"
                    : blank ? "more than \(CSVTokenizer.maxBlankLinesBeforeHeader) blank lines and no header line; reading stopped there"
                    : "no header line within the first \(limits.maxRecordBytes) bytes (a header ends with a line break "
                        + "within the record size limit); reading stopped there")
            }
            rawHeader = RawCSVRecord(bytes: (tokenizer.hasBOM ? [0xEF, 0xBB, 0xBF] : []) + tokenizer.raw,
                                     lineEndLength: tokenizer.lineEndLength, fieldCount: tokenizer.fieldCount,
                                     unterminatedQuote: tokenizer.unterminatedQuote)
            for i in 0..<tokenizer.fieldCount {
                if tokenizer.field(i).contains(0) {
                    throw .invalidHeader(file: file, reason: "column \(i + 1) contains a NUL byte")
                }
                guard let s = String(validating: tokenizer.field(i), as: UTF8.self) else {
                    throw .invalidHeader(file: file, reason: "column \(i + 1) is not valid UTF-8")
                }
                names.append(s)
            }
        }
        self.names = names
        tokenizer.recordWidth = names.count
        preparedFieldBytes = names.isEmpty ? 0 : names.reduce(0) { $0 + $1.utf8.count } / names.count + 6
        var roles = options.mapping.plan(header: names)
        if options.isRejectsFile && names.suffix(3).map(trimWhitespace) == CSVPlaceReader.rejectsReasonColumns {
            roles.replaceSubrange((roles.count - 3)..., with: repeatElement(.ignored, count: 3))
        }
        // No latitude and longitude column: a WKT point column gives both (ogr2ogr's
        // GEOMETRY=AS_WKT, GeoPandas' `geometry`), unless a mapping names one of them.
        if !roles.contains(.field(.latitude)) && !roles.contains(.field(.longitude))
            && options.mapping.overrides[.latitude] == nil && options.mapping.overrides[.longitude] == nil,
           let k = names.indices.first(where: { i in
               guard case .extra = roles[i] else { return false }
               return WKTPoint.columnNames.contains(PlaceField.normalizeColumnName(trimWhitespace(names[i])))
           }) {
            roles[k] = .pointWKT
        }
        let isExport = Self.isPoiKitExport(header: names)
        if isExport {
            // By the header's own name: an extra the export wrote as "imageSource (extra)" is the
            // user's, even when no own imageSource column is there.
            for i in roles.indices {
                guard case .extra(let key) = roles[i], key == trimWhitespace(names[i]),
                      PoiKitProperties.exportColumns.contains(key) else { continue }
                roles[i] = .own(key)
            }
            // The altitude: its own column, named as the export names it.
            if let i = roles.indices.first(where: { roles[$0] == .extra(PoiKitProperties.altitudeColumn)
                                                    && trimWhitespace(names[$0]) == PoiKitProperties.altitudeColumn }) {
                roles[i] = .altitude
            }
            // With the own column holding NAME, `plan` kept "NAME (extra)" whole: it is extra NAME.
            for i in roles.indices {
                guard case .extra(let key) = roles[i], let base = FieldMapping.extraName(key),
                      PoiKitProperties.exportColumns.contains(base) || base == PoiKitProperties.altitudeColumn,
                      !roles.contains(.extra(base)) else { continue }
                roles[i] = .extra(base)
            }
        }
        self.roles = roles
        var headerNotes = options.mapping.notes(header: names, roles: roles, file: file)
        let coordinatesFromWKT = roles.contains(.pointWKT)
        for f in [PlaceField.name, .latitude, .longitude] where !roles.contains(.field(f)) {
            if coordinatesFromWKT && f != .name { continue }
            let looked = options.mapping.overrides[f].map { [$0] } ?? f.aliases
            // A column that would have been this field's, claimed by another field's mapping
            // (`name=lat`): say so, rather than claim there is no such column.
            for (i, column) in names.enumerated() {
                guard case .field(let other) = roles[i], other != f,
                      looked.contains(where: { PlaceField.normalizeColumnName($0) == PlaceField.normalizeColumnName(column) })
                else { continue }
                throw .columnTaken(file: file, field: f, column: column, by: other)
            }
            throw .missingColumn(file: file, field: f, looked: looked, header: names.map(trimWhitespace))
        }
        var converter = CSVRecordConverter(file: file, header: names, roles: roles, limits: options.limits,
                                           categorySeparators: options.categorySeparators)
        converter.columnsGiven = !hasHeaderLine
        converter.ignoreBlanks = options.ignoreBlanks
        converter.isPoiKitExport = isExport
        converter.delimiter = tokenizer.delimiter
        converter.types = try Self.columnTypes(options.columnTypes, header: names, roles: roles, file: file)
        // A `.csvt` that lists another number of columns describes another file (GDAL ignores
        // it too).
        // Said, never silent: a `.csvt` that does not fit, or names types nobody defines.
        if let sidecar = options.sidecarTypes, let sidecarName = options.sidecarName {
            if sidecar.count != names.count {
                headerNotes.append(ReadNote(file: file, kind: .sidecarIgnored(reason: "lists \(sidecar.count) column type\(sidecar.count == 1 ? "" : "s") "
                    + "for \(names.count) columns; not used, every column is read as text"), name: sidecarName, key: ""))
            } else if !options.sidecarUnknownNames.isEmpty {
                headerNotes.append(ReadNote(file: file, kind: .sidecarIgnored(reason: "unknown type "
                    + options.sidecarUnknownNames.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
                    + "; those columns are read as text (GDAL's types: String, Integer, Integer64, Real, Date, DateTime, "
                    + "Integer(Boolean), String(JSON)…)"), name: sidecarName, key: ""))
            }
        }
        if let sidecar = options.sidecarTypes, sidecar.count == names.count, sidecar.contains(where: { $0 != nil }) {
            if converter.types.isEmpty { converter.types = Array(repeating: nil, count: roles.count) }
            converter.blankIsAbsent = Array(repeating: false, count: roles.count)
            for i in roles.indices {
                guard case .extra = roles[i], converter.types[i] == nil, let type = sidecar[i] else { continue }
                converter.types[i] = type
                converter.blankIsAbsent[i] = true
            }
            converter.sidecarName = options.sidecarName.map { name in String(name.split(separator: "/").last ?? Substring(name)) }
        }
        self.notes = headerNotes
        self.converter = converter
    }

    /// Whether a header is one `poi export --format csv` wrote: it names `importKey`,
    /// `created_at` and `updated_at` as they are. Its `imageId`, `created_at`, `_source`…
    /// columns are then PoiKit's own (`ColumnRole.own`), as in a GeoJSON export, so the export
    /// imports back unchanged; in any other file such a column is the user's, kept under extra.
    static func isPoiKitExport(header: [String]) -> Bool {
        var seen = 0
        for name in header {
            switch trimWhitespace(name) {
            case "importKey": seen |= 1
            case "created_at": seen |= 2
            case "updated_at": seen |= 4
            default: break
            }
        }
        return seen == 7
    }

    /// Each column's `--types` type (empty when none is given). A name must be a column this
    /// file keeps under `extra`: a typo, or a column PoiKit reads as a field, stops the file
    /// before any record is read, as mongoimport stops on a bad `--columnsHaveTypes` header.
    static func columnTypes(_ given: ColumnTypes, header: [String], roles: [ColumnRole], file: String) throws(FormatError) -> [ColumnType?] {
        guard !given.isEmpty else { return [] }
        var types = [ColumnType?](repeating: nil, count: roles.count)
        for name in given.names {
            if let i = roles.firstIndex(of: .extra(name)) {
                types[i] = given[name]
                continue
            }
            if let i = header.firstIndex(where: { trimWhitespace($0) == name }) {
                let what: String
                switch roles[i] {
                case .field(let f): what = "is read as the place's \(f.rawValue), which has its own type"
                case .pointWKT: what = "holds the place's coordinates (WKT)"
                default: what = "is not kept under extra"
                }
                throw .typedColumn(file: file, name: name, reason: "column \(name) \(what); --types applies to columns kept under extra")
            }
            let extras = roles.compactMap { if case .extra(let k) = $0 { return k } else { return nil } }
            throw .typedColumn(file: file, name: name, reason: "no column \(name) in this file"
                + (extras.isEmpty ? "" : " (its extra columns: " + extras.prefix(12).joined(separator: ", ") + (extras.count > 12 ? ", …" : "") + ")"))
        }
        return types
    }
}
