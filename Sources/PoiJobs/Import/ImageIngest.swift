import Crypto
import Foundation
import PoiImaging
import PoiStore

/// A stored file as the jobs need it.
public struct StoredFileRef: Sendable, Hashable {
    public var id: ObjectId
    public var spec: String?
    public init(id: ObjectId, spec: String? = nil) {
        self.id = id
        self.spec = spec
    }
}

/// What the import needs from the byte store + `files` collection. `FilesRepository` implements
/// it over PoiStore; the dry run uses `DryRunImages`.
public protocol ImageRepository: Sendable {
    func findOriginal(sha256: String) throws -> StoredFileRef?
    func findThumbnail(of original: ObjectId, spec: String) throws -> StoredFileRef?
    /// The most recently made thumbnail of `original`, whatever its recipe.
    func findNewestThumbnail(of original: ObjectId) throws -> StoredFileRef?
    /// Stores the original bytes unchanged; returns the new `files` id.
    func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws -> ObjectId
    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws -> ObjectId
}

/// Result of ingesting one distinct image.
enum IngestOutcome: Sendable {
    case stored(PlaceDocument.ImageLinks, newOriginal: Bool, newThumbnail: Bool)
    case failed(reason: String)
    /// The store failed (database or disk): the job must stop, not skip the image.
    case storeFailure(any Error)
}

/// Turns image files into stored originals + thumbnails, at most once per distinct content.
struct ImageIngest: Sendable {
    let repository: any ImageRepository
    /// Shared by the job's workers: big images are thumbnailed one at a time.
    let gate: ThumbnailGate
    let spec: ThumbnailSpec
    /// The user chose the recipe (`--size` etc.): stored thumbnails made otherwise are replaced.
    let specIsExplicit: Bool
    let decode: DecodeOptions
    let maxFileBytes: Int

    /// Reads a file whole, refusing anything over `maxFileBytes` before reading it.
    func read(path: String) -> Result<[UInt8], ImageFileError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ImageFileError(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(ImageFileError(reason: String(cString: strerror(errno)))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(ImageFileError(reason: "not a regular file")) }
        let size = Int(st.st_size)
        guard size <= maxFileBytes else {
            return .failure(ImageFileError(reason: "file is \(size) bytes, over the \(maxFileBytes)-byte limit"))
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, size - offset, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        if offset < size { bytes.removeSubrange(offset...) }  // shrank while we read
        return .success(bytes)
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Stores `bytes` (already hashed) unless the same content is stored, then makes sure a
    /// thumbnail with this spec exists. Order: thumbnail made (proves the image decodes) →
    /// original stored → thumbnail stored, so a crash leaves at worst an original without its
    /// thumbnail, which the next run completes.
    func ingest(bytes: [UInt8], sha256: String, name: String) -> IngestOutcome {
        let canonical = spec.canonical
        do {
            if let original = try repository.findOriginal(sha256: sha256) {
                // Without an explicit recipe, whatever `poi thumbnails` made last is kept: otherwise
                // every import would put the default size back and the next regeneration undo it.
                let thumb = try repository.findThumbnail(of: original.id, spec: canonical)
                    ?? (specIsExplicit ? nil : try repository.findNewestThumbnail(of: original.id))
                if let thumb {
                    return .stored(.init(imageId: original.id, thumbnailId: thumb.id), newOriginal: false, newThumbnail: false)
                }
                let thumbnail: Thumbnail
                do { thumbnail = try gate.make(from: bytes, spec: spec, options: decode) } catch {
                    return .stored(.init(imageId: original.id, thumbnailId: nil), newOriginal: false, newThumbnail: false)
                }
                let thumbId = try repository.storeThumbnail(thumbnail, of: original.id, spec: canonical)
                return .stored(.init(imageId: original.id, thumbnailId: thumbId), newOriginal: false, newThumbnail: true)
            }
            let thumbnail: Thumbnail
            do { thumbnail = try gate.make(from: bytes, spec: spec, options: decode) } catch {
                return .failed(reason: error.description)
            }
            let originalId = try repository.storeOriginal(bytes: bytes, info: thumbnail.source, sha256: sha256, originalName: name)
            let thumbId = try repository.storeThumbnail(thumbnail, of: originalId, spec: canonical)
            return .stored(.init(imageId: originalId, thumbnailId: thumbId), newOriginal: true, newThumbnail: true)
        } catch {
            return .storeFailure(error)
        }
    }
}

struct ImageFileError: Error, Sendable {
    var reason: String
}

/// The dry run's stand-in: nothing is stored, every image counts as new.
struct DryRunImages: ImageRepository {
    func findOriginal(sha256: String) throws -> StoredFileRef? { nil }
    func findThumbnail(of original: ObjectId, spec: String) throws -> StoredFileRef? { nil }
    func findNewestThumbnail(of original: ObjectId) throws -> StoredFileRef? { nil }
    func storeOriginal(bytes: [UInt8], info: ImageInfo, sha256: String, originalName: String) throws -> ObjectId { ObjectId() }
    func storeThumbnail(_ thumbnail: Thumbnail, of original: ObjectId, spec: String) throws -> ObjectId { ObjectId() }
}
