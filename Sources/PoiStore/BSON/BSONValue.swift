import Foundation

/// A BSON date: milliseconds since the Unix epoch, as MongoDB stores it.
public struct BSONDate: Hashable, Sendable, Comparable {
    public var millisecondsSinceEpoch: Int64
    public init(millisecondsSinceEpoch: Int64) { self.millisecondsSinceEpoch = millisecondsSinceEpoch }
    public init(_ date: Date) { millisecondsSinceEpoch = Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    public static func now() -> BSONDate { BSONDate(Date()) }
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSinceEpoch) / 1000) }
    public static func < (a: BSONDate, b: BSONDate) -> Bool { a.millisecondsSinceEpoch < b.millisecondsSinceEpoch }
}

/// The BSON types PoiKit reads and writes. Types it never writes (regex, timestamp, …) are kept
/// as `.unsupported` with their raw bytes so a read never fails on someone else's data.
public enum BSONValue: Hashable, Sendable {
    case double(Double)
    case string(String)
    case document(BSONDocument)
    case array([BSONValue])
    case binary(subtype: UInt8, data: [UInt8])
    case objectId(ObjectId)
    case bool(Bool)
    case date(BSONDate)
    case null
    case int32(Int32)
    case int64(Int64)
    /// An integer beyond Int64, kept exactly (extras read from JSON); others' decimals too.
    case decimal128(BSONDecimal128)
    case unsupported(typeCode: UInt8, raw: [UInt8])

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var documentValue: BSONDocument? { if case .document(let d) = self { return d } else { return nil } }
    public var arrayValue: [BSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectIdValue: ObjectId? { if case .objectId(let o) = self { return o } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var dateValue: BSONDate? { if case .date(let d) = self { return d } else { return nil } }

    /// Any numeric type as Double (servers answer counts as int32, int64 or double).
    public var doubleValue: Double? {
        switch self {
        case .double(let v): return v
        case .int32(let v): return Double(v)
        case .int64(let v): return Double(v)
        case .decimal128(let v): return Double(v.description)
        default: return nil
        }
    }

    /// Any integral numeric type as Int64 (a double only when it holds a whole number).
    public var int64Value: Int64? {
        switch self {
        case .int32(let v): return Int64(v)
        case .int64(let v): return v
        case .decimal128(let v): return v.integerText.flatMap { Int64($0) }
        case .double(let v): return v.rounded() == v && abs(v) < 9.2e18 ? Int64(v) : nil
        default: return nil
        }
    }
}

extension BSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    /// Integer literals become int32 when they fit (what the server and drivers do), else int64.
    public init(integerLiteral value: Int) {
        self = Int32(exactly: value).map(BSONValue.int32) ?? .int64(Int64(value))
    }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: BSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}
