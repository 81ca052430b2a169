import Foundation
import HTTPTypes

/// The operations the OpenAPI document declares, read from the document itself: which path
/// template a request's path falls under, the methods declared there (a 405's `Allow`), and the
/// statuses each operation documents. Reading them from the document keeps the 405s and the
/// document from ever disagreeing.
struct DocumentedOperations: Sendable {
    enum Segment: Sendable, Equatable {
        case constant(String)
        case parameter
    }

    /// One path of the document (`/files/{id}`) and its operations, by upper-case method.
    struct PathItem: Sendable {
        let template: String
        let segments: [Segment]
        /// Documented statuses (`"200"`, `"304"`) of each method's operation.
        let statuses: [String: Set<String>]

        /// The declared methods in the order a reader expects them, for `Allow`.
        var allowed: [String] {
            ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"].filter { statuses[$0] != nil }
        }
    }

    /// One operation: its `operationId`, method and path template.
    struct Operation: Sendable, Hashable {
        let id: String
        let method: HTTPRequest.Method
        /// As the document writes it: `/files/{id}`.
        let path: String

        /// As the router writes it: `/files/:id`.
        var routerPath: String {
            path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : String(segment)
            }.joined(separator: "/")
        }
    }

    let paths: [PathItem]
    /// Every operation that has an `operationId`, in no particular order.
    let operations: [Operation]

    /// The document `poi serve` serves (parsed once; it is a constant of the program).
    static let served = DocumentedOperations(document: OpenAPIDocument.bytes)

    init(document: [UInt8]) {
        let object = (try? JSONSerialization.jsonObject(with: Data(document))) as? [String: Any]
        let paths = object?["paths"] as? [String: [String: Any]] ?? [:]
        var operations: [Operation] = []
        for (template, item) in paths {
            for (method, operation) in item {
                guard let id = (operation as? [String: Any])?["operationId"] as? String,
                      let method = HTTPRequest.Method(method.uppercased()) else { continue }
                operations.append(Operation(id: id, method: method, path: template))
            }
        }
        self.operations = operations
        self.paths = paths.map { template, item in
            var statuses: [String: Set<String>] = [:]
            for (method, operation) in item {
                guard let responses = (operation as? [String: Any])?["responses"] as? [String: Any] else { continue }
                statuses[method.uppercased()] = Set(responses.keys)
            }
            let segments: [Segment] = template.split(separator: "/").map {
                $0.hasPrefix("{") ? .parameter : .constant(String($0))
            }
            return PathItem(template: template, segments: segments, statuses: statuses)
        }
    }

    /// The operation whose `operationId` is `id`.
    func operation(id: String) -> Operation? { operations.first { $0.id == id } }

    /// The path item the router resolves `path` to, or nil (a 404). As Hummingbird's trie does,
    /// a segment equal to a constant of some route is taken as that constant, never as a
    /// parameter: `/healthz/x` is no `/{collection}/{entity}`, it is nothing.
    func pathItem(matching path: String) -> PathItem? {
        let components = path.split(separator: "/")
        var candidates = paths.filter { $0.segments.count >= components.count }
        for (i, component) in components.enumerated() {
            let constants = candidates.filter { $0.segments[i] == .constant(String(component)) }
            candidates = constants.isEmpty ? candidates.filter { $0.segments[i] == .parameter } : constants
        }
        return candidates.first { $0.segments.count == components.count }
    }
}
