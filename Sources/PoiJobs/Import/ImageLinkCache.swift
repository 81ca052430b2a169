import PoiStore

/// What one import run has learnt about image files and contents in its earlier windows, so a
/// photo that many places show is read, hashed and looked up once, not once per window.
///
/// Bounded by `limit` entries per table: `trimIfFull` empties the tables between windows once one
/// is full (never during a window, which relies on them); the store lookup is the fallback, so
/// an emptied cache costs time, never a wrong link. One run's cache is never another's: what
/// was stored or deleted between two runs is looked up again.
struct ImageLinkCache {
    let limit: Int
    /// The content (hex SHA-256) of each image path hashed.
    private var shaByPath: [String: String] = [:]
    /// The stored original and thumbnail each content is linked with.
    private var linksBySHA: [String: PlaceDocument.ImageLinks] = [:]
    /// Why each content that could not be stored was not (it does not decode, …).
    private var failureBySHA: [String: String] = [:]
    /// Contents found stored whose bytes are not in this run's file store (their file names).
    private var missingBySHA: [String: String] = [:]
    /// Whether this run's store holds an image an export names by id only.
    private var storedById: [ObjectId: Bool] = [:]

    init(limit: Int) { self.limit = limit }

    /// Empties the tables that are full (the path and content tables go together: a path
    /// whose content is forgotten would be hashed again anyway).
    mutating func trimIfFull() {
        if shaByPath.count >= limit || linksBySHA.count >= limit {
            shaByPath.removeAll()
            linksBySHA.removeAll()
            failureBySHA.removeAll()
            missingBySHA.removeAll()
        }
        if storedById.count >= limit { storedById.removeAll() }
    }

    // MARK: Paths and contents

    func sha(ofPath path: String) -> String? { shaByPath[path] }

    /// Whether the content's outcome is known: linked, or failed with a reason.
    func isSettled(sha: String) -> Bool { linksBySHA[sha] != nil || failureBySHA[sha] != nil }

    /// Whether the file at `path` must be read and hashed: its content is not known, or is
    /// known but was not settled (its store was not reached, or it was forgotten).
    func needsHashing(path: String) -> Bool {
        guard let sha = shaByPath[path] else { return true }
        return !isSettled(sha: sha)
    }

    func links(of sha: String) -> PlaceDocument.ImageLinks? { linksBySHA[sha] }
    func failure(of sha: String) -> String? { failureBySHA[sha] }
    /// The file name of a content found stored whose bytes are not in this run's file store.
    func missingBytes(of sha: String) -> String? { missingBySHA[sha] }

    mutating func remember(sha: String, ofPath path: String) { shaByPath[path] = sha }

    mutating func remember(links: PlaceDocument.ImageLinks, missingBytes: String?, of sha: String) {
        linksBySHA[sha] = links
        missingBySHA[sha] = missingBytes
    }

    mutating func remember(failure reason: String, of sha: String) { failureBySHA[sha] = reason }

    /// An original deleted while this run linked places to it: later windows look its content
    /// up again (and store it anew) instead of linking to it.
    mutating func forget(imageId: ObjectId) {
        linksBySHA = linksBySHA.filter { $0.value.imageId != imageId }
    }

    // MARK: Images an export names by id

    /// Of `ids`, those whose presence in the store is not known yet (each once).
    func unknown(_ ids: some Sequence<ObjectId>) -> [ObjectId] { Array(Set(ids.filter { storedById[$0] == nil })) }

    /// What the store said of `asked`: the ones in `stored` are held, the others not.
    mutating func remember(stored: Set<ObjectId>, of asked: [ObjectId]) {
        for id in asked { storedById[id] = stored.contains(id) }
    }

    /// Whether the store holds the image (nil: not asked yet).
    func isHeld(_ id: ObjectId) -> Bool? { storedById[id] }
}
