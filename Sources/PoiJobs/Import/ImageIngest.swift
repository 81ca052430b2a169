import Foundation
import PoiFiles
import PoiImaging
import PoiStore

/// A stored file as the jobs need it.
public struct StoredFileRef: Sendable, Hashable {
    public var id: ObjectId
    public var spec: String?
    /// The thumbnail's content type when known (a PNG made with another quality is up to date).
    public var contentType: String?
    public init(id: ObjectId, spec: String? = nil, contentType: String? = nil) {
        self.id = id
        self.spec = spec
        self.contentType = contentType
    }
}

/// A stored original as the import needs it: its id and the thumbnails made of it, oldest first.
public struct StoredImage: Sendable, Hashable {
    public var id: ObjectId
    public var thumbnails: [StoredFileRef]
    /// Set when the `files` document is there but its bytes are not in the store this run
    /// uses (the name they would have): reported as missing, not as reused.
    public var missingBytes: String?
    public init(id: ObjectId, thumbnails: [StoredFileRef] = [], missingBytes: String? = nil) {
        self.id = id
        self.thumbnails = thumbnails
        self.missingBytes = missingBytes
    }
}

/// The original `storeOriginal` stored, or found stored by another run at that moment.
public struct StoredOriginal: Sendable, Equatable {
    public var id: ObjectId
    public var isNew: Bool
    public init(id: ObjectId, isNew: Bool = true) {
        self.id = id
        self.isNew = isNew
    }
}

/// What the import needs from the byte store + `files` collection. `FilesRepository` implements
/// it over PoiStore; the dry run uses `DryRunImages`.
public protocol ImageRepository: Sendable {
    /// The stored original with this content (hex SHA-256) and its thumbnails; nil when new.
    func findOriginal(sha256: String) throws(StoreError) -> StoredImage?
    /// Stores the original bytes unchanged (content `findOriginal` just did not find); returns
    /// the new `files` id, or, when another import stored the same content meanwhile, that
    /// original's id with `isNew` false.
    func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws(StoreError) -> StoredOriginal
    /// Stores a new thumbnail of `original` (never one shared with another original).
    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws(StoreError) -> ObjectId
    /// Which of `ids` are stored files: an export's `imageId` that came without the image.
    func storedIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId>
    /// Makes the store ready for the first image (`FileStore.prepare`), after the inputs are checked.
    func prepare() throws(StoreError)
    /// The thumbnails of each of `originals` that has any.
    func thumbnailIds(of originals: [ObjectId]) throws(StoreError) -> [ObjectId: [ObjectId]]
    /// Deletes the thumbnails of `original` other than the newest that no place links to (what
    /// two imports storing the same new photo at once each made); returns how many.
    func deleteUnusedThumbnails(of original: ObjectId) throws(StoreError) -> Int
}

extension ImageRepository {
    public func prepare() throws(StoreError) {}
    /// The thumbnails of each of `originals` that has any (none: nothing to relink).
    public func thumbnailIds(of originals: [ObjectId]) throws(StoreError) -> [ObjectId: [ObjectId]] { [:] }
    public func deleteUnusedThumbnails(of original: ObjectId) throws(StoreError) -> Int { 0 }
}

/// Result of ingesting one distinct image.
enum IngestOutcome: Sendable {
    /// `missingBytes`: an original found by content whose bytes are not in the store (its file name).
    /// `colorWarning`: a new original's ICC profile was not used (`ImageInfo.colorWarning`).
    case stored(PlaceDocument.ImageLinks, newOriginal: Bool, newThumbnail: Bool, missingBytes: String? = nil,
                colorWarning: String? = nil)
    case failed(reason: String)
    /// The store failed (database or disk): the job must stop, not skip the image.
    case storeFailure(StoreError)
}

/// Turns image files into stored originals + thumbnails, at most once per distinct content.
struct ImageIngest: Sendable {
    let repository: any ImageRepository
    /// Shared by the job's workers: their decodes together stay within its bytes.
    let budget: ThumbnailBudget
    let spec: ThumbnailSpec
    /// The user chose the recipe (`--size` etc.): stored thumbnails made otherwise are replaced.
    let specIsExplicit: Bool
    let decode: DecodeOptions
    let maxFileBytes: Int

    /// Reads a file whole, refusing anything over `maxFileBytes` before reading it.
    func read(path: String) -> Result<[UInt8], ImageFileError> {
        do { return .success(try WholeFile.read(path, limit: maxFileBytes)) } catch {
            return .failure(ImageFileError(reason: error.reason))
        }
    }

    /// Stores `bytes` (already hashed) unless the same content is stored, then makes sure a
    /// thumbnail with this spec exists. Order: thumbnail made (proves the image decodes) →
    /// original stored → thumbnail stored, so a crash leaves at worst an original without its
    /// thumbnail, which the next run completes.
    func ingest(bytes: [UInt8], sha256: String, name: String) -> IngestOutcome {
        let canonical = spec.canonical
        do throws(StoreError) {
            if let original = try repository.findOriginal(sha256: sha256) {
                // Without an explicit recipe, whatever `poi thumbnails` made last is kept: otherwise
                // every import would put the default size back and the next regeneration undo it.
                let thumb = original.thumbnails.last { spec.isMet(bySpec: $0.spec, contentType: $0.contentType) }
                    ?? (specIsExplicit ? nil : original.thumbnails.last)
                let missing = original.missingBytes
                if let thumb {
                    return .stored(.init(imageId: original.id, thumbnailId: thumb.id), newOriginal: false, newThumbnail: false,
                                   missingBytes: missing)
                }
                let thumbnail: Thumbnail
                do { thumbnail = try budget.make(from: bytes, spec: spec, options: decode) } catch {
                    return .stored(.init(imageId: original.id, thumbnailId: nil), newOriginal: false, newThumbnail: false,
                                   missingBytes: missing)
                }
                let thumbId = try repository.storeThumbnail(thumbnail, of: original.id, spec: canonical)
                return .stored(.init(imageId: original.id, thumbnailId: thumbId), newOriginal: false, newThumbnail: true,
                               missingBytes: missing)
            }
            let thumbnail: Thumbnail
            do { thumbnail = try budget.make(from: bytes, spec: spec, options: decode) } catch {
                return .failed(reason: error.description)
            }
            let stored = try repository.storeOriginal(bytes: bytes, info: thumbnail.source, sha256: sha256, originalName: name)
            // Another import stored this content since the lookup: linked as found (its
            // thumbnail of this recipe, or one made for it), not counted as stored by this run.
            guard stored.isNew else { return ingest(bytes: bytes, sha256: sha256, name: name) }
            let originalId = stored.id
            let thumbId = try repository.storeThumbnail(thumbnail, of: originalId, spec: canonical)
            return .stored(.init(imageId: originalId, thumbnailId: thumbId), newOriginal: true, newThumbnail: true,
                           colorWarning: thumbnail.source.colorWarning)
        } catch {
            return .storeFailure(error)
        }
    }
}

struct ImageFileError: Error, Sendable {
    var reason: String
}

/// The dry run's stand-in: nothing is stored, every image counts as new, and an image an export
/// names by id counts as there (without a database nothing can say otherwise).
struct DryRunImages: ImageRepository {
    func storedIds(_ ids: [ObjectId]) -> Set<ObjectId> { Set(ids) }
    func findOriginal(sha256: String) -> StoredImage? { nil }
    func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) -> StoredOriginal {
        StoredOriginal(id: ObjectId())
    }
    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) -> ObjectId { ObjectId() }
}
