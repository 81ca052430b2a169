import PoiDigest
import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore

/// Small builders for the responses the routes send.
enum Reply {
    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        bytesResponse(status, contentType: "application/json; charset=utf-8", bytes)
    }

    static func html(_ bytes: [UInt8]) -> Response {
        bytesResponse(.ok, contentType: "text/html; charset=utf-8", bytes)
    }

    static func bytesResponse(_ status: HTTPResponse.Status, contentType: String?, _ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        if let contentType { headers[.contentType] = contentType }
        headers[.contentLength] = String(bytes.count)
        if status == .ok { headers[.eTag] = expressETag(bytes) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The reference's answer for a document that is not there: 200 with an empty body (Express
    /// sends `null` as nothing, with no Content-Type). The body stays the reference's; the type
    /// is ours, so that a client generated from the OpenAPI document, which picks a decoder by
    /// the type, can tell "no such document" (empty text) from a document (JSON).
    static func emptyOK() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = "0"
        headers[.eTag] = expressETag([])
        return Response(status: .ok, headers: headers, body: ResponseBody())
    }

    /// The weak validator Express's `res.send` puts on every body (its `etag` package): the
    /// length in hex and the first 27 characters of the base64 SHA-1 of the bytes. The same
    /// bytes get the same tag from both servers, so an app's cache filled by the tutorial's
    /// server revalidates against `poi serve` (SHA-1 identifies content here; nothing relies
    /// on it being hard to collide: a tag is only compared with the client's own copy's).
    static func expressETag(_ bytes: [UInt8]) -> String {
        let digest = Data(SHA1.hash(data: bytes)).base64EncodedString()
        return "W/\"\(String(bytes.count, radix: 16))-\(digest.prefix(27))\""
    }

    /// `Retry-After` on a 503: about the length of a replica-set election.
    static let retryAfterSeconds = 5

    /// Any error a handler or middleware throws, as the client sees it.
    static func response(for error: any Error, request: Request, context: some RequestContext) throws -> Response {
        // `APIError` is an `HTTPResponseError` too; Hummingbird's own (a 404 of the router) answer
        // as Hummingbird writes them.
        guard let error = error as? any HTTPResponseError else { return Self.error(.internalError("internal error")) }
        return try error.response(from: request, context: context)
    }

    static func error(_ error: APIError) -> Response {
        let body = error.body
        var response = bytesResponse(error.status, contentType: body.contentType, body.bytes)
        if case .rangeNotSatisfiable(let length) = error { response.headers[.contentRange] = "bytes */\(length)" }
        if case .unauthorized = error { response.headers[.wwwAuthenticate] = "Bearer" }
        if case .methodNotAllowed(_, let allowed) = error { response.headers[.allow] = allowed.joined(separator: ", ") }
        if case .preconditionFailed(_, let etag?) = error { response.headers[.eTag] = etag }
        // Every 503 is "not now": an election, a stalled or unreachable database, a server
        // going down. Clients and proxies back off for this long rather than retry at once.
        if error.status == .serviceUnavailable { response.headers[.retryAfter] = String(Self.retryAfterSeconds) }
        return response
    }
}

extension Request {
    /// Reads a body of at most `limit` bytes (JSON documents; uploads stream instead).
    func collectBody(limit: Int) async throws(APIError) -> ByteBuffer {
        if let declared = headers[.contentLength].flatMap(Int.init), declared > limit { throw .payloadTooLarge(limit: limit) }
        var collected = ByteBuffer()
        do {
            for try await var chunk in body {
                guard collected.readableBytes + chunk.readableBytes <= limit else { throw APIError.payloadTooLarge(limit: limit) }
                collected.writeBuffer(&chunk)
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw .badRequest("the request body ended early")
        }
        return collected
    }

    /// The value of query parameter `name` (the first, when repeated), decoded as Express's `qs`
    /// and every form encoder mean it: `+` is a space, then percent-decoding. Hummingbird's
    /// `queryParameters` keeps `+`, so a `query` holding a space sent by Python `requests`,
    /// `curl --data-urlencode` or `URLSearchParams` matched nothing.
    func queryValue(_ name: String) -> String? {
        QueryString.value(of: name, in: uri.query)
    }
}

/// Path parameters arrive percent-encoded.
func pathParameter(_ context: some RequestContext, _ name: String) -> String {
    let raw = context.parameters.get(name) ?? ""
    return raw.removingPercentEncoding ?? raw
}

import Foundation

/// `application/x-www-form-urlencoded` decoding of a URL's query, as Express reads it.
enum QueryString {
    static func value(of name: String, in query: String?) -> String? {
        guard let query, !query.isEmpty else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard decode(parts[0]) == name else { continue }
            return parts.count > 1 ? decode(parts[1]) : ""
        }
        return nil
    }

    /// `+` as a space, then `%XX`; a malformed escape is kept as sent (as `qs` keeps it).
    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
