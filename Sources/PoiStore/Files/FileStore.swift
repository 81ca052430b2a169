/// Where image bytes live, with their `files` documents. Implementations store bytes durably
/// BEFORE inserting the document, and delete the document BEFORE the bytes, so a crash at any
/// point leaves at worst unreferenced bytes (found by `orphans()`), never a document whose
/// file is missing.
public protocol FileStore: Sendable {
    /// The database holding the `files` collection.
    var database: MongoDatabase { get }
    /// Stores `bytes` durably under `id` and `ext`; visible only once complete.
    func storeBytes(_ bytes: [UInt8], id: ObjectId, ext: String) throws(StoreError)
    /// The bytes of `id`, or nil when none are stored.
    func loadBytes(id: ObjectId, ext: String) throws(StoreError) -> [UInt8]?
    /// Removes the bytes of `id`; false when there were none.
    func removeBytes(id: ObjectId, ext: String) throws(StoreError) -> Bool
    /// How many bytes are stored for `id` without reading them (a `stat`, a GridFS `length`);
    /// nil when none are.
    func storedSize(id: ObjectId, ext: String) throws(StoreError) -> Int?
    /// Every stored item (`id` nil for names that are not PoiKit/backend files) with its size,
    /// plus leftover temporary files.
    func listStoredBytes() throws(StoreError) -> (items: [StoredBytes], temporary: [String])
    /// Makes the store ready to take bytes, before the first `storeBytes` (an uploads folder is
    /// created here: see `DiskUploads`). Separate from opening it, so a job checks its inputs
    /// before it touches the database.
    func prepare() throws(StoreError)
    /// Makes the bytes already stored for `existing` also the bytes of `id` and `ext` without
    /// copying them (a hard link in the uploads folder), when the store can and they are
    /// exactly `expected`; false when it cannot (the caller stores the bytes itself).
    func shareBytes(of existing: StoredFile, id: ObjectId, ext: String, expected: [UInt8]) throws(StoreError) -> Bool
}

extension FileStore {
    public func prepare() throws(StoreError) {}

    /// GridFS files cannot share chunks under two ids: the caller stores a copy.
    public func shareBytes(of existing: StoredFile, id: ObjectId, ext: String, expected: [UInt8]) throws(StoreError) -> Bool {
        false
    }

    var filesCollection: MongoCollection { database.files }

    /// Stores `bytes` unless the same content with the same role is already stored, in which
    /// case that file is returned (`reused`): how an original photo is stored once.
    ///
    /// Two concurrent puts of the same new imported original: the unique index on an imported
    /// original's `sha256` refuses the second insert (a duplicate-key error; see
    /// `StoreLayout.fileIndexes`).
    public func put(_ bytes: [UInt8], info: FileInfo, createdAt: BSONDate = .now()) throws(StoreError) -> PutResult {
        var info = info
        let sha = info.sha256 ?? ContentDigest.sha256Hex(bytes)
        info.sha256 = sha
        if let existing = try file(sha256: sha, role: info.role) {
            return PutResult(file: existing, reused: true)
        }
        return PutResult(file: try add(bytes, info: info, createdAt: createdAt), reused: false)
    }

    /// Stores `bytes` as a new file, whatever is stored already. Crash-safe order: the bytes are
    /// made durable, then the document is inserted; when the insert fails the bytes are removed
    /// again (best effort: `orphans()` finds them otherwise).
    ///
    /// What thumbnails use: one original's thumbnail must never be "reused" for another whose
    /// thumbnail happens to have the same bytes, because its `thumbnailOf` names the other
    /// original (deleting or regenerating one would break the other's link). Originals use it
    /// directly when the caller has just looked their content up (`file(sha256:role:)`).
    /// `id`: the new file's id (default: a fresh one).
    public func add(_ bytes: [UInt8], info: FileInfo, createdAt: BSONDate = .now(), id: ObjectId? = nil) throws(StoreError) -> StoredFile {
        let sha = info.sha256 ?? ContentDigest.sha256Hex(bytes)
        return try add(info: info, length: bytes.count, sha256: sha, createdAt: createdAt, id: id) { (file) throws(StoreError) in
            try storeBytes(bytes, id: file.id, ext: file.ext)
        }
    }

    /// Adds `bytes` as a new file whose stored bytes are those of `existing` (same content,
    /// stored by an upload) where the store can share them, a copy otherwise: how an import links
    /// a photo the app uploaded without taking the upload's own file, which the app may delete.
    public func add(_ bytes: [UInt8], sharingBytesOf existing: StoredFile, info: FileInfo,
                    createdAt: BSONDate = .now()) throws(StoreError) -> StoredFile {
        let sha = info.sha256 ?? ContentDigest.sha256Hex(bytes)
        return try add(info: info, length: bytes.count, sha256: sha, createdAt: createdAt) { (file) throws(StoreError) in
            guard try !shareBytes(of: existing, id: file.id, ext: file.ext, expected: bytes) else { return }
            try storeBytes(bytes, id: file.id, ext: file.ext)
        }
    }

    /// The one way a new file is added, whatever holds its bytes (an array here, a staged
    /// upload in `putStaged`): `writeBytes` makes the bytes of `file` durable, then the
    /// document is inserted; when the insert fails the bytes are removed again (best effort:
    /// `orphans()` finds them otherwise).
    func add(info: FileInfo, length: Int, sha256: String, createdAt: BSONDate, id: ObjectId? = nil,
             writeBytes: (StoredFile) throws(StoreError) -> Void) throws(StoreError) -> StoredFile {
        let ext = try FileExtension.of(contentType: info.contentType)
        let file = StoredFile(id: id ?? ObjectId(), info: info, ext: ext, length: length, sha256: sha256, createdAt: createdAt)
        try writeBytes(file)
        do throws(StoreError) {
            do throws(StoreError) {
                try filesCollection.insertOne(file.document)
            } catch {
                // Sent again once at once when it never went out: an upload's client would
                // otherwise send its whole photo again for a connection the server had closed.
                guard error.wasNeverSent else { throw error }
                try filesCollection.insertOne(file.document)
            }
        } catch {
            // A write-concern error: the primary applied the insert, so the document names these
            // bytes and they stay (a rerun finds them by content). Otherwise there is no
            // document, and the bytes would be an orphan.
            if !error.isWriteConcernError { _ = try? removeBytes(id: file.id, ext: ext) }
            throw error
        }
        return file
    }

    /// The `files` document of `id`.
    public func file(_ id: ObjectId) throws(StoreError) -> StoredFile? {
        try filesCollection.findOne(["_id": .objectId(id)]).flatMap(StoredFile.init(document:))
    }

    /// Records that an import is linking places to stored file `id` now (`reusedAt`), on its
    /// thumbnails too, so that `delete(_:unlessReusedSince:)` sees it on each file it deletes.
    /// False when the original's document is gone (a `poi gc --delete` just removed it): store
    /// the content anew. The thumbnails first: marked after the original, one could be deleted
    /// in between while the import links it. When the original turns out to be gone, its
    /// thumbnails are removed here: the fresh mark would make gc keep them, thumbnails of
    /// nothing, and no place can show them (nothing links to a thumbnail whose original is gone).
    public func markReused(_ id: ObjectId, at time: BSONDate = .now()) throws(StoreError) -> Bool {
        try filesCollection.updateMany(filter: ["thumbnailOf": .objectId(id)], update: ["$set": .document(["reusedAt": .date(time)])])
        if try filesCollection.updateOne(filter: ["_id": .objectId(id)], set: ["reusedAt": .date(time)]) { return true }
        for thumbnail in try thumbnails(of: id) where try filesCollection.deleteOne(["_id": .objectId(thumbnail.id)]) {
            _ = try removeBytes(id: thumbnail.id, ext: thumbnail.ext)
        }
        return false
    }

    /// Which of `ids` have a `files` document (one query): the images an import of an export
    /// without image files can keep linking to.
    public func existingFileIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId> {
        guard !ids.isEmpty else { return [] }
        let cursor = try filesCollection.find(["_id": .document(["$in": .array(ids.map(BSONValue.objectId))])],
                                              projection: ["_id": 1])
        defer { cursor.close() }
        return Set(try cursor.collect().compactMap { $0["_id"]?.objectIdValue })
    }

    /// A stored file with this content (hex SHA-256) and role, if any.
    public func file(sha256: String, role: FileRole? = nil) throws(StoreError) -> StoredFile? {
        var filter: BSONDocument = ["sha256": .string(sha256)]
        if let role { filter.append("role", .string(role.rawValue)) }
        return try filesCollection.findOne(filter).flatMap(StoredFile.init(document:))
    }

    /// The original an import stored with this content, the one every importing place links
    /// to; never an upload's (`FileOrigin`). Originals from before `storedBy` count as the import's.
    public func importedOriginal(sha256: String) throws(StoreError) -> StoredFile? {
        let filter: BSONDocument = ["sha256": .string(sha256), "role": .string(FileRole.original.rawValue),
                                    "storedBy": .document(["$ne": .string(FileOrigin.uploaded.rawValue)])]
        return try filesCollection.findOne(filter).flatMap(StoredFile.init(document:))
    }

    /// An original the app uploaded with this content, if any (the oldest).
    public func uploadedOriginal(sha256: String) throws(StoreError) -> StoredFile? {
        let filter: BSONDocument = ["sha256": .string(sha256), "role": .string(FileRole.original.rawValue),
                                    "storedBy": .string(FileOrigin.uploaded.rawValue)]
        return try filesCollection.find(filter, sort: ["_id": 1], limit: 1).collect().first.flatMap(StoredFile.init(document:))
    }

    /// The bytes of file `id`; nil when there is no such document, `.bytesMissing` when the
    /// document is there but its bytes are not.
    public func get(_ id: ObjectId) throws(StoreError) -> [UInt8]? {
        guard let f = try file(id) else { return nil }
        return try bytes(of: f)
    }

    /// The bytes of a `files` document the caller already read (no second lookup);
    /// `.bytesMissing` when they are gone.
    ///
    /// `.bytesDamaged` when they are not what the document says: another length than its
    /// `length` (documents the backend wrote itself have none and are not checked), or GridFS
    /// chunks missing or corrupt.
    public func bytes(of file: StoredFile) throws(StoreError) -> [UInt8] {
        let loaded: [UInt8]?
        do {
            loaded = try loadBytes(id: file.id, ext: file.ext)
        } catch {
            if case .bytesDamaged(_, _, let reason) = error {
                throw .bytesDamaged(id: file.id, fileName: file.fileName, reason: reason)
            }
            throw error
        }
        guard let bytes = loaded else {
            throw .bytesMissing(id: file.id, fileName: file.fileName)
        }
        if let problem = Self.sizeProblem(stored: bytes.count, documented: file.length) {
            throw .bytesDamaged(id: file.id, fileName: file.fileName, reason: problem)
        }
        return bytes
    }

    /// "5000 of 1593742 bytes" when a stored size differs from the document's `length`; nil when
    /// they agree or the document has no length (the backend's own documents).
    static func sizeProblem(stored: Int, documented: Int) -> String? {
        guard documented > 0, stored != documented else { return nil }
        return stored < documented ? "\(stored) of \(documented) bytes" : "\(stored) bytes, \(documented) expected"
    }

    /// Whether the bytes of `file` are stored with the document's length, without reading them:
    /// what `poi thumbnails` asks of a thumbnail before calling it up to date, and the import
    /// of an original it found by content.
    public func hasBytes(_ file: StoredFile) throws(StoreError) -> Bool {
        guard let size = try storedSize(id: file.id, ext: file.ext) else { return false }
        return Self.sizeProblem(stored: size, documented: file.length) == nil
    }

    /// Deletes file `id`: the document first (so nothing points at missing bytes), then the
    /// bytes. Returns false when there was no document. Callers make sure no place still
    /// references it.
    @discardableResult
    public func delete(_ id: ObjectId) throws(StoreError) -> Bool {
        guard let f = try file(id) else { return false }
        try filesCollection.deleteOne(["_id": .objectId(id)])
        _ = try removeBytes(id: id, ext: f.ext)
        return true
    }

    /// Deletes file `id` unless an import marked it reused at `cutoff` or later (`markReused`),
    /// judged in the delete itself: `poi gc --delete` asks about `reusedAt` first, but an import
    /// could mark the file between that question and the delete, then link places to a file
    /// that is gone. Returns false when nothing was deleted (no document, or reused lately).
    @discardableResult
    public func delete(_ id: ObjectId, unlessReusedSince cutoff: BSONDate) throws(StoreError) -> Bool {
        guard let f = try file(id) else { return false }
        let filter: BSONDocument = ["_id": .objectId(id), "$or": .array([
            .document(["reusedAt": .document(["$exists": .bool(false)])]),
            .document(["reusedAt": .document(["$lt": .date(cutoff)])]),
        ])]
        guard try filesCollection.deleteOne(filter) else { return false }
        _ = try removeBytes(id: id, ext: f.ext)
        return true
    }

    /// Deletes file `id` and the thumbnails made of it, what `poi serve`'s `DELETE /files/:id`
    /// does: the documents first (nothing then points at missing bytes), then the bytes, so
    /// nothing is left for `poi gc` and any process that still has the document cached finds the
    /// bytes gone. A thumbnail belongs to its one original (`add` never shares one), so it goes
    /// with it. Returns false when there was no document (or another caller deleted it first,
    /// and removes the bytes). A document without the fields that name its bytes is deleted
    /// alone.
    @discardableResult
    public func deleteWithThumbnails(_ id: ObjectId) throws(StoreError) -> Bool {
        let filter: BSONDocument = ["_id": .objectId(id)]
        guard let document = try filesCollection.findOne(filter) else { return false }
        let thumbnails = try thumbnails(of: id)
        guard try filesCollection.deleteOne(filter) else { return false }
        for thumbnail in thumbnails { try filesCollection.deleteOne(["_id": .objectId(thumbnail.id)]) }
        if let original = StoredFile(document: document) { _ = try removeBytes(id: id, ext: original.ext) }
        for thumbnail in thumbnails { _ = try removeBytes(id: thumbnail.id, ext: thumbnail.ext) }
        return true
    }

    /// Streams the `files` documents with `role` (all when nil), oldest first by `_id`: what
    /// thumbnail regeneration walks.
    public func files(role: FileRole? = nil, batchSize: Int = 500) throws(StoreError) -> FileCursor {
        let filter: BSONDocument = role.map { ["role": .string($0.rawValue)] } ?? BSONDocument()
        return FileCursor(cursor: try filesCollection.find(filter, sort: ["_id": 1], batchSize: batchSize))
    }

    /// Thumbnails recorded for `original`.
    public func thumbnails(of original: ObjectId) throws(StoreError) -> [StoredFile] {
        let cursor = try filesCollection.find(["thumbnailOf": .objectId(original)], sort: ["_id": 1])
        return try cursor.collect().compactMap(StoredFile.init(document:))
    }

    /// Bytes without documents, documents without bytes, and damaged bytes (read-only).
    ///
    /// Always: each stored size is compared with its document's `length`, and GridFS chunk counts
    /// with what the length needs (both from listings, no byte is read). With `verify`, every
    /// file is also read whole and its SHA-256 compared with the document's `sha256`.
    public func orphans(verify: Bool = false) throws(StoreError) -> OrphanReport {
        let listing = try listStoredBytes()
        var documents: [ObjectId: StoredFile] = [:]
        let cursor = try filesCollection.find(BSONDocument(), projection: ["_id": 1, "ext": 1, "content-type": 1, "length": 1, "sha256": 1],
                                              batchSize: 1000)
        while let d = try cursor.next() {
            guard let f = StoredFile(document: d) else { continue }
            documents[f.id] = f
        }
        var report = OrphanReport(staleTemporaryFiles: listing.temporary.sorted())
        var seen = Set<ObjectId>()
        for item in listing.items {
            guard let id = item.id, let file = documents[id], file.fileName == item.name else {
                report.bytesWithoutDocument.append(item.name)
                continue
            }
            seen.insert(id)
            if let damage = item.damage ?? item.size.flatMap({ Self.sizeProblem(stored: $0, documented: file.length) }) {
                report.damaged.append(DamagedBytes(id: id, fileName: file.fileName, reason: damage))
                continue
            }
            guard verify else { continue }
            do {
                let bytes = try self.bytes(of: file)
                if file.sha256.count == 64, ContentDigest.sha256Hex(bytes) != file.sha256.lowercased() {
                    report.damaged.append(DamagedBytes(id: id, fileName: file.fileName, reason: "content does not match its sha256"))
                }
            } catch {
                switch error {
                case .bytesDamaged(_, _, let reason):
                    report.damaged.append(DamagedBytes(id: id, fileName: file.fileName, reason: reason))
                case .bytesMissing:
                    seen.remove(id)  // gone since the listing
                default:
                    throw error
                }
            }
        }
        report.documentsWithoutBytes = documents.keys.filter { !seen.contains($0) }.sorted()
        report.bytesWithoutDocument.sort()
        report.damaged.sort { $0.id < $1.id }
        return report
    }
}

/// `files` documents from a cursor.
public final class FileCursor {
    private let cursor: MongoCursor
    init(cursor: MongoCursor) { self.cursor = cursor }
    /// The next well-formed `files` document (malformed ones are skipped), nil at the end.
    public func next() throws(StoreError) -> StoredFile? {
        while let d = try cursor.next() {
            if let f = StoredFile(document: d) { return f }
        }
        return nil
    }
    public func close() { cursor.close() }
}

/// The backend derives a file's extension from its content type: `"." + subtype`.
public enum FileExtension {
    /// A dot and 1-64 of `a-z 0-9 + - .` (no `/`, no `..`): safe to append to a file name.
    public static func isPlain(_ ext: String) -> Bool {
        let bytes = Array(ext.utf8)
        guard bytes.count >= 2, bytes.count <= 65, bytes[0] == UInt8(ascii: "."), !ext.contains("..") else { return false }
        return bytes.dropFirst().allSatisfy { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E
        }
    }

    public static func of(contentType: String) throws(StoreError) -> String {
        let essence = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let parts = essence.trimmingCharacters(in: .whitespaces).lowercased().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[1].utf8.allSatisfy({ c in
                  (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E
              }), !parts[1].hasPrefix(".")
        else {
            throw .unsupportedContentType(contentType)
        }
        return "." + parts[1]
    }
}

import Foundation
