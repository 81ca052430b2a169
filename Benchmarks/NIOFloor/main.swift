// poi-bench-nio-floor: the least any SwiftNIO HTTP/1.1 server does to answer a small file from
// memory, so `make bench-serve` can say how much of the gap between `poi serve` and nginx is
// poi's and how much is the stack's.
//
// It reads one file into memory at start and answers every request with it: NIO's own HTTP/1
// pipeline (`configureHTTPServerPipeline`, keep-alive, pipelining assistance) and one handler
// that writes the same headers `poi serve` sends for a thumbnail, the Date formatted once a
// second. No routing, no lookup, no access log, no idle timeout: a floor, not a server.
//
//   poi-bench-nio-floor FILE PORT [THREADS]
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count >= 3, let body = FileManager.default.contents(atPath: arguments[1]),
      let port = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: poi-bench-nio-floor FILE PORT [THREADS]\n".utf8))
    exit(2)
}
let threads = arguments.count > 3 ? Int(arguments[3]) ?? System.coreCount : System.coreCount

final class FloorHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let body: ByteBuffer
    private var date: (second: Int, text: String) = (-1, "")

    init(body: ByteBuffer) { self.body = body }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.reserveCapacity(9)
        headers.add(name: "Content-Type", value: "image/jpeg")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "ETag", value: "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"")
        headers.add(name: "Last-Modified", value: "Fri, 27 Nov 2026 12:00:00 GMT")
        headers.add(name: "Cache-Control", value: "public, max-age=0")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: currentDate())
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func currentDate() -> String {
        let second = Int(Date().timeIntervalSince1970)
        if second != date.second {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            date = (second, formatter.string(from: Date(timeIntervalSince1970: TimeInterval(second))))
        }
        return date.text
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let bytes = ByteBuffer(bytes: body)
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true)
            try channel.pipeline.syncOperations.addHandler(FloorHandler(body: bytes))
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
print("poi-bench-nio-floor: listening on \(channel.localAddress!), \(threads) threads")
try channel.closeFuture.wait()
