import CMongoC

/// A GridFS bucket (`<name>.files` / `<name>.chunks`) through libmongoc's `mongoc_gridfs_bucket_t`.
///
/// File ids are ObjectIds chosen by the caller, so the id of a GridFS file can equal the `_id` of the
/// backend's `files` document and one `imageId` works for either byte store.
public struct GridFSBucket: Sendable {
    public let connection: MongoConnection
    public let database: String
    public let bucketName: String

    public init(connection: MongoConnection, database: String, bucketName: String = "fs") {
        self.connection = connection
        self.database = database
        self.bucketName = bucketName
    }

    private static let streamTimeoutMS: Int32 = 0  // 0: use the client's socketTimeoutMS
    /// GridFS's default chunk size (255 KiB), given explicitly: uploads write one chunk at a time.
    static let chunkSize: Int32 = 255 * 1024

    /// Runs `body` with a bucket bound to a pooled client.
    private func withBucket<R>(_ body: (OpaquePointer) throws(StoreError) -> R) throws(StoreError) -> R {
        try connection.withClient { (client) throws(StoreError) -> R in
            let db = mongoc_client_get_database(client, database)!
            defer { mongoc_database_destroy(db) }
            var error = bson_error_t()
            let opts: BSONDocument = ["bucketName": .string(bucketName)]
            let bucket = LibBSON.withPointer(opts) { mongoc_gridfs_bucket_new(db, $0, nil, &error) }
            guard let bucket else { throw connection.storeError(error) }
            defer { mongoc_gridfs_bucket_destroy(bucket) }
            return try body(bucket)
        }
    }

    private static func withValue<R>(_ id: ObjectId, _ body: (UnsafePointer<bson_value_t>) throws(StoreError) -> R) throws(StoreError) -> R {
        var value = bson_value_t()
        value.value_type = BSON_TYPE_OID
        id.bytes.withUnsafeBufferPointer { bson_oid_init_from_data(&value.value.v_oid, $0.baseAddress) }
        return try withUnsafePointer(to: &value) { (ptr) throws(StoreError) -> R in try body(ptr) }
    }

    /// Stores `bytes` as file `id`. GridFS writes chunks first and the files document last, so an
    /// interrupted upload leaves no visible file (only chunks that `poi gc` can find).
    public func upload(id: ObjectId, filename: String, bytes: [UInt8], metadata: BSONDocument? = nil) throws(StoreError) {
        try withBucket { (bucket) throws(StoreError) in
            try Self.withValue(id) { (idValue) throws(StoreError) in
                var error = bson_error_t()
                var opts: BSONDocument = ["chunkSizeBytes": .int32(Self.chunkSize)]
                if let metadata { opts.append("metadata", .document(metadata)) }
                let stream = LibBSON.withPointer(opts) {
                    mongoc_gridfs_bucket_open_upload_stream_with_id(bucket, idValue, filename, $0, &error)
                }
                guard let stream else { throw connection.storeError(error) }
                // One chunk per write, and the stream's error looked at after each. libmongoc
                // (1.23 and later) ignores a failed chunk insert inside one write: the chunk stays
                // in its full buffer, nothing more fits, and it inserts that chunk again without
                // end. A write-concern error makes that certain — the chunk was applied, so every
                // retry is a duplicate key — and an import sent data to the server for ever.
                // Written a chunk at a time, the write returns after the failed insert, and the
                // next write sees the error.
                var written = 0
                var streamError = bson_error_t()
                var failed = false
                bytes.withUnsafeBytes { buf in
                    var offset = 0
                    while offset < buf.count {
                        let n = min(Int(Self.chunkSize), buf.count - offset)
                        let w = mongoc_stream_write(stream, UnsafeMutableRawPointer(mutating: buf.baseAddress! + offset), n,
                                                    Self.streamTimeoutMS)
                        if mongoc_gridfs_bucket_stream_error(stream, &streamError) { failed = true; break }
                        guard w == n else { break }
                        offset += n
                        written += n
                    }
                }
                if failed {
                    // The chunks written so far go (best effort: `poi gc` finds any left).
                    _ = mongoc_gridfs_bucket_abort_upload(stream)
                    mongoc_stream_destroy(stream)
                    throw connection.storeError(streamError)
                }
                let closed = mongoc_stream_close(stream) == 0
                failed = mongoc_gridfs_bucket_stream_error(stream, &streamError)
                mongoc_stream_destroy(stream)
                if failed { throw connection.storeError(streamError) }
                guard closed, written == bytes.count else {
                    throw StoreError.io(path: "gridfs:\(bucketName)/\(id.hex)", reason: "upload incomplete (\(written) of \(bytes.count) bytes)")
                }
            }
        }
    }

    /// Reads file `id` whole. Returns nil when no such file exists; `.bytesDamaged` when a chunk
    /// is missing or corrupt.
    public func download(id: ObjectId, maxBytes: Int = 1 << 31) throws(StoreError) -> [UInt8]? {
        try withBucket { (bucket) throws(StoreError) -> [UInt8]? in
            try Self.withValue(id) { (idValue) throws(StoreError) -> [UInt8]? in
                var error = bson_error_t()
                guard let stream = mongoc_gridfs_bucket_open_download_stream(bucket, idValue, &error) else {
                    if error.domain == UInt32(MONGOC_ERROR_GRIDFS.rawValue),
                       error.code == UInt32(MONGOC_ERROR_GRIDFS_BUCKET_FILE_NOT_FOUND.rawValue) { return nil }
                    throw connection.storeError(error)
                }
                defer { mongoc_stream_destroy(stream) }
                var out: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 256 * 1024)
                while true {
                    let n = chunk.withUnsafeMutableBytes { buf in
                        mongoc_stream_read(stream, buf.baseAddress, buf.count, 0, Self.streamTimeoutMS)
                    }
                    if n < 0 {
                        var streamError = bson_error_t()
                        _ = mongoc_gridfs_bucket_stream_error(stream, &streamError)
                        // A chunk missing, out of order or of the wrong size: the file's bytes are
                        // damaged, which is not a driver failure (the next file may read fine).
                        if streamError.domain == UInt32(MONGOC_ERROR_GRIDFS.rawValue),
                           [MONGOC_ERROR_GRIDFS_CHUNK_MISSING, MONGOC_ERROR_GRIDFS_CORRUPT]
                               .map({ UInt32($0.rawValue) }).contains(streamError.code) {
                            throw StoreError.bytesDamaged(id: id, fileName: "gridfs:\(bucketName)/\(id.hex)",
                                                          reason: MongoErrorText.message(of: streamError))
                        }
                        throw connection.storeError(streamError)
                    }
                    if n == 0 { break }
                    out.append(contentsOf: chunk[0..<n])
                    if out.count > maxBytes {
                        throw StoreError.io(path: "gridfs:\(bucketName)/\(id.hex)", reason: "larger than \(maxBytes) bytes")
                    }
                }
                return out
            }
        }
    }

    /// Deletes file `id` and its chunks. Returns false when it did not exist.
    @discardableResult
    public func delete(id: ObjectId) throws(StoreError) -> Bool {
        try withBucket { (bucket) throws(StoreError) -> Bool in
            try Self.withValue(id) { (idValue) throws(StoreError) -> Bool in
                var error = bson_error_t()
                if mongoc_gridfs_bucket_delete_by_id(bucket, idValue, &error) { return true }
                if error.domain == UInt32(MONGOC_ERROR_GRIDFS.rawValue),
                   error.code == UInt32(MONGOC_ERROR_GRIDFS_BUCKET_FILE_NOT_FOUND.rawValue) { return false }
                throw connection.storeError(error)
            }
        }
    }
}

extension MongoConnection {
    /// Whether GridFS works end to end here: writes a small file to a scratch bucket, reads it
    /// back, compares and deletes it, and drops the scratch bucket's collections when nothing
    /// else is in them (a `poi doctor` leaves no trace in the database it checks).
    public func probeGridFS(database: String) -> Capability {
        let bucket = GridFSBucket(connection: self, database: database, bucketName: "poikit_probe")
        let id = ObjectId()
        let payload = Array("PoiKit GridFS probe \(id.hex)".utf8)
        defer {
            for name in ["poikit_probe.files", "poikit_probe.chunks"] {
                let scratch = MongoCollection(connection: self, database: database, name: name)
                if (try? scratch.count()) == 0 { try? scratch.drop() }
            }
        }
        do {
            try bucket.upload(id: id, filename: "probe.txt", bytes: payload)
            defer { _ = try? bucket.delete(id: id) }
            guard let back = try bucket.download(id: id) else { return .unsupported(reason: "uploaded file not found") }
            return back == payload ? .supported : .unsupported(reason: "read back \(back.count) bytes that differ from the \(payload.count) written")
        } catch {
            return .unsupported(reason: error.description)
        }
    }
}
