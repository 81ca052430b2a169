/// Which databases and collections a deployment holds: what a command that reads an existing
/// collection checks first, so a mistyped database name (which MongoDB happily treats as a new,
/// empty database) is an error naming the databases that do hold the collection, not an empty
/// success.
extension MongoConnection {
    /// Whether `database` holds a collection (or view) named `collection`.
    public func collectionExists(_ collection: String, database: String) throws(StoreError) -> Bool {
        let reply = try runCommand(["listCollections": .int32(1), "filter": .document(["name": .string(collection)]),
                                    "nameOnly": .bool(true), "authorizedCollections": .bool(true)],
                                   database: database)
        let batch = reply["cursor"]?.documentValue?["firstBatch"]?.arrayValue ?? []
        return batch.contains { $0.documentValue?["name"]?.stringValue == collection }
    }

    /// The databases the user may list (`authorizedDatabases`), by name, sorted.
    public func databaseNames() throws(StoreError) -> [String] {
        let reply = try runCommand(["listDatabases": .int32(1), "nameOnly": .bool(true), "authorizedDatabases": .bool(true)],
                                   database: "admin")
        let names = (reply["databases"]?.arrayValue ?? []).compactMap { $0.documentValue?["name"]?.stringValue }
        return names.sorted()
    }

    /// The databases holding `collection`, sorted; empty when none does or when the user may
    /// not list databases (a listing is a courtesy for the error message, never required).
    public func databases(holding collection: String) -> [String] {
        guard let names = try? databaseNames() else { return [] }
        return names.filter { name in
            !["admin", "config", "local"].contains(name) && ((try? collectionExists(collection, database: name)) ?? false)
        }
    }
}

extension MongoDatabase {
    /// Of `ids`, those that another database of the deployment describes in its own `files`
    /// collection, with that database's name. Two databases that share one uploads folder each
    /// see the other's bytes as "bytes without a document"; this is how `poi gc` tells them from
    /// real leftovers. Best effort: a user who may not list databases gets an empty answer.
    public func filesDescribedElsewhere(_ ids: [ObjectId]) -> [ObjectId: String] {
        guard !ids.isEmpty else { return [:] }
        var owners: [ObjectId: String] = [:]
        for other in connection.databases(holding: "files") where other != name {
            let files = MongoDatabase(connection: connection, name: other).files
            for start in stride(from: 0, to: ids.count, by: 1000) {
                let chunk = ids[start..<min(ids.count, start + 1000)]
                let filter: BSONDocument = ["_id": .document(["$in": .array(chunk.map(BSONValue.objectId))])]
                guard let cursor = try? files.find(filter, projection: ["_id": 1], batchSize: 1000) else { continue }
                while let doc = try? cursor.next(), let id = doc["_id"]?.objectIdValue {
                    if owners[id] == nil { owners[id] = other }
                }
            }
        }
        return owners
    }
}
