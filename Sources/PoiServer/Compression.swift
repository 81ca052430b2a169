import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore
import PoiFormats

/// gzip for the JSON, GeoJSON and HTML answers when the client's `Accept-Encoding` allows it:
/// a list of places is text that compresses about six to one, which a phone on a cellular link
/// feels. Never for image bytes (already compressed) or partial content, nor below
/// `minimumBytes` (the header costs more than it saves). The body is compressed as it is
/// written, through PoiFormats' `GzipDeflater` (zlib, the library the readers use), so a
/// streamed body stays streamed; the length is then unknown, and the answer is chunked.
struct CompressionMiddleware<Context: RequestContext>: RouterMiddleware {
    static var minimumBytes: Int { 1024 }
    static var compressible: [String] { ["application/json", "application/geo+json", "text/html"] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard let type = response.headers[.contentType].map(MediaType.essence(of:)), Self.compressible.contains(type) else {
            return response
        }
        // The answer depends on Accept-Encoding, compressed or not: caches must key on it.
        response.headers[.vary] = response.headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        guard response.status == .ok, response.headers[.contentEncoding] == nil,
              Self.acceptsGzip(request.headers[.acceptEncoding]),
              (response.headers[.contentLength].flatMap(Int.init) ?? Int.max) >= Self.minimumBytes else { return response }
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = nil
        let body = response.body
        response.body = ResponseBody { writer in
            try await body.write(GzipBodyWriter(inner: writer))
        }
        return response
    }

    /// `gzip` listed with a weight above zero, or, when gzip is not named, `*` so (RFC 9110
    /// §12.5.3: `*` stands for the codings not listed, so `*, gzip;q=0` refuses gzip).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var named: Double?
        var any: Double?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { named = max(named ?? 0, q) } else if coding == "*" { any = q }
        }
        return (named ?? any ?? 0) > 0
    }
}

/// Hands a body on gzip'd, block by block.
struct GzipBodyWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    let deflater = GzipDeflater()

    mutating func write(_ buffer: ByteBuffer) async throws {
        let blocks = try compress(buffer, finish: false)
        for block in blocks { try await inner.write(block) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        var inner = self.inner
        for block in try compress(ByteBuffer(), finish: true) { try await inner.write(block) }
        try await inner.finish(trailingHeaders)
    }

    private func compress(_ buffer: ByteBuffer, finish: Bool) throws -> [ByteBuffer] {
        var blocks: [ByteBuffer] = []
        try buffer.withUnsafeReadableBytes { raw in
            try deflater.compress(raw, finish: finish) { (block) throws(FormatError) in blocks.append(ByteBuffer(bytes: block)) }
        }
        return blocks
    }
}
