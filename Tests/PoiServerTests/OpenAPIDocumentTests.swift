import Foundation
@testable import PoiServer
import PoiTestSupport
import Testing

/// The OpenAPI document describes exactly the routes `poi serve` has — a route
/// without an operation, or an operation without a route, fails — and is what the server serves.
@Suite(.tags(.live, .process)) struct OpenAPIDocumentTests {
    static func documentedOperations() throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
        #expect(object["openapi"] as? String == "3.1.0")
        let paths = try #require(object["paths"] as? [String: [String: Any]])
        var operations = Set<String>()
        for (path, item) in paths {
            for method in item.keys where ["get", "head", "post", "put", "delete", "patch", "options"].contains(method) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    /// The routes `PoiServer.buildRouter` registers: the route table's operations, at the
    /// method and path the document gives each (`GET /files/{id}`).
    static func routedOperations() throws -> Set<String> {
        // A case the document lacks shows as "NO OPERATION name" among the undocumented routes.
        Set(APIRoute.allCases.map { route in
            guard let operation = DocumentedOperations.served.operation(id: route.rawValue) else {
                return "NO OPERATION \(route.rawValue)"
            }
            return "\(operation.method.rawValue) \(operation.path)"
        })
    }

    /// A path template becomes the router's form: `{id}` is the parameter `:id`.
    @Test func theRouterPathOfAnOperationNamesItsParameters() throws {
        #expect(APIRoute.downloadThumbnail.operation.routerPath == "/files/:id/thumbnail")
        #expect(APIRoute.getDocument.operation.routerPath == "/:collection/:entity")
        #expect(APIRoute.hello.operation.routerPath == "/")
        #expect(APIRoute.leafletImage.operation.routerPath == "/assets/leaflet/images/:file")
    }

    @Test func everyRouteIsDocumentedAndEveryOperationRouted() throws {
        let documented = try Self.documentedOperations(), routed = try Self.routedOperations()
        #expect(routed.count >= 15, "the route scan found \(routed.count)")
        #expect(routed.subtracting(documented).sorted() == [], "routes the document does not describe")
        // HEAD is answered for every GET route (`.autoGenerateHeadEndpoints`).
        let answered = routed.union(routed.filter { $0.hasPrefix("GET ") }.map { "HEAD " + $0.dropFirst(4) })
        #expect(documented.subtracting(answered).sorted() == [], "operations no route answers")
    }

    @Test(.liveServer) func theServerServesIt() throws {
        let s = try ServeHarness("openapi")
        let r = try s.get("/openapi.json")
        #expect(r.status == 200)
        #expect(r.header("content-type") == "application/json; charset=utf-8")
        #expect(r.body == OpenAPIDocument.bytes)
    }
}
