#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ordered BSON document held as its encoded bytes.
///
/// Why bytes and not a dictionary: documents are built once and handed to libmongoc, or read once
/// from a cursor, so encoding straight into the wire format (and decoding lazily) keeps bulk writes
/// and exports cheap. libbson's own `bson_t` cannot be a Swift value (it is 128-byte aligned), so
/// this type crosses into libmongoc only at the boundary (see `LibBSON.swift`).
public struct BSONDocument: Hashable, Sendable {
    /// The complete encoded document (int32 length, elements, trailing NUL).
    public private(set) var bytes: [UInt8]

    public init() { bytes = [5, 0, 0, 0, 0] }

    /// Wraps bytes that form one complete BSON document; nil when the framing is wrong.
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 5, bytes.last == 0,
              Int(BSONDocument.readInt32(bytes, at: 0)) == bytes.count else { return nil }
        self.bytes = bytes
    }

    /// Bytes this module framed itself (builders): skips the framing check.
    init(uncheckedBytes: [UInt8]) { bytes = uncheckedBytes }

    public init(_ pairs: KeyValuePairs<String, BSONValue>) {
        self.init()
        for (k, v) in pairs { append(k, v) }
    }

    public init(_ pairs: [(String, BSONValue)]) {
        self.init()
        for (k, v) in pairs { append(k, v) }
    }

    public var isEmpty: Bool { bytes.count == 5 }

    // MARK: Building

    /// Appends a field. Keys are C strings in BSON, so a NUL inside a key is dropped rather than
    /// letting it truncate the key silently on the server.
    public mutating func append(_ key: String, _ value: BSONValue) {
        bytes.removeLast()
        BSONEncoder.appendElement(key: key, value: value, to: &bytes)
        bytes.append(0)
        BSONDocument.writeInt32(Int32(bytes.count), to: &bytes, at: 0)
    }

    /// Appends an already-encoded document (or array) without decoding it.
    public mutating func append(_ key: String, document: BSONDocument) {
        append(key, .document(document))
    }

    public subscript(key: String) -> BSONValue? {
        get {
            // Found by comparing the key's bytes and skipping the values before it undecoded:
            // decoding each one to compare its key made a stored place's ~15 lookups per export
            // row most of the export's CPU (a profile of a wide CSV export). Bytes, as MongoDB
            // compares field names: "é" composed and decomposed are two fields to the server too.
            return bytes.withUnsafeBufferPointer { b -> BSONValue? in
                var key = key
                return key.withUTF8 { k -> BSONValue? in
                    let end = b.count - 1
                    var pos = 4
                    while pos < end {
                        let type = b[pos]
                        var i = pos + 1
                        while i < end && b[i] != 0 { i += 1 }
                        guard i < end else { return nil }
                        let matches = i - pos - 1 == k.count && (k.isEmpty || memcmp(b.baseAddress! + pos + 1, k.baseAddress!, k.count) == 0)
                        if matches { return BSONDecoder.value(type: type, bytes: bytes, at: i + 1, end: end)?.0 }
                        guard let next = BSONDecoder.valueEnd(type: type, bytes: b, at: i + 1, end: end) else { return nil }
                        pos = next
                    }
                    return nil
                }
            }
        }
        set {
            var rebuilt = BSONDocument()
            var replaced = false
            for (k, v) in self {
                if k == key {
                    if let newValue, !replaced { rebuilt.append(k, newValue) }
                    replaced = true
                } else {
                    rebuilt.append(k, v)
                }
            }
            if !replaced, let newValue { rebuilt.append(key, newValue) }
            self = rebuilt
        }
    }

    public var keys: [String] { map(\.key) }

    // MARK: Little-endian helpers shared by the encoder and decoder

    static func readInt32(_ b: [UInt8], at i: Int) -> Int32 {
        Int32(bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24)
    }

    static func writeInt32(_ v: Int32, to b: inout [UInt8], at i: Int) {
        let u = UInt32(bitPattern: v)
        b[i] = UInt8(truncatingIfNeeded: u)
        b[i + 1] = UInt8(truncatingIfNeeded: u >> 8)
        b[i + 2] = UInt8(truncatingIfNeeded: u >> 16)
        b[i + 3] = UInt8(truncatingIfNeeded: u >> 24)
    }
}

extension BSONDocument: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, BSONValue)...) {
        self.init(elements)
    }
}

extension BSONDocument: Sequence {
    public typealias Element = (key: String, value: BSONValue)

    public func makeIterator() -> BSONDecoder.ElementIterator {
        BSONDecoder.ElementIterator(bytes: bytes, start: 4, end: bytes.count - 1)
    }
}

extension BSONDocument: CustomStringConvertible {
    /// Relaxed extended JSON, via libbson (for messages and debugging).
    public var description: String { LibBSON.relaxedJSON(self) ?? "<invalid BSON, \(bytes.count) bytes>" }
}
