import CMongoC

/// A server cursor streaming documents in batches. It holds one pooled client until it is
/// exhausted, closed or released, so keep it short-lived and confined to one task at a time
/// (libmongoc clients are not thread-safe).
///
/// Iterate with `while let doc = try cursor.next()`; not a `Sequence` on purpose, because a
/// `Sequence` cannot throw and a dropped connection must never look like the end of the data.
public final class MongoCursor {
    private let connection: MongoConnection
    private var client: OpaquePointer?
    private var collection: OpaquePointer?
    private var cursor: OpaquePointer?
    /// The error that ended iteration, if any (set by both `next()` and the Sequence iterator).
    public private(set) var error: StoreError?

    init(connection: MongoConnection, client: OpaquePointer, collection: OpaquePointer, cursor: OpaquePointer) {
        self.connection = connection
        self.client = client
        self.collection = collection
        self.cursor = cursor
    }

    deinit { close() }

    /// The next document, or nil at the end. A failure of the server-side cursor (killed, timed
    /// out, lost connection) throws instead of looking like a normal end.
    public func next() throws(StoreError) -> BSONDocument? {
        guard let cursor else {
            if let error { throw error }
            return nil
        }
        var doc: OpaquePointer? = nil
        if mongoc_cursor_next(cursor, &doc), let doc {
            return LibBSON.document(copying: doc)
        }
        var err = bson_error_t()
        var replyPtr: OpaquePointer? = nil
        if mongoc_cursor_error_document(cursor, &err, &replyPtr) {
            let reply = replyPtr.map { LibBSON.document(copying: $0) }
            let failure = connection.storeError(err, reply: reply)
            error = failure
            close()
            throw failure
        }
        close()
        return nil
    }

    /// Reads everything that is left (tests and small result sets only).
    public func collect() throws(StoreError) -> [BSONDocument] {
        var out: [BSONDocument] = []
        while let d = try next() { out.append(d) }
        return out
    }

    /// Kills the server cursor if still open and gives the client back to the pool.
    public func close() {
        if let cursor { mongoc_cursor_destroy(cursor) }
        if let collection { mongoc_collection_destroy(collection) }
        if let client { connection.pushClient(client) }
        cursor = nil
        collection = nil
        client = nil
    }
}


extension MongoCollection {
    /// Streams the documents matching `filter`. `batchSize` bounds each server round trip (and
    /// so client memory); nil lets the server choose.
    public func find(_ filter: BSONDocument = BSONDocument(), sort: BSONDocument? = nil,
                     projection: BSONDocument? = nil, batchSize: Int? = nil,
                     limit: Int? = nil, skip: Int? = nil, hint: BSONDocument? = nil) throws(StoreError) -> MongoCursor {
        var opts = BSONDocument()
        if let hint { opts.append("hint", .document(hint)) }
        if let sort { opts.append("sort", .document(sort)) }
        if let projection { opts.append("projection", .document(projection)) }
        if let batchSize { opts.append("batchSize", .int64(Int64(batchSize))) }
        if let limit { opts.append("limit", .int64(Int64(limit))) }
        if let skip { opts.append("skip", .int64(Int64(skip))) }

        return try openCursor(filter, options: opts)
    }

    /// The one place a `find` cursor is opened: on its own pooled client, which the cursor gives
    /// back when it is exhausted or closed.
    func openCursor(_ filter: BSONDocument, options opts: BSONDocument) throws(StoreError) -> MongoCursor {
        let client = connection.popClient()
        let coll = mongoc_client_get_collection(client, database, name)!
        let cursor = LibBSON.withPointer(filter) { f in
            LibBSON.withPointer(opts) { o in mongoc_collection_find_with_opts(coll, f, o, nil)! }
        }
        let result = MongoCursor(connection: connection, client: client, collection: coll, cursor: cursor)
        // libmongoc reports invalid options only through the cursor; surface them now.
        var err = bson_error_t()
        if mongoc_cursor_error(cursor, &err) {
            let failure = connection.storeError(err)
            result.close()
            throw failure
        }
        return result
    }
}
