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
        // A CSV export writes extras in column order: the same members in another order are
        // the same place.
        options.unorderedField = "extra"
        // An export of a place the app created (no importKey) carries its `_id` as the key:
        // importing it back finds that place instead of copying it.
        options.adoptsKeylessById = true
        options.now = runStarted
        self.options = options
    }

    public func prepare() throws(StoreError) {
        var count = 0
        // Index builds and a read: idempotent, retried within the bound like every write.
        let anyImported = try database.connection.retrying(retries: &count) { () throws(StoreError) -> BSONDocument? in
            try database.ensureIndexes()
            return try database.locations.findOne([options.keyField: .document(["$exists": true])], projection: ["_id": 1])
        }
        keysAbsent.value.store(anyImported == nil, ordering: .relaxed)
    }

    public func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome] {
        let result = try database.locations.upsert(items, options: options,
                                                   keysAbsent: keysAbsent.value.load(ordering: .relaxed))
        if result.foundStoredKeys { keysAbsent.value.store(false, ordering: .relaxed) }
        return result.outcomes
    }

    public func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError) {
        // An update to a fixed value: applying it twice is applying it once.
        var count = 0
        try database.connection.retrying(retries: &count) { () throws(StoreError) in
            _ = try database.setThumbnail(thumbnailId, forImage: imageId, updatedAt: options.now ?? .now())
        }
    }
}

/// Shared by the copies of a `LocationsRepository` (a struct handed to the job's threads).
final class KeysAbsent: Sendable {
    let value = Atomic<Bool>(false)
}

/// `ImageRepository` over a `FileStore` (disk uploads or GridFS) and its `files` documents.
public struct FilesRepository: ImageRepository {
    public let store: any FileStore
    /// Transient errors are retried within this connection's bound (`MongoConnection.retrying`);
    /// nil: not retried (`poi serve`, whose clients retry).
    public let retries: MongoConnection?

    public init(store: any FileStore, retryingOn connection: MongoConnection? = nil) {
        self.store = store
        self.retries = connection
    }

    private func retrying<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        guard let retries else { return try body() }
        var count = 0
        return try retries.retrying(retries: &count, body)
    }

    public func prepare() throws(StoreError) { try retrying { () throws(StoreError) in try store.prepare() } }

    public func findOriginal(sha256: String) throws(StoreError) -> StoredImage? {
        try retrying { () throws(StoreError) in try lookUpOriginal(sha256: sha256) }
    }

    private func lookUpOriginal(sha256: String) throws(StoreError) -> StoredImage? {
        // The import's own original only: an upload of the same photo belongs to the app, which
        // may delete it; `storeOriginal` then shares its bytes under a file of the import's own.
        guard let original = try store.importedOriginal(sha256: sha256) else { return nil }
        // Marked before anything links to it, so a `poi gc --delete` running beside this import
        // counts its age from now and keeps it; gone already (that gc was faster): stored anew.
        guard try store.markReused(original.id) else { return nil }
        let thumbnails = try store.thumbnails(of: original.id).map { StoredFileRef(id: $0.id, spec: $0.spec, contentType: $0.contentType) }
        // Found by content, but are its bytes in this store? Another --uploads folder, or a
        // GridFS database read as a folder, has the documents and not the bytes (a stat, or one
        // lookup in GridFS, per distinct image).
        let missing = try store.storedSize(id: original.id, ext: original.ext) == nil ? original.fileName : nil
        return StoredImage(id: original.id, thumbnails: thumbnails, missingBytes: missing)
    }

    public func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws(StoreError) -> StoredOriginal {
        let fileInfo = FileInfo(contentType: info.format.contentType, role: .original, width: info.orientedWidth,
                                height: info.orientedHeight, originalName: originalName, sha256: sha256,
                                iccProfile: info.iccProfile, storedBy: .imported)
        // `add`, not `put`: `findOriginal` has just looked this content up and found nothing.
        // A retry looks again first: an attempt the server applied before its reply was lost
        // is found by its content, not stored twice.
        var first = true
        return try retrying { () throws(StoreError) -> StoredOriginal in
            // A retry's find is this run's own lost insert (new), or another run's (then the
            // unique index would have refused ours): either way the content is stored once.
            if !first, let stored = try store.importedOriginal(sha256: sha256) { return StoredOriginal(id: stored.id) }
            first = false
            do throws(StoreError) {
                // A photo the app uploaded before: the same bytes, under a file of the import's.
                if let upload = try store.uploadedOriginal(sha256: sha256) {
                    return StoredOriginal(id: try store.add(bytes, sharingBytesOf: upload, info: fileInfo).id)
                }
                return StoredOriginal(id: try store.add(bytes, info: fileInfo).id)
            } catch {
                // Another import stored the same content since the lookup (the unique index on
                // an imported original's sha256 refused this one, and `add` removed its bytes):
                // link that.
                guard case .server(let code, _, _, _) = error, code == ServerErrorCode.duplicateKey,
                      let stored = try store.importedOriginal(sha256: sha256) else { throw error }
                return StoredOriginal(id: stored.id, isNew: false)
            }
        }
    }

    public func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws(StoreError) -> ObjectId {
        // As for originals: a retry finds the thumbnail of this recipe a lost reply stored.
        var first = true
        return try retrying { () throws(StoreError) -> ObjectId in
            let existing = try store.thumbnails(of: original)
            if !first, let stored = existing.last(where: { $0.spec == spec }) { return stored.id }
            first = false
            // Greater than the thumbnails it replaces (`ObjectId.greater`): relinks go by that order.
            return try store.add(thumbnail.data, info: FileInfo(thumbnail: thumbnail, of: original, spec: spec),
                                 id: ObjectId.greater(than: existing.map(\.id))).id
        }
    }

    public func storedIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId> {
        try retrying { () throws(StoreError) in try store.existingFileIds(ids) }
    }

    public func deleteUnusedThumbnails(of original: ObjectId) throws(StoreError) -> Int {
        // Deletes of fixed ids, each as good done twice as once: retried within --retry-for.
        try retrying { () throws(StoreError) -> Int in try store.database.deleteUnusedThumbnails(of: original, in: store) }
    }

    public func thumbnailIds(of originals: [ObjectId]) throws(StoreError) -> [ObjectId: [ObjectId]] {
        try retrying { () throws(StoreError) in
            var found: [ObjectId: [ObjectId]] = [:]
            for original in originals {
                let ids = try store.thumbnails(of: original).map(\.id)
                if !ids.isEmpty { found[original] = ids }
            }
            return found
        }
    }
}
