/// The hash `KeyRule.contentFingerprint` makes of a record's fields: whether a record whose key
/// was seen is an exact copy of the one kept, or a conflicting one.
///
/// Written by hand, not Swift's `Hasher`: SipHash (seeded, to resist flooding a hash table)
/// costs about a byte a cycle plus a buffer per call, and was a tenth of `poi convert`'s CPU,
/// while this value never places anything in a table — it is only compared, within one run. So
/// it takes the multiply-and-fold step of wyhash: eight bytes per 64×64→128-bit multiply, the
/// halves folded. Two different records agree on the 32 bits kept with probability about 2^-32,
/// as before.
import PoiModel

struct ContentHasher {
    private var state: UInt64 = 0x243F_6A88_85A3_08D3

    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return high ^ low
    }

    mutating func combine(_ value: UInt64) {
        state = Self.fold(state ^ value, 0x9E37_79B9_7F4A_7C15)
    }

    mutating func combine(_ value: Bool) { combine(value ? 1 : 0) }

    /// The bytes and their count: "ab" then "c" is not "a" then "bc".
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        var i = 0
        while i + 8 <= n {
            combine(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        var tail: UInt64 = 0, shift: UInt64 = 0
        while i < n {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        combine(tail | UInt64(truncatingIfNeeded: n) << 56)
    }

    func finalize() -> UInt64 {
        Self.fold(state ^ 0x5851_F42D_4C95_7F2D, 0x1405_7B7E_F767_814F)
    }

    /// A string's UTF-8 and its count; nil (an absent field) apart from every string.
    @inline(__always)
    mutating func combine(text x: String?) {
        guard let x else { combine(0xFE); return }
        x.withUTF8InPlace { combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Members in order, each name and value; by index, as iterating copies each member.
    mutating func combine(_ o: JSONObject) {
        combine(UInt64(o.members.count))
        for i in o.members.indices {
            combine(text: o.members[i].key)
            combine(o.members[i].value)
        }
    }

    /// A value with its type: the tags keep `1` apart from `"1"` and `[]` from `{}`.
    mutating func combine(_ v: JSONValue) {
        switch v {
        case .null: combine(0xA0 as UInt64)
        case .bool(let b): combine(b ? 0xA2 : 0xA1 as UInt64)
        case .integer(let i): combine(0xA3 as UInt64); combine(UInt64(bitPattern: i))
        case .bigInteger(let t): combine(0xA4 as UInt64); combine(text: t)
        case .double(let d): combine(0xA5 as UInt64); combine(d.bitPattern)
        case .string(let t): combine(0xA6 as UInt64); combine(text: t)
        case .array(let a):
            combine(0xA7 as UInt64)
            combine(UInt64(a.count))
            for i in a.indices { combine(a[i]) }
        case .object(let o): combine(0xA8 as UInt64); combine(o)
        case .date(let ms): combine(0xA9 as UInt64); combine(UInt64(bitPattern: ms))
        }
    }
}
