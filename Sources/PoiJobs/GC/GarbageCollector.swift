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
    /// Also read every stored file whole and compare its SHA-256 with the document's `sha256`
    /// (sizes and GridFS chunk counts are always compared).
    public var verify = false
    /// How much one delete may remove. A delete is only as right as the uploads folder and the
    /// database it is pointed at: if two databases share a folder (or the folder is another
    /// database's), every file of the other looks like bytes without a document. Such a
    /// mistake shows as a large share of what is stored, so beyond this limit nothing is
    /// deleted and the report says why (`GCReport.refused`).
    public var deleteLimit = GCDeleteLimit.standard

    public init() {}
}

/// The most one delete may remove, counted in stored items (`files` documents and stored bytes
/// no document describes; temporary files are not counted). Items kept for being referenced,
/// young or not PoiKit's are not counted either: they would not be deleted.
public enum GCDeleteLimit: Sendable, Equatable {
    /// At most `percent` % of the stored items, and always at least `minimum` items, so a small
    /// database's few leftovers go without confirmation.
    case share(percent: Int, minimum: Int)
    /// At most this many items.
    case items(Int)
    /// No limit.
    case unlimited

    /// 10 % of what is stored, at least 10: an interrupted import leaves at most a window of
    /// images behind, while a wrong or shared folder shows as about half or more.
    public static let standard = GCDeleteLimit.share(percent: 10, minimum: 10)

    /// How many of `stored` items a delete may remove.
    public func allowance(stored: Int) -> Int {
        switch self {
        case .share(let percent, let minimum): return max(minimum, stored * percent / 100)
        case .items(let n): return n
        case .unlimited: return Int.max
        }
    }
}

/// Why a delete removed nothing: it would have removed more than the limit allows.
public struct GCRefusal: Sendable, Codable, Equatable {
    /// Items the delete would have removed (temporary files aside).
    public var wouldDelete: Int
    /// Items stored: `files` documents plus stored bytes no document describes.
    public var stored: Int
    /// What the limit allowed for this many stored items.
    public var allowed: Int
    /// Of `wouldDelete`, stored bytes no document describes: when they are most of it, the
    /// uploads folder is likely not (only) this database's.
    public var bytesWithoutDocument: Int

    /// `wouldDelete` as a whole percentage of `stored`.
    public var percent: Int { stored == 0 ? 0 : Int((Double(wouldDelete) * 100 / Double(stored)).rounded()) }

    public init(wouldDelete: Int, stored: Int, allowed: Int, bytesWithoutDocument: Int) {
        self.wouldDelete = wouldDelete
        self.stored = stored
        self.allowed = allowed
        self.bytesWithoutDocument = bytesWithoutDocument
    }
}

/// A `files` document whose bytes are there but damaged, with the places that show it.
public struct GCDamagedFile: Sendable, Codable, Equatable {
    /// The `files` id (24 hex digits).
    public var id: String
    /// The name the backend serves it under (`<id><ext>`).
    public var file: String
    /// `original` or `thumbnail` (`original` for documents without a role).
    public var role: String
    /// What is wrong: "5000 of 1593742 bytes", "0 of 3 chunks", "content does not match its sha256", …
    public var problem: String
    /// `importKey` (or `_id` hex) of every place whose `imageId` or `thumbnailId` is this file, sorted.
    public var places: [String]

    public init(id: String, file: String, role: String, problem: String, places: [String]) {
        self.id = id
        self.file = file
        self.role = role
        self.problem = problem
        self.places = places
    }
}

/// Everything `poi gc` found, by kind. Each list is sorted; every id is 24 hex digits. The kinds
/// are disjoint: an item appears once, under its most specific kind.
public struct GCReport: Sendable, Codable, Equatable {
    /// Stored bytes that no `files` document describes (file names, or GridFS ids).
    public var bytesWithoutDocument: [String] = []
    /// `files` documents whose bytes are missing.
    public var documentsWithoutBytes: [String] = []
    /// `files` documents whose bytes are there but damaged (another size than `length`, GridFS
    /// chunks missing, with `verify` content that does not match `sha256`). Never deleted: a
    /// damaged original is all there is of that photo until it is restored or imported again.
    public var damagedBytes: [GCDamagedFile] = []
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
    /// With --delete: set when the delete was refused for removing more than
    /// `GCOptions.deleteLimit` allows; nothing was deleted then.
    public var refused: GCRefusal?

    public var problems: Int {
        bytesWithoutDocument.count + documentsWithoutBytes.count + damagedBytes.count + thumbnailsWithoutOriginal.count
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
        var reusedAt: BSONDate?
    }

    public func run(options: GCOptions = GCOptions()) throws(JobError) -> GCReport {
        // Retried as a whole within --retry-for (a dropped connection, an election): each pass
        // reads the places and files afresh and deletes only what is unreferenced then, so a
        // second pass after a partial one deletes the rest, never something in use; what the
        // failed passes deleted is counted with the last one's.
        var retries = 0
        var deletedBefore = 0
        do {
            var report = try database.connection.retrying(retries: &retries) { () throws(StoreError) -> GCReport in
                var deleted = 0
                do throws(StoreError) {
                    return try collect(options: options, deleted: &deleted)
                } catch {
                    deletedBefore += deleted
                    throw error
                }
            }
            report.deleted += deletedBefore
            return report
        } catch {
            throw .store(error)
        }
    }

    /// Asked again right before each delete: an import running meanwhile may have just linked a
    /// place to an old original it found by content, after the references were first read.
    private func referencedNow(_ id: ObjectId) throws(StoreError) -> Bool {
        try database.locations.findOne(["$or": [.document(["imageId": .string(id.hex)]),
                                                .document(["thumbnailId": .string(id.hex)])]],
                                       projection: ["_id": 1]) != nil
    }

    /// Asked again right before each delete, as `referencedNow`: an import that started after
    /// the files were read may have just found this file (or a thumbnail's original) by content.
    private func reusedNow(_ id: ObjectId, minimumAge: TimeInterval, now: Date) throws(StoreError) -> Bool {
        guard let file = try store.file(id) else { return false }
        var reused = file.reusedAt
        if let original = file.thumbnailOf, let at = try store.file(original)?.reusedAt { reused = max(reused ?? at, at) }
        guard let reused else { return false }
        return now.timeIntervalSince(reused.date) < minimumAge
    }

    /// The places whose `imageId` or `thumbnailId` is one of `ids`, by id: `importKey`, or the
    /// `_id` hex of a place the app made itself.
    private func placesUsing(_ ids: [ObjectId]) throws(StoreError) -> [ObjectId: [String]] {
        guard !ids.isEmpty else { return [:] }
        let hexes = BSONValue.array(ids.map { .string($0.hex) })
        let wanted = Set(ids)
        var users: [ObjectId: [String]] = [:]
        let cursor = try database.locations.find(["$or": [.document(["imageId": .document(["$in": hexes])]),
                                                          .document(["thumbnailId": .document(["$in": hexes])])]],
                                                 projection: ["_id": 1, "importKey": 1, "imageId": 1, "thumbnailId": 1],
                                                 batchSize: 1000)
        while let d = try cursor.next() {
            let name = d["importKey"]?.stringValue ?? d["_id"]?.objectIdValue?.hex ?? "?"
            var mine = Set<ObjectId>()
            for field in ["imageId", "thumbnailId"] {
                if let hex = d[field]?.stringValue, let id = ObjectId(hex: hex), wanted.contains(id) { mine.insert(id) }
            }
            for id in mine { users[id, default: []].append(name) }
        }
        return users
    }

    /// One pass; `deleted` counts its deletions as they happen (kept when the pass fails midway).
    private func collect(options: GCOptions, deleted: inout Int) throws(StoreError) -> GCReport {
        // Read the places first and the files after: an import running meanwhile only adds
        // files and then places, so a file it adds between the two reads looks unreferenced
        // (and is protected by the minimum age) rather than a referenced file looking missing.
        let referenced = try database.referencedFileIds()
        var files: [ObjectId: FileEntry] = [:]
        let cursor = try store.files()
        while let f = try cursor.next() { files[f.id] = FileEntry(role: f.role, thumbnailOf: f.thumbnailOf, reusedAt: f.reusedAt) }
        let orphans = try store.orphans(verify: options.verify)

        var report = GCReport()
        var classified = Set<ObjectId>()
        report.bytesWithoutDocument = orphans.bytesWithoutDocument
        report.staleTemporaryFiles = orphans.staleTemporaryFiles
        report.documentsWithoutBytes = orphans.documentsWithoutBytes.map(\.hex)
        classified.formUnion(orphans.documentsWithoutBytes)
        // Damaged bytes are their own kind, whatever else is true of them: never deleted, and
        // named with the places that show them.
        classified.formUnion(orphans.damaged.map(\.id))
        let users = try placesUsing(orphans.damaged.map(\.id))
        report.damagedBytes = orphans.damaged.map { d in
            GCDamagedFile(id: d.id.hex, file: d.fileName, role: (files[d.id]?.role ?? .original).rawValue,
                          problem: d.reason, places: users[d.id, default: []].sorted())
        }
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
        // A file an import found by content lately (its original's, for a thumbnail): that
        // import may be about to link places to it (`StoredFile.reusedAt`).
        func reusedLately(_ id: ObjectId) -> Bool {
            let entry = files[id]
            let reused = [entry?.reusedAt, entry?.thumbnailOf.flatMap { files[$0]?.reusedAt }].compactMap { $0 }.max()
            guard let reused else { return false }
            return options.now.timeIntervalSince(reused.date) < options.minimumAge
        }

        // First what would go, so that the limit is checked before anything is deleted: a
        // refused delete deletes nothing, rather than the first `allowed` items of a mistake.
        var documents: [ObjectId] = [], bytes: [(id: ObjectId, name: String)] = [], temporary: [String] = []
        for hex in report.documentsWithoutBytes + report.thumbnailsWithoutOriginal + report.unreferencedFiles {
            guard let id = ObjectId(hex: hex) else { continue }
            if inUse(id) {
                report.kept.append("\(hex): a place references it")
            } else if !oldEnough(id) {
                report.kept.append("\(hex): younger than the minimum age")
            } else if reusedLately(id) {
                report.kept.append("\(hex): an import found it by its content lately")
            } else {
                documents.append(id)
            }
        }
        // Bytes no document describes: only names PoiKit or the backend write (`<24 hex><ext>`):
        // anything else in the folder is someone else's.
        for name in report.bytesWithoutDocument {
            guard let id = ObjectId(hex: String(name.prefix(24))) else {
                report.kept.append("\(name): not a file name PoiKit writes")
                continue
            }
            if inUse(id) {
                report.kept.append("\(name): a place references it")
            } else if !oldEnough(id) {
                report.kept.append("\(name): younger than the minimum age")
            } else {
                bytes.append((id, name))
            }
        }
        // A folder shared with another database (or an `--uploads` given by mistake): that
        // database's files are bytes without a document here. Never delete what another
        // database on the same server describes, however few there are.
        if !bytes.isEmpty {
            let elsewhere = database.filesDescribedElsewhere(bytes.map(\.id))
            if !elsewhere.isEmpty {
                for (id, name) in bytes where elsewhere[id] != nil {
                    report.kept.append("\(name): a file of database \(elsewhere[id]!) (is the uploads folder shared?)")
                }
                bytes.removeAll { elsewhere[$0.id] != nil }
            }
        }
        // Temporary files: `.<24 hex><ext>.tmp-<random>` in the uploads folder.
        let disk = store as? DiskUploads
        if disk != nil {
            for name in report.staleTemporaryFiles {
                if oldEnough(ObjectId(hex: String(name.dropFirst().prefix(24)))) {
                    temporary.append(name)
                } else {
                    report.kept.append("\(name): younger than the minimum age")
                }
            }
        }

        let wouldDelete = documents.count + bytes.count
        let stored = files.count + report.bytesWithoutDocument.count
        let allowed = options.deleteLimit.allowance(stored: stored)
        if wouldDelete > allowed {
            report.refused = GCRefusal(wouldDelete: wouldDelete, stored: stored, allowed: allowed,
                                       bytesWithoutDocument: bytes.count)
            return report
        }

        // Documents first (each `delete` removes the document, then its bytes).
        for id in documents {
            if try referencedNow(id) {
                report.kept.append("\(id.hex): a place references it")
            } else if options.minimumAge > 0, try reusedNow(id, minimumAge: options.minimumAge, now: options.now) {
                report.kept.append("\(id.hex): an import found it by its content lately")
            } else if options.minimumAge > 0 {
                // Asked again in the delete itself: an import may mark it between the two.
                let cutoff = BSONDate(options.now.addingTimeInterval(-options.minimumAge))
                if try store.delete(id, unlessReusedSince: cutoff) {
                    report.deleted += 1
                    deleted += 1
                } else if try store.file(id) != nil {
                    report.kept.append("\(id.hex): an import found it by its content lately")
                }
            } else if try store.delete(id) {
                report.deleted += 1
                deleted += 1
            }
        }
        for (id, name) in bytes {
            if try store.removeBytes(id: id, ext: String(name.dropFirst(24))) { report.deleted += 1; deleted += 1 }
        }
        if let disk {
            for name in temporary {
                let path = disk.directory + "/" + name
                if unlink(path) == 0 || errno == ENOENT {
                    report.deleted += 1
                    deleted += 1
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
