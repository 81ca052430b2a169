import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif
import PoiImaging
import PoiJobs
import PoiStore
import Synchronization

/// Every call from PoiServer into PoiStore, each run on the database thread pool: libmongoc and
/// file I/O block, and an event-loop thread must never wait on them. One pooled client per
/// operation (PoiStore pops and pushes it inside each call).
///
/// Kept in this one file so that changes to PoiStore's API touch PoiServer in one place.
final class StoreGateway: Sendable {
    let database: MongoDatabase
    let files: any FileStore
    /// Database calls. Each holds its thread until the server answers, so a stalled database
    /// can fill this pool: disk work has `diskPool`, and every call here has a deadline.
    let pool: NIOThreadPool
    /// Reads and writes of files on this machine (downloads, staged uploads): apart from the
    /// database threads, so cached downloads still flow while the database stalls.
    let diskPool: NIOThreadPool
    let queryTimeoutMS: Int
    /// How long a request waits for one database call (queued included): the query timeout
    /// plus `databaseMargin`, after which it is answered 503 (`APIError.databaseTimeout`).
    let databaseDeadline: Duration
    let stagingFallback: String
    let health: HealthProbe?
    /// `files` documents never change after insert, so `GET /files/:id` skips the database for
    /// ids it has seen (the benchmark's thumbnail downloads depend on it). `PUT`/`DELETE
    /// /files/:id` through this process evict. A `DELETE` through another process removes the
    /// bytes after the document, so a download here finds them gone, answers 404 and evicts
    /// (`forget`). Anything else — a `PUT` there, a document deleted by the tutorial's server or
    /// a shell, which leave the bytes — is seen once the entry is `filesCacheSeconds` old.
    private let fileCache: FileDocumentCache
    /// The bytes of small disk-stored files (`SmallFileCache`), checked against the disk on each hit.
    let smallFiles: SmallFileCache

    static let databaseMargin = Duration.seconds(ServerConfiguration.databaseMarginSeconds)

    init(database: MongoDatabase, files: any FileStore, pool: NIOThreadPool, diskPool: NIOThreadPool? = nil,
         queryTimeoutMS: Int, stagingFallback: String, filesCacheSeconds: Double = 30, health: HealthProbe? = nil,
         smallFileCacheBytes: Int = 32 << 20) {
        fileCache = FileDocumentCache(capacity: 10_000, maxAgeSeconds: filesCacheSeconds)
        smallFiles = SmallFileCache(budget: smallFileCacheBytes, maxFileBytes: FileRoutes.smallFileBytes)
        self.database = database
        self.files = files
        self.pool = pool
        self.diskPool = diskPool ?? pool
        self.queryTimeoutMS = queryTimeoutMS
        databaseDeadline = .milliseconds(queryTimeoutMS) + Self.databaseMargin
        self.stagingFallback = stagingFallback
        self.health = health
    }

    /// A database call with the request's deadline: answered 503 when the database has not
    /// answered by then (the call itself ends at libmongoc's socket timeout), and skipped when
    /// it waited in the queue past the deadline (behind calls to a stalled database), so the
    /// queue drains instead of every queued call waiting its own timeout in turn.
    private func run<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(APIError) -> T {
        let (pool, deadline) = (pool, databaseDeadline)
        do {
            return try await Self.answering {
                try await DeadlineRun.run(on: pool, within: deadline, timeout: APIError.databaseTimeout(deadline)) {
                    () throws -> T in try body()
                }
            }
        } catch {
            throw await electionAware(error)
        }
    }

    /// During an election the primary answers "not primary", and then no member is selectable
    /// for a while: libmongoc reports that as "no suitable server", which must not read as an
    /// unreachable database (the operator would look for a network fault). A server that
    /// answers the health probe's ping but cannot be selected has no primary.
    private func electionAware(_ error: APIError) async -> APIError {
        guard case .store(let store) = error else { return error }
        switch store {
        case .server(let code, let name, let message, _) where ServerErrorCode.notPrimary.contains(code):
            return .noPrimary("MongoDB error \(code)\(name.isEmpty ? "" : " (\(name))"): \(message)")
        case .unreachable:
            if let health, await health.problem() == nil { return .noPrimary("the server answers, but no member is primary") }
            return error
        default:
            return error
        }
    }

    /// A database call without a deadline of its own, for the long ones (storing an upload's
    /// bytes in GridFS, a thumbnail): each of their round trips is bounded by the socket timeout,
    /// and cutting them off at the request deadline would answer 503 for an upload that is stored.
    private func runLong<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(APIError) -> T {
        let pool = pool
        return try await Self.answering { try await pool.runIfActive { () throws -> T in try body() } }
    }

    /// What a pooled database call's failure answers: the store's error mapped, an `APIError`
    /// (a deadline) as it is, anything else the pool refusing work because the server is stopping.
    private static func answering<T>(_ call: () async throws -> T) async throws(APIError) -> T {
        do {
            return try await call()
        } catch let error as StoreError {
            throw .store(error)
        } catch let error as APIError {
            throw error
        } catch {
            throw .internalError("the server is shutting down")
        }
    }

    // MARK: Documents

    func find(collection: String, filter: BSONDocument, options: FindOptions) async throws(APIError) -> [BSONDocument] {
        var timed = options
        timed.maxTimeMS = queryTimeoutMS
        let options = timed
        let db = database
        return try await run { () throws(StoreError) in
            let cursor = try db.collection(collection).find(filter, options: options)
            defer { cursor.close() }
            return try cursor.collect()
        }
    }

    func findOne(collection: String, id: ObjectId) async throws(APIError) -> BSONDocument? {
        let db = database
        let timeout = queryTimeoutMS
        return try await run { () throws(StoreError) in
            let cursor = try db.collection(collection).find(["_id": .objectId(id)], options: FindOptions(limit: 1, maxTimeMS: timeout))
            defer { cursor.close() }
            return try cursor.next()
        }
    }

    func insert(collection: String, document: BSONDocument) async throws(APIError) {
        let db = database
        try await run { () throws(StoreError) in try db.collection(collection).insertOne(document) }
    }

    func replace(collection: String, id: ObjectId, document: BSONDocument) async throws(APIError) {
        let db = database
        // The reference lets clients replace `files` documents too; this process's copy must go.
        if collection == StoreLayout.files { fileCache.remove(id); smallFiles.remove(id) }
        _ = try await run { () throws(StoreError) in
            try db.collection(collection).replaceOne(filter: ["_id": .objectId(id)], replacement: document, upsert: true)
        }
    }

    /// A `files` document goes with its bytes and thumbnails (`FileStore.deleteWithThumbnails`).
    func delete(collection: String, id: ObjectId) async throws(APIError) -> Bool {
        if collection == StoreLayout.files {
            fileCache.remove(id)
            smallFiles.remove(id)
            let store = files
            return try await run { () throws(StoreError) in try store.deleteWithThumbnails(id) }
        }
        let db = database
        return try await run { () throws(StoreError) in try db.collection(collection).deleteOne(["_id": .objectId(id)]) }
    }

    /// The ping before listening: libmongoc's server selection timeout (`--server-timeout`) bounds it.
    func ping() async throws(APIError) {
        let db = database
        try await runLong { () throws(StoreError) in try db.connection.ping() }
    }

    /// What `/healthz` says of the database: nil when it answered a ping within the probe's time.
    func databaseProblem() async -> String? {
        if let health { return await health.problem() }
        do throws(APIError) { try await run { () throws(StoreError) in try self.database.connection.ping() } } catch {
            return error.message
        }
        return nil
    }

    // MARK: Files

    func file(_ id: ObjectId) async throws(APIError) -> StoredFile? {
        if let cached = fileCache.get(id) { return cached }
        let store = files
        let found = try await run { () throws(StoreError) in try store.file(id) }
        if let found { fileCache.put(found) }
        return found
    }

    /// A disk-stored file whose document and bytes are both in memory (and whose bytes are still
    /// what is on disk: `SmallFileCache` checks), answered without a database call or a thread hop;
    /// nil when either is not cached.
    func cachedDownload(_ id: ObjectId) -> (file: StoredFile, bytes: ByteBuffer)? {
        guard smallFiles.budget > 0, let file = fileCache.get(id), let path = diskPath(of: file),
              let bytes = smallFiles.get(file.id, path: path) else { return nil }
        return (file, bytes)
    }

    /// Drops a cached `files` document whose bytes were found gone.
    func forget(_ id: ObjectId) {
        fileCache.remove(id)
        smallFiles.remove(id)
    }

    /// The newest thumbnail recorded for `original`.
    func thumbnail(of original: ObjectId) async throws(APIError) -> StoredFile? {
        let store = files
        return try await run { () throws(StoreError) in try store.thumbnails(of: original).last }
    }

    /// The path of a disk-stored file, nil for GridFS.
    func diskPath(of file: StoredFile) -> String? {
        (files as? DiskUploads).map { $0.directory + "/" + file.fileName }
    }

    var storesInGridFS: Bool { files is GridFSStore }

    /// The length and chunk size of a GridFS-stored file; nil when its bytes are gone.
    func gridFSLayout(of file: StoredFile) async throws(APIError) -> GridFSStore.ChunkLayout? {
        guard let grid = files as? GridFSStore else { return nil }
        return try await run { () throws(StoreError) in try grid.chunkLayout(of: file) }
    }

    /// Bytes of a GridFS-stored file from `range.lowerBound`, at most `maxChunks` chunks' worth.
    func gridFSRead(_ file: StoredFile, layout: GridFSStore.ChunkLayout, range: Range<Int>,
                    maxChunks: Int) async throws(APIError) -> [[UInt8]] {
        guard let grid = files as? GridFSStore else { throw .internalError("the files are not stored in GridFS") }
        return try await run { () throws(StoreError) in try grid.read(file, layout: layout, range: range, maxChunks: maxChunks) }
    }

    /// The bytes of a file in a store that is neither a folder nor GridFS, read whole; nil when
    /// they are gone.
    /// Damaged bytes (another length than the document's, chunks missing) are an error, as
    /// everywhere in PoiStore: they are never served as if whole.
    func bytes(of file: StoredFile) async throws(APIError) -> [UInt8]? {
        let store = files
        do {
            return try await run { () throws(StoreError) in try store.bytes(of: file) }
        } catch {
            if case .store(.bytesMissing) = error { return nil }
            throw error
        }
    }

    var stagingDirectory: String { files.stagingDirectory(fallback: stagingFallback) }

    func stagedFileName() -> String { DiskUploads.stagedFileName() }

    /// Removes the staged uploads a server killed mid-upload left (kill -9, a crash), in the
    /// uploads folder or, with GridFS, the temporary folder; before this one stages any.
    func removeStaleStagedUploads() async -> (directory: String, removed: Int) {
        let directory = stagingDirectory
        let removed = try? await diskPool.runIfActive { DiskUploads.removeStaleStagedUploads(in: directory) }
        return (directory, removed ?? 0)
    }

    /// Drops the indexes earlier PoiKit versions made that would refuse an upload of a photo
    /// already stored (`StoreLayout.retiredFileIndexes`): a database an older import set up has
    /// one until its next import. Returns what to log: the indexes dropped, or why none could be
    /// (a user without the right to drop indexes; uploads of stored photos then fail until an
    /// import or an administrator drops it).
    func retireIndexesThatRefuseUploads() async -> String? {
        let files = database.files
        do {
            let dropped = try await run { () throws(StoreError) in try files.dropIndexes(named: StoreLayout.retiredFileIndexes) }
            guard !dropped.isEmpty else { return nil }
            return "dropped index \(dropped.joined(separator: ", ")) of \(database.name).files, which an earlier PoiKit made: "
                + "it refused an upload of a photo already stored"
        } catch {
            return "cannot drop index \(StoreLayout.retiredFileIndexes.joined(separator: ", ")) of \(database.name).files "
                + "(\(error.message)): uploads of photos already stored will be refused until it is dropped"
        }
    }

    func putStaged(path: String, length: Int, info: FileInfo) async throws(APIError) -> PutResult {
        let store = files
        let result = try await runLong { () throws(StoreError) in
            try store.putStaged(path: path, length: length, info: info, reusingIdentical: false)
        }
        fileCache.put(result.file)
        return result
    }

    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) async throws(APIError) -> ObjectId {
        let repository = FilesRepository(store: files)
        do {
            return try await pool.runIfActive { try repository.storeThumbnail(thumbnail, of: original, spec: spec) }
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .internalError("storing the thumbnail failed: \(error)")
        }
    }

    func hasThumbnail(of original: ObjectId, spec: String) async throws(APIError) -> Bool {
        let store = files
        return try await run { () throws(StoreError) in try store.thumbnails(of: original).contains { $0.spec == spec } }
    }

    /// Whether the uploads folder takes a write (healthz); GridFS is checked by the ping.
    func uploadsProblem() async -> String? {
        guard let disk = files as? DiskUploads else { return nil }
        let directory = disk.directory
        return try? await diskPool.runIfActive { () -> String? in
            let probe = UploadsProbe.run(directory: directory)
            if let problem = probe.problem { return problem }
            // The store made the folder at start and uploads stage into it; they never create it
            // again (on an unmounted volume that would fill the wrong disk), so a folder that is
            // gone now fails every upload, although the probe calls it creatable.
            var st = stat()
            if stat(directory, &st) != 0 { return "\(directory) is gone (removed, or its volume unmounted)" }
            return nil
        } ?? nil
    }
}

/// A bounded map of `files` documents by id (evicts the oldest insert when full); an entry older
/// than `maxAge` is dropped when asked for.
final class FileDocumentCache: Sendable {
    private struct State {
        var entries: [ObjectId: (file: StoredFile, added: ContinuousClock.Instant)] = [:]
        var order: [ObjectId] = []
        var head = 0
    }
    private let state = Mutex(State())
    let capacity: Int

    let maxAge: Duration

    init(capacity: Int, maxAgeSeconds: Double) {
        self.capacity = capacity
        maxAge = .milliseconds(Int64(maxAgeSeconds * 1000))
    }

    func get(_ id: ObjectId) -> StoredFile? {
        let now = ContinuousClock.now
        return state.withLock { s in
            guard let entry = s.entries[id] else { return nil }
            guard now - entry.added <= maxAge else { s.entries[id] = nil; return nil }
            return entry.file
        }
    }

    func put(_ file: StoredFile) {
        let now = ContinuousClock.now
        state.withLock { s in
            guard s.entries.updateValue((file, now), forKey: file.id) == nil else { return }
            s.order.append(file.id)
            if s.entries.count > capacity {
                while s.head < s.order.count {
                    let victim = s.order[s.head]
                    s.head += 1
                    if s.entries.removeValue(forKey: victim) != nil { break }
                }
                if s.head > capacity { s.order.removeFirst(s.head); s.head = 0 }
            }
        }
    }

    func remove(_ id: ObjectId) { _ = state.withLock { $0.entries.removeValue(forKey: id) } }
}
