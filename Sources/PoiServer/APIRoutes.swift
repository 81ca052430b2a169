import HTTPTypes
import Hummingbird
import PoiStore

/// The server's route table: one case per operation of the OpenAPI document
/// (`Resources/openapi.json`) that has a handler of its own, named by its `operationId`.
///
/// The method and the path of each route are read from the document, never written here, so
/// the router and the contract cannot disagree: a case the document lacks, or a document
/// operation without a case, fails `OpenAPIDocumentTests`, and a case no controller binds stops
/// the server at start (`APIRouteTable.collect`). The document's other operations are the `HEAD`
/// of a `GET` path, which the router answers from that `GET` route (`.autoGenerateHeadEndpoints`,
/// as Express does).
enum APIRoute: String, CaseIterable, Sendable {
    // ServiceRoutes
    case hello, health, openapi
    // MapRoutes
    case map, mapAsset, leafletAsset, leafletImage
    // FileRoutes: the bytes of a stored photo and its thumbnail, and uploads
    case uploadFile, downloadFile, headFile, downloadThumbnail, headThumbnail
    // CollectionRoutes: any collection's documents, `files` and `locations` included
    case listFiles, replaceFileDocument, deleteFile
    case listLocations, createLocation, getLocation, replaceLocation, deleteLocation
    case listDocuments, createDocument, getDocument, replaceDocument, deleteDocument

    /// The document's method and path (`/files/{id}`) for this operation.
    var operation: DocumentedOperations.Operation {
        guard let operation = DocumentedOperations.served.operation(id: rawValue) else {
            // A program error, not a runtime condition: the document is compiled in.
            preconditionFailure("the OpenAPI document has no operation \(rawValue)")
        }
        return operation
    }
}

/// Routes of one controller, added by operation: `routes.add(.downloadFile) { ... }` puts the
/// handler at the method and path the document gives `downloadFile`. Which operations were bound
/// is kept, so that the server can refuse to start with one missing.
struct APIRouteTable {
    let collection = RouteCollection(context: ServeContext.self)
    private(set) var bound: Set<APIRoute> = []

    mutating func add(_ route: APIRoute,
                      use handler: @Sendable @escaping (Request, ServeContext) async throws -> Response) {
        precondition(!bound.contains(route), "\(route.rawValue) is bound twice")
        bound.insert(route)
        let operation = route.operation
        collection.on(RouterPath(operation.routerPath), method: operation.method, use: handler)
    }

    /// Every controller's routes in one collection, after checking that each operation of the
    /// table has its handler.
    static func collect(_ tables: [APIRouteTable]) -> RouteCollection<ServeContext> {
        let all = RouteCollection(context: ServeContext.self)
        var bound: Set<APIRoute> = []
        for table in tables {
            precondition(bound.isDisjoint(with: table.bound), "an operation is bound by two controllers")
            bound.formUnion(table.bound)
            all.addRoutes(table.collection)
        }
        let missing = Set(APIRoute.allCases).subtracting(bound).map(\.rawValue).sorted()
        precondition(missing.isEmpty, "operations without a handler: \(missing)")
        return all
    }
}

// Each controller's routes, by operation: where a path's handler is found.

extension MapRoutes {
    /// Shadow a collection named `map` or `assets` for GET, as `/healthz` shadows `healthz`.
    var routes: APIRouteTable {
        var routes = APIRouteTable()
        let map = self
        routes.add(.map) { _, _ in map.page() }
        routes.add(.mapAsset) { _, context in try map.pageAsset(pathParameter(context, "file")) }
        routes.add(.leafletAsset) { _, context in try map.leafletAsset(pathParameter(context, "file")) }
        routes.add(.leafletImage) { _, context in try map.leafletAsset("images/" + pathParameter(context, "file")) }
        return routes
    }
}

extension FileRoutes {
    var routes: APIRouteTable {
        var routes = APIRouteTable()
        let files = self
        routes.add(.uploadFile) { request, _ in try await files.upload(request) }
        routes.add(.downloadFile) { request, context in
            try await files.download(request, id: pathParameter(context, "id"), thumbnail: false, head: false, channel: context.channel)
        }
        routes.add(.headFile) { request, context in
            try await files.download(request, id: pathParameter(context, "id"), thumbnail: false, head: true, channel: context.channel)
        }
        routes.add(.downloadThumbnail) { request, context in
            try await files.download(request, id: pathParameter(context, "id"), thumbnail: true, head: false, channel: context.channel)
        }
        routes.add(.headThumbnail) { request, context in
            try await files.download(request, id: pathParameter(context, "id"), thumbnail: true, head: true, channel: context.channel)
        }
        return routes
    }
}

extension CollectionRoutes {
    var routes: APIRouteTable {
        var routes = APIRouteTable()
        let collections = self
        // `files` is also a collection like any other for listing, PUT and DELETE (the
        // reference's routing): the constant path segment needs its own routes.
        routes.add(.listFiles) { request, _ in try await collections.list(request, StoreLayout.files) }
        routes.add(.replaceFileDocument) { request, context in
            try await collections.replace(request, StoreLayout.files, pathParameter(context, "id"))
        }
        routes.add(.deleteFile) { _, context in try await collections.delete(StoreLayout.files, pathParameter(context, "id")) }

        // The app's collection has operations of its own in the document (GeoJSON is for places
        // only). The router takes a constant segment over `:collection` and does not fall back,
        // so every method of `/locations` needs its route.
        routes.add(.listLocations) { request, _ in try await collections.list(request, StoreLayout.locations) }
        routes.add(.createLocation) { request, _ in try await collections.create(request, StoreLayout.locations) }
        routes.add(.getLocation) { _, context in
            try await collections.get(StoreLayout.locations, pathParameter(context, "entity"))
        }
        routes.add(.replaceLocation) { request, context in
            try await collections.replace(request, StoreLayout.locations, pathParameter(context, "entity"))
        }
        routes.add(.deleteLocation) { _, context in
            try await collections.delete(StoreLayout.locations, pathParameter(context, "entity"))
        }

        routes.add(.listDocuments) { request, context in
            try await collections.list(request, pathParameter(context, "collection"))
        }
        routes.add(.createDocument) { request, context in
            try await collections.create(request, pathParameter(context, "collection"))
        }
        routes.add(.getDocument) { _, context in
            try await collections.get(pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        routes.add(.replaceDocument) { request, context in
            try await collections.replace(request, pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        routes.add(.deleteDocument) { _, context in
            try await collections.delete(pathParameter(context, "collection"), pathParameter(context, "entity"))
        }
        return routes
    }
}
