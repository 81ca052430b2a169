/// The few `locations` operations besides upserts that the jobs need, on the backend's fields.
extension MongoDatabase {
    /// Points the place `placeId` at `thumbnail` (nil removes `thumbnailId`). `updated_at` is not
    /// touched: the app ignores `thumbnailId`, so for its readers nothing changed.
    @discardableResult
    public func setThumbnail(_ thumbnail: ObjectId?, placeId: ObjectId) throws(StoreError) -> Bool {
        try locations.updateOne(filter: ["_id": .objectId(placeId)], update: Self.thumbnailUpdate(thumbnail))
    }

    /// Points every place showing the original image `original` (its `imageId`) at `thumbnail`.
    /// Returns how many places matched. Used by thumbnail regeneration before it deletes the
    /// previous thumbnail, so no place ever points at a deleted file.
    @discardableResult
    public func setThumbnail(_ thumbnail: ObjectId?, forImage original: ObjectId) throws(StoreError) -> Int {
        try locations.updateMany(filter: ["imageId": .string(original.hex)], update: Self.thumbnailUpdate(thumbnail))
    }

    static func thumbnailUpdate(_ thumbnail: ObjectId?) -> BSONDocument {
        if let thumbnail { return ["$set": .document(["thumbnailId": .string(thumbnail.hex)])] }
        return ["$unset": .document(["thumbnailId": ""])]
    }

    /// Every file id some place refers to (`imageId` or `thumbnailId`), for `poi gc`.
    public func referencedFileIds() throws(StoreError) -> Set<ObjectId> {
        var ids = Set<ObjectId>()
        for field in ["imageId", "thumbnailId"] {
            for value in try locations.distinct(field) {
                if let hex = value.stringValue, let id = ObjectId(hex: hex) { ids.insert(id) }
                if let id = value.objectIdValue { ids.insert(id) }
            }
        }
        return ids
    }
}

extension MongoCollection {
    /// Distinct values of `field` among documents matching `filter`.
    public func distinct(_ field: String, filter: BSONDocument = BSONDocument()) throws(StoreError) -> [BSONValue] {
        let reply = try runCommand(["distinct": .string(name), "key": .string(field), "query": .document(filter)])
        return reply["values"]?.arrayValue ?? []
    }
}
