import Foundation
import PoiFiles

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The backend's own layout: bytes at `<uploads>/<_id hex><ext>`, served by `GET /files/:id`.
///
/// A write goes through PoiFiles' `AtomicFile`: a temporary file in the same folder (same file
/// system, so the rename is atomic), fsynced, renamed into place, and the folder fsynced so the
/// new name survives a power cut; only then does `add` insert the `files` document. Readers (the backend) therefore
/// never see a partial file under a final name.
public struct DiskUploads: FileStore {
    public let database: MongoDatabase
    public let directory: String
    /// Test hook: runs after the temporary file is complete and before the rename. Throwing
    /// here behaves like a crash at that point (the temporary file is removed, as after a
    /// process death the next `orphans()` would report it).
    let beforeRename: (@Sendable () throws(StoreError) -> Void)?

    static let temporaryMarker = AtomicFile.temporaryMarker

    /// `creating`: a missing folder is made by `prepare()` (import, the server) when the database
    /// lists no files yet (`StoreError.uploadsFolderMissing` otherwise). Maintenance that only
    /// reads what is stored (gc, export, thumbnails) passes false: a mistyped `--uploads` is an
    /// error there, not an empty folder made on the spot that then looks "consistent".
    public init(database: MongoDatabase, directory: String, creating: Bool = true) throws(StoreError) {
        try self.init(database: database, directory: directory, creating: creating, beforeRename: nil)
    }

    init(database: MongoDatabase, directory: String, creating: Bool = true,
         beforeRename: (@Sendable () throws(StoreError) -> Void)?) throws(StoreError) {
        self.database = database
        self.directory = directory
        self.beforeRename = beforeRename
        // Foundation says "A file with the same name already exists" for a dangling symlink or a
        // file in the way: say what is there instead.
        var st = stat()
        if lstat(directory, &st) == 0 && stat(directory, &st) != 0 && errno == ENOENT {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory)) ?? "?"
            throw .io(path: directory, reason: "the uploads folder is a symbolic link to \(target), which does not exist")
        }
        if stat(directory, &st) == 0 && (st.st_mode & S_IFMT) != S_IFDIR {
            throw .io(path: directory, reason: "the uploads folder is not a folder")
        }
        if !creating && stat(directory, &st) != 0 {
            throw .uploadsFolderMissing(path: directory, filesListed: false)
        }
    }

    /// Creates a missing folder, for a new store only. With `files` documents listed, their
    /// bytes are in some other folder: a mistyped `--uploads` would store new images where the
    /// backend never looks, and serve a 404 for every stored one.
    public func prepare() throws(StoreError) {
        var st = stat()
        guard stat(directory, &st) != 0 else { return }
        if try database.collection(StoreLayout.files).findOne(BSONDocument(), projection: ["_id": 1]) != nil {
            throw .uploadsFolderMissing(path: directory, filesListed: true)
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .io(path: directory, reason: "cannot create the uploads folder: \(error.localizedDescription)")
        }
    }

    func path(_ name: String) -> String { directory + "/" + name }

    public func storeBytes(_ bytes: [UInt8], id: ObjectId, ext: String) throws(StoreError) {
        // Jobs call `prepare()` once their inputs are checked; a caller that did not gets the
        // same rule here, on the first store (a stat per image, beside an fsync).
        var st = stat()
        if stat(directory, &st) != 0 { try prepare() }
        let file: AtomicFile
        do { file = try AtomicFile(path: path(id.hex + ext), durability: .synced, removingStale: false) } catch { throw Self.ioError(error) }
        do throws(StoreError) {
            do throws(FileError) { try file.write(bytes) } catch { throw Self.ioError(error) }
            try beforeRename?()
            do throws(FileError) { try file.commit() } catch { throw Self.ioError(error) }
        } catch {
            file.abandon()
            throw error
        }
    }

    /// A hard link: one inode under a second name, so each `files` document keeps a name of its
    /// own (what the backend serves and what `DELETE` removes) while identical photos take their
    /// bytes once. Every writer here replaces a file by renaming a new one over it and never
    /// writes into a stored file, so a change to one name can never show under the other.
    /// False when the existing file is gone (deleted meanwhile), the folder's file system has no
    /// hard links, or its bytes are not `expected` (damaged or replaced by hand since).
    public func shareBytes(of existing: StoredFile, id: ObjectId, ext: String, expected: [UInt8]) throws(StoreError) -> Bool {
        let target = path(id.hex + ext)
        guard link(path(existing.fileName), target) == 0 else { return false }
        guard (try? WholeFile.read(target)) == expected else {
            unlink(target)
            return false
        }
        try syncDirectory()
        return true
    }

    /// fsync of the folder, so a name just made survives a power cut.
    func syncDirectory() throws(StoreError) {
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw Self.ioError(directory, "cannot open the folder to fsync it") }
        defer { close(dfd) }
        guard fsync(dfd) == 0 else { throw Self.ioError(directory, "cannot fsync the folder") }
    }

    public func loadBytes(id: ObjectId, ext: String) throws(StoreError) -> [UInt8]? {
        do {
            return try WholeFile.read(path(id.hex + ext))
        } catch {
            if case .cannotOpen(_, let code) = error, code == ENOENT { return nil }
            throw Self.ioError(error)
        }
    }

    public func removeBytes(id: ObjectId, ext: String) throws(StoreError) -> Bool {
        let p = path(id.hex + ext)
        if unlink(p) == 0 { return true }
        if errno == ENOENT { return false }
        throw Self.ioError(p, "cannot delete")
    }

    public func storedSize(id: ObjectId, ext: String) throws(StoreError) -> Int? {
        let p = path(id.hex + ext)
        var st = stat()
        if stat(p, &st) == 0 { return Int(st.st_size) }
        if errno == ENOENT || errno == ENOTDIR { return nil }
        throw Self.ioError(p, "cannot read its size")
    }

    public func listStoredBytes() throws(StoreError) -> (items: [StoredBytes], temporary: [String]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .io(path: directory, reason: "cannot list the uploads folder: \(error.localizedDescription)")
        }
        var items: [StoredBytes] = []
        var temporary: [String] = []
        for name in names {
            if name.hasPrefix("."), name.contains(Self.temporaryMarker) {
                // A running writer's file (`poi serve` staging an upload, an import writing
                // bytes) is in progress, not left over: never listed stale, never deleted.
                if !AtomicFile.isInProgress(temporary: name) { temporary.append(name) }
                continue
            }
            if name.hasPrefix(".") { continue }
            // The size from a `stat` (nil when the file went away meanwhile): compared with the
            // document's `length`, it finds a truncated or overwritten file without reading it.
            var st = stat()
            let size = stat(path(name), &st) == 0 ? Int(st.st_size) : nil
            items.append(StoredBytes(id: ObjectId(hex: String(name.prefix(24))), name: name, size: size))
        }
        return (items, temporary)
    }

    static func ioError(_ error: FileError) -> StoreError {
        .io(path: error.path, reason: error.reason)
    }

    static func ioError(_ path: String, _ what: String) -> StoreError {
        .io(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
