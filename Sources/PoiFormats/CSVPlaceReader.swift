import PoiModel

/// Reads places from CSV: header → column plan → per record mapping and validation.
public final class CSVPlaceReader {
    public let file: String
    public let header: [String]
    public let roles: [ColumnRole]
    public var delimiter: UInt8 { tokenizer.delimiter }
    private let tokenizer: CSVTokenizer
    private var record = 0

    public init(source: ByteSource, options: ReadOptions = ReadOptions()) throws(FormatError) {
        file = source.name
        tokenizer = try CSVTokenizer(source: source, delimiter: options.delimiter, limits: options.limits)
        guard try tokenizer.next() else { throw .emptyFile(file: file) }
        if tokenizer.overflowed {
            throw .invalidHeader(file: file, reason: "header row exceeds the size/field limits")
        }
        var names: [String] = []
        for i in 0..<tokenizer.fieldCount {
            guard let s = String(validating: tokenizer.field(i), as: UTF8.self) else {
                throw .invalidHeader(file: file, reason: "column \(i + 1) is not valid UTF-8")
            }
            names.append(s)
        }
        header = names
        roles = options.mapping.plan(header: names)
        for f in [PlaceField.name, .latitude, .longitude] where !roles.contains(.field(f)) {
            let looked = options.mapping.overrides[f].map { [$0] } ?? f.aliases
            throw .missingColumn(file: file, field: f, looked: looked)
        }
    }

    public convenience init(path: String, options: ReadOptions = ReadOptions()) throws(FormatError) {
        try self.init(source: ByteSource(path: path), options: options)
    }

    /// The next place or reject; nil at end of file. Throws only on I/O failure.
    public func next() throws(FormatError) -> ReadItem? {
        guard try tokenizer.next() else { return nil }
        record += 1
        let source = PlaceSource(file: file, record: record, position: .line(tokenizer.recordLine))
        func reject(_ field: String?, _ reason: String) -> ReadItem {
            .reject(Reject(source: source, field: field, reason: reason), raw: .csv(rawFields()))
        }
        if tokenizer.unterminatedQuote {
            return reject(nil, "unterminated quoted field (the file ends inside quotes)")
        }
        if tokenizer.overflowed {
            return reject(nil, "record exceeds the limit of \(tokenizer.limits.maxRecordBytes) bytes "
                + "or \(tokenizer.limits.maxFields) fields")
        }
        var count = tokenizer.fieldCount
        // Trailing empty fields beyond the header (a spreadsheet's stray delimiters) are harmless.
        while count > roles.count && tokenizer.field(count - 1).isEmpty { count -= 1 }
        if count != roles.count {
            return reject(nil, "record has \(tokenizer.fieldCount) fields, header has \(roles.count)")
        }
        var draft = PlaceDraft(source: source)
        for i in 0..<count {
            let raw = tokenizer.field(i)
            let value: String
            if let s = decodeField(raw) { value = s } else {
                let column = header[i]
                return reject(column, raw.contains(0) ? "contains a NUL byte" : "not valid UTF-8")
            }
            switch roles[i] {
            case .field(let f): draft[f] = .string(value)
            case .extra(let key): draft.extra.append(key, .string(value))
            }
        }
        switch PlaceValidator.validate(draft) {
        case .success(let p): return .place(p)
        case .failure(let r): return .reject(r, raw: .csv(rawFields()))
        }
    }

    /// UTF-8 text of a field, nil when invalid or containing NUL.
    @inline(__always)
    private func decodeField(_ raw: ArraySlice<UInt8>) -> String? {
        raw.withUnsafeBufferPointer { p -> String? in
            var ascii = true
            for b in p {
                if b == 0 { return nil }
                if b >= 0x80 { ascii = false }
            }
            return ascii ? String(decoding: p, as: UTF8.self) : String(validating: p, as: UTF8.self)
        }
    }

    private func rawFields() -> [String] {
        (0..<tokenizer.fieldCount).map { String(decoding: tokenizer.field($0), as: UTF8.self) }
    }
}
