/// Builds one BSON document straight into bytes, nested documents and arrays included, without
/// a `BSONDocument` per level. For hot paths (place documents, bulk statements): every append is
/// a few byte copies and lengths are patched when a level closes.
///
///     var b = BSONDocumentBuilder()
///     b.append("name", string: "Big Ben")
///     b.openDocument("location"); b.append("type", string: "Point")
///     b.openArray("coordinates"); b.append("0", double: -0.12); b.append("1", double: 51.5)
///     b.close(); b.close()
///     let doc = b.finish()
public struct BSONDocumentBuilder: Sendable {
    private var bytes: [UInt8]
    private var starts: [Int] = [0]

    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        BSONEncoder.appendUInt32(0, to: &bytes)
    }

    private mutating func header(_ type: UInt8, _ key: String) {
        bytes.append(type)
        BSONEncoder.appendCString(key, to: &bytes)
    }

    public mutating func append(_ key: String, _ value: BSONValue) {
        BSONEncoder.appendElement(key: key, value: value, to: &bytes)
    }

    public mutating func append(_ key: String, string: String) {
        header(0x02, key)
        var s = string
        s.withUTF8 { utf8 in
            BSONEncoder.appendUInt32(UInt32(utf8.count + 1), to: &bytes)
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0)
    }

    public mutating func append(_ key: String, double: Double) {
        header(0x01, key)
        BSONEncoder.appendUInt64(double.bitPattern, to: &bytes)
    }

    public mutating func append(_ key: String, int32: Int32) {
        header(0x10, key)
        BSONEncoder.appendUInt32(UInt32(bitPattern: int32), to: &bytes)
    }

    public mutating func append(_ key: String, int64: Int64) {
        header(0x12, key)
        BSONEncoder.appendUInt64(UInt64(bitPattern: int64), to: &bytes)
    }

    public mutating func append(_ key: String, bool: Bool) {
        header(0x08, key)
        bytes.append(bool ? 1 : 0)
    }

    public mutating func append(_ key: String, date: BSONDate) {
        header(0x09, key)
        BSONEncoder.appendUInt64(UInt64(bitPattern: date.millisecondsSinceEpoch), to: &bytes)
    }

    public mutating func append(_ key: String, objectId: ObjectId) {
        header(0x07, key)
        bytes.append(contentsOf: objectId.bytes)
    }

    public mutating func appendNull(_ key: String) { header(0x0A, key) }

    /// Appends an encoded document as a sub-document, copying its bytes as they are.
    public mutating func append(_ key: String, document: BSONDocument) {
        header(0x03, key)
        bytes.append(contentsOf: document.bytes)
    }

    /// Appends every element of `document` at this level, copying its bytes as they are.
    public mutating func appendElements(of document: BSONDocument) {
        let b = document.bytes
        if b.count > 5 { bytes.append(contentsOf: b[4 ..< b.count - 1]) }
    }

    /// Appends an array of strings (keys "0", "1", … as BSON arrays require).
    public mutating func append(_ key: String, strings: [String]) {
        openArray(key)
        for (i, s) in strings.enumerated() { append(Self.index(i), string: s) }
        close()
    }

    public mutating func openDocument(_ key: String) {
        header(0x03, key)
        starts.append(bytes.count)
        BSONEncoder.appendUInt32(0, to: &bytes)
    }

    /// Opens an array; the caller names elements "0", "1", … (`BSONDocumentBuilder.index`).
    public mutating func openArray(_ key: String) {
        header(0x04, key)
        starts.append(bytes.count)
        BSONEncoder.appendUInt32(0, to: &bytes)
    }

    /// Closes the innermost open document or array.
    public mutating func close() {
        precondition(starts.count > 1, "close() without a matching open")
        bytes.append(0)
        let start = starts.removeLast()
        BSONDocument.writeInt32(Int32(bytes.count - start), to: &bytes, at: start)
    }

    /// Size so far (what the finished document will take, give or take the closing bytes).
    public var byteCount: Int { bytes.count + starts.count }

    /// Closes every level still open and returns the document.
    public mutating func finish() -> BSONDocument {
        while starts.count > 1 { close() }
        bytes.append(0)
        BSONDocument.writeInt32(Int32(bytes.count), to: &bytes, at: 0)
        let done = BSONDocument(trustedBytes: bytes)
        bytes = []
        starts = [0]
        BSONEncoder.appendUInt32(0, to: &bytes)
        return done
    }

    private static let smallIndexes: [String] = (0..<64).map(String.init)
    /// Array element key `i` ("0", "1", …), without formatting for the common small indexes.
    public static func index(_ i: Int) -> String { i < smallIndexes.count ? smallIndexes[i] : String(i) }
}

extension BSONDocument {
    /// Wraps bytes a builder framed itself (no re-validation).
    init(trustedBytes: [UInt8]) { self.init(uncheckedBytes: trustedBytes) }
}
