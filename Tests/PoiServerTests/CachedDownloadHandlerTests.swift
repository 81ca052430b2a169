import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PoiStore
import PoiTestSupport
import Testing
@testable import PoiServer

/// `CachedDownloadHandler` in the pipeline order `poi serve` gives it (after Hummingbird's
/// connection-state handler, through its `Installer`), with an embedded channel standing in for
/// the socket and the router: what is answered from memory, what goes on, and in which order.
@Suite(.tags(.unit)) struct CachedDownloadHandlerTests {
    static let id = ObjectId(hex: "6b075e7f110f4196ea07ebd3")!
    static let bytes: [UInt8] = Array(0..<200).map { UInt8($0) }
    static let file = StoredFile(document: BSONDocument([
        ("_id", .objectId(id)), ("content-type", .string("image/jpeg")), ("ext", .string(".jpeg")),
        ("created_at", .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_000))), ("sha256", .string("abc")),
    ]))!

    /// A channel as `poi serve` builds it: the installer among the additional handlers, then the
    /// state handler; what reaches the end of the pipeline is the router's.
    func channel(cors: Bool = false, cached: Bool = true) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let installer = CachedDownloadHandler.Installer {
            CachedDownloadHandler(jsonLog: false, corsEnabled: cors) { id in
                cached && id == Self.id ? (Self.file, ByteBuffer(bytes: Self.bytes)) : nil
            }
        }
        try channel.pipeline.syncOperations.addHandler(installer)
        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: Logger(label: "test")))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    func request(_ path: String, method: HTTPRequest.Method = .get, _ fields: HTTPFields = [:]) -> HTTPRequestPart {
        .head(HTTPRequest(method: method, scheme: nil, authority: "x", path: path, headerFields: fields))
    }

    /// The response parts written so far.
    func written(_ channel: EmbeddedChannel) throws -> [HTTPResponsePart] {
        var parts: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
        return parts
    }

    /// The request parts that reached the router.
    func routed(_ channel: EmbeddedChannel) throws -> [HTTPRequestPart] {
        var parts: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
        return parts
    }

    @Test func theInstallerPutsTheHandlerRightAfterTheStateHandlerAndLeaves() throws {
        let channel = try channel()
        // The pipeline's description lists its handlers in order, one per line.
        let lines = channel.pipeline.debugDescription.split(separator: "\n")
        let state = lines.firstIndex { $0.contains("HTTPConnectionStateHandler") }
        let handler = lines.firstIndex { $0.contains("CachedDownloadHandler") && !$0.contains("Installer") }
        #expect(state != nil && handler == state.map { $0 + 1 }, "\(channel.pipeline.debugDescription)")
        #expect(!channel.pipeline.debugDescription.contains("Installer"))
        _ = try channel.finish()
    }

    @Test func aPlainGetOfACachedFileIsAnsweredWithTheRoutersHeaders() throws {
        let channel = try channel()
        try channel.writeInbound(request("/files/\(Self.id.hex)?v=2"))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try routed(channel).isEmpty)
        let parts = try written(channel)
        #expect(parts.count == 3)
        guard parts.count == 3, case .head(let head) = parts[0], case .body(let body) = parts[1], case .end = parts[2] else { return }
        #expect(head.status == .ok)
        var expected = FileRoutes.downloadHeaders(Self.file).0
        expected[.contentLength] = "200"
        expected[.date] = head.headerFields[.date]
        #expect(head.headerFields == expected)
        #expect(head.headerFields[.eTag] == "\"abc\"" && head.headerFields[.lastModified] == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(Array(body.readableBytesView) == Self.bytes)
        // HEAD: the same head, no body.
        try channel.writeInbound(request("/files/\(Self.id.hex)", method: .head))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        let headParts = try written(channel)
        #expect(headParts.count == 2)
        if case .head(let h) = headParts.first { #expect(h.headerFields[.contentLength] == "200") } else { Issue.record("no head") }
        _ = try channel.finish()
    }

    @Test func everythingButThePlainestRequestGoesToTheRouter() throws {
        let other = ObjectId(hex: "6b075e7f110f4196ea07ebd4")!
        let cases: [(String, HTTPRequest.Method, HTTPFields)] = [
            ("/files/\(Self.id.hex)", .get, [.range: "bytes=0-1"]),
            ("/files/\(Self.id.hex)", .get, [.ifNoneMatch: "\"abc\""]),
            ("/files/\(Self.id.hex)", .get, [.ifModifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT"]),
            ("/files/\(Self.id.hex)", .get, [.ifMatch: "\"abc\""]),
            ("/files/\(Self.id.hex)", .get, [.ifUnmodifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT"]),
            ("/files/\(Self.id.hex)", .get, [.ifRange: "\"abc\""]),
            ("/files/\(Self.id.hex)", .get, [.connection: "close"]),
            ("/files/\(Self.id.hex)", .get, [.contentLength: "3"]),
            ("/files/\(Self.id.hex)", .delete, [:]),
            ("/files/\(Self.id.hex)", .put, [:]),
            ("/files/\(Self.id.hex)/thumbnail", .get, [:]),
            ("/files/\(Self.id.hex)/", .get, [:]),
            ("/files/\(Self.id.hex.uppercased())x", .get, [:]),
            ("/files/\(other.hex)", .get, [:]),
            ("/locations/\(Self.id.hex)", .get, [:]),
            ("/files/\(Self.id.hex)#x", .get, [:]),
        ]
        for (path, method, fields) in cases {
            let channel = try channel()
            try channel.writeInbound(request(path, method: method, fields))
            #expect(try routed(channel).count == 1, "\(method) \(path) \(fields)")
            #expect(try written(channel).isEmpty, "\(method) \(path) \(fields)")
            _ = try channel.finish()
        }
        // With CORS on, a request with an Origin needs the router's CORS headers.
        let cors = try channel(cors: true)
        try cors.writeInbound(request("/files/\(Self.id.hex)", [.origin: "https://app.example.com"]))
        #expect(try routed(cors).count == 1)
        try cors.writeInbound(HTTPRequestPart.end(nil))
        _ = try routed(cors)
        try cors.writeOutbound(HTTPResponsePart.end(nil))
        _ = try written(cors)
        try cors.writeInbound(request("/files/\(Self.id.hex)"))
        #expect(try routed(cors).isEmpty, "without an Origin, CORS adds nothing: answered from memory")
        _ = try cors.finish()
    }

    /// A pipelined request behind one the router is still answering waits its turn: answered
    /// here at once, its bytes would land before (or inside) the earlier response.
    @Test func aPipelinedRequestNeverOvertakesTheRoutersResponse() throws {
        let channel = try channel()
        try channel.writeInbound(request("/locations"))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        try channel.writeInbound(request("/files/\(Self.id.hex)"))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try routed(channel).count == 4, "both requests go to the router")
        #expect(try written(channel).isEmpty)
        // The router answers both; then a third is answered from memory.
        for _ in 0..<2 {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }
        #expect(try written(channel).count == 4)
        try channel.writeInbound(request("/files/\(Self.id.hex)"))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try routed(channel).isEmpty)
        #expect(try written(channel).count == 3)
        _ = try channel.finish()
    }

    @Test func aFileNotInMemoryGoesToTheRouter() throws {
        let channel = try channel(cached: false)
        try channel.writeInbound(request("/files/\(Self.id.hex)"))
        #expect(try routed(channel).count == 1)
        _ = try channel.finish()
    }

    @Test func fileIDsAreReadOnlyFromTheExactPath() {
        #expect(CachedDownloadHandler.fileID(inPath: "/files/\(Self.id.hex)") == Self.id)
        #expect(CachedDownloadHandler.fileID(inPath: "/files/\(Self.id.hex)?a=b") == Self.id)
        #expect(CachedDownloadHandler.fileID(inPath: "/files/\(Self.id.hex)/thumbnail") == nil)
        #expect(CachedDownloadHandler.fileID(inPath: "/files/\(Self.id.hex.dropLast())") == nil)
        #expect(CachedDownloadHandler.fileID(inPath: "/files/\(Self.id.hex.dropLast())g") == nil)
        #expect(CachedDownloadHandler.fileID(inPath: "/Files/\(Self.id.hex)") == nil)
        #expect(CachedDownloadHandler.fileID(inPath: "//files/\(Self.id.hex)") == nil)
        #expect(CachedDownloadHandler.fileID(inPath: "/files/%36b075e7f110f4196ea07ebd3") == nil)
    }
}
