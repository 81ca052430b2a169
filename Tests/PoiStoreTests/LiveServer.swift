import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// Connections to the live server (`LiveDatabase` in PoiTestSupport says whether there is one).
enum LiveServer {
    static var uri: String? { LiveDatabase.uri }

    /// The connection. Throws when no server is configured: a test that needs one carries
    /// `.liveServer`, so reaching this without a URI is a missing trait, reported as a failure.
    static func connect() throws -> MongoConnection {
        guard let uri else { throw LiveServerError("MONGODB_URI is not set, and the test lacks the .liveServer trait") }
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = 5_000
        return try MongoConnection(uri: uri, options: options)
    }

    /// A database name no other test (or earlier run) uses.
    static func uniqueDatabase(_ label: String) -> String {
        "poikit_test_\(label)_\(ObjectId().hex.suffix(10))"
    }
}

struct LiveServerError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

extension LiveServer {
    /// A fresh database on the live server. Drop it with `defer { LiveServer.drop(db) }`.
    static func database(_ label: String) throws -> MongoDatabase {
        MongoDatabase(connection: try connect(), name: uniqueDatabase(label))
    }

    static func drop(_ db: MongoDatabase) { _ = try? db.drop() }

    /// Cancels the running test (or test case) when the server lacks `capability`. Only known
    /// after connecting, so it cannot be a trait; a cancellation is reported with this reason
    /// (`Test … was cancelled: "the server lacks GridFS: …"`), never a silent pass.
    static func require(_ capability: Capability, _ what: String) throws {
        if case .unsupported(let reason) = capability {
            try Test.cancel("the server lacks \(what): \(reason)")
        }
    }
}
