import PoiImaging
import PoiStore
import Synchronization

/// `PlaceRepository` over the `locations` collection: unordered bulk upserts by `importKey`,
/// with one timestamp for the whole run so `export --since` finds exactly what it touched.
public struct LocationsRepository: PlaceRepository {
    public let database: MongoDatabase
    public let options: UpsertOptions
    /// True while no key this run writes can be stored yet: the collection held no imported
    /// place when the run started and no batch since found a stored key. Batches then skip the
    /// digest read and go as plain inserts (a first load). Safe with concurrent runs: the unique
    /// `importKey` index refuses an insert of a key another run stored meanwhile, and that item
    /// goes through the upsert path (`MongoCollection.upsert`), which also ends this state.
    private let keysAbsent = KeysAbsent()

    public init(database: MongoDatabase, runStarted: BSONDate = .now()) {
        self.database = database
        var options = UpsertOptions()
        options.now = runStarted
        self.options = options
    }

    public func prepare() throws(StoreError) {
        try database.ensureIndexes()
        let anyImported = try database.locations.findOne([options.keyField: .document(["$exists": true])], projection: ["_id": 1])
        keysAbsent.value.store(anyImported == nil, ordering: .relaxed)
    }

    public func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome] {
        let result = try database.locations.upsert(items, options: options,
                                                   keysAbsent: keysAbsent.value.load(ordering: .relaxed))
        if result.foundStoredKeys { keysAbsent.value.store(false, ordering: .relaxed) }
        return result.outcomes
    }

    public func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError) {
        try database.setThumbnail(thumbnailId, forImage: imageId, updatedAt: options.now ?? .now())
    }
}

/// Shared by the copies of a `LocationsRepository` (a struct handed to the job's threads).
final class KeysAbsent: Sendable {
    let value = Atomic<Bool>(false)
}

/// `ImageRepository` over a `FileStore` (disk uploads or GridFS) and its `files` documents.
public struct FilesRepository: ImageRepository {
    public let store: any FileStore

    public init(store: any FileStore) { self.store = store }

    public func prepare() throws(StoreError) { try store.prepare() }

    public func findOriginal(sha256: String) throws(StoreError) -> StoredImage? {
        guard let original = try store.file(sha256: sha256, role: .original) else { return nil }
        let thumbnails = try store.thumbnails(of: original.id).map { StoredFileRef(id: $0.id, spec: $0.spec, contentType: $0.contentType) }
        // Found by content, but are its bytes in this store? Another --uploads folder, or a
        // GridFS database read as a folder, has the documents and not the bytes (a stat, or one
        // lookup in GridFS, per distinct image).
        let missing = try store.storedSize(id: original.id, ext: original.ext) == nil ? original.fileName : nil
        return StoredImage(id: original.id, thumbnails: thumbnails, missingBytes: missing)
    }

    public func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws(StoreError) -> ObjectId {
        let fileInfo = FileInfo(contentType: info.format.contentType, role: .original, width: info.orientedWidth,
                                height: info.orientedHeight, originalName: originalName, sha256: sha256,
                                iccProfile: info.iccProfile)
        // `add`, not `put`: `findOriginal` has just looked this content up and found nothing.
        return try store.add(bytes, info: fileInfo).id
    }

    public func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws(StoreError) -> ObjectId {
        try store.add(thumbnail.data, info: FileInfo(thumbnail: thumbnail, of: original, spec: spec)).id
    }

    public func storedIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId> {
        try store.existingFileIds(ids)
    }
}
