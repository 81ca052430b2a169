/// A record whose quoted fields joined physical lines that each hold a whole record's worth of
/// delimiters: what a file that does not quote looks like when read as CSV. GeoNames writes
/// names such as `"Bo" Hill` with a bare quote at a field's start; read as RFC 4180, that quote
/// pairs with the next bare one, lines or thousands of lines later, and every row between them
/// vanishes into one field while the first row takes the last one's coordinates — a silent
/// merge. (Only a quote that never closes reaches the end of the file and is seen as
/// unterminated.) A value with real line breaks rarely puts a record's worth of delimiters on
/// every line of its record, and a merge always does, so that is the test; such records are
/// rejected, never merged.
///
/// Only for delimiters that prose does not use (tab, `|`): in a comma or semicolon file a
/// description's line of prose can hold a record's worth of delimiters, and there quotes are
/// standard; a bare quote in such a file still shows as text after a closing quote or as an
/// unterminated field.
public struct JoinedLines: Sendable, Equatable {
    static let delimiters: [UInt8] = [0x09, 0x7C]

    /// Physical lines the record spans.
    public var lines: Int
    /// Of them, the lines that hold at least `recordWidth - 1` delimiters (a record by itself).
    public var wholeRecordLines: Int
    /// Delimiters inside the record's quoted values.
    public var quotedDelimiters: Int
    /// Index of the first field that holds a line break.
    public var field: Int

    /// Looks at the fields of one record (`ends`, offsets into `bytes`, starting at `from`). Field
    /// content holds delimiters and line breaks only where they were quoted; a field boundary is a
    /// delimiter outside quotes.
    static func find(in bytes: [UInt8], from: Int, ends: ArraySlice<Int>, delimiter: UInt8, recordWidth: Int) -> JoinedLines? {
        var lines = 1, whole = 0, quoted = 0, onLine = 0
        var field = -1
        var start = from
        var previous: UInt8 = 0
        for (k, end) in ends.enumerated() {
            for i in start..<end {
                let b = bytes[i]
                if b == delimiter {
                    onLine += 1
                    quoted += 1
                } else if b == 0x0A || b == 0x0D {
                    if b == 0x0A && previous == 0x0D { previous = b; continue }
                    if onLine >= recordWidth - 1 { whole += 1 }
                    onLine = 0
                    lines += 1
                    if field < 0 { field = k }
                }
                previous = b
            }
            previous = 0
            if k < ends.count - 1 { onLine += 1 }
            start = end
        }
        if onLine >= recordWidth - 1 { whole += 1 }
        // Every line, not two: a file whose last column holds prose has a first line that is
        // whole by its separators alone (and one whose first column does, a last line); every
        // line of a multi-line value doing so is rare, and every line of a merge does.
        // Or a record's worth of delimiters inside quotes across lines: a merge whose span holds
        // a short or blank line (a truncated row) is not whole on every line, yet no value with
        // real line breaks in a tab or `|` file holds that many tabs or bars.
        guard lines > 1 && (whole == lines || quoted >= recordWidth - 1) else { return nil }
        return JoinedLines(lines: lines, wholeRecordLines: whole, quotedDelimiters: quoted, field: max(0, field))
    }
}
