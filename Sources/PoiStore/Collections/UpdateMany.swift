import CMongoC

extension MongoCollection {
    /// Applies `update` to every match of `filter`. Returns how many matched. Used to relink
    /// every place that shows one image when its thumbnail is replaced.
    @discardableResult
    public func updateMany(filter: BSONDocument, update: BSONDocument) throws(StoreError) -> Int {
        try withCollection { (coll) throws(StoreError) -> Int in
            var error = bson_error_t()
            let (ok, reply) = LibBSON.withStaticPointer(filter) { sel in
                LibBSON.withStaticPointer(update) { upd in
                    LibBSON.withReply { reply in mongoc_collection_update_many(coll, sel, upd, nil, reply, &error) }
                }
            }
            if !ok { throw connection.storeError(error, reply: reply) }
            return Int(reply["matchedCount"]?.int64Value ?? 0)
        }
    }
}
