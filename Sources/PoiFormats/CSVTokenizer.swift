import PoiModel

/// RFC 4180 record splitter over a chunked byte stream.
///
/// Hand-written rather than CSV.swift or SwiftCSV because: (1) both hand out records without the
/// physical line where a record starts (needed for rejects after quoted newlines); (2) SwiftCSV
/// loads the whole file into a String; (3) CSV.swift decodes per Unicode scalar, several times
/// slower than a byte loop, and the target is ≥ 3× Python's C `csv` module
/// (`make bench-formats` shows the numbers). Fields are kept as bytes; callers validate UTF-8
/// once per field.
///
/// Accepts LF, CRLF and lone CR line ends (also inside quoted fields, where they are kept), a
/// leading UTF-8 BOM, doubled quotes, and is lenient like Python's `csv` about stray quotes in
/// unquoted fields. Blank lines are skipped (they are not records). With `CSVQuoting.none`, `"` is
/// text like any other byte: a record ends at its line end, a field at the delimiter.
///
/// On request it also hands out each record's raw bytes exactly as they are in the input (quotes,
/// doubled quotes, line end and all), so a rejected record can be given back unchanged. They are
/// copied once per chunk a record touches, outside the byte loop, so reading without them costs
/// nothing.
///
/// Beside it: `JoinedLines` (CSVJoinedLines.swift), the check for records merged by a bare quote,
/// and `ByteSearch` (ByteSearch.swift), the eight-bytes-a-step search of its byte loop.
public final class CSVTokenizer {
    public let source: ByteSource
    public let limits: ReadLimits
    public var delimiter: UInt8 { delim }
    // Private storage: every access is visible to the optimizer, so appendRecord's read (once
    // per record) needs no dynamic exclusivity check, as a public stored property would.
    private var delim: UInt8 = 0x2C
    public let quoting: CSVQuoting

    // The reading state, touched once or more per record. The tokenizer is used from one thread
    // at a time (the reader's), so the runtime's exclusivity checks on these cannot find anything;
    // they cost ~2 % of `poi check` (callgrind), hence `@exclusivity(unchecked)` on these only,
    // instead of the package-wide flag a library product cannot carry.
    @exclusivity(unchecked) private var buf: [UInt8] = []
    @exclusivity(unchecked) private var pos = 0
    @exclusivity(unchecked) private var eof = false
    /// Physical line of the next unread byte (1-based).
    @exclusivity(unchecked) private var line = 1
    /// Last line end seen was a CR: a following LF belongs to it.
    @exclusivity(unchecked) private var pendingCR = false
    /// Inside a quoted field, the previous byte was a CR (so an LF completes a CRLF).
    @exclusivity(unchecked) private var quotedCR = false
    /// A read failed just after a record ended (looking for the LF of its CRLF): the record is
    /// handed out, the error is thrown on the next call.
    @exclusivity(unchecked) private var deferredError: FormatError?
    /// The input starts with a UTF-8 BOM (not part of the header's raw bytes).
    public private(set) var hasBOM = false

    // The current record.
    /// Field bytes, concatenated.
    public private(set) var bytes: [UInt8] = []
    /// End offset in `bytes` of each field.
    public private(set) var ends: [Int] = []
    /// Physical line where the current record starts.
    public private(set) var recordLine = 0
    /// The record went over `maxRecordBytes` or `maxFields`; its content is truncated.
    public private(set) var overflowed = false
    /// Which limit the record crossed first, in input order (nil when within both). The header
    /// stops being read at the end of the chunk where it went over, so only the first limit
    /// crossed is the same whatever the chunk sizes: a header over both limits is described by
    /// this one.
    public private(set) var firstLimitCrossed: Limit?

    public enum Limit: Sendable { case fields, bytes }
    /// The file ended inside a quoted field.
    public private(set) var unterminatedQuote = false
    /// Quotes joined physical lines that each look like a record of their own (see
    /// `JoinedLines`); nil for every ordinary record.
    public private(set) var joinedLines: JoinedLines?
    /// Index of the first field of the current record where text follows its closing quote.
    public private(set) var textAfterQuote: Int?
    /// Fields a record is expected to have (the header's or the given column names' count), set
    /// by the reader once it knows: it is what tells a quoted line break that belongs to a value
    /// from one that swallowed whole records. 0: unknown, never checked.
    public var recordWidth = 0
    /// The current record's bytes as in the input, from its first byte to the end of its line end
    /// (empty when it went over the limits: see `RecordInfo.rawKept`).
    public private(set) var raw: [UInt8] = []
    /// How many of the last bytes of `raw` are its line end: 2 (CRLF), 1 (LF, CR), 0 (none: the
    /// input ended).
    public private(set) var lineEndLength = 0

    public init(source: ByteSource, delimiter: UInt8?, quoting: CSVQuoting = .doubleQuote,
                limits: ReadLimits = ReadLimits()) throws(FormatError) {
        self.source = source
        self.limits = limits
        self.quoting = quoting
        try fill()
        // A short first read (a pipe) must not change the BOM check or the detected delimiter:
        // buffer the header line, up to `window` bytes of it, before looking.
        let window = max(3, min(limits.maxRecordBytes, 1 << 16))
        while !eof && !(buf.count >= 3 && scanHeader(window).complete) {
            if try source.read(appendingTo: &buf) == 0 { eof = true }
        }
        if buf.count >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF { pos = 3; hasBOM = true }
        if let (named, length) = excelSeparatorLine() {
            // Excel's `sep=;` first line names the delimiter, and Excel shows no row for it; the
            // header is on the next line (line numbers stay physical).
            excelSeparator = named
            pos += length
            if buf[pos - 1] == 0x0D { pendingCR = true }  // its LF may be in the next chunk
            line = 2
            delim = delimiter ?? named
        } else {
            delim = delimiter ?? detectDelimiter(window)
        }
    }

    /// The delimiter an Excel `sep=X` first line named (that line is not a record), or nil.
    public private(set) var excelSeparator: UInt8?

    /// `sep=X` and a line end at `pos`: X and the line's length, line end included.
    private func excelSeparatorLine() -> (UInt8, Int)? {
        let b = buf[pos...]
        guard b.count >= 6 else { return nil }
        let s = b.startIndex
        guard b[s] | 0x20 == 0x73, b[s + 1] | 0x20 == 0x65, b[s + 2] | 0x20 == 0x70, b[s + 3] == 0x3D else { return nil }
        let x = b[s + 4]
        guard x != 0x0A && x != 0x0D && x != 0x22 && x < 0x80 else { return nil }
        if b[s + 5] == 0x0A { return (x, 6) }
        guard b[s + 5] == 0x0D else { return nil }
        return (x, b.count > 6 && b[s + 6] == 0x0A ? 7 : 6)
    }

    public var fieldCount: Int { ends.count }

    public func field(_ i: Int) -> ArraySlice<UInt8> {
        bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]]
    }

    /// Counts `,` `;` tab `|` outside quotes on the first line (its first `window` bytes); the most
    /// frequent wins, comma on ties or when none occurs (a one-column file).
    private func detectDelimiter(_ window: Int) -> UInt8 {
        let counts = scanHeader(window).counts
        var best: UInt8 = 0x2C
        for c: UInt8 in [0x3B, 0x09, 0x7C] where counts[c]! > counts[best]! { best = c }
        return best
    }

    /// Delimiter candidates on the buffered part of the first line; `complete` once the line end
    /// or `window` bytes of the line are in the buffer.
    private func scanHeader(_ window: Int) -> (counts: [UInt8: Int], complete: Bool) {
        var counts: [UInt8: Int] = [0x2C: 0, 0x3B: 0, 0x09: 0, 0x7C: 0]
        var inQuotes = false
        let start = buf.count >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF ? 3 : 0
        let end = min(buf.count, start + window)
        var i = start
        while i < end {
            let b = buf[i]
            if b == 0x22 && quoting == .doubleQuote { inQuotes.toggle() } else if !inQuotes {
                if b == 0x0A || b == 0x0D { return (counts, true) }
                if counts[b] != nil { counts[b]! += 1 }
            }
            i += 1
        }
        return (counts, i - start >= window)
    }

    /// Refills when everything buffered is consumed. Records are copied into `bytes`, so the
    /// chunk buffer never needs to hold more than one chunk.
    private func fill() throws(FormatError) {
        buf.removeAll(keepingCapacity: true)
        pos = 0
        if try source.read(appendingTo: &buf) == 0 { eof = true }
    }

    private enum State { case fieldStart, unquoted, quoted, quoteInQuoted }

    /// Reads the next non-blank record into `bytes`/`ends`/`recordLine`/`raw`; false at end of input.
    public func next() throws(FormatError) -> Bool {
        var bytes = self.bytes, ends = self.ends, raw = self.raw
        self.bytes = []
        self.ends = []
        self.raw = []
        defer { self.bytes = bytes; self.ends = ends; self.raw = raw }
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        raw.removeAll(keepingCapacity: true)
        var quotedEmpty: [Int] = []
        guard let record = try appendRecord(bytes: &bytes, ends: &ends, raw: &raw, quotedEmpty: &quotedEmpty, keepRaw: true)
        else { return false }
        store(record)
        if !record.rawKept { raw.removeAll(keepingCapacity: true) }
        return true
    }

    /// Reads the header: like `next()`, but it stops reading as soon as the header goes over the
    /// limits (`overflowed`), or after `maxBlankLinesBeforeHeader` blank lines (then the record
    /// is empty and `overflowed` is set), instead of skipping to the end of the line. An
    /// input without line ends (`/dev/zero`, a binary file) is refused after a megabyte, not
    /// read to its end, which may never come.
    public func nextHeader() throws(FormatError) -> Bool {
        var bytes: [UInt8] = [], ends: [Int] = [], raw: [UInt8] = []
        defer { self.bytes = bytes; self.ends = ends; self.raw = raw }
        stopsWhenOverflowed = true
        defer { stopsWhenOverflowed = false }
        var quotedEmpty: [Int] = []
        guard let record = try appendRecord(bytes: &bytes, ends: &ends, raw: &raw, quotedEmpty: &quotedEmpty, keepRaw: true)
        else { return false }
        store(record)
        if !record.rawKept { raw.removeAll(keepingCapacity: true) }
        return true
    }

    /// Blank lines `nextHeader()` skips before it gives up on finding a header.
    public static let maxBlankLinesBeforeHeader = 4096

    /// Set while reading the header (`nextHeader()`).
    private var stopsWhenOverflowed = false

    private func store(_ record: RecordInfo) {
        recordLine = record.line
        overflowed = record.overflowed
        firstLimitCrossed = record.firstLimitCrossed
        unterminatedQuote = record.unterminatedQuote
        joinedLines = record.joinedLines
        textAfterQuote = record.textAfterQuote
        lineEndLength = record.lineEndLength
    }

    /// Where a record appended by `appendRecord` starts and what went wrong in it.
    struct RecordInfo {
        var line: Int
        var overflowed: Bool
        var firstLimitCrossed: Limit?
        var unterminatedQuote: Bool
        var joinedLines: JoinedLines?
        /// Index of the first field where text follows a closing quote (`"Bo" Hill`).
        var textAfterQuote: Int?
        /// The record's raw bytes were appended (asked for, and the record is within the limits).
        var rawKept: Bool
        /// How many of the raw bytes are the line end (see `CSVTokenizer.lineEndLength`).
        var lineEndLength: Int
    }

    /// Bound on a record's raw bytes while it is within `limits`: every field byte a doubled
    /// quote, every field quoted and delimited, and a CRLF. Past it the record is over the limits
    /// anyway, and its raw bytes are dropped rather than buffered.
    var maxRawBytes: Int { 2 * limits.maxRecordBytes + 3 * limits.maxFields + 2 }

    /// Appends the next non-blank record's field bytes to `bytes` and the end offset of each field
    /// (in `bytes`) to `ends`; nil at end of input. Appending straight into a caller's batch saves
    /// copying every record twice. With `keepRaw`, also appends the record's raw bytes (first
    /// byte to end of line end) to `raw`, unless the record goes over the limits (`rawKept`
    /// false, nothing appended).
    ///
    /// `quotedEmpty` gets the index (in `ends`) of each field written `""`: an empty value given
    /// as such, which a PoiKit CSV export tells from a cell with nothing in it (no value), as
    /// PostgreSQL's CSV format does.
    func appendRecord(bytes: inout [UInt8], ends: inout [Int], raw: inout [UInt8], quotedEmpty: inout [Int],
                      keepRaw: Bool) throws(FormatError) -> RecordInfo? {
        if let e = deferredError { deferredError = nil; throw e }
        // Work on locals: class properties in the hot loop would pay dynamic exclusivity checks.
        let bytesBase = bytes.count, endsBase = ends.count, rawBase = raw.count
        var rawKept = keepRaw
        let maxRaw = keepRaw ? maxRawBytes : 0
        var overflowed = false
        var firstLimitCrossed: Limit?
        var unterminatedQuote = false
        var textAfterQuote: Int?
        var recordLine = 0
        var state = State.fieldStart
        var started = false
        let delim = self.delim
        let quotes = quoting == .doubleQuote
        let delimSplat = ByteSearch.splat(delim)
        let maxBytes = limits.maxRecordBytes
        let maxFields = limits.maxFields
        var line = self.line
        var quotedCR = self.quotedCR
        var headerScanned = 0
        var blankLines = 0
        defer { self.line = line; self.quotedCR = quotedCR }

        @inline(__always) func crossed(_ limit: Limit) {
            if !overflowed { firstLimitCrossed = limit }
            overflowed = true
        }
        var fieldQuoted = false
        @inline(__always) func endField() {
            let quoted = fieldQuoted
            fieldQuoted = false
            guard ends.count - endsBase < maxFields else { crossed(.fields); return }
            if quoted && bytes.count == (ends.count > endsBase ? ends[ends.count - 1] : bytesBase) { quotedEmpty.append(ends.count) }
            ends.append(bytes.count)
        }
        @inline(__always) func finish(lineEnd: Int) -> RecordInfo {
            // Past `maxFields`, bytes were appended with no field end: drop them, or they would
            // become the front of the next record's first field.
            let lastEnd = ends.count > endsBase ? ends[ends.count - 1] : bytesBase
            if bytes.count > lastEnd { bytes.removeSubrange(lastEnd...) }
            // An over-limit record is rejected for its size; a part of it is no use to anyone.
            if overflowed && rawKept { rawKept = false; raw.removeSubrange(rawBase...) }
            // Quoted line breaks are rare: only a record that has them is looked at again.
            var joined: JoinedLines?
            if !overflowed && recordWidth > 1 && JoinedLines.delimiters.contains(delim) && line - recordLine > (lineEnd > 0 ? 1 : 0) {
                joined = JoinedLines.find(in: bytes, from: bytesBase, ends: ends[endsBase...], delimiter: delim,
                                          recordWidth: recordWidth)
            }
            return RecordInfo(line: recordLine, overflowed: overflowed, firstLimitCrossed: firstLimitCrossed,
                              unterminatedQuote: unterminatedQuote, joinedLines: joined, textAfterQuote: textAfterQuote,
                              rawKept: rawKept, lineEndLength: lineEnd)
        }

        while true {
            if pos >= buf.count {
                if !eof { try fill() }
                if pos >= buf.count {
                    // End of input finishes the record in progress.
                    if !started { return nil }
                    if state == .quoted { unterminatedQuote = true }
                    endField()
                    return finish(lineEnd: 0)
                }
            }
            // Swallow the LF of a CRLF split across chunks or records.
            if pendingCR {
                pendingCR = false
                if buf[pos] == 0x0A { pos += 1; continue }
            }
            if !started { recordLine = line; started = true }

            var finished = false
            let segmentStart = pos
            var i = pos
            var endedWithCR = false
            buf.withUnsafeBufferPointer { p in
                let n = p.count
                @inline(__always) func appendRun(_ from: Int, _ to: Int) {
                    if to > from {
                        // Over the limit, keep the first maxBytes bytes: the same truncation
                        // whatever the chunk boundaries (short reads from a pipe).
                        var to = to
                        let used = bytes.count - bytesBase
                        if used + (to - from) > maxBytes { crossed(.bytes); to = from + max(0, maxBytes - used) }
                        if to > from { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[from..<to])) }
                    }
                }
                @inline(__always) func appendByte(_ b: UInt8) {
                    if bytes.count - bytesBase >= maxBytes { crossed(.bytes); return }
                    bytes.append(b)
                }
                scan: while i < n {
                    switch state {
                    case .fieldStart:
                        if quotes && p[i] == 0x22 { state = .quoted; fieldQuoted = true; i += 1 } else { state = .unquoted }
                    case .unquoted:
                        let start = i
                        i = ByteSearch.skipTo(delimiter: delimSplat, in: p, from: i)
                        while i < n {
                            let b = p[i]
                            if b == delim || b == 0x0A || b == 0x0D { break }
                            i += 1
                        }
                        appendRun(start, i)
                        if i == n { break scan }
                        let b = p[i]
                        i += 1
                        if b == delim {
                            endField()
                            state = .fieldStart
                        } else {
                            // CR or LF ends the record.
                            line += 1
                            endedWithCR = b == 0x0D
                            finished = true
                            break scan
                        }
                    case .quoted:
                        let start = i
                        i = ByteSearch.skipTo(delimiter: ByteSearch.quoteSplat, in: p, from: i)
                        while i < n {
                            let b = p[i]
                            if b == 0x22 || b == 0x0A || b == 0x0D { break }
                            i += 1
                        }
                        if i > start { quotedCR = false }
                        appendRun(start, i)
                        if i == n { break scan }
                        let b = p[i]
                        i += 1
                        if b == 0x22 {
                            quotedCR = false
                            state = .quoteInQuoted
                        } else {
                            // Embedded line end: kept verbatim, counted as a physical line.
                            if !(b == 0x0A && quotedCR) { line += 1 }
                            quotedCR = b == 0x0D
                            appendByte(b)
                        }
                    case .quoteInQuoted:
                        let b = p[i]
                        if b == 0x22 { appendByte(0x22); state = .quoted; i += 1 }
                        else {
                            // Closing quote. Text right after it (`"Bo" Hill`) is kept, as Python's
                            // csv keeps it, but the record is marked: it is what a file whose
                            // quotes are text looks like, and the quotes are gone from the value.
                            if b != delim && b != 0x0A && b != 0x0D && textAfterQuote == nil {
                                textAfterQuote = ends.count - endsBase
                            }
                            state = .unquoted
                        }
                    }
                }
            }
            pos = i
            if stopsWhenOverflowed && !finished {
                // The header: a megabyte without its line end is not a CSV header; stop here
                // rather than read on to an end that may never come.
                headerScanned += i - segmentStart
                if overflowed || headerScanned > maxRawBytes {
                    crossed(.bytes)
                    if rawKept { rawKept = false; raw.removeSubrange(rawBase...) }
                    if !started { started = true; recordLine = line }
                    endField()
                    return finish(lineEnd: 0)
                }
            }
            if rawKept {
                // Once per chunk the record touches, not per byte.
                if raw.count - rawBase + (i - segmentStart) > maxRaw {
                    rawKept = false
                    raw.removeSubrange(rawBase...)
                } else {
                    buf.withUnsafeBufferPointer { raw.append(contentsOf: UnsafeBufferPointer(rebasing: $0[segmentStart..<i])) }
                }
            }
            if endedWithCR { pendingCR = true }
            if finished {
                // A line with nothing on it is blank, not a record: skip it.
                if ends.count == endsBase && bytes.count == bytesBase {
                    if stopsWhenOverflowed {
                        // Nor is an input of blank lines (`yes ''`) one that will ever hold a header.
                        blankLines += 1
                        if blankLines > Self.maxBlankLinesBeforeHeader {
                            overflowed = true
                            if rawKept { rawKept = false; raw.removeSubrange(rawBase...) }
                            return finish(lineEnd: 0)
                        }
                    }
                    started = false
                    state = .fieldStart
                    if keepRaw { rawKept = true; raw.removeSubrange(rawBase...) }
                    continue
                }
                var lineEnd = 1
                if endedWithCR && keepRaw {
                    // The raw record ends with its whole line end: look for the LF of a CRLF now
                    // (it may be in the next chunk) rather than when the next record starts.
                    if pos >= buf.count && !eof {
                        do { try fill() } catch { deferredError = error }
                    }
                    if pos < buf.count && buf[pos] == 0x0A {
                        pos += 1
                        pendingCR = false
                        lineEnd = 2
                        if rawKept { raw.append(0x0A) }
                    }
                }
                endField()
                return finish(lineEnd: lineEnd)
            }
        }
    }
}
