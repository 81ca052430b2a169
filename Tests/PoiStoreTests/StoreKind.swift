import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

/// The two FileStore implementations; the store suites run each test against both, since the
/// jobs must not care which one they got.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case disk, gridfs
    var testDescription: String { rawValue }

    func make(_ db: MongoDatabase, folder: String) throws -> any FileStore {
        switch self {
        case .disk: return try DiskUploads(database: db, directory: folder)
        case .gridfs: return GridFSStore(database: db)
        }
    }

    /// Runs `body` with a store of this kind over a database of its own (`<label>_<kind>`) and a
    /// temporary uploads folder of its own (given, for the disk store's files); both are removed
    /// afterwards. A server without GridFS skips the GridFS case with the reason. `prepare` runs
    /// on the empty database before the store is made (indexes a test needs in place first).
    func withStore<R>(_ label: String, prepare: (MongoDatabase) throws -> Void = { _ in },
                      _ body: (any FileStore, MongoDatabase, String) throws -> R) throws -> R {
        let db = try LiveServer.database("\(label)_\(rawValue)")
        let folder = NSTemporaryDirectory() + "poikit-uploads-" + ObjectId().hex
        defer { LiveServer.drop(db); try? FileManager.default.removeItem(atPath: folder) }
        if self == .gridfs { try LiveServer.require(db.connection.probeGridFS(database: db.name), "GridFS") }
        try prepare(db)
        return try body(try make(db, folder: folder), db, folder)
    }
}
