import Foundation
@testable import PoiServer
import Testing

/// The OpenAPI document describes exactly the routes `poi serve` has — a route
/// without an operation, or an operation without a route, fails — and is what the server serves.
@Suite struct OpenAPIDocumentTests {
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

    /// The routes `PoiServer.buildRouter` registers, read from its source: `router.get("/files/:id")`
    /// is `GET /files/{id}`.
    static func routedOperations() throws -> Set<String> {
        let source = try String(contentsOf: ServeHarness.repoRoot.appendingPathComponent("Sources/PoiServer/PoiServer.swift"),
                                encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"router\.(get|head|post|put|delete|patch)\("([^"]+)"\)"#)
        var operations = Set<String>()
        for match in pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            let method = String(source[Range(match.range(at: 1), in: source)!]).uppercased()
            let path = String(source[Range(match.range(at: 2), in: source)!])
                .split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                .joined(separator: "/")
            operations.insert("\(method) \(path)")
        }
        return operations
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
