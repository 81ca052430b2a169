import Crypto

public enum FileRole: String, Sendable {
    case original, thumbnail
}

/// What the caller knows about bytes it stores (the rest — id, ext, length, sha256, date — the
/// store fills in).
public struct FileInfo: Sendable, Equatable {
    public var contentType: String
    public var role: FileRole
    public var width: Int?
    public var height: Int?
    /// For thumbnails: the original's id.
    public var thumbnailOf: ObjectId?
    /// For thumbnails: the recipe, e.g. "256x256 inside jpeg q85" (how staleness is detected).
    public var spec: String?
    public var originalName: String?
    /// Hex SHA-256 of the bytes when the caller already has it; computed otherwise.
    public var sha256: String?

    public init(contentType: String, role: FileRole, width: Int? = nil, height: Int? = nil,
                thumbnailOf: ObjectId? = nil, spec: String? = nil, originalName: String? = nil, sha256: String? = nil) {
        self.contentType = contentType
        self.role = role
        self.width = width
        self.height = height
        self.thumbnailOf = thumbnailOf
        self.spec = spec
        self.originalName = originalName
        self.sha256 = sha256
    }
}

/// One `files` document (DESIGN.md §1): the backend's fields plus PoiKit's.
public struct StoredFile: Sendable, Equatable {
    public var id: ObjectId
    public var contentType: String
    public var ext: String
    public var createdAt: BSONDate
    public var length: Int
    public var sha256: String
    public var width: Int?
    public var height: Int?
    public var role: FileRole?
    public var thumbnailOf: ObjectId?
    public var spec: String?
    public var originalName: String?

    /// The name the backend serves it under: `<_id hex><ext>`.
    public var fileName: String { id.hex + ext }

    public var document: BSONDocument {
        var b = BSONDocumentBuilder()
        b.append("_id", objectId: id)
        b.append("content-type", string: contentType)
        b.append("ext", string: ext)
        b.append("created_at", date: createdAt)
        b.append("length", int64: Int64(length))
        b.append("sha256", string: sha256)
        if let width { b.append("width", int64: Int64(width)) }
        if let height { b.append("height", int64: Int64(height)) }
        if let role { b.append("role", string: role.rawValue) }
        if let thumbnailOf { b.append("thumbnailOf", objectId: thumbnailOf) }
        if let spec { b.append("spec", string: spec) }
        if let originalName { b.append("originalName", string: originalName) }
        return b.finish()
    }

    /// Reads a `files` document; nil when it lacks the backend's required fields. Documents the
    /// backend wrote itself (no sha256/length) are accepted with empty/zero values.
    public init?(document d: BSONDocument) {
        guard let id = d["_id"]?.objectIdValue, let contentType = d["content-type"]?.stringValue else { return nil }
        self.id = id
        self.contentType = contentType
        // `ext` becomes part of a path (<uploads>/<id><ext>), and the backend writes these
        // documents too: anything but a plain ".subtype" is replaced by what the content type says.
        let derived = (try? FileExtension.of(contentType: contentType)) ?? ""
        self.ext = d["ext"]?.stringValue.flatMap { FileExtension.isPlain($0) ? $0 : nil } ?? derived
        self.createdAt = d["created_at"]?.dateValue ?? BSONDate(millisecondsSinceEpoch: 0)
        self.length = Int(d["length"]?.int64Value ?? 0)
        self.sha256 = d["sha256"]?.stringValue ?? ""
        self.width = d["width"]?.int64Value.map(Int.init)
        self.height = d["height"]?.int64Value.map(Int.init)
        self.role = d["role"]?.stringValue.flatMap(FileRole.init(rawValue:))
        self.thumbnailOf = d["thumbnailOf"]?.objectIdValue
        self.spec = d["spec"]?.stringValue
        self.originalName = d["originalName"]?.stringValue
    }

    public init(id: ObjectId, info: FileInfo, ext: String, length: Int, sha256: String, createdAt: BSONDate) {
        self.id = id
        self.contentType = info.contentType
        self.ext = ext
        self.createdAt = createdAt
        self.length = length
        self.sha256 = sha256
        self.width = info.width
        self.height = info.height
        self.role = info.role
        self.thumbnailOf = info.thumbnailOf
        self.spec = info.spec
        self.originalName = info.originalName
    }
}

public struct PutResult: Sendable, Equatable {
    public var file: StoredFile
    /// True when identical bytes (same sha256 and role) were already stored and were reused.
    public var reused: Bool
}

/// Inconsistencies between `files` and the stored bytes, for `poi gc` (nothing is deleted here).
public struct OrphanReport: Sendable, Equatable {
    /// Stored bytes no `files` document describes (file names, or GridFS ids as hex).
    public var bytesWithoutDocument: [String] = []
    /// `files` documents whose bytes are missing.
    public var documentsWithoutBytes: [ObjectId] = []
    /// Temporary files a crashed write left behind (disk store only).
    public var staleTemporaryFiles: [String] = []

    public var isEmpty: Bool { bytesWithoutDocument.isEmpty && documentsWithoutBytes.isEmpty && staleTemporaryFiles.isEmpty }
}

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
    /// Every stored item as `(id, name)`, with `id` nil for names that are not PoiKit/backend
    /// files, plus leftover temporary files.
    func listStoredBytes() throws(StoreError) -> (items: [(id: ObjectId?, name: String)], temporary: [String])
}

extension FileStore {
    var filesCollection: MongoCollection { database.files }

    /// Stores `bytes` unless the same content with the same role is already stored, in which
    /// case that file is returned (`reused`). Crash-safe order: bytes, then the document.
    ///
    /// Two concurrent puts of the same new content may both store it (the `sha256` index is not
    /// unique, because two roles may share content); both files are valid and `poi gc` can merge.
    public func put(_ bytes: [UInt8], info: FileInfo, createdAt: BSONDate = .now()) throws(StoreError) -> PutResult {
        let sha = info.sha256 ?? Self.sha256Hex(bytes)
        if let existing = try file(sha256: sha, role: info.role) {
            return PutResult(file: existing, reused: true)
        }
        let ext = try FileExtension.of(contentType: info.contentType)
        let file = StoredFile(id: ObjectId(), info: info, ext: ext, length: bytes.count, sha256: sha, createdAt: createdAt)
        try storeBytes(bytes, id: file.id, ext: ext)
        do {
            try filesCollection.insertOne(file.document)
        } catch {
            // No document: the bytes would be an orphan. Best effort; gc finds them otherwise.
            _ = try? removeBytes(id: file.id, ext: ext)
            throw error
        }
        return PutResult(file: file, reused: false)
    }

    /// The `files` document of `id`.
    public func file(_ id: ObjectId) throws(StoreError) -> StoredFile? {
        try filesCollection.findOne(["_id": .objectId(id)]).flatMap(StoredFile.init(document:))
    }

    /// A stored file with this content (hex SHA-256) and role, if any.
    public func file(sha256: String, role: FileRole? = nil) throws(StoreError) -> StoredFile? {
        var filter: BSONDocument = ["sha256": .string(sha256)]
        if let role { filter.append("role", .string(role.rawValue)) }
        return try filesCollection.findOne(filter).flatMap(StoredFile.init(document:))
    }

    /// The bytes of file `id`; nil when there is no such document.
    public func get(_ id: ObjectId) throws(StoreError) -> [UInt8]? {
        guard let f = try file(id) else { return nil }
        guard let bytes = try loadBytes(id: id, ext: f.ext) else {
            throw .io(path: f.fileName, reason: "the files document exists but its bytes are missing (run poi gc)")
        }
        return bytes
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

    /// Bytes without documents and documents without bytes (read-only).
    public func orphans() throws(StoreError) -> OrphanReport {
        let listing = try listStoredBytes()
        var documents: [ObjectId: String] = [:]
        let cursor = try filesCollection.find(BSONDocument(), projection: ["_id": 1, "ext": 1, "content-type": 1], batchSize: 1000)
        while let d = try cursor.next() {
            guard let f = StoredFile(document: d) else { continue }
            documents[f.id] = f.fileName
        }
        var report = OrphanReport(staleTemporaryFiles: listing.temporary.sorted())
        var seen = Set<ObjectId>()
        for item in listing.items {
            if let id = item.id, documents[id] == item.name { seen.insert(id) } else { report.bytesWithoutDocument.append(item.name) }
        }
        report.documentsWithoutBytes = documents.keys.filter { !seen.contains($0) }.sorted()
        report.bytesWithoutDocument.sort()
        return report
    }

    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for b in SHA256.hash(data: bytes) { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
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
            throw .io(path: contentType, reason: "not a content type PoiKit can name a file after (want type/subtype)")
        }
        return "." + parts[1]
    }
}

import Foundation
