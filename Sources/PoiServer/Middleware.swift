import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore

/// One line per request on stderr: method, path (query values left out: they can hold
/// anything), status, body bytes, milliseconds to the response head. Text, or JSON lines.
/// Also the one place where an `APIError` (or a routing error) becomes a response.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let json: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = Reply.error(error)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            response = Reply.error(.internalError("internal error"))
        }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let bytes = response.body.contentLength ?? response.headers[.contentLength].flatMap(Int.init) ?? 0
        log(method: request.method.rawValue, path: Self.loggedPath(request.uri), status: response.status.code, bytes: bytes, ms: ms)
        return response
    }

    /// `/locations?query&limit`: the path and which parameters were given, not their values.
    static func loggedPath(_ uri: URI) -> String {
        let path = uri.path
        guard let query = uri.query, !query.isEmpty else { return path }
        let keys = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
        return path + "?" + keys.joined(separator: "&")
    }

    func log(method: String, path: String, status: Int, bytes: Int, ms: Double) {
        let msText = String(format: "%.1f", ms)
        let line: String
        if json {
            var out: [UInt8] = []
            ExpressJSON.appendString(path, to: &out)
            let time = ExpressJSON.isoString(.init(Date())) ?? ""
            line = "{\"time\":\"\(time)\",\"method\":\"\(method)\",\"path\":\(String(decoding: out, as: UTF8.self)),"
                + "\"status\":\(status),\"bytes\":\(bytes),\"ms\":\(msText)}\n"
        } else {
            // Control characters never reach the terminal: the path is the client's.
            let safe = path.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "%" + String(format: "%02X", $0.value) : String($0) }.joined()
            line = "\(method) \(safe) \(status) \(bytes) \(msText)ms\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// With a write token configured, every method but GET/HEAD/OPTIONS needs `Authorization:
/// Bearer <token>`; reads stay open.
struct WriteTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch request.method {
        case .get, .head, .options: return try await next(request, context)
        default: break
        }
        let given = request.headers[.authorization].flatMap { header -> [UInt8]? in
            guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
            return Array(header.dropFirst(7).utf8)
        }
        guard let given, Self.constantTimeEqual(given, token) else { throw APIError.unauthorized }
        return try await next(request, context)
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }
}
