/// Unicode White_Space (what `Unicode.Scalar.Properties.isWhitespace` answers) recognised in
/// UTF-8 bytes, for trimming values without walking their scalars.
///
/// Why by hand: `trimWhitespace` looked up each end scalar's properties in the standard
/// library's tables (a binary search), 3 % of `poi convert`'s CPU on text that ends in an
/// emoji or accented letter (profiled). The set is small and fixed (Unicode's PropList:
/// U+0009–000D, 0020, 0085, 00A0, 1680, 2000–200A, 2028, 2029, 202F, 205F, 3000; unchanged since
/// U+180E left it in Unicode 6.3); a test holds it to `isWhitespace` for every scalar.
public enum UnicodeWhitespace {
    /// Bytes of the White_Space character that starts at `p[i]` (`i < end`), 0 for none.
    /// `p` is valid UTF-8.
    @inline(__always)
    public static func length(startingAt i: Int, in p: UnsafeBufferPointer<UInt8>, end: Int) -> Int {
        let b = p[i]
        if b < 0x80 { return b == 0x20 || (b >= 0x09 && b <= 0x0D) ? 1 : 0 }
        if b == 0xC2 { return i + 1 < end && (p[i + 1] == 0x85 || p[i + 1] == 0xA0) ? 2 : 0 }
        guard b >= 0xE1 && b <= 0xE3 && i + 2 < end else { return 0 }
        let b1 = p[i + 1], b2 = p[i + 2]
        switch b {
        case 0xE1: return b1 == 0x9A && b2 == 0x80 ? 3 : 0
        case 0xE2:
            if b1 == 0x80 { return b2 <= 0x8A || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF ? 3 : 0 }
            return b1 == 0x81 && b2 == 0x9F ? 3 : 0
        default: return b1 == 0x80 && b2 == 0x80 ? 3 : 0
        }
    }

    /// Bytes of the White_Space character that ends at `p[end - 1]` (`start < end`), 0 for none.
    /// In valid UTF-8 a lead byte is never a continuation byte, so the suffix alone decides.
    @inline(__always)
    public static func length(endingAt end: Int, in p: UnsafeBufferPointer<UInt8>, start: Int) -> Int {
        let b = p[end - 1]
        if b < 0x80 { return b == 0x20 || (b >= 0x09 && b <= 0x0D) ? 1 : 0 }
        if end - 2 >= start && p[end - 2] == 0xC2 { return b == 0x85 || b == 0xA0 ? 2 : 0 }
        if end - 3 >= start && p[end - 3] >= 0xE1 { return length(startingAt: end - 3, in: p, end: end) == 3 ? 3 : 0 }
        return 0
    }

    /// `p` (valid UTF-8) without White_Space at either end.
    @inline(__always)
    public static func trimmedRange(of p: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var lo = 0, hi = p.count
        while lo < hi {
            let n = length(startingAt: lo, in: p, end: hi)
            if n == 0 { break }
            lo += n
        }
        while hi > lo {
            let n = length(endingAt: hi, in: p, start: lo)
            if n == 0 { break }
            hi -= n
        }
        return lo..<hi
    }

    /// The String of `p` (valid UTF-8) trimmed: what `trimWhitespace(String(decoding: p))` is,
    /// without the untrimmed String.
    public static func trimmedString(_ p: UnsafeBufferPointer<UInt8>) -> String {
        let r = trimmedRange(of: p)
        return String(decoding: UnsafeBufferPointer(rebasing: p[r]), as: UTF8.self)
    }

    /// `trimWhitespace` past its fast path: `s` itself when nothing is trimmed.
    public static func trimmed(_ s: String) -> String {
        return s.withUTF8InPlace { p in
            let r = trimmedRange(of: p)
            if r.count == p.count { return s }
            return String(decoding: UnsafeBufferPointer(rebasing: p[r]), as: UTF8.self)
        }
    }
}
