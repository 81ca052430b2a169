import Foundation

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

    let paths: [PathItem]

    /// The document `poi serve` serves (parsed once; it is a constant of the program).
    static let served = DocumentedOperations(document: OpenAPIDocument.bytes)

    init(document: [UInt8]) {
        let object = (try? JSONSerialization.jsonObject(with: Data(document))) as? [String: Any]
        let paths = object?["paths"] as? [String: [String: Any]] ?? [:]
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
