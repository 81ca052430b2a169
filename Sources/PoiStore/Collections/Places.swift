/// The few `locations` operations besides upserts that the jobs need, on the backend's fields.
extension MongoDatabase {
    /// Points every place showing the original image `original` (its `imageId`) at `thumbnail`
    /// (nil removes `thumbnailId`) and sets their `updated_at` to `updatedAt`. Returns how many
    /// places changed: places already showing `thumbnail` are left alone, `updated_at` included.
    ///
    /// A relink is a change for incremental exports (`export --since` reads `updated_at`): the
    /// app ignores `thumbnailId`, but a copy made from exports must learn the new id before the
    /// old thumbnail is deleted. The import's own write of `thumbnailId` stays outside the
    /// place's change digest, so a plain rerun of an import still moves nothing.
    ///
    /// The one relink both jobs use: thumbnail regeneration before it deletes the previous
    /// thumbnail (so no place ever points at a deleted file), and the import when an explicit
    /// recipe made a new thumbnail for an image stored earlier.
    @discardableResult
    public func setThumbnail(_ thumbnail: ObjectId?, forImage original: ObjectId,
                             updatedAt: BSONDate = .now()) throws(StoreError) -> Int {
        try locations.updateMany(filter: Self.thumbnailFilter(thumbnail, forImage: original),
                                 update: Self.thumbnailUpdate(thumbnail, updatedAt: updatedAt))
    }

    static func thumbnailFilter(_ thumbnail: ObjectId?, forImage original: ObjectId) -> BSONDocument {
        let current: BSONDocument = thumbnail.map { ["$ne": .string($0.hex)] } ?? ["$exists": true]
        return ["imageId": .string(original.hex), "thumbnailId": .document(current)]
    }

    static func thumbnailUpdate(_ thumbnail: ObjectId?, updatedAt: BSONDate) -> BSONDocument {
        if let thumbnail {
            return ["$set": .document(["thumbnailId": .string(thumbnail.hex), "updated_at": .date(updatedAt)])]
        }
        return ["$unset": .document(["thumbnailId": ""]), "$set": .document(["updated_at": .date(updatedAt)])]
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
