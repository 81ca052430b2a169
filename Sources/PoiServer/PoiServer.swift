import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import PoiStore
import ServiceLifecycle

/// `poi serve`: the TourMyTown backend's REST API over PoiStore (DESIGN.md §7).
public struct PoiServer: Sendable {
    public let configuration: ServerConfiguration
    let database: MongoDatabase
    let files: any FileStore

    public init(configuration: ServerConfiguration, database: MongoDatabase, files: any FileStore) {
        self.configuration = configuration
        self.database = database
        self.files = files
    }

    /// Serves until SIGTERM or SIGINT, then lets in-flight requests finish and returns.
    /// `onListening` gets the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let databasePool = NIOThreadPool(numberOfThreads: configuration.databaseThreads)
        let imagingPool = NIOThreadPool(numberOfThreads: max(1, min(2, ProcessInfo.processInfo.activeProcessorCount)))
        databasePool.start()
        imagingPool.start()
        let gateway = StoreGateway(database: database, files: files, pool: databasePool,
                                   queryTimeoutMS: configuration.queryTimeoutMS, stagingFallback: configuration.stagingDirectory)
        let router = buildRouter(gateway: gateway, imaging: imagingPool)
        var logger = Logger(label: "poi-serve")
        logger.logLevel = .warning
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
        do {
            try await group.run()
        } catch {
            try? await databasePool.shutdownGracefully()
            try? await imagingPool.shutdownGracefully()
            throw error
        }
        try? await databasePool.shutdownGracefully()
        try? await imagingPool.shutdownGracefully()
    }

    func buildRouter(gateway: StoreGateway, imaging: NIOThreadPool) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.add(middleware: AccessLogMiddleware(json: configuration.jsonLog))
        if let origin = configuration.corsOrigin {
            router.add(middleware: CORSMiddleware(allowOrigin: .custom(origin),
                                                  allowHeaders: [.contentType, .authorization, .accept, .range, .ifNoneMatch],
                                                  allowMethods: [.get, .head, .post, .put, .delete, .options],
                                                  exposedHeaders: ["ETag", "Content-Range", "Content-Length", "Last-Modified"]))
        }
        // An empty token guards too (no Bearer value matches it): a library caller that sets one
        // asked for guarded writes, and must never get open ones by mistake.
        if let token = configuration.writeToken {
            router.add(middleware: WriteTokenMiddleware(token: Array(token.utf8)))
        }
        let collections = CollectionRoutes(store: gateway, configuration: configuration)
        let fileRoutes = FileRoutes(store: gateway, configuration: configuration, imaging: imaging)

        router.get("/") { _, _ in
            Reply.html(Array("<html><body><h1>Hello World</h1></body></html>".utf8))
        }
        router.get("/healthz") { _, _ in
            var problems: [String] = []
            do throws(APIError) { try await gateway.ping() } catch { problems.append("database: \(error.message)") }
            if let uploads = await gateway.uploadsProblem() { problems.append("uploads: \(uploads)") }
            var out: [UInt8] = []
            ExpressJSON.append(BSONDocument([
                ("ok", .bool(problems.isEmpty)),
                ("problems", .array(problems.map(BSONValue.string))),
            ]), to: &out)
            return Reply.json(out, status: problems.isEmpty ? .ok : .serviceUnavailable)
        }

        router.post("/files") { request, _ in try await fileRoutes.upload(request) }
        router.get("/files/:id") { request, context in
            try await fileRoutes.download(request, id: pathParameter(context, "id"), thumbnail: false, head: false, channel: context.channel)
        }
        router.head("/files/:id") { request, context in
            try await fileRoutes.download(request, id: pathParameter(context, "id"), thumbnail: false, head: true, channel: context.channel)
        }
        router.get("/files/:id/thumbnail") { request, context in
            try await fileRoutes.download(request, id: pathParameter(context, "id"), thumbnail: true, head: false, channel: context.channel)
        }
        router.head("/files/:id/thumbnail") { request, context in
            try await fileRoutes.download(request, id: pathParameter(context, "id"), thumbnail: true, head: true, channel: context.channel)
        }
        // `files` is also a collection like any other for listing, PUT and DELETE (the
        // reference's routing): the constant path segment needs its own routes.
        router.get("/files") { request, _ in try await collections.list(request, StoreLayout.files) }
        router.put("/files/:id") { request, context in
            try await collections.replace(request, StoreLayout.files, pathParameter(context, "id"))
        }
        router.delete("/files/:id") { _, context in
            try await collections.delete(StoreLayout.files, pathParameter(context, "id"))
        }

        router.get("/:collection") { request, context in
            try await collections.list(request, pathParameter(context, "collection"))
        }
        router.post("/:collection") { request, context in
            try await collections.create(request, pathParameter(context, "collection"))
        }
        router.get("/:collection/:entity") { _, context in
            try await collections.get(pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        router.put("/:collection/:entity") { request, context in
            try await collections.replace(request, pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        router.delete("/:collection/:entity") { _, context in
            try await collections.delete(pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        return router
    }
}
