/// Word-at-a-time search (SWAR) for the next delimiter or line end: fields are mostly plain
/// text, and testing eight bytes per step is what keeps tokenizing off `poi check`'s critical
/// path. (A SIMD version would need intrinsics Swift does not expose portably.)
enum ByteSearch {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let high: UInt64 = 0x8080_8080_8080_8080
    static let lfSplat = splat(0x0A), crSplat = splat(0x0D), quoteSplat = splat(0x22)

    @inline(__always) static func splat(_ b: UInt8) -> UInt64 { UInt64(b) &* ones }

    /// The first byte at or after `from` equal to the splatted byte, LF or CR, or the start of
    /// the last partial word (the caller's byte loop finishes from there). Zero-byte detection
    /// can flag false matches, but only above a true one, so the lowest flag is exact.
    @inline(__always)
    static func skipTo(delimiter d: UInt64, in p: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        guard let base = p.baseAddress else { return from }
        var i = from
        let n = p.count
        while i &+ 8 <= n {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let m = zeroBytes(w ^ d) | zeroBytes(w ^ lfSplat) | zeroBytes(w ^ crSplat)
            if m != 0 { return i &+ (m.littleEndian.trailingZeroBitCount >> 3) }
            i &+= 8
        }
        return i
    }

    @inline(__always) static func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & high }
}
