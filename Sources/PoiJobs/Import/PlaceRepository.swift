import PoiStore

/// What the import needs from `locations`. `LocationsRepository` implements it over PoiStore; the
/// items and outcomes are PoiStore's own (`UpsertItem`, `UpsertOutcome`), keyed by `importKey`.
public protocol PlaceRepository: Sendable {
    /// Makes sure what keeps reruns safe is in place before the first write: the unique
    /// `importKey` index turns a second insert of a key into an update, never a duplicate.
    /// `ImportJob` calls it itself, so a library caller gets the guarantee too.
    func prepare() throws(StoreError)
    /// Upserts by `importKey`; returns one outcome per item, in the items' order. Throws only
    /// when the batch as a whole could not be written (server gone, not authorised, …).
    func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome]
    /// Points every place showing `imageId` at a new thumbnail (a recipe given explicitly).
    func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError)
}
