#if canImport(Glibc)
import Glibc
#endif

/// One index as `createIndexes` takes it.
public struct IndexModel: Sendable, Equatable {
    public var name: String
    public var keys: BSONDocument
    public var unique = false
    /// Only documents having the field are indexed, so places the app created without an
    /// `importKey` do not collide as duplicate nulls under a unique index.
    public var sparse = false
    /// Only documents matching this filter are indexed (a partial index).
    public var partialFilter: BSONDocument?
    /// Not needed for correctness: when the data already breaks it (a unique index over
    /// duplicates an older PoiKit stored), the index is left out rather than the job stopped.
    public var optional = false

    public init(name: String, keys: BSONDocument, unique: Bool = false, sparse: Bool = false,
                partialFilter: BSONDocument? = nil, optional: Bool = false) {
        self.name = name
        self.keys = keys
        self.unique = unique
        self.sparse = sparse
        self.partialFilter = partialFilter
        self.optional = optional
    }

    var spec: BSONDocument {
        var d: BSONDocument = ["key": .document(keys), "name": .string(name)]
        if unique { d.append("unique", true) }
        if sparse { d.append("sparse", true) }
        if let partialFilter { d.append("partialFilterExpression", .document(partialFilter)) }
        return d
    }
}

extension StoreLayout {
    /// `locations`: the app's geo and category queries, the importer's identity, `--since`.
    public static let locationIndexes: [IndexModel] = [
        IndexModel(name: "location_2dsphere", keys: ["location": "2dsphere"]),
        IndexModel(name: "importKey_1", keys: ["importKey": 1], unique: true, sparse: true),
        IndexModel(name: "categories_1", keys: ["categories": 1]),
        IndexModel(name: "updated_at_1", keys: ["updated_at": 1]),
        // Relinking every place that shows an image when its thumbnail is replaced, and gc.
        IndexModel(name: "imageId_1", keys: ["imageId": 1]),
    ]

    /// `files`: same-content lookup, an original's thumbnails (looked up once per image by
    /// import and thumbnail regeneration), and one imported original per content: two imports
    /// that store the same new photo at once both look it up, find nothing and add it; the
    /// second insert is refused and that import links the first one's
    /// (`FilesRepository.storeOriginal`). Partial, over the import's originals only: thumbnails
    /// may share content with each other, and every upload is a file of its own whatever is
    /// stored already (`FileOrigin`).
    public static let fileIndexes: [IndexModel] = [
        IndexModel(name: "sha256_1", keys: ["sha256": 1]),
        IndexModel(name: "thumbnailOf_1", keys: ["thumbnailOf": 1]),
        IndexModel(name: "sha256_1_imported_original_unique", keys: ["sha256": 1], unique: true,
                   partialFilter: ["role": "original", "storedBy": "import"], optional: true),
    ]

    /// Indexes earlier PoiKit versions made that are now wrong, dropped where found:
    /// `sha256_1_original_unique` made every original unique by content, uploads included, so a
    /// second upload of a stored photo was refused (409) instead of getting its own id.
    public static let retiredFileIndexes = ["sha256_1_original_unique"]
}

extension MongoCollection {
    /// Creates those of `indexes` that do not exist yet. Idempotent without relying on the
    /// server's own same-spec check (servers differ on which options count as "the same"): an
    /// index already present under the same name with the same keys is left alone; one with the
    /// same name but other keys is reported, never dropped, because dropping someone's index is
    /// not PoiKit's call.
    public func createIndexes(_ indexes: [IndexModel]) throws(StoreError) {
        // Two first runs at once (two imports into an empty database) both list, both create:
        // the server may call the second command a conflict (SecantusDB does for a 2dsphere
        // index), and may build the other run's indexes one by one. After a conflict the list
        // is read again and only what is still missing created, a few times over.
        var attempt = 0
        while true {
            let missing = try missingIndexes(indexes)
            let required = missing.filter { !$0.optional }
            do {
                if !required.isEmpty {
                    _ = try runCommand(["createIndexes": .string(name), "indexes": .array(required.map { .document($0.spec) })])
                }
            } catch {
                guard case .server(let code, _, _, _) = error, attempt < 5,
                      code == ServerErrorCode.indexOptionsConflict || code == ServerErrorCode.indexKeySpecsConflict else { throw error }
                attempt += 1
                usleep(UInt32(100_000 * attempt))
                continue
            }
            for index in missing where index.optional {
                do {
                    _ = try runCommand(["createIndexes": .string(name), "indexes": .array([.document(index.spec)])])
                } catch {
                    // The data breaks it (duplicates stored before it existed), or a concurrent
                    // run made it: either way the jobs work without it.
                    guard case .server = error else { throw error }
                }
            }
            return
        }
    }

    /// Those of `indexes` not present under their name; one present with other keys is an error.
    private func missingIndexes(_ indexes: [IndexModel]) throws(StoreError) -> [IndexModel] {
        let existing = try indexSpecs()
        var missing: [IndexModel] = []
        for index in indexes {
            guard let spec = existing.first(where: { $0["name"]?.stringValue == index.name }) else {
                missing.append(index)
                continue
            }
            let keys = spec["key"]?.documentValue ?? BSONDocument()
            let unique = spec["unique"]?.boolValue ?? false
            guard Self.sameKeys(keys, index.keys), unique == index.unique else {
                throw .server(code: ServerErrorCode.indexOptionsConflict, codeName: "IndexOptionsConflict", message:
                    "collection \(name) already has an index named \(index.name) with keys \(keys)"
                    + "\(unique ? " (unique)" : ""), but PoiKit needs \(index.keys)\(index.unique ? " (unique)" : ""); "
                    + "drop or rename that index, then run again", labels: [])
            }
        }
        return missing
    }

    /// Index keys compare by field order and value, with numbers compared numerically (a shell
    /// may have written `1.0` where PoiKit writes `1`).
    static func sameKeys(_ a: BSONDocument, _ b: BSONDocument) -> Bool {
        let x = Array(a), y = Array(b)
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) {
            guard p.key == q.key else { return false }
            if let m = p.value.doubleValue, let n = q.value.doubleValue { if m != n { return false } } else if p.value != q.value { return false }
        }
        return true
    }

    /// The index specifications `listIndexes` returns (empty when the collection does not exist).
    public func indexSpecs() throws(StoreError) -> [BSONDocument] {
        do {
            let reply = try runCommand(["listIndexes": .string(name)])
            let batch = reply["cursor"]?.documentValue?["firstBatch"]?.arrayValue ?? []
            return batch.compactMap(\.documentValue)
        } catch {
            if case .server(let code, _, _, _) = error, code == ServerErrorCode.namespaceNotFound { return [] }
            throw error
        }
    }

    /// Drops those of `names` that exist; returns the ones dropped. Only for PoiKit's own
    /// retired indexes (`StoreLayout.retiredFileIndexes`): an index someone else made is never
    /// PoiKit's to drop.
    @discardableResult
    public func dropIndexes(named names: [String]) throws(StoreError) -> [String] {
        let present = Set(try indexNames())
        var dropped: [String] = []
        for name in names where present.contains(name) {
            do {
                _ = try runCommand(["dropIndexes": .string(self.name), "index": .string(name)])
                dropped.append(name)
            } catch {
                // Dropped meanwhile by another run: what was asked for holds.
                guard case .server(let code, _, _, _) = error, code == ServerErrorCode.indexNotFound else { throw error }
            }
        }
        return dropped
    }

    /// Names of the collection's indexes (empty when the collection does not exist).
    public func indexNames() throws(StoreError) -> [String] {
        try indexSpecs().compactMap { $0["name"]?.stringValue }
    }
}

extension MongoDatabase {
    /// Creates every index PoiKit relies on in `locations` and `files`; safe to run every time.
    public func ensureIndexes() throws(StoreError) {
        try locations.createIndexes(StoreLayout.locationIndexes)
        try files.dropIndexes(named: StoreLayout.retiredFileIndexes)
        try files.createIndexes(StoreLayout.fileIndexes)
    }
}
