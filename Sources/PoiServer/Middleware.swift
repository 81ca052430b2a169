import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// One line per request on stderr: method, path (query values left out: they can hold
/// anything), status, body bytes, milliseconds to the response head. Text, or JSON lines.
/// Errors normally arrive as responses (`ErrorResponseMiddleware`); one thrown past it (by a
/// middleware outside it) is mapped here the same way.
///
/// A body is logged once it has been written, with the bytes handed to the connection: a
/// client that goes away mid-download is logged with what it was sent and marked `aborted`
/// (`"aborted":true`), not as a 200 of the whole file. Bytes are counted as the connection takes
/// them, so an aborted count can exceed what reached the client by what NIO and the kernel
/// still held (a write watermark, one read).
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let json: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try Reply.response(for: error, request: request, context: context)
        }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let line = PendingLogLine(json: json, method: request.method.rawValue, path: Self.loggedPath(request.uri),
                                  status: response.status.code, ms: ms)
        let declared = response.body.contentLength ?? response.headers[.contentLength].flatMap(Int.init) ?? 0
        // A HEAD (its Content-Length is the GET's) and an empty body: nothing to count.
        if request.method == .head || response.body.contentLength == 0 {
            line.finish(bytes: declared, aborted: false)
            return response
        }
        // A small body of known length (a thumbnail, a short JSON answer) goes to the socket in
        // one write: logged as sent without wrapping it in a counting writer, which would make
        // it a streamed body and cost a fifth of such a request's time. Bodies cut off midway
        // are the large ones, still counted below.
        if let length = response.body.contentLength, length <= Self.countedBodyThreshold {
            line.finish(bytes: length, aborted: false)
            return response
        }
        let body = response.body
        let expected = body.contentLength
        response.body = ResponseBody(contentLength: expected) { writer in
            let counting = CountingBodyWriter(inner: writer, line: line)
            do {
                try await body.write(counting)
            } catch {
                line.finish(aborted: true)
                throw error
            }
            // A body that ended short of its Content-Length was cut off (bytes gone meanwhile).
            line.finish(aborted: expected.map { line.bytes < $0 } ?? false)
        }
        return response
    }

    /// Bodies up to this size are logged as sent without counting (see `handle`).
    static var countedBodyThreshold: Int { 64 * 1024 }

    /// `/locations?query&limit`: the path and which parameters were given, not their values.
    static func loggedPath(_ uri: URI) -> String {
        let path = uri.path
        guard let query = uri.query, !query.isEmpty else { return path }
        let keys = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
        return path + "?" + keys.joined(separator: "&")
    }
}

/// Writing the access log's lines (text, or JSON lines).
enum AccessLog {
    static func emit(json: Bool, method: String, path: String, status: Int, bytes: Int, ms: Double, aborted: Bool = false) {
        var out: [UInt8] = []
        out.reserveCapacity(96 + path.utf8.count)
        if json {
            out.append(contentsOf: #"{"time":""#.utf8)
            out.append(contentsOf: (ExpressJSON.isoString(.init(Date())) ?? "").utf8)
            out.append(contentsOf: #"","method":""#.utf8)
            out.append(contentsOf: method.utf8)
            out.append(contentsOf: #"","path":"#.utf8)
            ExpressJSON.appendString(path, to: &out)
            out.append(contentsOf: #","status":"#.utf8)
            appendDecimal(status, to: &out)
            out.append(contentsOf: #","bytes":"#.utf8)
            appendDecimal(bytes, to: &out)
            out.append(contentsOf: #","ms":"#.utf8)
            appendTenths(ms, to: &out)
            if aborted { out.append(contentsOf: #","aborted":true"#.utf8) }
            out.append(contentsOf: "}\n".utf8)
        } else {
            out.append(contentsOf: method.utf8)
            out.append(0x20)
            // Control characters never reach the terminal: the path is the client's.
            for b in path.utf8 {
                if b < 0x20 || b == 0x7F {
                    out.append(0x25)
                    out.append(hexDigits[Int(b >> 4)])
                    out.append(hexDigits[Int(b & 0xF)])
                } else {
                    out.append(b)
                }
            }
            out.append(0x20)
            appendDecimal(status, to: &out)
            out.append(0x20)
            appendDecimal(bytes, to: &out)
            out.append(0x20)
            appendTenths(ms, to: &out)
            out.append(contentsOf: "ms".utf8)
            if aborted { out.append(contentsOf: " aborted".utf8) }
            out.append(0x0A)
        }
        writeToStandardError(out)
    }

    // Built byte by byte: a line per request, and `String(format:)` plus a String per path
    // character took a third of a thumbnail download's time.
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        var digits: [UInt8] = []
        var v = value.magnitude
        repeat { digits.append(UInt8(0x30 + v % 10)); v /= 10 } while v > 0
        out.append(contentsOf: digits.reversed())
    }

    /// `ms` with one decimal, as "%.1f" writes it.
    private static func appendTenths(_ ms: Double, to out: inout [UInt8]) {
        let tenths = ms.isFinite ? Int(min(max(ms * 10, 0), 1e15).rounded(.toNearestOrEven)) : 0
        appendDecimal(tenths / 10, to: &out)
        out.append(0x2E)
        out.append(UInt8(0x30 + tenths % 10))
    }

    static func writeToStandardError(_ line: String) {
        writeToStandardError(Array(line.utf8))
    }

    /// A plain write(2): FileHandle.write traps when stderr's reader has gone (EPIPE; SIGPIPE is
    /// ignored by `poi serve`), and a log line nobody can read is dropped, never a crash.
    static func writeToStandardError(_ line: [UInt8]) {
        line.withUnsafeBufferPointer { bytes in
            guard bytes.count > 0 else { return }
            var offset = 0
            while offset < bytes.count {
                let n = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// One request's access-log line, written once: when its body has been written or failed, or,
/// for a response dropped before its body started (the connection closed first), when the
/// response goes away.
final class PendingLogLine: Sendable {
    private struct State { var bytes = 0; var written = false }
    private let state = Mutex(State())
    private let write: @Sendable (_ bytes: Int, _ aborted: Bool) -> Void

    init(json: Bool, method: String, path: String, status: Int, ms: Double) {
        write = { bytes, aborted in
            AccessLog.emit(json: json, method: method, path: path, status: status, bytes: bytes, ms: ms, aborted: aborted)
        }
    }

    var bytes: Int { state.withLock { $0.bytes } }

    func add(_ count: Int) { state.withLock { $0.bytes += count } }

    /// Writes the line with `bytes` (the count so far when nil), unless it was written already.
    func finish(bytes: Int? = nil, aborted: Bool) {
        let count: Int? = state.withLock { s in
            guard !s.written else { return nil }
            s.written = true
            return bytes ?? s.bytes
        }
        if let count { write(count, aborted) }
    }

    deinit {
        let (written, count) = state.withLock { ($0.written, $0.bytes) }
        if !written { write(count, true) }
    }
}

/// Passes a body's buffers on, adding each one the connection took to the request's log line.
struct CountingBodyWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    let line: PendingLogLine

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await inner.write(buffer)
        line.add(buffer.readableBytes)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        let inner = self.inner
        try await inner.finish(trailingHeaders)
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

/// Turns an `APIError` (or a routing error) into its response. It sits inside the CORS
/// middleware, which would otherwise wrap the thrown error and lose its status and body.
struct ErrorResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try Reply.response(for: error, request: request, context: context)
        }
    }
}

/// Answers `Expect: 100-continue` with `100 Continue` as soon as the head arrives, as Node does:
/// curl and libcurl clients send it before bodies over 1 MB and otherwise wait a second (their
/// timeout) before sending the body. Neither Hummingbird nor NIO's HTTP/1 pipeline answers it.
/// The route still decides about the body (413, 415, 401 are answered as usual).
/// A pipelined request's 100 waits for the end of the responses before it: written at once, it
/// would land inside another response's body. One handler per connection (event-loop bound).
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// One entry per request whose response has not ended, oldest first: whether it still
    /// waits for its `100 Continue`.
    private var pending = CircularBuffer<Bool>()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let expects = head.headerFields[values: .expect].contains { $0.lowercased() == "100-continue" }
            if expects && pending.isEmpty {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
                pending.append(false)
            } else {
                pending.append(expects)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        context.write(data, promise: promise)
        guard case .end = part, !pending.isEmpty else { return }
        pending.removeFirst()
        if pending.first == true {
            pending[pending.startIndex] = false
            // Flushed with the response's end, which the writer flushes next.
            context.write(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
    }
}

/// `If-None-Match` on the JSON, GeoJSON and HTML answers, as Express answers it: a GET or HEAD
/// whose 200 carries an ETag (`Reply.expressETag`) that the client already has is a 304 with
/// that ETag and no body. File downloads answer their own conditional requests (`FileRoutes`),
/// with the stored file's tag, before this sees them.
struct ConditionalGETMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard request.method == .get || request.method == .head, response.status == .ok,
              let etag = response.headers[.eTag], let header = request.headers[.ifNoneMatch],
              Self.matches(header, etag) else { return response }
        var notModified = FileRoutes.notModified(response.headers)
        // A 304 carries the Vary its 200 would (RFC 9110 §15.4.5): the compression outside adds
        // it only to answers whose type it compresses, and a 304 has no type.
        if let type = response.headers[.contentType].map(MediaType.essence(of:)),
           CompressionMiddleware<Context>.compressible.contains(type) {
            notModified.headers[.vary] = response.headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        }
        return notModified
    }

    /// Weak comparison (RFC 9110 §13.1.2): `*`, or a listed tag equal to ours once any `W/` is set aside.
    static func matches(_ header: String, _ etag: String) -> Bool {
        let ours = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { raw in
            let tag = raw.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == ours
        }
    }
}

/// `Access-Control-Expose-Headers` on the answers themselves, where browsers read it: Hummingbird's
/// `CORSMiddleware` sends it only on a preflight, where it is ignored, so a web app's `fetch`
/// could not see `Link` (the next page), `X-Results-Truncated`, `ETag` or `Retry-After`.
struct CORSExposedHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var exposed: [String] {
        ["ETag", "Link", "X-Results-Truncated", "Retry-After", "Content-Range", "Content-Length", "Last-Modified"]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.headers[.origin] != nil, request.method != .options else { return try await next(request, context) }
        var response = try await next(request, context)
        response.headers[.accessControlExposeHeaders] = Self.exposed.joined(separator: ", ")
        return response
    }
}
