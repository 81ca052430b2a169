import CMongoC
import Foundation
import PoiFiles

#if canImport(Glibc)
import Glibc
#endif

/// Storing bytes that arrive as a stream (`poi serve` uploads) without holding them in memory:
/// the caller writes them to a staged file first, then hands the file over. Same crash order as
/// `put`: bytes durable first, then the `files` document.
extension FileStore {
    /// Where to stage an upload so that handing it over is a rename: the uploads folder itself for
    /// the disk store (a staged file there is named like the store's own temporary files, so a
    /// crash leaves something `orphans()` and `poi gc` report), `fallback` for GridFS.
    public func stagingDirectory(fallback: String) -> String {
        (self as? DiskUploads)?.directory ?? fallback
    }

    /// A fresh staged-file name inside `stagingDirectory(...)`: `.upload.tmp-PID.XXXXXX`, PoiFiles'
    /// temporary names, so the writer's pid says whether the file is still being written
    /// (`removeStaleStagedUploads`), and `poi gc` lists it in the uploads folder as a temporary file.
    public static func stagedFileName() -> String {
        AtomicFile.uniqueTemporaryName(for: stagedBase)
    }

    /// Removes staged uploads in `directory` whose process is gone (killed mid-upload: kill -9,
    /// a crash, the machine's power), and those named with this process's pid, which has staged
    /// nothing yet: call it once, before taking uploads. A staged upload of a live process (another
    /// server sharing the folder) is left alone. Returns how many were removed.
    @discardableResult
    public static func removeStaleStagedUploads(in directory: String) -> Int {
        AtomicFile.removeStaleTemporaries(of: directory + "/" + stagedBase, atStart: true)
    }

    private static var stagedBase: String { "upload" }

    /// Stores the complete staged file at `path` (already hashed by the caller as it streamed)
    /// unless the same content with the same role is stored, in which case that file is returned
    /// (`reused`). The staged file is consumed either way (renamed into place or removed).
    /// `reusingIdentical: false` always stores a new file: `poi serve` gives every upload its own
    /// document and bytes, as the reference server does, because clients may `DELETE /files/:id`
    /// what they uploaded and must never delete another client's (or the import's) image that
    /// way (`FileOrigin`).
    public func putStaged(path: String, length: Int, info: FileInfo, createdAt: BSONDate = .now(),
                          reusingIdentical: Bool = true) throws(StoreError) -> PutResult {
        var consumed = false
        defer { if !consumed { unlink(path) } }
        guard let sha = info.sha256 else { throw .io(path: path, reason: "a staged upload needs its sha256") }
        if reusingIdentical, let existing = try file(sha256: sha, role: info.role) {
            return PutResult(file: existing, reused: true)
        }
        // The same path as `add`: bytes durable first, then the document, the bytes removed
        // again when the insert fails.
        let file = try add(info: info, length: length, sha256: sha, createdAt: createdAt) { (file) throws(StoreError) in
            if let disk = self as? DiskUploads {
                try disk.adopt(staged: path, as: file.fileName)
                consumed = true
            } else if let grid = self as? GridFSStore {
                try grid.bucket.upload(id: file.id, filename: file.fileName, contentsOf: path)
            } else {
                guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) else {
                    throw .io(path: path, reason: "cannot read the staged upload")
                }
                try storeBytes(bytes, id: file.id, ext: file.ext)
            }
        }
        return PutResult(file: file, reused: false)
    }
}

extension DiskUploads {
    /// fsync the staged file, rename it to `name` in this folder, fsync the folder.
    func adopt(staged: String, as name: String) throws(StoreError) {
        let fd = open(staged, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.ioError(staged, "cannot open") }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else { throw Self.ioError(staged, "cannot fsync") }
        let final = path(name)
        guard rename(staged, final) == 0 else { throw Self.ioError(final, "cannot rename the staged upload into place") }
        try syncDirectory()
    }
}

extension GridFSBucket {
    /// Uploads the file at `path` as GridFS file `id`, one chunk per write (why: `upload(bytes:)`).
    public func upload(id: ObjectId, filename: String, contentsOf path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path, reason: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try connection.withClient { (client) throws(StoreError) in
            let db = mongoc_client_get_database(client, database)!
            defer { mongoc_database_destroy(db) }
            var error = bson_error_t()
            let opts: BSONDocument = ["bucketName": .string(bucketName), "chunkSizeBytes": .int32(Self.chunkSize)]
            guard let bucket = LibBSON.withPointer(opts, { mongoc_gridfs_bucket_new(db, $0, nil, &error) }) else {
                throw connection.storeError(error)
            }
            defer { mongoc_gridfs_bucket_destroy(bucket) }
            var value = bson_value_t()
            value.value_type = BSON_TYPE_OID
            id.bytes.withUnsafeBufferPointer { bson_oid_init_from_data(&value.value.v_oid, $0.baseAddress) }
            guard let stream = mongoc_gridfs_bucket_open_upload_stream_with_id(bucket, &value, filename, nil, &error) else {
                throw connection.storeError(error)
            }
            // Whole chunks only (a short read is filled up first): libmongoc inserts a chunk again
            // without end when its insert failed inside a write that goes on past it.
            var chunk = [UInt8](repeating: 0, count: Int(Self.chunkSize))
            var failed = false
            var streamError = bson_error_t()
            var streamFailed = false
            var atEnd = false
            while !failed && !atEnd {
                var filled = 0
                while filled < chunk.count {
                    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { failed = true }
                    if n <= 0 { atEnd = true; break }
                    filled += n
                }
                if failed || filled == 0 { break }
                let w = chunk.withUnsafeMutableBytes { mongoc_stream_write(stream, $0.baseAddress, filled, 0) }
                if mongoc_gridfs_bucket_stream_error(stream, &streamError) { streamFailed = true; failed = true }
                if w != filled { failed = true }
            }
            if failed { _ = mongoc_gridfs_bucket_abort_upload(stream) }
            let closed = failed ? false : mongoc_stream_close(stream) == 0
            if !streamFailed { streamFailed = mongoc_gridfs_bucket_stream_error(stream, &streamError) }
            mongoc_stream_destroy(stream)
            if streamFailed { throw connection.storeError(streamError) }
            guard closed else { throw StoreError.io(path: "gridfs:\(bucketName)/\(id.hex)", reason: "upload incomplete") }
        }
    }
}
