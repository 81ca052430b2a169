import Hummingbird
import PoiStore

/// The server's own pages: the reference's greeting at `/`, the health check a load balancer or
/// an orchestrator polls, and the OpenAPI document.
struct ServiceRoutes: Sendable {
    let gateway: StoreGateway

    var routes: APIRouteTable {
        var routes = APIRouteTable()
        // A browser gets a link to the map; any other client the reference's bytes.
        routes.add(.hello) { request, _ in
            var response = Reply.html(CollectionRoutes.wantsHTML(request.headers[.accept]) ? MapRoutes.browserHello : MapRoutes.hello)
            response.headers[.vary] = "Accept"
            return response
        }
        let gateway = gateway
        routes.add(.health) { _, _ in await Self.health(gateway) }
        // Shadows a collection named `openapi.json`, as `/healthz` shadows `healthz`.
        routes.add(.openapi) { _, _ in Reply.json(OpenAPIDocument.bytes) }
        return routes
    }

    /// 200 `{"ok":true,"problems":[]}`, or 503 naming what is wrong (the database, the uploads folder).
    static func health(_ gateway: StoreGateway) async -> Response {
        var problems: [String] = []
        if let database = await gateway.databaseProblem() { problems.append("database: \(database)") }
        if let uploads = await gateway.uploadsProblem() { problems.append("uploads: \(uploads)") }
        var out: [UInt8] = []
        ExpressJSON.append(BSONDocument([
            ("ok", .bool(problems.isEmpty)),
            ("problems", .array(problems.map(BSONValue.string))),
        ]), to: &out)
        return Reply.json(out, status: problems.isEmpty ? .ok : .serviceUnavailable)
    }
}
