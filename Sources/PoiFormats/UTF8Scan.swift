/// Byte-level UTF-8 validation for the validate-only paths, which decide on bytes without
/// building a `String`.
///
/// Written here because the standard library validates only while creating a `String`
/// (`String(validating:)` allocates above 15 bytes), and that allocation per field is what the
/// fast path exists to avoid. It must accept exactly what `String(validating:as: UTF8.self)`
/// accepts (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF); the tests
/// compare the two on random and edge-case bytes.
enum UTF8Scan {
    /// True when `p` is valid UTF-8 and contains no NUL byte (readers refuse both).
    @inline(__always)
    static func isValidWithoutNUL(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let n = p.count
        var i = 0
        while i < n {
            // ASCII runs 8 bytes at a time: no high bit set and no zero byte.
            if i &+ 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let high: UInt64 = 0x8080_8080_8080_8080
                let zero = (w &- 0x0101_0101_0101_0101) & ~w & high
                if (w | zero) & high == 0 { i &+= 8; continue }
            }
            let b = base[i]
            if b < 0x80 {
                if b == 0 { return false }
                i &+= 1
                continue
            }
            let len: Int
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: len = 2
            case 0xE0: len = 3; lo = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: len = 3
            case 0xED: len = 3; hi = 0x9F
            case 0xF0: len = 4; lo = 0x90
            case 0xF1...0xF3: len = 4
            case 0xF4: len = 4; hi = 0x8F
            default: return false
            }
            if i &+ len > n { return false }
            let b1 = base[i &+ 1]
            if b1 < lo || b1 > hi { return false }
            if len > 2 && (base[i &+ 2] & 0xC0) != 0x80 { return false }
            if len > 3 && (base[i &+ 3] & 0xC0) != 0x80 { return false }
            i &+= len
        }
        return true
    }

    /// A continuation byte (10xxxxxx): a field starting with one splits a character.
    @inline(__always)
    static func isContinuation(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
}
