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
        try bucket.delete(id: id)
    }

    public func listStoredBytes() throws(StoreError) -> (items: [(id: ObjectId?, name: String)], temporary: [String]) {
        let cursor = try database.collection(bucket.bucketName + ".files")
            .find(BSONDocument(), projection: ["_id": 1, "filename": 1], batchSize: 1000)
        var items: [(id: ObjectId?, name: String)] = []
        while let d = try cursor.next() {
            let id = d["_id"]?.objectIdValue
            items.append((id, d["filename"]?.stringValue ?? id?.hex ?? "?"))
        }
        return (items, [])
    }
}
