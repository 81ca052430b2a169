import Foundation
import PoiStore

#if canImport(Glibc)
import Glibc
#endif

public struct GCOptions: Sendable {
    /// Remove what was found (otherwise only report).
    public var delete = false
    /// Only delete items at least this old (by the creation time in their ObjectId). An import
    /// stores bytes, then the `files` document, and only then the place that references them;
    /// a gc running beside it would otherwise see those fresh items as garbage and delete a file
    /// a place is about to reference. An hour by default, so a nightly `gc --delete` next to a
    /// nightly import is safe without thinking about it; 0 when nothing else writes.
    public var minimumAge: TimeInterval = 3600
    /// The clock, so tests can age items.
    public var now = Date()

    public init() {}
}

/// Everything `poi gc` found, by kind. Each list is sorted; every id is 24 hex digits. The kinds
/// are disjoint: an item appears once, under its most specific kind.
public struct GCReport: Sendable, Codable, Equatable {
    /// Stored bytes that no `files` document describes (file names, or GridFS ids).
    public var bytesWithoutDocument: [String] = []
    /// `files` documents whose bytes are missing.
    public var documentsWithoutBytes: [String] = []
    /// Thumbnail documents whose original (`thumbnailOf`) has no `files` document.
    public var thumbnailsWithoutOriginal: [String] = []
    /// Originals no place shows, and thumbnails no place shows whose original no place shows.
    public var unreferencedFiles: [String] = []
    /// Temporary files a crashed write left behind.
    public var staleTemporaryFiles: [String] = []
    /// Ids that places reference (`imageId`/`thumbnailId`) but that have no `files` document.
    /// gc cannot repair these (rerun the import); they are reported, never deleted.
    public var danglingReferences: [String] = []

    /// With --delete: how many items were removed.
    public var deleted = 0
    /// Items found but deliberately left: a place references them, their name is not one
    /// PoiKit writes, or they are younger than the minimum age.
    public var kept: [String] = []

    public var problems: Int {
        bytesWithoutDocument.count + documentsWithoutBytes.count + thumbnailsWithoutOriginal.count
            + unreferencedFiles.count + staleTemporaryFiles.count + danglingReferences.count
    }

    public var isEmpty: Bool { problems == 0 }

    public init() {}
}

/// `poi gc`: finds what is inconsistent between the `files` collection, the stored bytes and the
/// places in `locations`, and optionally removes it.
///
/// What counts as garbage is chosen so that a gc right after a completed import or thumbnail run
/// finds nothing: an original is in use when a place's `imageId` names it; a thumbnail is in use
/// when a place's `thumbnailId` names it, or when its original is in use (a thumbnail made for an
/// image is kept as long as the image is shown, even if no place links it yet, e.g. after a
/// thumbnails run that stopped between storing it and relinking).
///
/// Deletion never touches a file a place references, and deletes a `files` document before its
/// bytes (the FileStore order), so a crash during gc leaves at worst bytes without a document,
/// which the next gc finds.
public struct GarbageCollector {
    private let database: MongoDatabase
    private let store: any FileStore

    public init(database: MongoDatabase, store: any FileStore) {
        self.database = database
        self.store = store
    }

    private struct FileEntry {
        var role: FileRole?
        var thumbnailOf: ObjectId?
    }

    public func run(options: GCOptions = GCOptions()) throws(JobError) -> GCReport {
        do {
            return try collect(options: options)
        } catch {
            throw JobError.from(store: error)
        }
    }

    /// Asked again right before each delete: an import running meanwhile may have just linked a
    /// place to an old original it found by content, after the references were first read.
    private func referencedNow(_ id: ObjectId) throws(StoreError) -> Bool {
        try database.locations.findOne(["$or": [.document(["imageId": .string(id.hex)]),
                                                .document(["thumbnailId": .string(id.hex)])]],
                                       projection: ["_id": 1]) != nil
    }

    private func collect(options: GCOptions) throws(StoreError) -> GCReport {
        // Read the places first and the files after: an import running meanwhile only adds
        // files and then places, so a file it adds between the two reads looks unreferenced
        // (and is protected by the minimum age) rather than a referenced file looking missing.
        let referenced = try database.referencedFileIds()
        var files: [ObjectId: FileEntry] = [:]
        let cursor = try store.files()
        while let f = try cursor.next() { files[f.id] = FileEntry(role: f.role, thumbnailOf: f.thumbnailOf) }
        let orphans = try store.orphans()

        var report = GCReport()
        var classified = Set<ObjectId>()
        report.bytesWithoutDocument = orphans.bytesWithoutDocument
        report.staleTemporaryFiles = orphans.staleTemporaryFiles
        report.documentsWithoutBytes = orphans.documentsWithoutBytes.map(\.hex)
        classified.formUnion(orphans.documentsWithoutBytes)
        report.danglingReferences = referenced.filter { files[$0] == nil }.sorted().map(\.hex)

        // An original is in use when a place shows it; documents without a role (written by the
        // backend itself, e.g. user uploads) count as originals.
        func inUse(_ id: ObjectId) -> Bool { referenced.contains(id) }
        for (id, entry) in files.sorted(by: { $0.key < $1.key }) where !classified.contains(id) {
            if entry.role == .thumbnail {
                guard let original = entry.thumbnailOf, files[original] != nil else {
                    report.thumbnailsWithoutOriginal.append(id.hex)
                    continue
                }
                if !inUse(id) && !inUse(original) { report.unreferencedFiles.append(id.hex) }
            } else if !inUse(id) {
                report.unreferencedFiles.append(id.hex)
            }
        }

        guard options.delete else { return report }

        func oldEnough(_ id: ObjectId?) -> Bool {
            guard options.minimumAge > 0 else { return true }
            guard let id else { return false }
            return options.now.timeIntervalSince(Self.creationTime(of: id)) >= options.minimumAge
        }

        // Documents first (each `delete` removes the document, then its bytes).
        for hex in report.documentsWithoutBytes + report.thumbnailsWithoutOriginal + report.unreferencedFiles {
            guard let id = ObjectId(hex: hex) else { continue }
            let linked = inUse(id) ? true : try referencedNow(id)
            if linked {
                report.kept.append("\(hex): a place references it")
            } else if !oldEnough(id) {
                report.kept.append("\(hex): younger than the minimum age")
            } else if try store.delete(id) {
                report.deleted += 1
            }
        }
        // Then bytes no document describes; only names PoiKit or the backend write
        // (`<24 hex><ext>`): anything else in the folder is someone else's.
        for name in report.bytesWithoutDocument {
            guard let id = ObjectId(hex: String(name.prefix(24))) else {
                report.kept.append("\(name): not a file name PoiKit writes")
                continue
            }
            if inUse(id) {
                report.kept.append("\(name): a place references it")
            } else if !oldEnough(id) {
                report.kept.append("\(name): younger than the minimum age")
            } else if try store.removeBytes(id: id, ext: String(name.dropFirst(24))) {
                report.deleted += 1
            }
        }
        // Temporary files: `.<24 hex><ext>.tmp-<random>` in the uploads folder.
        if let disk = store as? DiskUploads {
            for name in report.staleTemporaryFiles {
                let id = ObjectId(hex: String(name.dropFirst().prefix(24)))
                guard oldEnough(id) else {
                    report.kept.append("\(name): younger than the minimum age")
                    continue
                }
                let path = disk.directory + "/" + name
                if unlink(path) == 0 || errno == ENOENT {
                    report.deleted += 1
                } else {
                    throw StoreError.io(path: path, reason: "cannot delete: \(String(cString: strerror(errno)))")
                }
            }
        }
        return report
    }

    /// When an ObjectId was made: its first four bytes are seconds since 1970, big-endian.
    static func creationTime(of id: ObjectId) -> Date {
        let b = id.bytes
        let seconds = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
