import PoiImaging
import PoiStore

/// `PlaceRepository` over the `locations` collection: unordered bulk upserts by `importKey`,
/// with one timestamp for the whole run so `export --since` finds exactly what it touched.
public struct LocationsRepository: PlaceRepository {
    public let collection: MongoCollection
    public let options: UpsertOptions

    public init(database: MongoDatabase, runStarted: BSONDate = .now()) {
        collection = database.locations
        var options = UpsertOptions()
        options.now = runStarted
        self.options = options
    }

    public func upsert(_ items: [PlaceWrite]) throws -> [PlaceWriteOutcome] {
        let result = try collection.upsert(
            items.map { UpsertItem(key: .string($0.importKey), fields: $0.set, unset: $0.unset, untracked: $0.untracked) },
            options: options)
        return result.outcomes.map { outcome in
            switch outcome {
            case .inserted: return .inserted
            case .updated: return .updated
            case .unchanged: return .unchanged
            case .failed(let code, let message): return .failed(reason: "\(message) (code \(code))")
            }
        }
    }
}

extension LocationsRepository {
    public func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws {
        try collection.updateMany(filter: ["imageId": .string(imageId.hex)],
                                  update: ["$set": .document(["thumbnailId": .string(thumbnailId.hex)])])
    }
}

/// `ImageRepository` over a `FileStore` (disk uploads or GridFS) and its `files` documents.
public struct FilesRepository: ImageRepository {
    public let store: any FileStore

    public init(store: any FileStore) { self.store = store }

    public func findOriginal(sha256: String) throws -> StoredFileRef? {
        try store.file(sha256: sha256, role: .original).map { StoredFileRef(id: $0.id) }
    }

    public func findThumbnail(of original: ObjectId, spec: String) throws -> StoredFileRef? {
        try store.thumbnails(of: original).last { $0.spec == spec }.map { StoredFileRef(id: $0.id, spec: $0.spec) }
    }

    public func findNewestThumbnail(of original: ObjectId) throws -> StoredFileRef? {
        try store.thumbnails(of: original).last.map { StoredFileRef(id: $0.id, spec: $0.spec) }
    }

    public func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws -> ObjectId {
        let fileInfo = FileInfo(contentType: info.format.contentType, role: .original, width: info.orientedWidth,
                                height: info.orientedHeight, originalName: originalName, sha256: sha256)
        return try store.put(bytes, info: fileInfo).file.id
    }

    public func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws -> ObjectId {
        let fileInfo = FileInfo(contentType: thumbnail.contentType, role: .thumbnail, width: thumbnail.width,
                                height: thumbnail.height, thumbnailOf: original, spec: spec)
        // Not `put`: it would hand back another original's identical thumbnail, whose
        // `thumbnailOf` points elsewhere. Same crash-safe order: bytes, then the document.
        let ext = try FileExtension.of(contentType: fileInfo.contentType)
        let file = StoredFile(id: ObjectId(), info: fileInfo, ext: ext, length: thumbnail.data.count,
                              sha256: ImageIngest.sha256Hex(thumbnail.data), createdAt: .now())
        try store.storeBytes(thumbnail.data, id: file.id, ext: ext)
        try store.database.files.insertOne(file.document)
        return file.id
    }
}
