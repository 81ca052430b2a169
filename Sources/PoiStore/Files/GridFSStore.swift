/// Bytes in a GridFS bucket, so every app server sees them (DESIGN.md §5). The GridFS file id is
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
        try bucket.upload(id: id, filename: id.hex + ext, bytes: bytes)
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

    public func listStoredBytes() throws(StoreError) -> (items: [(id: ObjectId?, name: String)], temporary: [String]) {
        let cursor = try database.collection(bucket.bucketName + ".files")
            .find(BSONDocument(), projection: ["_id": 1, "filename": 1], batchSize: 1000)
        var items: [(id: ObjectId?, name: String)] = []
        var withFile = Set<ObjectId>()
        while let d = try cursor.next() {
            let id = d["_id"]?.objectIdValue
            if let id { withFile.insert(id) }
            items.append((id, d["filename"]?.stringValue ?? id?.hex ?? "?"))
        }
        // Chunks of uploads that never completed (no `.files` document): bytes without a name.
        // Streamed, not `distinct` (its one reply is capped at 16 MB). The hint on the GridFS
        // index makes it an index-only scan; without it the server would read every chunk's
        // data. A bucket whose index is missing (chunks written by other tools) is scanned plain.
        var orphans = Set<ObjectId>()
        let chunks = database.collection(bucket.bucketName + ".chunks")
        for hint in [["files_id": 1, "n": 1] as BSONDocument, nil] {
            var seen = 0
            do {
                let cursor = try chunks.find(BSONDocument(), projection: ["_id": 0, "files_id": 1], batchSize: 10_000, hint: hint)
                while let d = try cursor.next() {
                    seen += 1
                    if let id = d["files_id"]?.objectIdValue, !withFile.contains(id), orphans.insert(id).inserted {
                        items.append((id, id.hex + " (chunks only)"))
                    }
                }
                break
            } catch {
                // Only the server refusing the hint (BadValue) is retried plain: a dead server is
                // not waited out twice.
                guard hint != nil, seen == 0, case .server = error else { throw error }
            }
        }
        return (items, [])
    }
}
