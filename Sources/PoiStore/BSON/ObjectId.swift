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

    /// A new id greater than every id in `others`. Ids made in the same second by two processes
    /// order by their random middle bytes, not by time: where "newer" must mean "greater" (a
    /// thumbnail replacing an older one, `MongoDatabase.setThumbnail`), a fresh id that is not
    /// greater is replaced by the largest one plus a random 32-bit step: greater, and unique
    /// still when two processes do this at once (plus one, both would make the same id).
    public static func greater(than others: [ObjectId]) -> ObjectId {
        let fresh = ObjectId()
        guard let largest = others.max(), !(largest < fresh) else { return fresh }
        var bytes = largest.bytes
        var carry = UInt64(UInt32.random(in: 1...UInt32.max))
        for i in stride(from: 11, through: 0, by: -1) where carry != 0 {
            let sum = UInt64(bytes[i]) + (carry & 0xFF)
            bytes[i] = UInt8(truncatingIfNeeded: sum)
            carry = (carry >> 8) + (sum >> 8)
        }
        return ObjectId(bytes: bytes) ?? fresh
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
