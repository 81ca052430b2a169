import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Path arithmetic on user-given paths, with swift-system's `FilePath`. Never Foundation's
/// `NSString` path methods: on Linux `deletingLastPathComponent` traps on one-character paths
/// ("a", "-") and on "x/" (`poi import -` and `poi import p` died with SIGILL).
public enum FilePaths {
    /// The folder holding `path`: "." for a bare name, "/" for a file at the root.
    public static func folder(of path: String) -> String {
        let parent = FilePath(path).removingLastComponent()
        if parent.isEmpty { return "." }
        return parent.string
    }

    /// The last component ("photo.jpg" of "a/b/photo.jpg"); the path itself when it has none.
    public static func lastComponent(of path: String) -> String {
        FilePath(path).lastComponent?.string ?? path
    }

    /// The last component without its extension ("photo" of "a/photo.jpg", ".profile" stays).
    public static func stem(of path: String) -> String {
        FilePath(path).lastComponent?.stem ?? path
    }

    /// `name` inside `folder`.
    public static func join(_ folder: String, _ name: String) -> String {
        FilePath(folder).appending(name).string
    }

    /// fsyncs the folder holding `path`, so a rename into it survives a power cut.
    public static func syncFolder(of path: String) throws(FileError) {
        let folder = folder(of: path)
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: folder, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .cannotWrite(path: folder, errno: errno) }
    }

    /// Whether `path` can be read only once: standard input (`-`), or an existing pipe, FIFO,
    /// socket or device (links followed; `<(cmd)` is a /dev/fd pipe). A path that does not
    /// exist is not: opening it says why.
    public static func isReadOnce(_ path: String) -> Bool {
        if path == "-" { return true }
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG && (st.st_mode & S_IFMT) != S_IFDIR
    }

    /// Whether `path` is an existing folder (links followed).
    public static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
}
