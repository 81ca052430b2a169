/// One index as `createIndexes` takes it.
public struct IndexModel: Sendable, Equatable {
    public var name: String
    public var keys: BSONDocument
    public var unique = false
    /// Only documents having the field are indexed, so places the app created without an
    /// `importKey` do not collide as duplicate nulls under a unique index.
    public var sparse = false

    public init(name: String, keys: BSONDocument, unique: Bool = false, sparse: Bool = false) {
        self.name = name
        self.keys = keys
        self.unique = unique
        self.sparse = sparse
    }

    var spec: BSONDocument {
        var d: BSONDocument = ["key": .document(keys), "name": .string(name)]
        if unique { d.append("unique", true) }
        if sparse { d.append("sparse", true) }
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
    ]

    /// `files`: same-content lookup (not unique: see `FileStore.put`).
    public static let fileIndexes: [IndexModel] = [
        IndexModel(name: "sha256_1", keys: ["sha256": 1]),
    ]
}

extension MongoCollection {
    /// Creates `indexes`. Idempotent: the server treats an identical existing index as done; an
    /// existing index with the same name but other options is reported (IndexOptionsConflict)
    /// rather than dropped, because dropping someone's index is not PoiKit's call.
    public func createIndexes(_ indexes: [IndexModel]) throws(StoreError) {
        guard !indexes.isEmpty else { return }
        _ = try runCommand([
            "createIndexes": .string(name),
            "indexes": .array(indexes.map { .document($0.spec) }),
        ])
    }

    /// Names of the collection's indexes (empty when the collection does not exist).
    public func indexNames() throws(StoreError) -> [String] {
        do {
            let reply = try runCommand(["listIndexes": .string(name)])
            let batch = reply["cursor"]?.documentValue?["firstBatch"]?.arrayValue ?? []
            return batch.compactMap { $0.documentValue?["name"]?.stringValue }
        } catch {
            if case .server(let code, _, _, _) = error, code == 26 { return [] }
            throw error
        }
    }
}

extension MongoDatabase {
    /// Creates every index PoiKit relies on in `locations` and `files`; safe to run every time.
    public func ensureIndexes() throws(StoreError) {
        try locations.createIndexes(StoreLayout.locationIndexes)
        try files.createIndexes(StoreLayout.fileIndexes)
    }
}
