import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import PoiStore
import PoiTestSupport
import Synchronization
@testable import PoiServer
import struct PoiServer.ServerConfiguration

/// `poi serve`'s router called directly, in the test's own process: no port, no socket, no curl
/// and no child process to start or stop. It is the server's own router (`PoiServer.buildRouter`:
/// the same middleware, controllers and route table) over a fresh database of the live server and
/// a fresh uploads folder, so what a route decides (statuses, bodies, headers, what it stores) is
/// checked as the server answers it.
///
/// What lives in the connection rather than the router needs the real server (`ServeHarness`):
/// the 100-continue and cached-download channel handlers, HTTP parsing and header limits, idle
/// timeouts, sendfile downloads, the access log, signals and the exit status.
final class InProcessRoutes: Sendable {
    let database: MongoDatabase
    let scratch: String
    private let responder: RouterResponder<ServeContext>
    private let pools: [NIOThreadPool]
    private let channel = EmbeddedChannel()

    init(_ label: String, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        guard let uri = LiveDatabase.uri else { throw HarnessError("MONGODB_URI is not set, and the test lacks .liveServer") }
        let name = "poikit_test_routes_\(label)_\(ObjectId().hex.suffix(8))"
        scratch = NSTemporaryDirectory() + "poi-routes-\(name)"
        let uploads = scratch + "/uploads"
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        database = MongoDatabase(connection: try MongoConnection(uri: uri), name: name)
        let files = try DiskUploads(database: database, directory: uploads)
        try files.prepare()

        var configuration = ServerConfiguration()
        configuration.stagingDirectory = scratch
        configure(&configuration)
        let databasePool = NIOThreadPool(numberOfThreads: 2)
        let diskPool = NIOThreadPool(numberOfThreads: 2)
        let imagingPool = NIOThreadPool(numberOfThreads: 1)
        pools = [databasePool, diskPool, imagingPool]
        for pool in pools { pool.start() }
        let gateway = StoreGateway(database: database, files: files, pool: databasePool, diskPool: diskPool,
                                   queryTimeoutMS: configuration.queryTimeoutMS, stagingFallback: scratch,
                                   filesCacheSeconds: configuration.filesCacheSeconds, health: nil,
                                   smallFileCacheBytes: configuration.fileCacheBytes)
        let server = PoiServer(configuration: configuration, database: database, files: files)
        responder = server.buildRouter(gateway: gateway, imaging: imagingPool,
                                       mapAssets: MapAssets.load(from: configuration.leafletDirectory)).buildResponder()
    }

    /// Runs `body` with a router of its own, then stops its thread pools and removes its database
    /// and folder, whether or not `body` threw.
    static func with<R>(_ label: String, configure: (inout ServerConfiguration) -> Void = { _ in },
                        _ body: (InProcessRoutes) async throws -> R) async throws -> R {
        let routes = try InProcessRoutes(label, configure: configure)
        do {
            let result = try await body(routes)
            await routes.close()
            return result
        } catch {
            await routes.close()
            throw error
        }
    }

    /// Stops the thread pools and removes the database and the folder.
    func close() async {
        for pool in pools { try? await pool.shutdownGracefully() }
        _ = try? database.drop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// One request through the router. An error that escapes it is answered as Hummingbird's
    /// server answers one (an empty 500), so a test sees what a client would.
    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) async throws -> HTTPResult {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { throw HarnessError("not a header name: \(name)") }
            fields[field] = value
        }
        if let body { fields[.contentLength] = String(body.count) }
        let head = HTTPRequest(method: HTTPRequest.Method(method) ?? .get, scheme: "http", authority: "127.0.0.1",
                               path: path, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body ?? [])))
        let context = ServeContext(source: ApplicationRequestContextSource(channel: channel, logger: Logger(label: "poi-routes-test")))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            response = Response(status: .internalServerError, body: .init())
        }
        let sink = BodySink()
        // A HEAD has no body on the wire, whatever the route wrote.
        if method != "HEAD" { try await response.body.write(CollectingWriter(sink: sink)) }
        var names: [String: String] = [:]
        for field in response.headers { names[field.name.canonicalName] = field.value }
        return HTTPResult(status: response.status.code, headers: names, body: sink.bytes)
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPResult {
        try await request("GET", path, headers: headers)
    }

    func postJSON(_ path: String, _ json: String, headers: [String: String] = [:]) async throws -> HTTPResult {
        try await request("POST", path, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                          body: Array(json.utf8))
    }

    func count(_ collection: String, _ filter: BSONDocument = BSONDocument()) throws -> Int {
        try database.collection(collection).count(filter)
    }
}

/// The bytes a response body wrote, kept where the consumed writer can leave them.
private final class BodySink: Sendable {
    private let collected = Mutex<[UInt8]>([])
    var bytes: [UInt8] { collected.withLock { $0 } }
    func append(_ buffer: ByteBuffer) { collected.withLock { $0 += buffer.readableBytesView } }
}

private struct CollectingWriter: ResponseBodyWriter {
    let sink: BodySink
    mutating func write(_ buffer: ByteBuffer) async throws { sink.append(buffer) }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
