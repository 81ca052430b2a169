import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import PoiFormats
import PoiStore
import ServiceLifecycle

/// `poi serve`: the TourMyTown backend's REST API over PoiStore (ARCHITECTURE.md §7).
public struct PoiServer: Sendable {
    /// Makes Swift concurrency's global executor the server's own event loops (NIO's singleton
    /// group, the one Hummingbird serves on), so a request's handler runs where its connection
    /// lives: without it every request hopped event loop → global pool → event loop, and those
    /// hops were most of a small download's cost (thumbnails at a third of nginx's rate).
    /// Everything that blocks runs on thread pools of its own (database, disk, imaging), so no
    /// handler holds an event loop. Call once, first thing, in a process that only serves.
    public static func runTasksOnEventLoops() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    public let configuration: ServerConfiguration
    let database: MongoDatabase
    let files: any FileStore
    /// `/healthz` pings through this connection (short timeouts of its own, see `HealthProbe`);
    /// without one it pings through `database`'s, within the request deadline.
    let healthConnection: MongoConnection?

    public init(configuration: ServerConfiguration, database: MongoDatabase, files: any FileStore,
                healthConnection: MongoConnection? = nil) {
        self.configuration = configuration
        self.database = database
        self.files = files
        self.healthConnection = healthConnection
    }

    /// Serves until SIGTERM or SIGINT, then lets in-flight requests finish and returns; requests
    /// still running after `shutdownGraceSeconds` (a client that stopped reading a download) are
    /// cancelled and their connections closed, so a deploy never waits for its SIGKILL.
    /// The database is pinged before listening: a server that cannot reach it fails at start
    /// (where systemd and a deploy's health check see it) rather than answering every request 503.
    /// `onListening` gets the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws(ServeError) {
        let databasePool = NIOThreadPool(numberOfThreads: configuration.databaseThreads)
        let diskPool = NIOThreadPool(numberOfThreads: configuration.diskThreads)
        let healthPool = NIOThreadPool(numberOfThreads: 1)
        let imagingPool = NIOThreadPool(numberOfThreads: min(2, ProcessorCores.available))
        let pools = [databasePool, diskPool, healthPool, imagingPool]
        for pool in pools { pool.start() }
        let outcome: Result<Void, ServeError>
        do throws(ServeError) {
            let health = healthConnection.map {
                HealthProbe(connection: $0, pool: healthPool, limit: .seconds(configuration.healthTimeoutSeconds))
            }
            let gateway = StoreGateway(database: database, files: files, pool: databasePool, diskPool: diskPool,
                                       queryTimeoutMS: configuration.queryTimeoutMS, stagingFallback: configuration.stagingDirectory,
                                       filesCacheSeconds: configuration.filesCacheSeconds, health: health,
                                       smallFileCacheBytes: configuration.fileCacheBytes)
            try await serve(gateway: gateway, imagingPool: imagingPool, onListening: onListening)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // Queued work is cancelled; a call to a stalled database still running ends at the
        // socket timeout (query timeout plus margin), which bounds how long the exit waits.
        for pool in pools { try? await pool.shutdownGracefully() }
        try outcome.get()
    }

    private func serve(gateway: StoreGateway, imagingPool: NIOThreadPool,
                       onListening: @escaping @Sendable (Int) async -> Void) async throws(ServeError) {
        // Requests wait only `requestSelectionSeconds` for a server; starting up, the database
        // gets `startupTimeoutMS` (`--server-timeout`) to be there, a ping after another.
        let giveUp = ContinuousClock.now + .milliseconds(configuration.startupTimeoutMS)
        while true {
            do {
                try await gateway.ping()
                break
            } catch {
                if case .store(.unreachable) = error, ContinuousClock.now < giveUp {
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
                if case .store(let store) = error { throw .databaseUnreachable(store) }
                throw .failed(error.message)
            }
        }
        let swept = await gateway.removeStaleStagedUploads()
        if swept.removed > 0 {
            AccessLog.writeToStandardError("poi serve: removed \(swept.removed) staged upload\(swept.removed == 1 ? "" : "s") "
                + "left in \(swept.directory) by a server that was stopped mid-upload\n")
        }
        if let retired = await gateway.retireIndexesThatRefuseUploads() {
            AccessLog.writeToStandardError("poi serve: \(retired)\n")
        }
        // Read once: the map's files never change while the server runs, and a missing package
        // is said here, at start, as well as on the page.
        let mapAssets = MapAssets.load(from: configuration.leafletDirectory)
        if let problem = mapAssets.leafletProblem {
            AccessLog.writeToStandardError("poi serve: GET /map cannot show a map: \(problem)\n")
        }
        let router = buildRouter(gateway: gateway, imaging: imagingPool, mapAssets: mapAssets)
        var logger = Logger(label: "poi-serve")
        logger.logLevel = .warning
        let listening = ListeningState()
        let app = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [
                ExpectContinueHandler(),
                CachedDownloadHandler.Installer { [configuration] in
                    CachedDownloadHandler(jsonLog: configuration.jsonLog, corsEnabled: configuration.corsOrigin != nil,
                                          lookup: gateway.cachedDownload)
                },
            ],
                                                idleTimeout: .milliseconds(configuration.idleTimeoutMS))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: nil),
            onServerRunning: { channel in
                await listening.set()
                await onListening(channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
        var groupConfiguration = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        // After the grace period, graceful shutdown becomes cancellation: a paced download's wait
        // for the socket is cancellable, so the handler ends and Hummingbird closes its connection.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGraceSeconds)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch {
            guard await listening.value else {
                throw .cannotListen(address: "\(configuration.host):\(configuration.port)", reason: Self.reason(error))
            }
            // Cancelled at the end of the grace period: the stop the signal asked for.
            if error is CancellationError { return }
            throw .failed(String(describing: error))
        }
    }

    /// `address already in use` rather than NIO's `bind(descriptor:ptr:bytes:): Address already
    /// in use (errno: 98)`: the message names the address itself.
    static func reason(_ error: any Error) -> String {
        guard let io = error as? IOError else { return String(describing: error) }
        let text = String(cString: strerror(io.errnoCode))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    func buildRouter(gateway: StoreGateway, imaging: NIOThreadPool, mapAssets: MapAssets) -> Router<ServeContext> {
        // HEAD on every GET route, as Express answers it (load balancers probe `HEAD /`).
        let router = Router(context: ServeContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: AccessLogMiddleware(json: configuration.jsonLog))
        if let origin = configuration.corsOrigin {
            router.add(middleware: CORSMiddleware(allowOrigin: .custom(origin),
                                                  allowHeaders: [.contentType, .authorization, .accept, .range, .ifNoneMatch,
                                                                 .ifMatch, .ifRange, .ifModifiedSince, .ifUnmodifiedSince],
                                                  allowMethods: [.get, .head, .post, .put, .delete, .options],
                                                  exposedHeaders: CORSExposedHeadersMiddleware<ServeContext>.exposed))
            router.add(middleware: CORSExposedHeadersMiddleware())
        }
        // Inside CORS, so that CORS adds its headers to an error's own status and body (it turns
        // an error thrown through it into an empty 500).
        router.add(middleware: ErrorResponseMiddleware())
        // Before anything reads them: conditional and range headers a generated client
        // percent-encoded (RequestHeaderForms says when that cannot be mistaken).
        router.add(middleware: PercentEncodedHeadersMiddleware())
        // Outside the validators: a 304 has no body to compress.
        router.add(middleware: CompressionMiddleware())
        router.add(middleware: ConditionalGETMiddleware())
        // Before the write token: a method no path has is a 405 for everyone, token or not.
        router.add(middleware: MethodNotAllowedMiddleware(operations: .served))
        // An empty token guards too (no Bearer value matches it): a library caller that sets one
        // asked for guarded writes, and must never get open ones by mistake.
        if let token = configuration.writeToken {
            router.add(middleware: WriteTokenMiddleware(token: Array(token.utf8)))
        }
        // One controller per kind of resource, each binding its operations of the OpenAPI
        // document (APIRoutes.swift); the server does not start with an operation unbound.
        router.addRoutes(APIRouteTable.collect([
            ServiceRoutes(gateway: gateway).routes,
            MapRoutes(configuration: configuration, assets: mapAssets).routes,
            FileRoutes(store: gateway, configuration: configuration, imaging: imaging).routes,
            CollectionRoutes(store: gateway, configuration: configuration).routes,
        ]))
        return router
    }
}

/// Why `poi serve` stopped other than by a signal.
public enum ServeError: Error, CustomStringConvertible, Sendable {
    /// The database did not answer a ping at start (its description never holds the password).
    case databaseUnreachable(StoreError)
    /// Binding `address` failed (in use, not an address of this machine, no permission).
    case cannotListen(address: String, reason: String)
    case failed(String)

    public var description: String {
        switch self {
        case .databaseUnreachable(let error): return error.description
        case .cannotListen(let address, let reason): return "cannot listen on \(address): \(reason)"
        case .failed(let message): return message
        }
    }
}

/// Whether the server got as far as listening: an error before that is a failure to listen.
private actor ListeningState {
    private(set) var value = false
    func set() { value = true }
}
