import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import PoiStore

/// `GET|HEAD /files/:id` of a small disk-stored file whose document and bytes are both in memory
/// (thumbnails above all: a list screen loads dozens at once), answered on the connection's event
/// loop as the request head arrives, the way nginx answers a static file.
///
/// Why a channel handler, below the router: a Hummingbird request (an async responder, the
/// middleware chain, a response writer) costs more than the whole answer once the bytes are in
/// memory. Measured with wrk -t2 -c16 on 2 cores: even a 400 for a malformed id, which touches
/// neither the database nor the disk, answered at half nginx's rate for a thumbnail, so no
/// change inside a route could reach the 0.6x. Everything else goes to the router.
///
/// Only the plainest requests are answered here: any conditional or Range header, a body, an
/// `Origin` when CORS is on, `Connection: close`, or a request pipelined behind one the router
/// is still answering goes to the router, which gives them their usual, tested answers. The
/// headers are `FileRoutes.downloadHeaders` (the router's own), and the access-log line is the
/// router's format. `SmallFileCache` still checks the file on disk (one `stat`) for each answer.
///
/// It sits after Hummingbird's connection-state handler (idle timeout, graceful shutdown), so
/// that handler sees these requests and their answers like any other (see `Installer`).
final class CachedDownloadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The document and bytes of a file when both are in memory (`StoreGateway.cachedDownload`).
    typealias Lookup = (ObjectId) -> (file: StoredFile, bytes: ByteBuffer)?

    private let lookup: Lookup
    private let jsonLog: Bool
    private let corsEnabled: Bool
    /// Requests passed to the router whose response has not ended: while there is one, a
    /// pipelined request answered here would overtake it.
    private var routed = 0
    /// The rest (its end) of a request answered here is dropped.
    private var dropping = false
    /// The `Date` header, formatted once a second (per connection).
    private var date: (second: Int, text: String) = (-1, "")
    /// Headers made for files this connection was sent (a list screen's thumbnails), reused while
    /// the document is the same: building them (a date among them) was a tenth of an answer.
    private var madeHeaders: [ObjectId: (file: StoredFile, fields: HTTPFields)] = [:]

    init(jsonLog: Bool, corsEnabled: Bool, lookup: @escaping Lookup) {
        self.lookup = lookup
        self.jsonLog = jsonLog
        self.corsEnabled = corsEnabled
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if routed == 0, let answer = answer(head) {
                dropping = true
                // Through the whole pipeline after us (not `context.fireChannelRead`): Hummingbird's
                // connection-state handler, before us, has seen the head; it must see the end too.
                context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            dropping = false
            routed += 1
            context.fireChannelRead(data)
        case .body:
            if !dropping { context.fireChannelRead(data) }
        case .end:
            if dropping { dropping = false } else { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), routed > 0 { routed -= 1 }
        context.write(data, promise: promise)
    }

    /// The whole response to `head` when it can be answered from memory.
    private func answer(_ head: HTTPRequest) -> (head: HTTPResponse, body: ByteBuffer?)? {
        let started = ContinuousClock.now
        guard head.method == .get || head.method == .head, let target = head.path,
              let id = Self.fileID(inPath: target), Self.isPlain(head.headerFields, corsEnabled: corsEnabled),
              let (file, bytes) = lookup(id) else { return nil }
        var headers: HTTPFields
        if let made = madeHeaders[id], made.file == file, made.fields[.contentLength] == String(bytes.readableBytes) {
            headers = made.fields
        } else {
            headers = FileRoutes.downloadHeaders(file).0
            headers[.contentLength] = String(bytes.readableBytes)
            if madeHeaders.count >= 256 { madeHeaders.removeAll(keepingCapacity: true) }
            madeHeaders[id] = (file, headers)
        }
        headers[.date] = currentDate()
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        AccessLog.emit(json: jsonLog, method: head.method.rawValue, path: target.utf8.contains(UInt8(ascii: "?")) ? AccessLogMiddleware<ServeContext>.loggedPath(URI(target)) : target,
                       status: 200, bytes: bytes.readableBytes, ms: ms)
        return (HTTPResponse(status: .ok, headerFields: headers), head.method == .head ? nil : bytes)
    }

    /// The id of `/files/<24 hex>` (a query is ignored, as the router ignores it); nil for any
    /// other path, `/files/:id/thumbnail` included (which thumbnail is newest is the database's).
    static func fileID(inPath target: String) -> ObjectId? {
        let utf8 = target.utf8
        let prefix = "/files/".utf8
        guard utf8.count >= prefix.count + 24, utf8.starts(with: prefix) else { return nil }
        let idStart = utf8.index(utf8.startIndex, offsetBy: prefix.count)
        let idEnd = utf8.index(idStart, offsetBy: 24)
        guard idEnd == utf8.endIndex || utf8[idEnd] == UInt8(ascii: "?") else { return nil }
        return ObjectId(hex: String(target[idStart..<idEnd]))
    }

    /// Whether the request asks for nothing but the whole file: anything else is the router's.
    static func isPlain(_ fields: HTTPFields, corsEnabled: Bool) -> Bool {
        // One pass over the few fields a client sends (a lookup by name scans them all, and a
        // dozen lookups were a tenth of an answer).
        for field in fields {
            if routerOnly.contains(field.name) { return false }
            if corsEnabled && field.name == .origin { return false }
            if field.name == .connection && field.value.lowercased().contains("close") { return false }
        }
        return true
    }

    private static let routerOnly: Set<HTTPField.Name> = [.range, .ifRange, .ifMatch, .ifNoneMatch, .ifModifiedSince,
                                                      .ifUnmodifiedSince, .contentLength, .transferEncoding, .expect]

    private func currentDate() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        if second != date.second { date = (second, HTTPDate.format(secondsSince1970: Int64(second))) }
        return date.text
    }

    /// Puts a `CachedDownloadHandler` right after Hummingbird's `HTTPConnectionStateHandler`
    /// once the connection's pipeline is complete. Hummingbird adds its own handlers after the
    /// additional ones it is given; placed among those, this handler's answers would pass that
    /// state handler unseen, and its idle timeout would close a busy connection. Without that
    /// handler (another Hummingbird) the connection is left to the router alone.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart

        private let make: () -> CachedDownloadHandler

        init(_ make: @escaping () -> CachedDownloadHandler) { self.make = make }

        func channelActive(context: ChannelHandlerContext) {
            context.fireChannelActive()
            install(context)
        }

        func handlerAdded(context: ChannelHandlerContext) {
            // An already active channel gets no channelActive.
            if context.channel.isActive { install(context) }
        }

        private var installed = false

        private func install(_ context: ChannelHandlerContext) {
            guard !installed else { return }
            installed = true
            let pipeline = context.pipeline.syncOperations
            if let state = try? pipeline.context(handlerType: HTTPConnectionStateHandler.self) {
                try? pipeline.addHandler(make(), position: .after(state.handler))
            }
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}
