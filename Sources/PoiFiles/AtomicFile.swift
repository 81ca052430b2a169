import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way PoiKit writes a file it may be replacing: exports, converted dumps, rejects files,
/// thumbnails of `poi thumb` and the uploads folder's image bytes all go through it.
///
/// A regular file (or a new one) is written to a temporary name beside it and renamed into place
/// by `commit()`, so a reader sees the old file or the whole new one, never a part, and a failed
/// or interrupted run leaves the old one. What the target already is decides the rest:
/// - a symlink is followed: its target is replaced, the link stays a link;
/// - an existing regular file keeps its permission bits and owner (a 0600 export stays 0600);
///   a new file gets 0666 less the process umask, as `open(2)` would give it;
/// - anything else that exists (a device such as `/dev/null`, a FIFO, a terminal, `/dev/stdout`
///   on a pipe) is written in place: replacing it with a regular file would break the system or
///   the reader waiting on it;
/// - an input of the same command (same device and inode, through any link) is refused.
/// Temporary names fit NAME_MAX whenever the final name does, and are registered with
/// `TemporaryFiles` so SIGINT/SIGTERM remove them.
public final class AtomicFile {
    public enum Durability: Sendable {
        /// fsync the file before the rename and the folder after it: the new name survives a
        /// power cut (uploads, exports).
        case synced
        /// Rename only: regenerable outputs (local thumbnails), like vipsthumbnail writes them.
        case unsynced
    }

    /// The path as the caller gave it (for messages).
    public let path: String
    /// Where the bytes end up: `path` with symlinks followed.
    public let target: String
    /// Open for writing: the temporary file, or the target itself when written in place.
    public let fd: Int32
    /// nil when written in place.
    public let temporaryPath: String?
    private let durability: Durability
    private var finished = false

    /// Marks the temporary names: `.NAME.tmp-PID.XXXXXX` beside NAME (what `poi gc` recognises in the
    /// uploads folder, and what `removeStaleTemporaries` looks for).
    public static let temporaryMarker = ".tmp-"

    /// `removingStale`: also remove temporary files of this target that a killed run left.
    public init(path: String, durability: Durability = .synced, refusing inputs: [String] = [],
                removingStale: Bool = true) throws(FileError) {
        self.path = path
        self.durability = durability
        if let id = FileIdentity(path: path) {
            for input in inputs where FileIdentity(path: input) == id {
                throw .outputIsInput(path: path, input: input)
            }
        }
        var st = stat()
        if let id = FileIdentity(path: path), let fd = Self.ownStandardDescriptor(matching: id) {
            // `-o /dev/stdout` (or /proc/self/fd/1) while stdout is a file opened with `>>` or `>`:
            // write through our own descriptor, keeping its position and O_APPEND. Replacing the
            // file would drop what the shell already appended to it.
            self.fd = fd
            target = path
            temporaryPath = nil
            return
        }
        if stat(path, &st) != 0 && errno == ELOOP { throw .cannotOpen(path: path, errno: ELOOP) }
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            // Not a file we could replace: open the thing itself, as a shell redirection would.
            guard (st.st_mode & S_IFMT) != S_IFDIR else { throw .notARegularFile(path: path) }
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
            self.fd = fd
            target = path
            temporaryPath = nil
            return
        }
        let existing: stat? = stat(path, &st) == 0 ? st : nil
        target = Self.followLinks(path)
        if removingStale { Self.removeStaleTemporaries(of: target) }
        let folder = FilePaths.folder(of: target)
        let name = Self.temporaryName(for: FilePaths.lastComponent(of: target))
        var template = Array((folder == "/" ? "/" : folder + "/") .utf8CString.dropLast()) + Array(name.utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        let temp = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let existing {
            fchmod(fd, existing.st_mode & 0o7777)
            if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                // Root can give the file back to its owner; anyone else keeps the mode at least.
                _ = fchown(fd, existing.st_uid, existing.st_gid)
            }
        } else {
            fchmod(fd, 0o666 & ~ProcessUmask.value)
        }
        self.fd = fd
        temporaryPath = temp
        TemporaryFiles.shared.register(temp)
    }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotWrite(path: path, errno: errno)
            }
            offset += n
        }
    }

    public func write(_ bytes: [UInt8]) throws(FileError) {
        var failure: FileError?
        bytes.withUnsafeBytes { raw in
            do throws(FileError) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Makes the new content visible under `target`. After an error the old file is untouched and
    /// the temporary file removed.
    public func commit() throws(FileError) {
        guard !finished else { return }
        finished = true
        guard let temp = temporaryPath else {
            if close(fd) != 0 { throw .cannotWrite(path: path, errno: errno) }
            return
        }
        defer { TemporaryFiles.shared.unregister(temp) }
        if durability == .synced && fsync(fd) != 0 {
            let e = errno
            close(fd)
            unlink(temp)
            throw .cannotWrite(path: path, errno: e)
        }
        if close(fd) != 0 {
            let e = errno
            unlink(temp)
            throw .cannotWrite(path: path, errno: e)
        }
        if rename(temp, target) != 0 {
            let e = errno
            unlink(temp)
            throw .cannotWrite(path: path, errno: e)
        }
        if durability == .synced { try FilePaths.syncFolder(of: target) }
    }

    /// Drops what was written: the temporary file goes, the target stays as it was.
    public func abandon() {
        guard !finished else { return }
        finished = true
        close(fd)
        if let temp = temporaryPath {
            unlink(temp)
            TemporaryFiles.shared.unregister(temp)
        }
    }

    deinit { abandon() }

    /// Writes `bytes` to `path` in one go.
    public static func write(_ bytes: [UInt8], to path: String, durability: Durability = .synced,
                             refusing inputs: [String] = [], removingStale: Bool = true) throws(FileError) {
        let file = try AtomicFile(path: path, durability: durability, refusing: inputs, removingStale: removingStale)
        do throws(FileError) {
            try file.write(bytes)
            try file.commit()
        } catch {
            file.abandon()
            throw error
        }
    }

    /// Removes temporary files an earlier run killed before it could clean up (kill -9, a crash)
    /// left beside `path`: `.NAME.tmp-PID.XXXXXX` whose process is gone. A live writer's
    /// temporary file is left alone. Returns how many were removed. Every `AtomicFile` does this
    /// for its own target unless told not to (a folder of many outputs is swept once instead).
    ///
    /// `atStart`: the caller has written no temporary file of `path` yet, so one named with its
    /// own pid is stale too (a server restarted in a container is pid 1 again, as the one that
    /// was killed mid-write was).
    @discardableResult
    public static func removeStaleTemporaries(of path: String, atStart: Bool = false) -> Int {
        let target = followLinks(path)
        let prefix = "." + Self.trimmedBase(FilePaths.lastComponent(of: target)) + temporaryMarker
        return removeStale(in: FilePaths.folder(of: target), ownPidIsStale: atStart) { $0.hasPrefix(prefix) }
    }

    /// A fresh temporary name for `base` in the form `removeStaleTemporaries` recognises
    /// (`.BASE.tmp-PID.XXXXXX`), for a writer that creates the file itself (with O_EXCL) rather
    /// than through `AtomicFile`: `poi serve`'s staged uploads.
    public static func uniqueTemporaryName(for base: String) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let suffix = String((0..<6).map { _ in letters.randomElement()! })
        return String(temporaryName(for: base).dropLast(6)) + suffix
    }

    /// The same for every output in `folder` (`poi thumb`'s output folder, an export's images).
    @discardableResult
    public static func removeStaleTemporaries(inFolder folder: String) -> Int {
        removeStale(in: folder) { _ in true }
    }

    private static func removeStale(in folder: String, ownPidIsStale: Bool = false, _ accept: (String) -> Bool) -> Int {
        guard let dir = opendir(folder) else { return 0 }
        defer { closedir(dir) }
        var removed = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasPrefix("."), accept(name), let pid = writerPid(ofTemporary: name) else { continue }
            if !(ownPidIsStale && pid == getpid()) && isRunning(pid) { continue }
            let full = folder == "/" ? "/" + name : folder + "/" + name
            var st = stat()
            guard lstat(full, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            if unlink(full) == 0 { removed += 1 }
        }
        return removed
    }

    /// Whether the process that named the temporary file `name` (`.NAME.tmp-PID.XXXXXX`) may
    /// still be writing it: the one rule for "in progress" versus "left by a killed run", used by
    /// the sweeps here and by `poi gc`. A name without a pid is never in progress.
    public static func isInProgress(temporary name: String) -> Bool {
        guard let pid = writerPid(ofTemporary: name) else { return false }
        return isRunning(pid)
    }

    /// Alive (or not ours to signal: another user's process): someone may still be writing.
    private static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The pid in `.NAME.tmp-PID.XXXXXX`, nil for any other name.
    static func writerPid(ofTemporary name: String) -> Int32? {
        guard let marker = name.range(of: temporaryMarker, options: .backwards) else { return nil }
        let rest = name[marker.upperBound...].utf8
        guard let dot = rest.firstIndex(of: UInt8(ascii: ".")), rest.distance(from: dot, to: rest.endIndex) == 7,
              let pid = Int32(String(decoding: rest[..<dot], as: UTF8.self)), pid > 0 else { return nil }
        return pid
    }

    /// A duplicate of stdout or stderr when `id` is the file behind it; nil otherwise.
    static func ownStandardDescriptor(matching id: FileIdentity) -> Int32? {
        for fd: Int32 in [1, 2] where FileIdentity(descriptor: fd) == id {
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            if copy >= 0 { return copy }
        }
        return nil
    }

    // MARK: Names

    /// `.NAME.tmp-PID.XXXXXX`, with NAME cut so the whole fits in NAME_MAX (255 bytes). The pid
    /// tells a later run whether the writer is gone (`removeStaleTemporaries`).
    static func temporaryName(for base: String) -> String {
        "." + trimmedBase(base) + temporaryMarker + String(getpid()) + ".XXXXXX"
    }

    static func trimmedBase(_ base: String) -> String {
        // Room for ".", the marker, a pid of up to 10 digits, "." and mkstemp's six characters.
        let room = 255 - 1 - temporaryMarker.utf8.count - 10 - 1 - 6
        guard base.utf8.count > room else { return base }
        var cut = base.utf8.index(base.utf8.startIndex, offsetBy: room)
        // Never split a UTF-8 sequence: a temporary name must stay valid text for messages.
        while cut > base.utf8.startIndex && !base.unicodeScalars.indices.contains(cut) {
            cut = base.utf8.index(before: cut)
        }
        return String(base[..<cut])
    }

    /// `path` with every symlink along the last component followed (a dangling link included: the
    /// file is created where the link points). Folders in between are left to the kernel.
    static func followLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var st = stat()
            guard lstat(current, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let link = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if link.hasPrefix("/") {
                current = link
            } else {
                let folder = FilePaths.folder(of: current)
                current = folder == "/" ? "/" + link : folder + "/" + link
            }
        }
        return current
    }
}

@inline(__always)
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

/// The process's umask, read once. `umask(2)` can only be read by setting it, so Linux's
/// /proc/self/status is asked first; the set-and-restore fallback runs once, at first use.
enum ProcessUmask {
    static let value: mode_t = {
        if let status = try? WholeFile.read("/proc/self/status", limit: 1 << 16) {
            let text = String(decoding: status, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
                let digits = line.dropFirst("Umask:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" })
                if let v = mode_t(digits, radix: 8) { return v }
            }
        }
        let old = umask(0o022)
        umask(old)
        return old
    }()
}

private extension Substring {
    func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring {
        var s = self
        while let c = s.first, predicate(c) { s = s.dropFirst() }
        return s
    }
}
