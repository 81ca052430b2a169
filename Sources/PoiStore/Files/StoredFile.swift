// The values a file store speaks: a `files` document (`StoredFile`), what a caller knows about
// bytes it stores, and what listing and checking the store report. The store itself is FileStore.swift.
import Foundation

public enum FileRole: String, Sendable {
    case original, thumbnail
}

/// Who stored an original: an import, or an upload through `poi serve`. An import stores each
/// content once and links every place that shows it to that one file; an upload is always a
/// file of its own (as the reference server stores every upload), because the app may delete
/// what it uploaded and must never take an imported place's photo, or another upload's, with it.
/// Originals stored before this field existed have none and count as the import's.
public enum FileOrigin: String, Sendable {
    case imported = "import"
    case uploaded = "upload"
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
    /// For originals: the description of the embedded ICC profile ("Display P3"), so tagged
    /// photos can be found; thumbnails are sRGB without a profile.
    public var iccProfile: String?
    /// For originals: who stored it (`storedBy`).
    public var storedBy: FileOrigin?

    public init(contentType: String, role: FileRole, width: Int? = nil, height: Int? = nil,
                thumbnailOf: ObjectId? = nil, spec: String? = nil, originalName: String? = nil, sha256: String? = nil,
                iccProfile: String? = nil, storedBy: FileOrigin? = nil) {
        self.contentType = contentType
        self.role = role
        self.width = width
        self.height = height
        self.thumbnailOf = thumbnailOf
        self.spec = spec
        self.originalName = originalName
        self.sha256 = sha256
        self.iccProfile = iccProfile
        self.storedBy = storedBy
    }
}

/// One `files` document (ARCHITECTURE.md §1): the backend's fields plus PoiKit's.
/// More than ten stored properties: one per field of a `files` document (ARCHITECTURE.md §1), the backend's and PoiKit's.
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
    public var iccProfile: String?
    public var storedBy: FileOrigin?
    /// When an import last found this original by its content and linked places to it: `poi
    /// gc` counts a file's age from then, so it never deletes one an import is linking.
    public var reusedAt: BSONDate?

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
        if let iccProfile { b.append("iccProfile", string: iccProfile) }
        if let storedBy { b.append("storedBy", string: storedBy.rawValue) }
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
        self.iccProfile = d["iccProfile"]?.stringValue
        self.storedBy = d["storedBy"]?.stringValue.flatMap(FileOrigin.init(rawValue:))
        self.reusedAt = d["reusedAt"]?.dateValue
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
        self.iccProfile = info.iccProfile
        self.storedBy = info.storedBy
    }
}

public struct PutResult: Sendable, Equatable {
    public var file: StoredFile
    /// True when identical bytes (same sha256 and role) were already stored and were reused.
    public var reused: Bool
}

/// One stored item as the byte store lists it.
public struct StoredBytes: Sendable, Equatable {
    /// The id its name starts with; nil for names that are not PoiKit/backend files.
    public var id: ObjectId?
    /// The file name in the uploads folder, or the GridFS filename.
    public var name: String
    /// How many bytes are stored (a file's size, a GridFS file's `length`); nil when unknown.
    public var size: Int?
    /// What the store itself sees wrong with it (GridFS: chunks missing); nil when nothing.
    public var damage: String?

    public init(id: ObjectId?, name: String, size: Int? = nil, damage: String? = nil) {
        self.id = id
        self.name = name
        self.size = size
        self.damage = damage
    }
}

extension StoredFile {
    /// `.bytesDamaged` when `storedSize` bytes are not what this document says (the check
    /// `bytes(of:)` makes, for a caller that reads the bytes itself, as `poi serve` streams a
    /// disk file); nil when they agree or the document has no length.
    public func damage(storedSize: Int) -> StoreError? {
        DiskUploads.sizeProblem(stored: storedSize, documented: length)
            .map { .bytesDamaged(id: id, fileName: fileName, reason: $0) }
    }
}

/// Bytes that are there but damaged.
public struct DamagedBytes: Sendable, Equatable {
    public var id: ObjectId
    /// The name the backend serves it under (`<id hex><ext>`).
    public var fileName: String
    /// What is wrong: "5000 of 1593742 bytes", "0 of 3 chunks", "content does not match its sha256", …
    public var reason: String

    public init(id: ObjectId, fileName: String, reason: String) {
        self.id = id
        self.fileName = fileName
        self.reason = reason
    }
}

/// Inconsistencies between `files` and the stored bytes, for `poi gc` (nothing is deleted here).
public struct OrphanReport: Sendable, Equatable {
    /// Stored bytes no `files` document describes (file names, or GridFS ids as hex).
    public var bytesWithoutDocument: [String] = []
    /// `files` documents whose bytes are missing.
    public var documentsWithoutBytes: [ObjectId] = []
    /// `files` documents whose bytes are there but damaged (sorted by id).
    public var damaged: [DamagedBytes] = []
    /// Temporary files a crashed write left behind (disk store only).
    public var staleTemporaryFiles: [String] = []

    public var isEmpty: Bool {
        bytesWithoutDocument.isEmpty && documentsWithoutBytes.isEmpty && damaged.isEmpty && staleTemporaryFiles.isEmpty
    }
}
