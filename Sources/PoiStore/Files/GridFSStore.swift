/// Bytes in a GridFS bucket, so every app server sees them (ARCHITECTURE.md §5). The GridFS file id is
/// the `files` document's `_id`, so one `imageId` works for both stores; the backend's `files`
/// document is written as well, after the upload completed.
public struct GridFSStore: FileStore {
    public let database: MongoDatabase
    public let bucket: GridFSBucket

    public init(database: MongoDatabase, bucketName: String = "fs") {
        self.database = database
        self.bucket = GridFSBucket(connection: database.connection, database: database.name, bucketName: bucketName)
    }

    public func storeBytes(_ bytes: [UInt8], id: ObjectId, ext: String) throws(StoreError) {
        do throws(StoreError) {
            try bucket.upload(id: id, filename: id.hex + ext, bytes: bytes)
            // libmongoc (1.23) can close an upload whose last chunk's insert was lost with its
            // connection and still write the `.files` document: a file short of a chunk, stored
            // as whole (a 2 s network outage did it every time). Counted before it is trusted;
            // short, it is a lost write like any other (transient: retried, then reported).
            let expected = (bytes.count + Int(GridFSBucket.chunkSize) - 1) / Int(GridFSBucket.chunkSize)
            let stored = try database.collection(bucket.bucketName + ".chunks").count(["files_id": .objectId(id)])
            if stored != expected {
                throw StoreError.network(reason: "GridFS upload of \(id.hex) stored \(stored) of \(expected) chunks "
                                         + "(a chunk's insert was lost with its connection)")
            }
        } catch {
            // A failed upload may have left chunks, or (a write-concern error on its `.files`
            // insert) a whole GridFS file that no `files` document names: gone again, best
            // effort (`poi gc` finds what is left when the server is gone too).
            _ = try? removeBytes(id: id, ext: ext)
            throw error
        }
    }

    public func loadBytes(id: ObjectId, ext: String) throws(StoreError) -> [UInt8]? {
        try bucket.download(id: id)
    }

    public func removeBytes(id: ObjectId, ext: String) throws(StoreError) -> Bool {
        let hadFile = try bucket.delete(id: id)
        // An upload killed midway leaves chunks and no `.files` document; the bucket API only
        // deletes by its files document, so those chunks are removed here.
        let reply = try database.runCommand([
            "delete": .string(bucket.bucketName + ".chunks"),
            "deletes": [.document(["q": .document(["files_id": .objectId(id)]), "limit": 0])],
        ])
        return hadFile || (reply["n"]?.int64Value ?? 0) > 0
    }

    public func storedSize(id: ObjectId, ext: String) throws(StoreError) -> Int? {
        let d = try database.collection(bucket.bucketName + ".files")
            .findOne(["_id": .objectId(id)], projection: ["_id": 0, "length": 1])
        guard let d else { return nil }
        return Int(d["length"]?.int64Value ?? 0)
    }

    /// A chunk's data size; 0 for a `data` that is not binary (damaged by another tool), which
    /// `$binarySize` alone would turn into an error ending the whole scan.
    static let chunkDataSize: BSONDocument = [
        "$cond": [.document(["$eq": [.document(["$type": "$data"]), "binData"]]),
                  .document(["$binarySize": "$data"]), 0],
    ]

    public func listStoredBytes() throws(StoreError) -> (items: [StoredBytes], temporary: [String]) {
        let cursor = try database.collection(bucket.bucketName + ".files")
            .find(BSONDocument(), projection: ["_id": 1, "filename": 1, "length": 1, "chunkSize": 1], batchSize: 1000)
        var items: [StoredBytes] = []
        // Chunks each file needs (from its length and chunk size), checked against the chunks
        // counted below: a file whose chunks are gone still has its `.files` entry and length.
        var expectedChunks: [ObjectId: Int] = [:]
        while let d = try cursor.next() {
            let id = d["_id"]?.objectIdValue
            let length = Int(d["length"]?.int64Value ?? 0)
            if let id {
                let chunkSize = Int(d["chunkSize"]?.int64Value ?? 0)
                expectedChunks[id] = length == 0 ? 0 : (chunkSize > 0 ? (length + chunkSize - 1) / chunkSize : 1)
            }
            items.append(StoredBytes(id: id, name: d["filename"]?.stringValue ?? id?.hex ?? "?", size: length))
        }
        // Chunks of uploads that never completed (no `.files` document): bytes without a name.
        // Streamed, not `distinct` (its one reply is capped at 16 MB). Each chunk's data size
        // comes back as a number (`$binarySize`, MongoDB 4.4+): the server reads the data but
        // none of it crosses the wire, and a truncated chunk is caught on every run, as a
        // truncated file in uploads mode is by its size. A server that refuses the expression
        // gets the chunk count alone, index-only with a hint on the GridFS index, plain when that
        // index is missing (chunks written by other tools).
        var orphans: [ObjectId] = []
        var chunkCount: [ObjectId: Int] = [:]
        var chunkBytes: [ObjectId: Int] = [:]
        var sizesKnown = false
        let chunks = database.collection(bucket.bucketName + ".chunks")
        let attempts: [(projection: BSONDocument, hint: BSONDocument?)] = [
            (["_id": 0, "files_id": 1, "size": .document(Self.chunkDataSize)], nil),
            (["_id": 0, "files_id": 1], ["files_id": 1, "n": 1]),
            (["_id": 0, "files_id": 1], nil),
        ]
        for (k, attempt) in attempts.enumerated() {
            var seen = 0
            var orphanSet = Set<ObjectId>()
            orphans.removeAll()
            chunkCount.removeAll()
            chunkBytes.removeAll()
            do {
                let cursor = try chunks.find(BSONDocument(), projection: attempt.projection, batchSize: 10_000, hint: attempt.hint)
                while let d = try cursor.next() {
                    seen += 1
                    guard let id = d["files_id"]?.objectIdValue else { continue }
                    if expectedChunks[id] != nil {
                        chunkCount[id, default: 0] += 1
                        if let size = d["size"]?.int64Value { chunkBytes[id, default: 0] += Int(size) }
                    } else if orphanSet.insert(id).inserted {
                        orphans.append(id)
                    }
                }
                sizesKnown = k == 0
                break
            } catch {
                // Only the server refusing the query (a bad value, an unknown expression or hint)
                // is retried: a dead server is not waited out three times.
                guard k < attempts.count - 1, seen == 0, case .server = error else { throw error }
            }
        }
        items += orphans.map { StoredBytes(id: $0, name: $0.hex + " (chunks only)") }
        for i in items.indices {
            guard let id = items[i].id, let expected = expectedChunks[id] else { continue }
            let found = chunkCount[id] ?? 0
            if found != expected {
                items[i].damage = "\(found) of \(expected) chunks"
            } else if sizesKnown, let length = items[i].size, (chunkBytes[id] ?? 0) != length {
                items[i].damage = "\(chunkBytes[id] ?? 0) of \(length) bytes"
            }
        }
        return (items, [])
    }
}
