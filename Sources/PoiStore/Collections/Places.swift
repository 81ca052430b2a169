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
    ///
    /// Streamed with `find`, not the `distinct` command: `distinct` answers in one reply document,
    /// capped at 16 MB — about 600k ids — and fails beyond that.
    public func referencedFileIds() throws(StoreError) -> Set<ObjectId> {
        var ids = Set<ObjectId>()
        let cursor = try locations.find(BSONDocument(), projection: ["_id": 0, "imageId": 1, "thumbnailId": 1],
                                        batchSize: 10_000)
        while let d = try cursor.next() {
            for field in ["imageId", "thumbnailId"] {
                guard let value = d[field] else { continue }
                if let hex = value.stringValue, let id = ObjectId(hex: hex) { ids.insert(id) }
                if let id = value.objectIdValue { ids.insert(id) }
            }
        }
        return ids
    }
}
