import Foundation
import PoiStore

/// The live server the tests run against: `make test` starts SecantusDB and exports MONGODB_URI;
/// a developer can point MONGODB_URI at a real mongod instead.
enum LiveServer {
    static var uri: String? {
        let value = ProcessInfo.processInfo.environment["MONGODB_URI"] ?? ""
        return value.isEmpty ? nil : value
    }

    /// The connection, or nil after printing a SKIPPED line when no server was configured.
    static func connect(for test: String = #function) throws -> MongoConnection? {
        guard let uri else {
            print("SKIPPED \(test): MONGODB_URI is not set (run `make test`, which starts a server)")
            return nil
        }
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = 5_000
        return try MongoConnection(uri: uri, options: options)
    }

    /// A database name no other test (or earlier run) uses.
    static func uniqueDatabase(_ label: String) -> String {
        "poikit_test_\(label)_\(ObjectId().hex.suffix(10))"
    }
}

extension LiveServer {
    /// A fresh database on the live server (nil after a SKIPPED line when none is configured).
    /// Drop it with `defer { LiveServer.drop(db) }`.
    static func database(_ label: String, for test: String = #function) throws -> MongoDatabase? {
        guard let connection = try connect(for: test) else { return nil }
        return MongoDatabase(connection: connection, name: uniqueDatabase(label))
    }

    static func drop(_ db: MongoDatabase) { _ = try? db.drop() }

    /// Prints the SKIPPED line for a capability the server lacks; returns whether to go on.
    static func require(_ capability: Capability, _ what: String, for test: String = #function) -> Bool {
        if case .unsupported(let reason) = capability {
            print("SKIPPED \(test): the server lacks \(what): \(reason)")
            return false
        }
        return true
    }
}
