/// A JSON body rewritten so that libbson's parser reads it as the reference server's stack
/// (Node's JSON.parse, then the BSON serializer) stores it, where libbson alone refuses what
/// Node accepts:
/// - A lone UTF-16 surrogate escape (`"\ud800"`: a high half with no low half after it, or a low
///   half alone) becomes `\ufffd`: JSON.parse takes it, and the serializer writes the lone half
///   as UTF-8, which has no form for it and gets U+FFFD.
/// - An integer literal beyond 64 bits (`123456789012345678901234567890`) gets `.0`: JavaScript
///   numbers are doubles, so Node stores it as one; libbson refused it as out of range.
/// Strings are walked with their escapes (`"\\ud800"` is a backslash, then text), so nothing
/// inside a string is read as a number, nor escaped text as an escape.
enum NodeJSONText {
    static func rewritten(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        var inString = false
        var changed = false
        while i < bytes.count {
            let b = bytes[i]
            if inString {
                if b == UInt8(ascii: "\"") { inString = false }
                guard b == UInt8(ascii: "\\"), i + 1 < bytes.count else { out.append(b); i += 1; continue }
                guard bytes[i + 1] == UInt8(ascii: "u"), let unit = codeUnit(bytes, at: i + 2) else {
                    out.append(contentsOf: bytes[i...(i + 1)]); i += 2; continue
                }
                if (0xD800...0xDBFF).contains(unit), i + 11 < bytes.count, bytes[i + 6] == UInt8(ascii: "\\"),
                   bytes[i + 7] == UInt8(ascii: "u"), let low = codeUnit(bytes, at: i + 8), (0xDC00...0xDFFF).contains(low) {
                    out.append(contentsOf: bytes[i..<(i + 12)]); i += 12; continue  // a whole pair
                }
                if (0xD800...0xDFFF).contains(unit) {
                    out.append(contentsOf: Array(#"\ufffd"#.utf8)); changed = true
                } else {
                    out.append(contentsOf: bytes[i..<(i + 6)])
                }
                i += 6
                continue
            }
            if b == UInt8(ascii: "\"") { inString = true; out.append(b); i += 1; continue }
            guard b == UInt8(ascii: "-") || isDigit(b) else { out.append(b); i += 1; continue }
            // A number: its integer part, then whether a fraction or exponent follows.
            var end = i + 1
            while end < bytes.count, isDigit(bytes[end]) { end += 1 }
            let integer = bytes[i..<end]
            out.append(contentsOf: integer)
            let fractionOrExponent = end < bytes.count && [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[end])
            if !fractionOrExponent, Int64(String(decoding: integer, as: UTF8.self)) == nil, integer.contains(where: isDigit) {
                out.append(contentsOf: Array(".0".utf8)); changed = true
            }
            i = end
        }
        return changed ? String(decoding: out, as: UTF8.self) : text
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// The four hex digits at `at` as a UTF-16 code unit, or nil.
    private static func codeUnit(_ bytes: [UInt8], at: Int) -> UInt16? {
        guard at + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for b in bytes[at..<(at + 4)] {
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
