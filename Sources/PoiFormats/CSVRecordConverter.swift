import PoiModel
#if canImport(Glibc)
import Glibc
#endif

/// Record → `ReadItem`: mapping and validation. Pure, so batches convert in parallel.
struct CSVRecordConverter: Sendable {
    let file: String
    let header: [String]
    let roles: [ColumnRole]
    let limits: ReadLimits
    let categorySeparators: [UInt8]
    /// The names came from `ReadOptions.columns`, not a header line (what a count mismatch says).
    var columnsGiven = false
    /// Each column's `--types` type; empty when none is given.
    var types: [ColumnType?] = []
    /// The file is a PoiKit CSV export (`CSVHeaderPlan.isPoiKitExport`): its `id` is the
    /// exporting database's `_id`, dropped beside an importKey, as a GeoJSON export's Feature id is.
    var isPoiKitExport = false
    /// Columns whose blank cell is no value (the key left out): those a `.csvt` typed.
    var blankIsAbsent: [Bool] = []
    /// The `.csvt` file the types came from, for rejects.
    var sidecarName: String?
    /// `ReadOptions.ignoreBlanks`.
    var ignoreBlanks = false
    /// The file's delimiter (how a rejected record's raw line splits unquoted).
    var delimiter: UInt8 = 0x2C
    /// Columns of the fields the validate-only fast path looks at (-1: none).
    private let nameColumn: Int, longitudeColumn: Int, latitudeColumn: Int, importKeyColumn: Int, idColumn: Int
    private let hasAltitudeColumn: Bool

    init(file: String, header: [String], roles: [ColumnRole], limits: ReadLimits,
         categorySeparators: [UInt8] = Categories.defaultSeparators) {
        self.categorySeparators = categorySeparators
        self.file = file
        self.header = header
        self.roles = roles
        self.limits = limits
        // The reader refuses a header without these three, so every index exists.
        nameColumn = roles.firstIndex(of: .field(.name)) ?? -1
        longitudeColumn = roles.firstIndex(of: .field(.longitude)) ?? -1
        hasAltitudeColumn = roles.contains(.altitude)
        latitudeColumn = roles.firstIndex(of: .field(.latitude)) ?? -1
        importKeyColumn = roles.firstIndex(of: .field(.importKey)) ?? -1
        idColumn = roles.firstIndex(of: .field(.id)) ?? -1
    }

    /// Validates every record of `batch` without building places: the count `convert` would
    /// turn into places, and its rejects in order; with `keys`, each valid record's import key.
    /// `placesWithKeys`: the places of the valid records whose key fingerprint is in it are
    /// built (the others are only validated) and returned in order in `places`.
    func verdict(_ batch: RawCSVBatch, keys: Bool = false, placesWithKeys wanted: Set<UInt64>? = nil,
                 fingerprinting: KeyFingerprinting = .exact) -> CSVBatchVerdict {
        var result = CSVBatchVerdict()
        let raw = (batch.raw, batch.rawEnds)
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.ends.withUnsafeBufferPointer { ends in
                for (k, r) in batch.records.enumerated() {
                    if certainlyValid(r, bytes: bytes, ends: ends) {
                        result.valid += 1
                        guard keys || wanted != nil else { continue }
                        let key = keyFingerprint(ofValid: r, bytes: bytes, ends: ends, fingerprinting)
                        if keys { result.keys.append(key) }
                        if let wanted, wanted.contains(key),
                           case .place(let p, _) = convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty) {
                            result.places.append(p)
                        }
                        continue
                    }
                    switch convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty) {
                    case .place(let p, _):
                        result.valid += 1
                        guard keys || wanted != nil else { continue }
                        let key = fingerprinting == .exact ? ImportKey.fingerprint(p.importKey) : KeyCandidate.of(p)
                        if keys { result.keys.append(key) }
                        if let wanted, wanted.contains(key) { result.places.append(p) }
                    case .reject(let reject, let raw): result.rejects.append((reject, raw))
                    }
                }
            }
        }
        return result
    }

    /// True only when `convert` would certainly return a place, decided on the bytes alone: no
    /// strings, no `Place`, no import key. False means "not sure", and the caller runs `convert`,
    /// so every reject and its reason still come from the one validator. The cases answered
    /// here are the common ones: a well-formed record, valid UTF-8, a name with a visible ASCII
    /// character, plain decimal coordinates in range. (The other fields cannot reject a CSV
    /// record: they are strings, and any string is a valid placename, details, image,
    /// categories, id or extra value.) Tests and the fuzz oracle compare both paths.
    @inline(__always)
    private func certainlyValid(_ r: RawCSVBatch.Record, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>) -> Bool {
        if r.unterminatedQuote || r.overflowed || r.joinedLines != nil || r.textAfterQuote != nil || r.fieldCount != roles.count { return false }
        // A typed column can reject a record: the full validator decides.
        if !types.isEmpty { return false }
        // Coordinates from a WKT column go through the full validator, and so does an altitude.
        if longitudeColumn < 0 || latitudeColumn < 0 || hasAltitudeColumn { return false }
        let first = r.firstField
        let recordStart = first == 0 ? 0 : ends[first - 1]
        let recordEnd = ends[first + r.fieldCount - 1]
        // The fields are stored back to back: the record is valid UTF-8 field by field when the
        // whole is valid and no field starts inside a character.
        guard UTF8Scan.isValidWithoutNUL(UnsafeBufferPointer(rebasing: bytes[recordStart..<recordEnd])) else { return false }
        for k in (first + 1)..<(first + r.fieldCount) {
            let s = ends[k - 1]
            if s < ends[k] && UTF8Scan.isContinuation(bytes[s]) { return false }
        }
        @inline(__always) func field(_ column: Int) -> UnsafeBufferPointer<UInt8> {
            let k = first + column
            return UnsafeBufferPointer(rebasing: bytes[(k == first ? recordStart : ends[k - 1])..<ends[k]])
        }
        // A visible ASCII character survives trimming whatever else the name holds.
        guard field(nameColumn).contains(where: { $0 > 0x20 && $0 < 0x7F }) else { return false }
        guard let lon = Self.plainDecimal(field(longitudeColumn)),
              let lat = Self.plainDecimal(field(latitudeColumn)) else { return false }
        return (try? Coordinate.validated(longitude: lon, latitude: lat)) != nil
    }

    /// The fingerprint of the import key of a record `certainlyValid` vouched for, by the
    /// validator's rule (`PlaceValidator.validate`): the trimmed `importKey` text, else the
    /// trimmed `id` text, else derived from the trimmed name and the coordinate. CSV cells are
    /// text, so these are the only cases; tests and the fuzz oracle hold it to `next()`'s keys.
    /// With `.candidates`, `KeyCandidate`'s instead: most names are normalised from their bytes.
    private func keyFingerprint(ofValid r: RawCSVBatch.Record, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>,
                                _ fingerprinting: KeyFingerprinting = .exact) -> UInt64 {
        @inline(__always) func field(_ column: Int) -> UnsafeBufferPointer<UInt8> {
            let k = r.firstField + column
            let start = k == 0 ? 0 : ends[k - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
        }
        @inline(__always) func text(_ column: Int) -> String { String(decoding: field(column), as: UTF8.self) }
        for column in [importKeyColumn, idColumn] where column >= 0 && column < r.fieldCount {
            let t = trimWhitespace(text(column))
            if !t.isEmpty { return fingerprinting == .exact ? ImportKey.fingerprint(t) : KeyCandidate.explicit(t) }
        }
        let k = r.firstField
        func decimal(_ column: Int) -> Double {
            let start = k + column == 0 ? 0 : ends[k + column - 1]
            return Self.plainDecimal(UnsafeBufferPointer(rebasing: bytes[start..<ends[k + column]])) ?? .nan
        }
        // certainlyValid checked both: validated() cannot fail here; it normalises -0 as the validator does.
        let coordinate = (try? Coordinate.validated(longitude: decimal(longitudeColumn), latitude: decimal(latitudeColumn)))
            ?? Coordinate(longitude: .nan, latitude: .nan)
        if fingerprinting == .candidates {
            return KeyCandidate.derived(utf8Name: field(nameColumn), coordinate: coordinate)
                ?? KeyCandidate.derived(name: trimWhitespace(text(nameColumn)), coordinate: coordinate)
        }
        return ImportKey.derivedFingerprint(name: trimWhitespace(text(nameColumn)), coordinate: coordinate)
    }

    /// An ASCII field read as `PlaceValidator` reads coordinate text: ASCII whitespace trimmed
    /// (the only whitespace in ASCII), then `DecimalText`. Nil for anything else.
    @inline(__always)
    private static func plainDecimal(_ p: UnsafeBufferPointer<UInt8>) -> Double? {
        var lo = 0, hi = p.count
        @inline(__always) func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }
        while lo < hi && isSpace(p[lo]) { lo += 1 }
        while hi > lo && isSpace(p[hi - 1]) { hi -= 1 }
        if lo == hi { return nil }
        if p.contains(where: { $0 >= 0x80 }) { return nil }
        return DecimalText.parse(utf8: UnsafeBufferPointer(rebasing: p[lo..<hi]))
    }

    /// Converts every record of `batch` into slots `offset...` of `queue`.
    func convert(_ batch: RawCSVBatch, into queue: ReadItemQueue, at offset: Int) {
        var slot = offset
        convert(batch) { item in
            queue.set(slot, item)
            slot += 1
        }
    }

    /// Converts every record of `batch`, passing each item to `body` in order.
    func convert(_ batch: RawCSVBatch, each body: (consuming ReadItem) -> Void) {
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.ends.withUnsafeBufferPointer { ends in
                let raw = (batch.raw, batch.rawEnds)
                for (k, r) in batch.records.enumerated() {
                    body(convert(r, k, bytes: bytes, ends: ends, raw: raw, quotedEmpty: batch.isQuotedEmpty))
                }
            }
        }
    }

    /// Record `r`, the `k`th of its batch, with the batch's raw bytes and their ends.
    private func convert(_ r: RawCSVBatch.Record, _ k: Int, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>,
                         raw: (bytes: [UInt8], ends: [Int]), quotedEmpty: (Int) -> Bool) -> ReadItem {
        @inline(__always) func field(_ i: Int) -> UnsafeBufferPointer<UInt8> {
            let k = r.firstField + i
            // Records are appended back to back: a field starts where the previous one ended.
            let start = k == 0 ? 0 : ends[k - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
        }
        let source = PlaceSource(file: file, record: r.record, position: .line(r.line))
        func rawRecord() -> RawRecord? {
            guard r.rawKept else { return nil }
            let bytes = Array(raw.bytes[(k == 0 ? 0 : raw.ends[k - 1])..<raw.ends[k]])
            var fieldCount = r.fieldCount
            if r.joinedLines != nil || r.textAfterQuote != nil {
                // Refused because its quotes look like plain text: the rejects file is read back
                // with --quote none, which sees the fields of the record's last line, unquoted.
                // The reasons go after that many (the quoted split merged some of them).
                let content = bytes.dropLast(Int(r.lineEndLength))
                let lastLine = content.lastIndex(where: { $0 == 0x0A || $0 == 0x0D }).map { content[($0 + 1)...] } ?? content[...]
                fieldCount = lastLine.reduce(1) { $0 + ($1 == delimiter ? 1 : 0) }
            }
            return .csv(RawCSVRecord(bytes: bytes, lineEndLength: Int(r.lineEndLength), fieldCount: fieldCount,
                                     unterminatedQuote: r.unterminatedQuote))
        }
        func reject(_ field: String?, _ reason: String) -> ReadItem {
            .reject(Reject(source: source, field: field, reason: reason), raw: rawRecord())
        }
        if r.unterminatedQuote {
            // Every line after the opening quote is in this record: say the likely cause, a bare
            // `"` in a file that does not quote (GeoNames' tab-separated names).
            // Lines it swallowed, counted in its fields (a lone CR ends a line too).
            let start = r.firstField == 0 ? 0 : ends[r.firstField - 1]
            let end = r.fieldCount == 0 ? start : ends[r.firstField + r.fieldCount - 1]
            var breaks = 0
            for i in start..<end where bytes[i] == 0x0A || (bytes[i] == 0x0D && (i + 1 == end || bytes[i + 1] != 0x0A)) { breaks += 1 }
            // The file's last line break ends its last line; it starts none.
            if end > start, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { breaks -= 1 }
            let span = breaks == 0 ? "" : ": lines \(r.line)–\(r.line + breaks)"
            return reject(nil, "unterminated quoted field (the file ends inside quotes opened in this record, so every "
                          + "line after it was read into it\(span); if \" is plain text in this file, read it with --quote none)")
        }
        if let j = r.joinedLines {
            let last = r.line + j.lines - 1
            return reject(j.field < header.count ? header[j.field] : nil,
                          "quoted field spans \(j.lines) lines holding \(j.quotedDelimiters) delimiters "
                          + "(lines \(r.line)–\(last) were read as one record; \(j.wholeRecordLines) of them are "
                          + "records by themselves); if \" is plain text in this file, read it with --quote none")
        }
        if let k = r.textAfterQuote {
            return reject(k < header.count ? header[k] : nil,
                          "text follows the closing quote of a quoted value (as in \"Bo\" Hill), so its quotes would be "
                          + "lost; if \" is plain text in this file, read it with --quote none")
        }
        if r.overflowed {
            return reject(nil, "record exceeds the limit of \(limits.maxRecordBytes) bytes or \(limits.maxFields) fields")
        }
        var count = r.fieldCount
        // Trailing empty fields beyond the header (a spreadsheet's stray delimiters) are harmless.
        while count > roles.count && field(count - 1).isEmpty { count -= 1 }
        if count > roles.count {
            return reject(nil, "record has \(r.fieldCount) fields, "
                          + (columnsGiven ? "\(roles.count) column names were given" : "header has \(roles.count)"))
        }
        var draft = PlaceDraft(source: source)
        draft.categorySeparators = categorySeparators
        // A short row (trailing empty cells left out, as spreadsheets export them) has its
        // missing cells empty, as Python's csv and GDAL read it.
        for i in 0..<roles.count {
            var value = ""
            if i < count {
                let raw = field(i)
                guard let v = decodeField(raw) else {
                    return reject(header[i], raw.contains(0) ? "contains a NUL byte" : "not valid UTF-8")
                }
                value = v
            }
            switch roles[i] {
            case .field(.categories): draft.categories = Self.categories(value)
            // A PoiKit export writes nothing for a place without an image (none stored, or one
            // its --with-images could not copy): no image field, so the stored link stays, as
            // for a GeoJSON export's feature without an `image`.
            case .field(.image) where isPoiKitExport && value.isEmpty && !(i < count && quotedEmpty(r.firstField + i)):
                break
            case .field(let f): draft[f] = .string(value)
            case .extra(let key):
                let type = types.isEmpty ? nil : types[i]
                if type == nil || type == .string {
                    if ignoreBlanks && Self.isBlank(value) { break }
                    // A PoiKit export writes "" for an empty value and nothing for none.
                    if isPoiKitExport && value.isEmpty && !(i < count && quotedEmpty(r.firstField + i)) { break }
                    draft.extra.append(key, .string(value))
                } else if Self.isBlank(value) {
                    // An empty typed cell is no value (null), as ogr2ogr reads it, not a reject;
                    // under a `.csvt`'s type, no value at all (GDAL's unset field).
                    if !ignoreBlanks && !(i < blankIsAbsent.count && blankIsAbsent[i]) { draft.extra.append(key, .null) }
                } else {
                    switch type!.value(text: value) {
                    case .success(let v): draft.extra.append(key, v)
                    case .failure(var problem):
                        if i < blankIsAbsent.count, blankIsAbsent[i], let sidecarName { problem.origin = sidecarName }
                        return reject(header[i], problem.message)
                    }
                }
            case .own(let key):
                if Self.isBlank(value) { break }
                if key == PoiKitProperties.source {
                    // `{"file":…,"line":…}` as compact JSON; anything else is the user's.
                    if let parsed = try? JSONParser.parse(Array(value.utf8), maxDepth: 2),
                       PoiKitProperties.exportedSource(parsed) != nil {
                        draft.poiKitProperties.append(key, parsed)
                    } else {
                        draft.extra.append(key, .string(value))
                    }
                } else {
                    draft.poiKitProperties.append(key, .string(value))
                }
            case .ignored: break
            case .altitude:
                // Nothing: a place without one. A number is written as JSON writes it (`581.0`).
                if Self.isBlank(value) { break }
                guard let z = DecimalText.parse(trimWhitespace(value)), z.isFinite else {
                    return reject(header[i], "altitude must be a number, got \"\(value.prefix(40))\"")
                }
                draft.altitude = .double(z)
            case .pointWKT:
                switch WKTPoint.parse(value) {
                case .success(let point):
                    draft.longitude = .string(point.x)
                    draft.latitude = .string(point.y)
                    if let z = point.z { draft.altitude = .double(z) }
                case .failure(let problem):
                    return reject(header[i], problem.message)
                }
            }
        }
        if isPoiKitExport, case .string(let key)? = draft.importKey, !Self.isBlank(key) { draft.id = nil }
        switch PlaceValidator.validate(draft) {
        case .success(let p): return .place(p, raw: rawRecord())
        case .failure(var rej):
            // A short row's missing cells read as empty: say how short, the likelier cause.
            if count < roles.count { rej.reason += " (the row has \(count) of \(roles.count) fields)" }
            return .reject(rej, raw: rawRecord())
        }
    }

    /// A categories cell: a JSON array of strings (`["a","b"]`) is that list; anything else is
    /// text, split by the validator.
    static func categories(_ value: String) -> JSONValue {
        let t = trimWhitespace(value)
        guard t.utf8.first == 0x5B, t.utf8.last == 0x5D else { return .string(value) }
        let parsed = try? JSONParser.parse(Array(t.utf8), maxDepth: 2)
        guard case .array(let items)? = parsed, items.allSatisfy({ $0.stringValue != nil }) else { return .string(value) }
        return .array(items)
    }

    /// Empty or only whitespace: what `--ignore-blanks` leaves out, and a typed column reads as null.
    static func isBlank(_ value: String) -> Bool { trimWhitespace(value).isEmpty }

    /// UTF-8 text of a field, nil when invalid or containing NUL.
    ///
    /// `String._tryFromUTF8` validates and copies in one pass, the standard library's own fast
    /// path. `String(validating:as:)` is generic over the encoding and looked up its type
    /// metadata at run time for every field that is not ASCII; checking first (`UTF8Scan`) and
    /// then making the String validated every field twice. Both were 4–5 % of `poi convert`'s
    /// CPU (profiled). NUL is refused first, by `memchr`.
    @inline(__always)
    private func decodeField(_ p: UnsafeBufferPointer<UInt8>) -> String? {
        guard let base = p.baseAddress else { return "" }
        if memchr(base, 0, p.count) != nil { return nil }
        return String._tryFromUTF8(p)
    }
}

/// What validating one batch found: how many records are valid, and the rejects in order.
struct CSVBatchVerdict: Sendable {
    var valid = 0
    var rejects: [(Reject, RawRecord?)] = []
    /// With keys asked for: each valid record's import key fingerprint, in order.
    var keys: [UInt64] = []
    /// The places asked for by their keys (`verdict(_:keys:placesWithKeys:)`), in order.
    var places: [Place] = []
}
