import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The backend's own layout: bytes at `<uploads>/<_id hex><ext>`, served by `GET /files/:id`.
///
/// A write goes to a temporary file in the same folder (same file system, so the rename is
/// atomic), is fsynced, renamed into place, and the folder is fsynced so the new name survives a
/// power cut; only then does `put` insert the `files` document. Readers (the backend) therefore
/// never see a partial file under a final name.
public struct DiskUploads: FileStore {
    public let database: MongoDatabase
    public let directory: String
    /// Test hook: runs after the temporary file is complete and before the rename. Throwing
    /// here behaves like a crash at that point (the temporary file is removed, as after a
    /// process death the next `orphans()` would report it).
    let beforeRename: (@Sendable () throws(StoreError) -> Void)?

    static let temporaryMarker = ".tmp-"

    public init(database: MongoDatabase, directory: String) throws(StoreError) {
        try self.init(database: database, directory: directory, beforeRename: nil)
    }

    init(database: MongoDatabase, directory: String,
         beforeRename: (@Sendable () throws(StoreError) -> Void)?) throws(StoreError) {
        self.database = database
        self.directory = directory
        self.beforeRename = beforeRename
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .io(path: directory, reason: "cannot create the uploads folder: \(error.localizedDescription)")
        }
    }

    func path(_ name: String) -> String { directory + "/" + name }

    public func storeBytes(_ bytes: [UInt8], id: ObjectId, ext: String) throws(StoreError) {
        let final = path(id.hex + ext)
        let temp = path("." + id.hex + ext + Self.temporaryMarker + String(UInt32.random(in: 0...UInt32.max), radix: 16))
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.ioError(temp, "cannot create") }
        var ok = false
        defer { if !ok { unlink(temp) } }
        do {
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { buf -> Bool in
                var offset = 0
                while offset < buf.count {
                    let n = write(fd, buf.baseAddress! + offset, buf.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    offset += n
                }
                return true
            }
            guard written else { throw Self.ioError(temp, "cannot write") }
            guard fsync(fd) == 0 else { throw Self.ioError(temp, "cannot fsync") }
        }
        try beforeRename?()
        guard rename(temp, final) == 0 else { throw Self.ioError(final, "cannot rename the temporary file into place") }
        ok = true
        try syncDirectory()
    }

    private func syncDirectory() throws(StoreError) {
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw Self.ioError(directory, "cannot open the folder to fsync it") }
        defer { close(dfd) }
        guard fsync(dfd) == 0 else { throw Self.ioError(directory, "cannot fsync the folder") }
    }

    public func loadBytes(id: ObjectId, ext: String) throws(StoreError) -> [UInt8]? {
        let p = path(id.hex + ext)
        let fd = open(p, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Self.ioError(p, "cannot open")
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.ioError(p, "cannot read")
            }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    public func removeBytes(id: ObjectId, ext: String) throws(StoreError) -> Bool {
        let p = path(id.hex + ext)
        if unlink(p) == 0 { return true }
        if errno == ENOENT { return false }
        throw Self.ioError(p, "cannot delete")
    }

    public func listStoredBytes() throws(StoreError) -> (items: [(id: ObjectId?, name: String)], temporary: [String]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .io(path: directory, reason: "cannot list the uploads folder: \(error.localizedDescription)")
        }
        var items: [(id: ObjectId?, name: String)] = []
        var temporary: [String] = []
        for name in names {
            if name.hasPrefix("."), name.contains(Self.temporaryMarker) { temporary.append(name); continue }
            if name.hasPrefix(".") { continue }
            items.append((ObjectId(hex: String(name.prefix(24))), name))
        }
        return (items, temporary)
    }

    static func ioError(_ path: String, _ what: String) -> StoreError {
        .io(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
