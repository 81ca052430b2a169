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
    ///
    /// Only links to an older thumbnail (a smaller id) or none are replaced: runs that overlap
    /// (a slow weekly `thumbnails --all` still going when the next starts) each make a thumbnail,
    /// and the newest one wins whatever order their relinks come in. A run whose relink came
    /// last used to point places at the thumbnail the other run had just deleted as old.
    @discardableResult
    public func setThumbnail(_ thumbnail: ObjectId?, forImage original: ObjectId,
                             updatedAt: BSONDate = .now()) throws(StoreError) -> Int {
        try locations.updateMany(filter: Self.thumbnailFilter(thumbnail, forImage: original),
                                 update: Self.thumbnailUpdate(thumbnail, updatedAt: updatedAt))
    }

    static func thumbnailFilter(_ thumbnail: ObjectId?, forImage original: ObjectId) -> BSONDocument {
        guard let thumbnail else { return ["imageId": .string(original.hex), "thumbnailId": .document(["$exists": true])] }
        // Ids are lowercase hex, so text order is id order; a link that is not text (none, null,
        // something the app wrote) is replaced as well.
        return ["imageId": .string(original.hex), "$or": .array([
            .document(["thumbnailId": .document(["$not": .document(["$type": "string"])])]),
            .document(["thumbnailId": .document(["$lt": .string(thumbnail.hex)])]),
        ])]
    }

    /// Whether any place links to `thumbnail`: a thumbnail run deletes an old one only when none
    /// does (after its relink, none should; another run's link says otherwise).
    public func thumbnailInUse(_ thumbnail: ObjectId) throws(StoreError) -> Bool {
        try locations.count(["thumbnailId": .string(thumbnail.hex)]) > 0
    }

    static func thumbnailUpdate(_ thumbnail: ObjectId?, updatedAt: BSONDate) -> BSONDocument {
        if let thumbnail {
            return ["$set": .document(["thumbnailId": .string(thumbnail.hex), "updated_at": .date(updatedAt)])]
        }
        return ["$unset": .document(["thumbnailId": ""]), "$set": .document(["updated_at": .date(updatedAt)])]
    }

    /// Each `thumbnailId` places link to, with the `imageId` of (one of) those places: what
    /// `poi thumbnails` checks for links to thumbnails that are gone. Streamed; one entry per
    /// distinct thumbnail.
    public func thumbnailLinks() throws(StoreError) -> [ObjectId: ObjectId] {
        var links: [ObjectId: ObjectId] = [:]
        let cursor = try locations.find(["thumbnailId": .document(["$type": "string"])],
                                        projection: ["_id": 0, "imageId": 1, "thumbnailId": 1], batchSize: 10_000)
        while let d = try cursor.next() {
            guard let thumb = d["thumbnailId"]?.stringValue.flatMap(ObjectId.init(hex:)), links[thumb] == nil,
                  let image = d["imageId"]?.stringValue.flatMap(ObjectId.init(hex:)) else { continue }
            links[thumb] = image
        }
        return links
    }

    /// Points the places linking to `thumbnail` (a thumbnail that is gone) at `replacement`, or
    /// removes their link when there is none (the next thumbnail run makes one). Returns how many.
    @discardableResult
    public func replaceThumbnailLink(_ thumbnail: ObjectId, with replacement: ObjectId?,
                                     updatedAt: BSONDate = .now()) throws(StoreError) -> Int {
        try locations.updateMany(filter: ["thumbnailId": .string(thumbnail.hex)],
                                 update: Self.thumbnailUpdate(replacement, updatedAt: updatedAt))
    }

    /// Deletes the thumbnails of `original` other than the newest that no place links to, as
    /// read now: what overlapping thumbnail runs, or two imports storing the same new photo, each
    /// made. Whichever run comes last leaves only the newest (which relinks point at). Returns
    /// how many it deleted.
    public func deleteUnusedThumbnails(of original: ObjectId, in store: any FileStore) throws(StoreError) -> Int {
        let current = try store.thumbnails(of: original).map(\.id)
        guard let newest = current.max() else { return 0 }
        var deleted = 0
        for id in current where id != newest {
            if try thumbnailInUse(id) { continue }
            if try store.delete(id) { deleted += 1 }
        }
        return deleted
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
