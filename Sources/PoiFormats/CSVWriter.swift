/// Streams RFC 4180 CSV (or, with a tab delimiter, TSV in the same quoting), one buffered row at
/// a time: memory is one 64 KiB buffer whatever the number of rows.
///
/// A field is quoted only when it has to be: when it holds the delimiter, a `"`, a line break,
/// or starts or ends with a space or tab (which some readers trim). `""` doubles a quote inside.
/// Lines end in LF (as mongoexport and ogr2ogr on Linux write them), CRLF for Excel.
///
/// Written by hand: SwiftCSV and CSV.swift, the packages on this machine, read CSV; neither
/// writes it.
public struct CSVWriter<Sink: ByteSink> {
    public private(set) var sink: Sink
    public let dialect: CSVDialect
    private var buffer: [UInt8] = []
    private var fieldsInRow = 0
    /// The current row's values' bytes (as a reader gets them: quotes, doubled quotes and
    /// delimiters aside), and the most of any row so far: what a reader's record size limit counts.
    private var rowValueBytes = 0
    public private(set) var longestRow = 0
    private var started = false
    private var finished = false
    private static var flushAt: Int { 64 * 1024 }

    public init(sink: Sink, dialect: CSVDialect = .csv) {
        self.sink = sink
        self.dialect = dialect
        buffer.reserveCapacity(Self.flushAt + 4096)
    }

    /// Appends one field to the current row. `isText`: the value is text a person wrote (a name,
    /// a category), which Excel's formula guard applies to; numbers, dates and JSON are not.
    /// `quoteEmpty`: an empty value is written `""`, which a PoiKit export uses to tell an empty
    /// text from no value at all (written as nothing), as PostgreSQL's CSV does.
    public mutating func field(_ value: String, isText: Bool = true, quoteEmpty: Bool = false) {
        var value = value
        value.withUTF8 { field(utf8: $0, isText: isText, quoteEmpty: quoteEmpty) }
    }

    /// `field(_:isText:quoteEmpty:)` for a value's UTF-8 bytes, with no `String` made: how an
    /// export writes the rows it held back until its columns were known.
    public mutating func field(utf8 p: UnsafeBufferPointer<UInt8>, isText: Bool = true, quoteEmpty: Bool = false) {
        precondition(!finished, "CSVWriter.field after finish")
        if !started {
            started = true
            if dialect.excel { buffer.append(contentsOf: [0xEF, 0xBB, 0xBF]) }
        }
        if fieldsInRow > 0 { buffer.append(dialect.delimiter) }
        fieldsInRow += 1
        // Excel's formula guard: a `'` in front, inside the quotes when there are any.
        var guarded = false
        if dialect.excel, isText, let first = p.first,
           first == 0x3D || first == 0x2B || first == 0x2D || first == 0x40 || first == 0x09 || first == 0x0D {
            guarded = true
        }
        rowValueBytes += p.count + (guarded ? 1 : 0)
        if p.isEmpty && quoteEmpty {
            buffer.append(contentsOf: [0x22, 0x22])
            return
        }
        // With the guard's `'` first, a leading tab no longer needs quotes: the rule is applied
        // to the text as written, `'` included.
        let quoted = guarded ? (p.last == 0x20 || p.last == 0x09 || Self.holdsSpecial(p, delimiter: dialect.delimiter))
                             : Self.needsQuotes(p, delimiter: dialect.delimiter)
        guard quoted else {
            if guarded { buffer.append(0x27) }
            buffer.append(contentsOf: p)
            return
        }
        buffer.append(0x22)
        if guarded { buffer.append(0x27) }
        var runStart = 0
        for i in 0..<p.count where p[i] == 0x22 {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart...i]))
            buffer.append(0x22)
            runStart = i + 1
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart...]))
        buffer.append(0x22)
    }

    /// Ends the current row; flushes when the buffer is full.
    public mutating func endRow() throws(FormatError) {
        longestRow = max(longestRow, rowValueBytes)
        rowValueBytes = 0
        if dialect.excel { buffer.append(0x0D) }
        buffer.append(0x0A)
        fieldsInRow = 0
        if buffer.count >= Self.flushAt { try flush() }
    }

    /// A whole row of text fields.
    public mutating func row(_ fields: [String]) throws(FormatError) {
        for f in fields { field(f) }
        try endRow()
    }

    /// Flushes what is buffered and finishes the sink.
    public mutating func finish() throws(FormatError) {
        guard !finished else { return }
        finished = true
        try flush()
        try sink.finish()
    }

    @inline(__always)
    private static func needsQuotes(_ p: UnsafeBufferPointer<UInt8>, delimiter: UInt8) -> Bool {
        guard let first = p.first, let last = p.last else { return false }
        if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return true }
        return holdsSpecial(p, delimiter: delimiter)
    }

    @inline(__always)
    private static func holdsSpecial(_ p: UnsafeBufferPointer<UInt8>, delimiter: UInt8) -> Bool {
        for b in p where b == delimiter || b == 0x22 || b == 0x0A || b == 0x0D { return true }
        return false
    }

    private mutating func flush() throws(FormatError) {
        try sink.write(draining: &buffer)
    }
}

/// How `CSVWriter` writes.
public struct CSVDialect: Sendable, Equatable {
    /// `,` or a tab.
    public var delimiter: UInt8
    /// What Excel opens right by double-click: a UTF-8 byte-order mark first (without it,
    /// Excel reads UTF-8 as the system's code page), CRLF line ends, and text fields that
    /// start with `=`, `+`, `-`, `@`, a tab or a CR prefixed with `'`, so a place named
    /// `=HYPERLINK(…)` is shown as text, not run as a formula (OWASP's "CSV injection").
    /// For people, not for a round trip: the prefix is part of the text for any other reader.
    public var excel: Bool

    public init(delimiter: UInt8 = 0x2C, excel: Bool = false) {
        self.delimiter = delimiter
        self.excel = excel
    }

    public static let csv = CSVDialect()
    public static let tsv = CSVDialect(delimiter: 0x09)
}
