import CMongoC

/// The boundary between `BSONDocument` and libbson's `bson_t`.
///
/// `bson_t` is declared 128-byte aligned, so Swift imports it only as an opaque pointer and can
/// never hold one as a value: every `bson_t` here is either heap-allocated by libbson
/// (`bson_new_from_data` / `bson_destroy`) or lives in aligned memory this file allocates for
/// libmongoc to initialise (replies), and never outlives the call that needs it.
enum LibBSON {
    static let bsonTSize = 128
    static let bsonTAlignment = 128

    /// Runs `body` with a libbson copy of `document`, destroyed afterwards.
    static func withPointer<R>(_ document: BSONDocument, _ body: (OpaquePointer) throws -> R) rethrows -> R {
        let ptr = document.bytes.withUnsafeBufferPointer { buf in
            bson_new_from_data(buf.baseAddress, buf.count)
        }
        // Our encoder always frames documents correctly, so libbson accepts them.
        guard let ptr else { preconditionFailure("libbson refused a document PoiKit encoded") }
        defer { bson_destroy(ptr) }
        return try body(ptr)
    }

    /// Runs `body` with a read-only `bson_t` that points straight at `document`'s bytes (no copy:
    /// `bson_init_static` in aligned scratch memory). libmongoc only reads it during the call.
    static func withStaticPointer<R>(_ document: BSONDocument, _ body: (OpaquePointer) -> R) -> R {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bsonTSize, alignment: bsonTAlignment)
        defer { raw.deallocate() }
        return withStaticPointer(document, scratch: raw, body)
    }

    /// Like `withStaticPointer`, with caller-owned scratch memory (`bsonTSize` bytes aligned to
    /// `bsonTAlignment`) so a hot loop allocates nothing per document.
    static func withStaticPointer<R>(_ document: BSONDocument, scratch: UnsafeMutableRawPointer,
                                     _ body: (OpaquePointer) -> R) -> R {
        document.bytes.withUnsafeBufferPointer { buf in
            let b = OpaquePointer(scratch)
            guard bson_init_static(b, buf.baseAddress, buf.count) else {
                preconditionFailure("libbson refused a document PoiKit encoded")
            }
            return body(b)
        }
    }

    static func allocateScratch() -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: bsonTSize, alignment: bsonTAlignment)
    }

    /// Like `withPointer`, for an optional document (libmongoc takes NULL for "none").
    static func withOptionalPointer<R>(_ document: BSONDocument?, _ body: (OpaquePointer?) throws -> R) rethrows -> R {
        guard let document else { return try body(nil) }
        return try withPointer(document) { try body($0) }
    }

    /// Runs a libmongoc call that initialises a caller-provided `bson_t *reply`, then copies the
    /// reply out. libmongoc documents that `reply` is always initialised, success or not.
    static func withReply<R>(_ body: (OpaquePointer) throws -> R) rethrows -> (R, BSONDocument) {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bsonTSize, alignment: bsonTAlignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bsonTSize)
        let reply = OpaquePointer(raw)
        defer {
            bson_destroy(reply)  // frees only the heap data; the struct is ours (not BSON_FLAG_STATIC-free)
            raw.deallocate()
        }
        let result = try body(reply)
        return (result, document(copying: reply))
    }

    /// Copies the bytes of a libbson-owned document into a `BSONDocument`.
    static func document(copying bson: OpaquePointer) -> BSONDocument {
        guard let data = bson_get_data(bson) else { return BSONDocument() }
        let len = Int(UInt32(data[0]) | UInt32(data[1]) << 8 | UInt32(data[2]) << 16 | UInt32(data[3]) << 24)
        return BSONDocument(bytes: Array(UnsafeBufferPointer(start: data, count: len))) ?? BSONDocument()
    }

    static func relaxedJSON(_ document: BSONDocument) -> String? {
        withPointer(document) { ptr in
            var len = 0
            guard let cstr = bson_as_relaxed_extended_json(ptr, &len) else { return nil }
            defer { bson_free(cstr) }
            return String(cString: cstr)
        }
    }

    /// Parses MongoDB Extended JSON (canonical or relaxed) with libbson's own parser.
    static func parseExtendedJSON(_ json: String) throws(ExtendedJSONError) -> BSONDocument {
        var error = bson_error_t()
        var json = json
        let parsed: OpaquePointer? = json.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: UInt8.self) { buf in
                bson_new_from_json(buf.baseAddress, buf.count, &error)
            }
        }
        guard let parsed else { throw ExtendedJSONError(message: MongoErrorText.message(of: error)) }
        defer { bson_destroy(parsed) }
        return document(copying: parsed)
    }
}

public struct ExtendedJSONError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { "invalid JSON: \(message)" }
}
