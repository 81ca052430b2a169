#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns an image reference from a dump into a file inside `--images-dir`, refusing anything that
/// would read outside it. The check runs on the real path (symlinks resolved), so `..`, absolute
/// paths and symlinks pointing out of the folder are all caught by the same rule.
public struct ImagePathResolver: Sendable {
    public let root: String

    /// `root` must exist; it is resolved once so every check compares real paths.
    public init(root: String) throws(ImageReferenceError) {
        guard let real = Self.realPath(root) else { throw .imagesDirMissing(root) }
        self.root = real
    }

    public func resolve(_ reference: String) throws(ImageReferenceError) -> String {
        let ref = reference.trimmingCharacters(in: .whitespaces)
        if ref.contains("://") { throw .unsupportedURL(ref) }
        if ref.hasPrefix("/") { throw .absolutePath(ref) }
        if ref.utf8.contains(0) { throw .notFound(ref) }
        let joined = root == "/" ? "/" + ref : root + "/" + ref
        guard let real = Self.realPath(joined) else {
            // A path that does not exist can still be an escape attempt; say so rather than "missing".
            if ref.split(separator: "/").contains("..") { throw .escapesImagesDir(ref) }
            throw .notFound(ref)
        }
        if real == root { throw .notAFile(ref) }
        guard real.hasPrefix(root == "/" ? "/" : root + "/") else { throw .escapesImagesDir(ref) }
        var st = stat()
        if stat(real, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { throw .notAFile(ref) }
        return real
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

public enum ImageReferenceError: Error, Sendable, Equatable, CustomStringConvertible {
    case imagesDirMissing(String)
    case absolutePath(String)
    case unsupportedURL(String)
    case escapesImagesDir(String)
    case notFound(String)
    /// A folder (`.`, `photos/`), not an image file.
    case notAFile(String)

    public var description: String {
        switch self {
        case .imagesDirMissing(let d): return "images folder \(d) does not exist"
        case .absolutePath: return "absolute image paths are refused; give a path relative to the images folder"
        case .unsupportedURL: return "image URLs are not supported; download the file and give its relative path"
        case .escapesImagesDir: return "refused, the path leads outside the images folder"
        case .notFound: return "no such file"
        case .notAFile: return "a folder, not an image file"
        }
    }
}

import Foundation
