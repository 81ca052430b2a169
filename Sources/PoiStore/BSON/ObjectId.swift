import CMongoC

/// A BSON ObjectId: 12 bytes, shown as 24 lowercase hex digits (how the backend's `imageId` holds it).
public struct ObjectId: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// A new id from libbson's generator (time + process-unique + counter), thread-safe.
    public init() {
        var oid = bson_oid_t()
        bson_oid_init(&oid, nil)
        bytes = withUnsafeBytes(of: &oid.bytes) { Array($0) }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        self.bytes = bytes
    }

    /// Parses exactly 24 hex digits (either case); anything else is nil.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 24 else { return nil }
        var out = [UInt8](repeating: 0, count: 12)
        for i in 0..<12 {
            guard let hi = Self.nibble(utf8[2 * i]), let lo = Self.nibble(utf8[2 * i + 1]) else { return nil }
            out[i] = hi << 4 | lo
        }
        bytes = out
    }

    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(24)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (a: ObjectId, b: ObjectId) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
