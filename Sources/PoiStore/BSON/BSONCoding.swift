/// Encodes `BSONValue`s into BSON bytes (spec: bsonspec.org). Little-endian throughout.
enum BSONEncoder {
    static func appendElement(key: String, value: BSONValue, to b: inout [UInt8]) {
        b.append(typeCode(of: value))
        appendCString(key, to: &b)
        appendValue(value, to: &b)
    }

    static func typeCode(of value: BSONValue) -> UInt8 {
        switch value {
        case .double: return 0x01
        case .string: return 0x02
        case .document: return 0x03
        case .array: return 0x04
        case .binary: return 0x05
        case .objectId: return 0x07
        case .bool: return 0x08
        case .date: return 0x09
        case .null: return 0x0A
        case .int32: return 0x10
        case .int64: return 0x12
        case .decimal128: return 0x13
        case .unsupported(let code, _): return code
        }
    }

    static func appendValue(_ value: BSONValue, to b: inout [UInt8]) {
        switch value {
        case .double(let d): appendUInt64(d.bitPattern, to: &b)
        case .string(let s):
            var s = s
            s.withUTF8 { utf8 in
                appendUInt32(UInt32(utf8.count + 1), to: &b)
                b.append(contentsOf: utf8)
            }
            b.append(0)
        case .document(let d): b.append(contentsOf: d.bytes)
        case .array(let items):
            let start = b.count
            appendUInt32(0, to: &b)
            for (i, item) in items.enumerated() {
                b.append(typeCode(of: item))
                appendDecimal(i, to: &b)
                b.append(0)
                appendValue(item, to: &b)
            }
            b.append(0)
            BSONDocument.writeInt32(Int32(b.count - start), to: &b, at: start)
        case .binary(let subtype, let data):
            appendUInt32(UInt32(data.count), to: &b)
            b.append(subtype)
            b.append(contentsOf: data)
        case .objectId(let oid): b.append(contentsOf: oid.bytes)
        case .bool(let v): b.append(v ? 1 : 0)
        case .date(let d): appendUInt64(UInt64(bitPattern: d.millisecondsSinceEpoch), to: &b)
        case .null: break
        case .int32(let v): appendUInt32(UInt32(bitPattern: v), to: &b)
        case .int64(let v): appendUInt64(UInt64(bitPattern: v), to: &b)
        case .decimal128(let d):
            appendUInt64(d.low, to: &b)
            appendUInt64(d.high, to: &b)
        case .unsupported(_, let raw): b.append(contentsOf: raw)
        }
    }

    static func appendCString(_ s: String, to b: inout [UInt8]) {
        for c in s.utf8 where c != 0 { b.append(c) }
        b.append(0)
    }

    static func appendDecimal(_ i: Int, to b: inout [UInt8]) {
        if i < 10 { b.append(UInt8(ascii: "0") + UInt8(i)); return }
        b.append(contentsOf: String(i).utf8)
    }

    static func appendUInt32(_ v: UInt32, to b: inout [UInt8]) {
        b.append(UInt8(truncatingIfNeeded: v)); b.append(UInt8(truncatingIfNeeded: v >> 8))
        b.append(UInt8(truncatingIfNeeded: v >> 16)); b.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    static func appendUInt64(_ v: UInt64, to b: inout [UInt8]) {
        appendUInt32(UInt32(truncatingIfNeeded: v), to: &b)
        appendUInt32(UInt32(truncatingIfNeeded: v >> 32), to: &b)
    }
}

/// Decodes BSON bytes. Every read is bounds-checked: a malformed document ends iteration early
/// instead of reading past the buffer (libmongoc validates server replies, so this is a backstop).
public enum BSONDecoder {
    public struct ElementIterator: IteratorProtocol {
        let bytes: [UInt8]
        var pos: Int
        let end: Int

        init(bytes: [UInt8], start: Int, end: Int) {
            self.bytes = bytes
            self.pos = start
            self.end = end
        }

        public mutating func next() -> (key: String, value: BSONValue)? {
            guard pos < end else { return nil }
            let type = bytes[pos]
            guard let keyEnd = bytes[(pos + 1)..<end].firstIndex(of: 0) else { pos = end; return nil }
            let key = String(decoding: bytes[(pos + 1)..<keyEnd], as: UTF8.self)
            guard let (value, next) = BSONDecoder.value(type: type, bytes: bytes, at: keyEnd + 1, end: end) else {
                pos = end
                return nil
            }
            pos = next
            return (key, value)
        }
    }

    /// Where the value of `type` at `p` ends, without decoding it; nil where `value` would fail.
    static func valueEnd(type: UInt8, bytes b: UnsafeBufferPointer<UInt8>, at p: Int, end: Int) -> Int? {
        func i32(_ i: Int) -> Int? {
            guard i >= 0, i + 4 <= end else { return nil }
            return Int(Int32(bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24))
        }
        func fixed(_ n: Int) -> Int? { p + n <= end ? p + n : nil }
        switch type {
        case 0x01, 0x09, 0x12, 0x11: return fixed(8)
        case 0x07: return fixed(12)
        case 0x08: return fixed(1)
        case 0x10: return fixed(4)
        case 0x13: return fixed(16)
        case 0x0A, 0x06, 0x7F, 0xFF: return p
        case 0x02, 0x0D, 0x0E:
            guard let n = i32(p), n >= 1, p + 4 + n <= end, b[p + 4 + n - 1] == 0 else { return nil }
            return p + 4 + n
        case 0x03, 0x04:
            guard let n = i32(p), n >= 5, p + n <= end, b[p + n - 1] == 0 else { return nil }
            return p + n
        case 0x05:
            guard let n = i32(p), n >= 0, p + 5 + n <= end else { return nil }
            return p + 5 + n
        case 0x0F:
            guard let n = i32(p), n >= 0, p + n <= end else { return nil }
            return p + n
        case 0x0C:
            guard let n = i32(p), n >= 1, p + 4 + n + 12 <= end, b[p + 4 + n - 1] == 0 else { return nil }
            return p + 4 + n + 12
        case 0x0B:
            var i = p
            while i < end && b[i] != 0 { i += 1 }
            i += 1
            while i < end && b[i] != 0 { i += 1 }
            return i < end ? i + 1 : nil
        default: return nil
        }
    }

    static func value(type: UInt8, bytes b: [UInt8], at p: Int, end: Int) -> (BSONValue, Int)? {
        func need(_ n: Int) -> Bool { n >= 0 && p + n <= end }
        func u32(_ i: Int) -> UInt32 {
            UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        }
        func u64(_ i: Int) -> UInt64 { UInt64(u32(i)) | UInt64(u32(i + 4)) << 32 }
        func stringAt(_ i: Int) -> (String, Int)? {
            guard i + 4 <= end else { return nil }
            let n = Int(Int32(bitPattern: u32(i)))
            guard n >= 1, i + 4 + n <= end, b[i + 4 + n - 1] == 0 else { return nil }
            return (String(decoding: b[(i + 4)..<(i + 3 + n)], as: UTF8.self), i + 4 + n)
        }
        func subDocument() -> (BSONDocument, Int)? {
            guard need(5) else { return nil }
            let n = Int(Int32(bitPattern: u32(p)))
            guard n >= 5, need(n), let d = BSONDocument(bytes: Array(b[p..<(p + n)])) else { return nil }
            return (d, p + n)
        }
        func raw(_ n: Int) -> (BSONValue, Int)? {
            guard need(n) else { return nil }
            return (.unsupported(typeCode: type, raw: Array(b[p..<(p + n)])), p + n)
        }

        switch type {
        case 0x01: return need(8) ? (.double(Double(bitPattern: u64(p))), p + 8) : nil
        case 0x02: return stringAt(p).map { (.string($0.0), $0.1) }
        case 0x03: return subDocument().map { (.document($0.0), $0.1) }
        case 0x04: return subDocument().map { (.array($0.0.map(\.value)), $0.1) }
        case 0x05:
            guard need(5) else { return nil }
            let n = Int(Int32(bitPattern: u32(p)))
            guard n >= 0, need(5 + n) else { return nil }
            return (.binary(subtype: b[p + 4], data: Array(b[(p + 5)..<(p + 5 + n)])), p + 5 + n)
        case 0x07: return need(12) ? (.objectId(ObjectId(bytes: Array(b[p..<(p + 12)]))!), p + 12) : nil
        case 0x08: return need(1) ? (.bool(b[p] != 0), p + 1) : nil
        case 0x09: return need(8) ? (.date(BSONDate(millisecondsSinceEpoch: Int64(bitPattern: u64(p)))), p + 8) : nil
        case 0x0A: return (.null, p)
        case 0x10: return need(4) ? (.int32(Int32(bitPattern: u32(p))), p + 4) : nil
        case 0x12: return need(8) ? (.int64(Int64(bitPattern: u64(p))), p + 8) : nil
        // Types PoiKit never writes: keep their bytes so nothing is lost on a read.
        case 0x06, 0x7F, 0xFF: return (.unsupported(typeCode: type, raw: []), p)  // undefined, max/min key
        case 0x11: return raw(8)  // timestamp
        case 0x13: return need(16) ? (.decimal128(BSONDecimal128(low: u64(p), high: u64(p + 8))), p + 16) : nil
        case 0x0D, 0x0E: return stringAt(p).flatMap { raw($0.1 - p) }  // JavaScript code, symbol
        case 0x0C: return stringAt(p).flatMap { raw($0.1 - p + 12) }  // DBPointer
        case 0x0F: return need(4) ? raw(Int(Int32(bitPattern: u32(p)))) : nil  // code with scope
        case 0x0B:  // regex: two C strings
            guard let e1 = b[p..<end].firstIndex(of: 0), let e2 = b[(e1 + 1)..<end].firstIndex(of: 0) else { return nil }
            return raw(e2 + 1 - p)
        default: return nil
        }
    }
}
