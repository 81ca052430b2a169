import CMongoC
import Foundation

/// What the server says about itself, and what PoiKit found it can do (probed, never assumed).
public struct ServerInfo: Sendable, Equatable {
    public var version: String
    public var maxWireVersion: Int
    public var maxBsonObjectSize: Int
    public var maxMessageSizeBytes: Int
    public var maxWriteBatchSize: Int
    public var replicaSetName: String?
    public var isWritablePrimary: Bool
}

/// The limits a bulk write must respect (from `hello`).
public struct WriteLimits: Sendable, Equatable {
    public var maxBsonObjectSize: Int
    public var maxMessageSizeBytes: Int
    public var maxWriteBatchSize: Int

    public init(maxBsonObjectSize: Int = 16 * 1024 * 1024, maxMessageSizeBytes: Int = 48_000_000,
                maxWriteBatchSize: Int = 100_000) {
        self.maxBsonObjectSize = maxBsonObjectSize
        self.maxMessageSizeBytes = maxMessageSizeBytes
        self.maxWriteBatchSize = maxWriteBatchSize
    }
}

final class WriteLimitsCache: @unchecked Sendable {
    private let lock = NSLock()
    private var value: WriteLimits?
    func get() -> WriteLimits? { lock.withLock { value } }
    func set(_ v: WriteLimits) { lock.withLock { value = v } }
}

extension MongoConnection {
    /// The server's write limits, cached after the first successful `hello`.
    public func writeLimits() throws(StoreError) -> WriteLimits {
        if let cached = limitsCache.get() { return cached }
        let hello = try runCommand(["hello": 1], database: "admin")
        let limits = WriteLimits(
            maxBsonObjectSize: Int(hello["maxBsonObjectSize"]?.int64Value ?? 16 * 1024 * 1024),
            maxMessageSizeBytes: Int(hello["maxMessageSizeBytes"]?.int64Value ?? 48_000_000),
            maxWriteBatchSize: Int(hello["maxWriteBatchSize"]?.int64Value ?? 100_000))
        limitsCache.set(limits)
        return limits
    }

    /// `buildInfo` + `hello`: version and the size limits bulk writes must respect.
    public func serverInfo() throws(StoreError) -> ServerInfo {
        let hello = try runCommand(["hello": 1], database: "admin")
        let build = try runCommand(["buildInfo": 1], database: "admin")
        return ServerInfo(
            version: build["version"]?.stringValue ?? "unknown",
            maxWireVersion: Int(hello["maxWireVersion"]?.int64Value ?? 0),
            maxBsonObjectSize: Int(hello["maxBsonObjectSize"]?.int64Value ?? 16 * 1024 * 1024),
            maxMessageSizeBytes: Int(hello["maxMessageSizeBytes"]?.int64Value ?? 48_000_000),
            maxWriteBatchSize: Int(hello["maxWriteBatchSize"]?.int64Value ?? 100_000),
            replicaSetName: hello["setName"]?.stringValue,
            isWritablePrimary: hello["isWritablePrimary"]?.boolValue ?? hello["ismaster"]?.boolValue ?? false
        )
    }

    /// Whether the server evaluates `$geoWithin` with `$box` (what the backend's bbox filter uses):
    /// runs a real, read-only `find` with that filter on `collection`.
    public func probeGeoWithin(database: String, collection: String = "locations") -> Capability {
        let filter: BSONDocument = [
            "location": .document(["$geoWithin": .document(["$box": [[0.0, 0.0], [1.0, 1.0]]])]),
        ]
        do {
            _ = try runCommand(["find": .string(collection), "filter": .document(filter), "limit": 1], database: database)
            return .supported
        } catch {
            return .unsupported(reason: error.description)
        }
    }
}

public enum Capability: Sendable, Equatable, CustomStringConvertible {
    case supported
    case unsupported(reason: String)

    public var isSupported: Bool { self == .supported }
    public var description: String {
        switch self {
        case .supported: return "yes"
        case .unsupported(let reason): return "no (\(reason))"
        }
    }
}

/// Versions of the MongoDB C libraries this binary runs with (for `poi doctor`).
public enum MongoLibraries {
    public static var libmongoc: String { String(cString: mongoc_get_version()) }
    public static var libbson: String { String(cString: bson_get_version()) }
}

/// How the deployment is laid out and who this connection is on it (what `poi doctor` shows an
/// operator setting up production: a replica set's name and members, TLS, the user).
public struct ServerTopology: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case standalone
        case replicaSet(name: String, members: [String], primary: String?)
        case mongos
    }
    public var kind: Kind
    /// Sessions and a replica set or mongos: what retryable writes need (a standalone has none).
    public var retryableWrites: Bool
    /// `user@db` for each user the server says this connection is authenticated as.
    public var authenticatedUsers: [String]

    public var kindDescription: String {
        switch kind {
        case .standalone: return "standalone"
        case .mongos: return "sharded cluster (mongos)"
        case .replicaSet(let name, let members, let primary):
            return "replica set \(name), \(members.count) member\(members.count == 1 ? "" : "s"): \(members.joined(separator: ", "))"
                + (primary.map { "; primary \($0)" } ?? "; no primary")
        }
    }
}

extension MongoConnection {
    /// `hello` and `connectionStatus`: the topology, retryable writes, the authenticated users.
    public func topology() throws(StoreError) -> ServerTopology {
        let hello = try runCommand(["hello": 1], database: "admin")
        let kind: ServerTopology.Kind
        if hello["msg"]?.stringValue == "isdbgrid" {
            kind = .mongos
        } else if let name = hello["setName"]?.stringValue {
            let members = (hello["hosts"]?.arrayValue ?? []).compactMap(\.stringValue)
            kind = .replicaSet(name: name, members: members, primary: hello["primary"]?.stringValue)
        } else {
            kind = .standalone
        }
        let sessions = hello["logicalSessionTimeoutMinutes"] != nil
        let status = try runCommand(["connectionStatus": 1], database: "admin")
        let users = (status["authInfo"]?.documentValue?["authenticatedUsers"]?.arrayValue ?? []).compactMap { v -> String? in
            guard let d = v.documentValue, let user = d["user"]?.stringValue else { return nil }
            return user + "@" + (d["db"]?.stringValue ?? "?")
        }
        var retryable = sessions
        if case .standalone = kind { retryable = false }
        return ServerTopology(kind: kind, retryableWrites: retryable, authenticatedUsers: users)
    }
}
