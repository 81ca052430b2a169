/// JSON string escapes of lone UTF-16 surrogates (`"\ud800"`: a high half with no low half after
/// it, or a low half alone) replaced by `\ufffd`, U+FFFD. The reference server stores exactly
/// that: Node's JSON.parse accepts the escape, and the BSON serializer writes the lone half as
/// UTF-8, which has no form for it and gets U+FFFD. libbson's parser refuses the escape instead,
/// which made such a body a 400 here where the reference stored it; a client (and schemathesis)
/// sees the reference's answer again. Escapes are found by walking `\` pairs, so `"\\ud800"`
/// (a backslash, then text) is left alone.
enum LoneSurrogates {
    static func replaced(inJSON text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "\\")) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        var changed = false
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count else {
                out.append(bytes[i]); i += 1; continue
            }
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
        }
        return changed ? String(decoding: out, as: UTF8.self) : text
    }

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
