import CMongoC

/// A database on a connection. A value: cheap to copy, shares the connection's client pool.
public struct MongoDatabase: Sendable {
    public let connection: MongoConnection
    public let name: String

    public init(connection: MongoConnection, name: String) {
        self.connection = connection
        self.name = name
    }

    public func collection(_ name: String) -> MongoCollection {
        MongoCollection(connection: connection, database: self.name, name: name)
    }

    /// The backend's places collection (ARCHITECTURE.md §1).
    public var locations: MongoCollection { collection(StoreLayout.locations) }
    /// The backend's file metadata collection (ARCHITECTURE.md §1).
    public var files: MongoCollection { collection(StoreLayout.files) }

    public func runCommand(_ command: BSONDocument) throws(StoreError) -> BSONDocument {
        try connection.runCommand(command, database: name)
    }

    public func drop() throws(StoreError) {
        _ = try runCommand(["dropDatabase": 1])
    }
}

/// A collection handle: names only, no server state. Every call pops a pooled client for its
/// duration, so handles can be shared between tasks freely.
public struct MongoCollection: Sendable {
    public let connection: MongoConnection
    public let database: String
    public let name: String

    public init(connection: MongoConnection, database: String, name: String) {
        self.connection = connection
        self.database = database
        self.name = name
    }

    /// Runs `body` with a libmongoc collection bound to a pooled client.
    func withCollection<R, E: Error>(_ body: (OpaquePointer) throws(E) -> R) throws(E) -> R {
        try connection.withClient { (client) throws(E) -> R in
            let coll = mongoc_client_get_collection(client, database, name)!
            defer { mongoc_collection_destroy(coll) }
            return try body(coll)
        }
    }

    func runCommand(_ command: BSONDocument) throws(StoreError) -> BSONDocument {
        try connection.runCommand(command, database: database)
    }

    // MARK: Single-document operations

    /// Inserts one document (it should carry its own `_id`; the server adds one otherwise).
    public func insertOne(_ document: BSONDocument) throws(StoreError) {
        try withCollection { (coll) throws(StoreError) in
            var error = bson_error_t()
            let (ok, reply) = LibBSON.withStaticPointer(document) { doc in
                LibBSON.withReply { reply in mongoc_collection_insert_one(coll, doc, nil, reply, &error) }
            }
            if !ok { throw connection.storeError(error, reply: reply) }
        }
    }

    /// `$set`s fields of the one document matching `filter`. Returns whether one matched.
    @discardableResult
    public func updateOne(filter: BSONDocument, set fields: BSONDocument) throws(StoreError) -> Bool {
        try updateOne(filter: filter, update: ["$set": .document(fields)])
    }

    /// Applies an update document (operators or a pipeline) to the first match of `filter`.
    @discardableResult
    public func updateOne(filter: BSONDocument, update: BSONDocument) throws(StoreError) -> Bool {
        try self.update(filter: filter, update: update, with: mongoc_collection_update_one) > 0
    }

    /// Applies `update` to every match of `filter`. Returns how many matched. Used to relink
    /// every place that shows one image when its thumbnail is replaced.
    @discardableResult
    public func updateMany(filter: BSONDocument, update: BSONDocument) throws(StoreError) -> Int {
        try self.update(filter: filter, update: update, with: mongoc_collection_update_many)
    }

    /// `mongoc_collection_update_one` or `_many` (same signature); returns the matched count.
    private func update(filter: BSONDocument, update: BSONDocument,
                        with call: (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?,
                                    UnsafeMutablePointer<bson_error_t>?) -> Bool) throws(StoreError) -> Int {
        try withCollection { (coll) throws(StoreError) -> Int in
            var error = bson_error_t()
            let (ok, reply) = LibBSON.withStaticPointer(filter) { sel in
                LibBSON.withStaticPointer(update) { upd in
                    LibBSON.withReply { reply in call(coll, sel, upd, nil, reply, &error) }
                }
            }
            if !ok { throw connection.storeError(error, reply: reply) }
            return Int(reply["matchedCount"]?.int64Value ?? 0)
        }
    }

    /// Deletes the first match of `filter`. Returns whether one was deleted.
    @discardableResult
    public func deleteOne(_ filter: BSONDocument) throws(StoreError) -> Bool {
        try withCollection { (coll) throws(StoreError) -> Bool in
            var error = bson_error_t()
            let (ok, reply) = LibBSON.withStaticPointer(filter) { sel in
                LibBSON.withReply { reply in mongoc_collection_delete_one(coll, sel, nil, reply, &error) }
            }
            if !ok { throw connection.storeError(error, reply: reply) }
            return (reply["deletedCount"]?.int64Value ?? 0) > 0
        }
    }

    public func findOne(_ filter: BSONDocument, projection: BSONDocument? = nil) throws(StoreError) -> BSONDocument? {
        let cursor = try find(filter, projection: projection, limit: 1)
        return try cursor.next()
    }

    /// Number of documents matching `filter` (an aggregation on the server, exact).
    public func count(_ filter: BSONDocument = BSONDocument()) throws(StoreError) -> Int {
        try withCollection { (coll) throws(StoreError) -> Int in
            var error = bson_error_t()
            let (n, reply) = LibBSON.withStaticPointer(filter) { f in
                LibBSON.withReply { reply in mongoc_collection_count_documents(coll, f, nil, nil, reply, &error) }
            }
            if n < 0 { throw connection.storeError(error, reply: reply) }
            return Int(n)
        }
    }

    /// Drops the collection; a collection that does not exist is not an error.
    public func drop() throws(StoreError) {
        do {
            _ = try runCommand(["drop": .string(name)])
        } catch {
            if case .server(let code, _, _, _) = error, code == ServerErrorCode.namespaceNotFound { return }
            throw error
        }
    }
}

/// Collection names of the backend's layout (ARCHITECTURE.md §1).
public enum StoreLayout {
    public static let locations = "locations"
    public static let files = "files"
}
