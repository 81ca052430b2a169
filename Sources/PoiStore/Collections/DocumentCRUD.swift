import CMongoC

/// Single-document operations `poi serve` needs beyond the jobs' API: the app's own documents
/// (replace with upsert, finds with a server-side time limit) and JSON bodies as documents.
/// Kept in its own file so the store's internals can change around it.
public struct FindOptions: Sendable, Equatable {
    public var sort: BSONDocument?
    public var projection: BSONDocument?
    public var limit: Int?
    public var skip: Int?
    public var batchSize: Int?
    /// The server abandons the query after this long (`maxTimeMS`), so one bad query cannot hold
    /// a pooled client for minutes.
    public var maxTimeMS: Int?

    public init(sort: BSONDocument? = nil, projection: BSONDocument? = nil, limit: Int? = nil, skip: Int? = nil,
                batchSize: Int? = nil, maxTimeMS: Int? = nil) {
        self.sort = sort
        self.projection = projection
        self.limit = limit
        self.skip = skip
        self.batchSize = batchSize
        self.maxTimeMS = maxTimeMS
    }
}

extension MongoCollection {
    /// `find` with every option, `maxTimeMS` included.
    public func find(_ filter: BSONDocument, options: FindOptions) throws(StoreError) -> MongoCursor {
        var opts = BSONDocument()
        if let sort = options.sort { opts.append("sort", .document(sort)) }
        if let projection = options.projection { opts.append("projection", .document(projection)) }
        if let batchSize = options.batchSize { opts.append("batchSize", .int64(Int64(batchSize))) }
        if let limit = options.limit { opts.append("limit", .int64(Int64(limit))) }
        if let skip = options.skip { opts.append("skip", .int64(Int64(skip))) }
        if let maxTimeMS = options.maxTimeMS { opts.append("maxTimeMS", .int64(Int64(maxTimeMS))) }
        return try openCursor(filter, options: opts)
    }

    /// Replaces the document matching `filter` with `replacement` (no update operators), inserting
    /// it when none matches and `upsert` is set. Returns whether one matched.
    @discardableResult
    public func replaceOne(filter: BSONDocument, replacement: BSONDocument, upsert: Bool) throws(StoreError) -> Bool {
        try withCollection { (coll) throws(StoreError) -> Bool in
            var error = bson_error_t()
            let opts: BSONDocument = ["upsert": .bool(upsert)]
            let (ok, reply) = LibBSON.withStaticPointer(filter) { sel in
                LibBSON.withStaticPointer(replacement) { rep in
                    LibBSON.withPointer(opts) { o in
                        LibBSON.withReply { reply in mongoc_collection_replace_one(coll, sel, rep, o, reply, &error) }
                    }
                }
            }
            if !ok { throw connection.storeError(error, reply: reply) }
            return (reply["matchedCount"]?.int64Value ?? 0) > 0
        }
    }
}

extension BSONDocument {
    /// Parses a JSON object (MongoDB Extended JSON, canonical or relaxed, so `{"$oid": …}` and
    /// `{"$date": …}` become an ObjectId and a date) with libbson's parser, which bounds nesting.
    /// Anything but a top-level object is refused.
    public init(json: String) throws(StoreError) {
        guard json.utf8.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) == UInt8(ascii: "{") else {
            throw .refusedQuery(reason: "the JSON is not an object")
        }
        do {
            self = try LibBSON.parseExtendedJSON(json)
        } catch {
            throw .refusedQuery(reason: "the JSON is not valid: \(error.message)")
        }
    }
}
