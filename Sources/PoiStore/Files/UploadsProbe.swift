import Foundation
import PoiFiles

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether image bytes can be stored in an uploads folder: writes, fsyncs and removes a probe
/// file there, as `DiskUploads` writes its files; when the folder does not exist yet, whether it
/// could be created (the store creates it on first use). What `poi doctor` and a health check ask.
public struct UploadsProbe: Sendable, Encodable, Equatable {
    public var path: String
    /// What was found, when all is well ("writable", "does not exist yet; …").
    public var status: String
    /// What is wrong, when something is.
    public var problem: String?

    public var isWritable: Bool { problem == nil }

    public static func run(directory path: String) -> UploadsProbe {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { return UploadsProbe(path: path, status: "", problem: "not a folder") }
            let probe = FilePaths.join(path, ".poikit-probe-\(getpid())")
            let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return UploadsProbe(path: path, status: "", problem: String(cString: strerror(errno))) }
            defer { close(fd); unlink(probe) }
            guard write(fd, "ok", 2) == 2, fsync(fd) == 0 else {
                return UploadsProbe(path: path, status: "", problem: String(cString: strerror(errno)))
            }
            return UploadsProbe(path: path, status: "writable")
        }
        if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK {
            return UploadsProbe(path: path, status: "", problem: "a symlink to something that does not exist")
        }
        // Walk up to the nearest existing ancestor: the folder is created on first use.
        var ancestor = FilePaths.folder(of: path)
        while stat(ancestor, &st) != 0 && ancestor != "." && ancestor != "/" {
            ancestor = FilePaths.folder(of: ancestor)
        }
        guard stat(ancestor, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            return UploadsProbe(path: path, status: "", problem: "cannot be created: \(ancestor) is not a folder")
        }
        if access(ancestor, W_OK) == 0 {
            return UploadsProbe(path: path, status: "does not exist yet; will be created (\(ancestor) is writable)")
        }
        return UploadsProbe(path: path, status: "", problem: "does not exist and \(ancestor) is not writable")
    }
}
