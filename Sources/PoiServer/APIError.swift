import HTTPTypes
import Hummingbird
import PoiStore

/// Every way a request can fail, with the status and JSON body the client sees: the one place
/// where errors become HTTP. Messages are for users (they never hold a URI or its password).
enum APIError: Error, Sendable {
    /// `{"error":"invalid id"}`, exactly as the reference answers.
    case invalidId
    /// The reference's answer to a `?query=` that is not JSON: `{"error":"bad query"}`.
    case badQuery
    /// A query with server-side JavaScript: the operator is named.
    case forbiddenOperator(String, reason: String)
    case badRequest(String)
    case badCollection(String)
    case unauthorized
    /// The reference answers an unknown file with this text, not JSON.
    case fileNotFound
    case notFound(String)
    case payloadTooLarge(limit: Int)
    /// An image with more pixels than the server decodes: its bytes cannot be checked.
    case imageTooLarge(String)
    /// The server cannot do this now (out of memory, shutting down); the client may retry.
    case unavailable(String)
    /// A database call got no answer within the request's deadline (query timeout plus margin).
    case databaseTimeout(Duration)
    /// The replica set has no primary to answer (an election or a failover): the detail says
    /// what the server said. The client retries after `Retry-After`.
    case noPrimary(String)
    case unsupportedMediaType(String)
    /// A method the path does not have (its `Allow`: the methods it has).
    case methodNotAllowed(String, allowed: [String])
    case rangeNotSatisfiable(length: Int)
    /// If-Match or If-Unmodified-Since not met (RFC 9110 §13.1.1, §13.1.4); `etag`: the stored
    /// file's, sent with the 412 so the client sees which version is there.
    case preconditionFailed(String, etag: String?)
    case store(StoreError)
    case internalError(String)

    var status: HTTPResponse.Status {
        switch self {
        case .invalidId, .badQuery, .forbiddenOperator, .badRequest, .badCollection: return .badRequest
        case .unauthorized: return .unauthorized
        case .fileNotFound, .notFound: return .notFound
        case .payloadTooLarge, .imageTooLarge: return .contentTooLarge
        case .unavailable, .databaseTimeout, .noPrimary: return .serviceUnavailable
        case .unsupportedMediaType: return .unsupportedMediaType
        case .methodNotAllowed: return .methodNotAllowed
        case .rangeNotSatisfiable: return .rangeNotSatisfiable
        case .preconditionFailed: return .preconditionFailed
        case .store(let error):
            switch error {
            case .refusedQuery: return .badRequest
            case .unsupportedContentType: return .unsupportedMediaType
            // A files document whose bytes are gone: the reference's 404; damaged bytes are
            // never served (a 500 that names what is wrong, as `poi gc` reports it).
            case .bytesMissing: return .notFound
            case .unreachable, .network, .tls: return .serviceUnavailable
            // 50 MaxTimeMSExpired: the query took too long.
            case .server(let code, _, _, _):
                if code == 50 { return .gatewayTimeout }
                // The client's document collides with one already stored (`_id`, `importKey`).
                if code == ServerErrorCode.duplicateKey { return .conflict }
                // Not primary, shutting down, a network hop inside the cluster: retry later.
                if error.isTransient { return .serviceUnavailable }
                if ServerErrorCode.serverSide.contains(code) { return .internalServerError }
                // Every other refusal (168 unknown operator, 16020 wrong arguments, 241 failed
                // conversion, 2 BadValue, …) is of the client's own filter or document: 400
                // with the database's message, as the reference answers.
                return .badRequest
            default: return .internalServerError
            }
        case .internalError: return .internalServerError
        }
    }

    /// The body: JSON `{"error": …}` (plus the operator for a refused query), except the
    /// reference's plain-text 404 for files.
    var body: (contentType: String, bytes: [UInt8]) {
        switch self {
        case .fileNotFound: return ("text/html; charset=utf-8", Array("file not found".utf8))
        case .forbiddenOperator(let op, let reason):
            return json([("error", reason), ("operator", op)])
        default: return json([("error", message)])
        }
    }

    var message: String {
        switch self {
        case .invalidId: return "invalid id"
        case .badQuery: return "bad query"
        case .forbiddenOperator(_, let reason): return reason
        case .badRequest(let m): return m
        case .badCollection(let m): return m
        case .unauthorized: return "this server needs Authorization: Bearer <token> for writes"
        case .fileNotFound: return "file not found"
        case .notFound(let m): return m
        case .payloadTooLarge(let limit): return "the body is larger than the \(limit)-byte limit"
        case .unsupportedMediaType(let m): return m
        case .methodNotAllowed(let method, let allowed):
            // A method is an HTTP token (no spaces, quotes or control characters): printed as sent.
            return "\(method) is not a method of this path; it has \(allowed.joined(separator: ", "))"
        case .imageTooLarge(let m), .unavailable(let m): return m
        case .databaseTimeout(let limit):
            let ms = limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000
            return "the database did not answer within \(Double(ms) / 1000) s"
        case .noPrimary(let detail):
            return "the database has no primary to answer now (a replica-set election or failover: \(detail)); retry in a few seconds"
        case .rangeNotSatisfiable: return "range not satisfiable"
        case .preconditionFailed(let reason, _): return "precondition failed: \(reason)"
        case .store(let error):
            switch error {
            case .refusedQuery(let reason): return reason
            case .server(let code, _, _, _) where code == 50: return "the query took longer than the server's time limit"
            // The server's message names the database, the collection and the index: a client
            // is told the field it sent twice, in its own terms, and nothing of the database's.
            case .server(let code, _, let message, _) where code == ServerErrorCode.duplicateKey:
                let field = Self.duplicateKeyField(message)
                if field == "_id" { return "a document with this _id already exists" }
                return "a document with the same \(field ?? "unique key") already exists"
            default: return error.description
            }
        case .internalError(let m): return m
        }
    }

    /// `importKey` from "E11000 duplicate key error collection: db.locations index: importKey_1
    /// dup key: { importKey: "x" }": the first field the server names in `dup key`, else the field
    /// of a one-field index named the default way (`<field>_1`); nil when neither says.
    static func duplicateKeyField(_ message: String) -> String? {
        if let marker = message.range(of: "dup key: { ") {
            let field = message[marker.upperBound...].prefix { $0 != ":" && $0 != " " && $0 != "\"" }
            if !field.isEmpty { return String(field) }
        }
        guard let marker = message.range(of: " index: ") else { return nil }
        let index = message[marker.upperBound...].prefix { $0 != " " }
        if index == "_id_" { return "_id" }
        for suffix in ["_1", "_-1"] where index.hasSuffix(suffix) {
            let field = index.dropLast(suffix.count)
            if !field.isEmpty, !field.contains("_1"), !field.contains("_-1") { return String(field) }
        }
        return nil
    }

    private func json(_ pairs: [(String, String)]) -> (contentType: String, bytes: [UInt8]) {
        var out: [UInt8] = [0x7B]
        for (i, (k, v)) in pairs.enumerated() {
            if i > 0 { out.append(0x2C) }
            ExpressJSON.appendString(k, to: &out)
            out.append(0x3A)
            ExpressJSON.appendString(v, to: &out)
        }
        out.append(0x7D)
        return ("application/json; charset=utf-8", out)
    }
}

/// Hummingbird's way for an error to carry its own answer: whatever throws an `APIError` (a
/// handler, a middleware) gets the same status, body and headers (`Reply.error`).
extension APIError: HTTPResponseError {
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.error(self)
    }
}
