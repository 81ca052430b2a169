import PoiStore

/// One place to write: its key, the fields to `$set` and the optional fields to `$unset`.
public struct PlaceWrite: Sendable {
    public var importKey: String
    public var set: BSONDocument
    public var unset: [String]
    /// Written with the place, not part of "did it change" (see `PlaceDocument.fields`).
    public var untracked: BSONDocument
    public init(importKey: String, set: BSONDocument, unset: [String], untracked: BSONDocument = BSONDocument()) {
        self.importKey = importKey
        self.set = set
        self.unset = unset
        self.untracked = untracked
    }
}

public enum PlaceWriteOutcome: Sendable, Equatable {
    case inserted
    case updated
    case unchanged
    /// The server refused this one document (too large, invalid, duplicate key…); the others landed.
    case failed(reason: String)
}

/// What the import needs from `locations`. `LocationsRepository` implements it over PoiStore.
public protocol PlaceRepository: Sendable {
    /// Upserts by `importKey`; returns one outcome per item, in the items' order. Throws only
    /// when the batch as a whole could not be written (server gone, not authorised, …).
    func upsert(_ items: [PlaceWrite]) throws -> [PlaceWriteOutcome]
    /// Points every place showing `imageId` at a new thumbnail (a recipe given explicitly).
    func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws
}
