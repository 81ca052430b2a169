import Hummingbird
import HummingbirdCore
import HTTPTypes
import MultipartKit
import NIOCore
import NIOPosix
import PoiImaging
import PoiStore

#if canImport(Glibc)
import Glibc
#endif

/// `POST /files`, `GET|HEAD /files/:id`, `GET|HEAD /files/:id/thumbnail`.
struct FileRoutes: Sendable {
    let store: StoreGateway
    let configuration: ServerConfiguration
    /// Decoding for thumbnails runs here, apart from the database threads, with few threads:
    /// each decode can hold tens of megabytes.
    let imaging: NIOThreadPool

    // MARK: Upload

    func upload(_ request: Request) async throws(APIError) -> Response {
        let limit = configuration.maxUpload
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw .payloadTooLarge(limit: limit)
        }
        let contentType = request.headers[.contentType]
        let staged: StagedBody
        if let contentType, MediaType.essence(of: contentType) == "multipart/form-data" {
            staged = try await receiveMultipart(request, contentType: contentType)
        } else {
            let type = try AcceptedImageType.declared(by: contentType)
            staged = try await receiveRaw(request, type: type)
        }
        let id = try await store(staged)
        return Reply.json(Array("{\"_id\":\"\(id.hex)\"}".utf8), status: .created)
    }

    private func receiveRaw(_ request: Request, type: AcceptedImageType) async throws(APIError) -> StagedBody {
        var stager = try await Stager.open(directory: store.stagingDirectory, name: store.stagedFileName(),
                                           limit: configuration.maxUpload, pool: store.diskPool)
        stager.expected = type
        do {
            do {
                for try await chunk in request.body { try await stager.append(chunk) }
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError.badRequest("the upload ended early")
            }
            if let declared = request.headers[.contentLength].flatMap(Int.init), declared != stager.length {
                throw APIError.badRequest("the upload ended early")
            }
        } catch {
            await stager.discard()
            throw error as! APIError
        }
        return try await stager.finish(originalName: nil)
    }

    private func receiveMultipart(_ request: Request, contentType: String) async throws(APIError) -> StagedBody {
        guard let boundary = MediaType.parameter("boundary", of: contentType), !boundary.isEmpty, boundary.utf8.count <= 70 else {
            throw .badRequest("multipart/form-data needs a boundary")
        }
        var stager = try await Stager.open(directory: store.stagingDirectory, name: store.stagedFileName(),
                                           limit: configuration.maxUpload, pool: store.diskPool)
        let parser = MultipartParser(boundary: boundary)
        var guardian = MultipartGuard(boundary: boundary)
        let part = MultipartFilePart()
        part.install(on: parser)
        var received = 0
        var typed = false
        do {
            do {
                for try await chunk in request.body {
                    received += chunk.readableBytes
                    guard received <= configuration.maxUpload else { throw APIError.payloadTooLarge(limit: configuration.maxUpload) }
                    guard guardian.admits(chunk) else {
                        throw APIError.badRequest("malformed multipart/form-data body: a part's header name is not ASCII")
                    }
                    do { try parser.execute(chunk) } catch { throw APIError.badRequest("malformed multipart/form-data body") }
                    if part.found && !typed {
                        typed = true
                        if let declared = part.contentType, MediaType.essence(of: declared) != "application/octet-stream" {
                            stager.expected = try AcceptedImageType.declared(by: declared)
                        }
                    }
                    let pending = part.pending
                    part.pending.removeAll()
                    for buffer in pending { try await stager.append(buffer) }
                }
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError.badRequest("the upload ended early")
            }
            guard part.found else { throw APIError.badRequest("multipart/form-data without a part named \"file\"") }
            guard part.complete else { throw APIError.badRequest("the upload ended early") }
        } catch {
            await stager.discard()
            throw error as! APIError
        }
        return try await stager.finish(originalName: part.fileName)
    }

    /// Thumbnail made first (it proves the image decodes and gives its size), then the original
    /// is stored (bytes, then document), then the thumbnail: the import's order.
    private func store(_ staged: StagedBody) async throws(APIError) -> ObjectId {
        let spec = configuration.thumbnailSpec
        var thumbnail: Thumbnail?
        if staged.type.thumbnailable {
            let path = staged.path
            do {
                thumbnail = try await imaging.runIfActive { try Self.makeThumbnail(path: path, spec: spec) }
            } catch let error as ImageError where error.isUndecodable {
                // The magic bytes matched but the image does not decode: `poi import` refuses the
                // same bytes, and a place pointing at them would show a broken image.
                await discardStaged(path)
                throw .unsupportedMediaType("the upload is not a readable image (\(error))")
            } catch let error as ImageError {
                switch error {
                case .tooLarge:
                    // Its pixels are never decoded, so its bytes are never checked: a header
                    // declaring 20000×20000 followed by HTML would be stored and served (found by
                    // trying `poi serve` by hand). Refused like an upload over the byte limit.
                    await discardStaged(path)
                    throw .imageTooLarge("the upload is not accepted: \(error)")
                case .outOfMemory:
                    await discardStaged(path)
                    throw .unavailable("the server has no memory to check this image now; try again later")
                case .empty, .unrecognizedFormat, .decodeFailed, .corruptData, .encodeFailed, .invalidSpec:
                    // The image decoded; only the thumbnail could not be made (a fault of the
                    // server's recipe or encoder): the upload is kept, without a thumbnail.
                    break
                }
            } catch {
                await discardStaged(path)
                throw .unavailable("the server is shutting down")
            }
        }
        var info = FileInfo(contentType: staged.type.contentType, role: .original,
                            width: thumbnail?.source.orientedWidth, height: thumbnail?.source.orientedHeight,
                            originalName: staged.originalName, sha256: staged.sha256,
                            iccProfile: thumbnail?.source.iccProfile, storedBy: .uploaded)
        if info.originalName?.isEmpty == true { info.originalName = nil }
        let put = try await store.putStaged(path: staged.path, length: staged.length, info: info)
        if let thumbnail {
            let canonical = spec.canonical
            let needed = put.reused ? !(try await store.hasThumbnail(of: put.file.id, spec: canonical)) : true
            if needed {
                _ = try await store.storeThumbnail(thumbnail, of: put.file.id, spec: canonical)
            }
        }
        return put.file.id
    }

    /// Removes a staged upload that will not be stored (`putStaged` consumes it otherwise).
    private func discardStaged(_ path: String) async {
        if (try? await store.diskPool.runIfActive { unlink(path) }) == nil { unlink(path) }
    }

    /// Decodes straight from the page cache (mmap): the upload is never copied into memory whole.
    static func makeThumbnail(path: String, spec: ThumbnailSpec) throws -> Thumbnail {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw APIError.internalError("cannot reopen the staged upload") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { throw APIError.internalError("empty upload") }
        let size = Int(st.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else {
            throw APIError.internalError("cannot map the staged upload")
        }
        defer { munmap(map, size) }
        return try Thumbnailer.make(from: UnsafeRawBufferPointer(start: map, count: size), spec: spec)
    }

    // MARK: Download

    func download(_ request: Request, id text: String, thumbnail: Bool, head: Bool, channel: (any Channel)? = nil) async throws(APIError) -> Response {
        guard let id = ObjectId(hex: text) else { throw .invalidId }
        guard var file = try await store.file(id) else { throw .fileNotFound }
        if thumbnail {
            guard let thumb = try await store.thumbnail(of: file.id) else {
                // The cached document may be of an original deleted through another process
                // (its thumbnails went with it): the database says whether it is still there, so
                // a deleted original is the plain download's `file not found`.
                store.forget(file.id)
                guard try await store.file(id) != nil else { throw .fileNotFound }
                throw .notFound("no thumbnail for this file")
            }
            file = thumb
        }
        var (headers, etag) = Self.downloadHeaders(file)
        let modified = file.createdAt.millisecondsSinceEpoch / 1000

        // RFC 9110 §13.2.2's order: If-Match (else If-Unmodified-Since), then If-None-Match (else
        // If-Modified-Since), then If-Range. A client that names the version it holds (resuming
        // a download, say) must not get a range of another one.
        if let ifMatch = request.headers[.ifMatch] {
            guard Self.matchesStrongly(ifMatch, etag) else {
                throw .preconditionFailed("the file is not the version If-Match names", etag: etag)
            }
        } else if let ius = request.headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse), file.createdAt.millisecondsSinceEpoch > 0,
                  modified > ius {
            throw .preconditionFailed("the file was stored after If-Unmodified-Since", etag: etag)
        }
        if let inm = request.headers[.ifNoneMatch] {
            if let etag, Self.matches(inm, etag) { return Self.notModified(headers) }
        } else if let ims = request.headers[.ifModifiedSince].flatMap(HTTPDate.parse), file.createdAt.millisecondsSinceEpoch > 0,
                  modified <= ims {
            return Self.notModified(headers)
        }

        if let path = store.diskPath(of: file) {
            if let cached = store.smallFiles.get(file.id, path: path) {
                // The bytes on disk are the ones cached (`SmallFileCache` checked): no pool hop.
                let (status, span) = try Self.plan(request, etag: etag, size: cached.readableBytes, headers: &headers)
                guard !head, let span else { return Response(status: status, headers: headers, body: ResponseBody()) }
                let slice = cached.getSlice(at: cached.readerIndex + span.lowerBound, length: span.count) ?? cached
                return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: slice))
            }
            let pool = store.diskPool
            let opened: (size: Int, whole: ByteBuffer?, open: OpenFile?, identity: SmallFileCache.DiskIdentity)
            do {
                opened = try await pool.runIfActive { try Self.openForDownload(path: path, wantBytes: !head) }
            } catch let error as APIError {
                // Deleted, through this process or another (whose DELETE removes the bytes): the
                // cached document goes too, so the next request asks the database again.
                if case .fileNotFound = error { store.forget(file.id) }
                throw error
            } catch {
                throw .internalError("the server is shutting down")
            }
            let size = opened.size
            // Not the document's length (a truncated copy, bytes replaced by hand): damaged, never
            // served as if whole. The backend's own documents have no length and are not checked.
            if let damage = file.damage(storedSize: size) { throw .store(damage) }
            if let whole = opened.whole { store.smallFiles.put(file.id, bytes: whole, identity: opened.identity) }
            let (status, span) = try Self.plan(request, etag: etag, size: size, headers: &headers)
            guard !head, let span else { return Response(status: status, headers: headers, body: ResponseBody()) }
            if let whole = opened.whole, let slice = whole.getSlice(at: span.lowerBound, length: span.count) {
                return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: slice))
            }
            guard let open = opened.open else { throw .internalError("the file changed while it was opened") }
            guard let channel else {
                return Response(status: status, headers: headers, body: Self.fileBody(open, span: span, pool: pool, channel: nil))
            }
            let body = FileRegionBody.make(open, span: span, channel: channel) {
                Self.fileBody(open, span: span, pool: pool, channel: channel)
            }
            return Response(status: status, headers: headers, body: body)
        }
        if store.storesInGridFS {
            guard let layout = try await store.gridFSLayout(of: file) else {
                store.forget(file.id)
                throw .fileNotFound
            }
            let (status, span) = try Self.plan(request, etag: etag, size: layout.length, headers: &headers)
            guard !head, let span else { return Response(status: status, headers: headers, body: ResponseBody()) }
            let bytes = span.lowerBound..<(span.upperBound + 1)
            // The first chunks are read before the head is sent, so chunks that are missing
            // (damaged, or the file deleted meanwhile) are answered with a status, not a cut body.
            let first = try await store.gridFSRead(file, layout: layout, range: bytes, maxChunks: Self.gridFSChunksPerRead)
            return Response(status: status, headers: headers,
                            body: Self.gridFSBody(store: store, file: file, layout: layout, range: bytes, first: first, channel: channel))
        }
        guard let bytes = try await store.bytes(of: file) else {
            store.forget(file.id)
            throw .fileNotFound
        }
        let (status, span) = try Self.plan(request, etag: etag, size: bytes.count, headers: &headers)
        guard !head, let span else { return Response(status: status, headers: headers, body: ResponseBody()) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes[span])))
    }

    /// Status and Content-Length for a representation of `size` bytes, and the bytes to send
    /// (nil: none, an empty file); throws 416.
    /// The headers of every download of `file` (200, 206 and 304 alike), and its ETag.
    static func downloadHeaders(_ file: StoredFile) -> (HTTPFields, etag: String?) {
        var headers = HTTPFields()
        // Only an image type is ever served as such: a `files` document written by other software
        // (or an old PUT) with `text/html` must not make the API's origin serve a page.
        headers[.contentType] = AcceptedImageType.byMediaType[MediaType.essence(of: file.contentType)]?.contentType
            ?? "application/octet-stream"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[.acceptRanges] = "bytes"
        let etag = file.sha256.isEmpty ? nil : "\"\(file.sha256)\""
        if let etag { headers[.eTag] = etag }
        if file.createdAt.millisecondsSinceEpoch > 0 {
            headers[.lastModified] = HTTPDate.format(secondsSince1970: file.createdAt.millisecondsSinceEpoch / 1000)
        }
        headers[.cacheControl] = "public, max-age=0"
        return (headers, etag)
    }

    static func plan(_ request: Request, etag: String?, size: Int,
                     headers: inout HTTPFields) throws(APIError) -> (status: HTTPResponse.Status, span: ClosedRange<Int>?) {
        let range = try range(request, etag: etag, size: size, headers: &headers)
        let span = range ?? (size > 0 ? 0...(size - 1) : nil)
        headers[.contentLength] = String(span?.count ?? 0)
        return (range == nil ? .ok : .partialContent, span)
    }

    /// The byte range to send (nil: all of it), honouring If-Range; throws 416.
    static func range(_ request: Request, etag: String?, size: Int, headers: inout HTTPFields) throws(APIError) -> ClosedRange<Int>? {
        guard request.method == .get || request.method == .head, let header = request.headers[.range] else { return nil }
        if let raw = request.headers[.ifRange] {
            let ifRange = raw.trimmingCharacters(in: .whitespaces)
            if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
                guard let etag, ifRange == etag else { return nil }
            } else {
                // An HTTP-date (RFC 9110 §13.1.5): the range when it is the file's Last-Modified.
                // A stored file never changes after it is written, so that date is a strong
                // validator here (curl -C - and download managers send it).
                guard let date = HTTPDate.parse(ifRange), let modified = headers[.lastModified].flatMap(HTTPDate.parse),
                      date == modified else { return nil }
            }
        }
        switch RangeRequest(header: header, length: size) {
        case .full: return nil
        case .unsatisfiable: throw .rangeNotSatisfiable(length: size)
        case .partial(let r):
            headers[.contentRange] = "bytes \(r.lowerBound)-\(r.upperBound)/\(size)"
            return r
        }
    }

    /// If-Match: `*` (any stored file) or a list of entity tags, compared strongly (RFC 9110
    /// §13.1.1): a weak tag never matches, nor does any tag when the file has no ETag.
    static func matchesStrongly(_ header: String, _ etag: String?) -> Bool {
        let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return tags.contains { $0 == "*" || (etag != nil && $0 == etag) }
    }

    /// If-None-Match: `*` or a list of entity tags, compared weakly (RFC 9110 §13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
        let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return tags.contains { $0 == "*" || $0 == etag || $0 == "W/" + etag }
    }

    static func notModified(_ headers: HTTPFields) -> Response {
        var h = headers
        h[.contentType] = nil
        h[.contentLength] = nil
        return Response(status: .notModified, headers: h, body: ResponseBody())
    }

    /// Files up to this size (thumbnails, most photos from phones are larger) are read whole in
    /// the same thread-pool hop as the stat: one hop per request instead of three, which is most
    /// of a small download's cost.
    static let smallFileBytes = 256 * 1024

    /// Opens a download's file: its size, its bytes when it is small, else the open file. A large
    /// file is read from this descriptor to its end, so a DELETE (which unlinks it) while it is
    /// sent does not cut it off.
    static func openForDownload(path: String, wantBytes: Bool)
        throws -> (size: Int, whole: ByteBuffer?, open: OpenFile?, identity: SmallFileCache.DiskIdentity) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw APIError.fileNotFound }
        let file = OpenFile(fd)
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { throw APIError.fileNotFound }
        let size = Int(st.st_size)
        let identity = SmallFileCache.DiskIdentity(st)
        guard wantBytes else { return (size, nil, nil, identity) }
        guard size <= smallFileBytes else { return (size, nil, file, identity) }
        var buffer = ByteBufferAllocator().buffer(capacity: max(size, 1))
        let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: max(size, 1)) { raw in
            var got = 0
            while got < size {
                let r = pread(fd, raw.baseAddress! + got, size - got, off_t(got))
                if r < 0 && errno == EINTR { continue }
                if r <= 0 { break }
                got += r
            }
            return got
        }
        return got == size ? (size, buffer, nil, identity) : (size, nil, file, identity)
    }

    /// Waits until everything a download has written so far has reached its channel; see
    /// `fileBody` for why that, with awaiting each write, is the download's backpressure.
    static func caughtUp(_ channel: (any Channel)?) async throws {
        guard let channel else { return }
        try await channel.eventLoop.submit {}.get()
    }

    /// Streams `span` of the open file in 256 kB reads on the thread pool: one buffer per read,
    /// handed to NIO, so memory per download stays at a few buffers whatever the file size.
    /// Downloads on `poi serve`'s own connections are sent with sendfile instead (`FileRegionBody`,
    /// which says why); this is for a connection it cannot write a file region to.
    ///
    /// Backpressure: awaiting `writer.write` is the wait for a slow or stalled client.
    /// Hummingbird's writer is NIO's `NIOAsyncChannelOutboundWriter`: its `NIOAsyncWriter`
    /// suspends a write while the channel is over its high write watermark (`NIOAsyncChannelHandler`
    /// passes every `channelWritabilityChanged` on to it) and resumes it once the socket has
    /// drained below the low one. Nothing polls, so a client that stops reading costs no CPU; the
    /// suspended write throws when the connection closes, and on task cancellation (the end of
    /// the shutdown grace), so SIGTERM still ends. What the writer does not cover is a write the
    /// event loop has not taken yet: until it has, the channel still counts itself writable, and
    /// reads on the pool outrun two busy event loops (without a check, each of 64 clients queued
    /// its whole file: 240–330 MB). So before each read one empty task runs on the channel's
    /// event loop (`caughtUp`): the writes before it have then reached the channel and set its
    /// writability, and the write after the read suspends if the socket is behind. At most two
    /// reads per download are in memory: the one the socket drains and the one waiting.
    static func fileBody(_ file: OpenFile, span: ClosedRange<Int>, pool: NIOThreadPool, channel: (any Channel)?) -> ResponseBody {
        ResponseBody(contentLength: span.count) { writer in
            var offset = span.lowerBound
            let end = span.upperBound + 1
            let allocator = ByteBufferAllocator()
            while offset < end {
                if offset > span.lowerBound { try await caughtUp(channel) }
                let want = min(256 * 1024, end - offset)
                let at = offset
                let buffer = try await pool.runIfActive { () throws -> ByteBuffer in
                    let fd = file.descriptor
                    var buffer = allocator.buffer(capacity: want)
                    let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                        var got = 0
                        while got < want {
                            let r = pread(fd, raw.baseAddress! + got, want - got, off_t(at + got))
                            if r < 0 && errno == EINTR { continue }
                            if r <= 0 { break }
                            got += r
                        }
                        return got
                    }
                    guard n == want else { throw APIError.internalError("the file shrank while it was read") }
                    return buffer
                }
                try await writer.write(buffer)
                offset += want
            }
            try await writer.finish(nil)
        }
    }

    /// GridFS chunks per database read: one (255 kB by default), about the disk case's 256 kB
    /// read. Each chunk is held three times on its way (the driver's reply, its decoded document,
    /// the buffer handed to NIO), so larger reads cost memory for every download at once.
    static let gridFSChunksPerRead = 1

    /// Streams `range` of a GridFS file as its chunks are read (`first`: those read already), with
    /// the same backpressure as `fileBody`. Each read is one query on a pooled client that is given
    /// back at once: a stalled download holds no database connection, only the chunks it read.
    static func gridFSBody(store: StoreGateway, file: StoredFile, layout: GridFSStore.ChunkLayout, range: Range<Int>,
                           first: [[UInt8]], channel: (any Channel)?) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            var pieces = first
            var offset = range.lowerBound
            // One buffer for the whole download, refilled chunk after chunk: a fresh one per chunk
            // was a fresh mapping each time (`MallocPolicy` maps every buffer of 128 KiB or more
            // on its own), its pages faulted in and zeroed for every chunk sent. When NIO still
            // holds the previous chunk (the socket is behind), refilling copies it to new storage
            // instead, as before; the driver's own chunk arrays are still allocated per read.
            var buffer = ByteBufferAllocator().buffer(capacity: min(max(layout.chunkSize, 0), range.count))
            while true {
                while !pieces.isEmpty {
                    // Removed before the write waits: the chunk is then held once, as NIO's buffer.
                    let piece = pieces.removeFirst()
                    buffer.clear()
                    buffer.writeBytes(piece)
                    offset += piece.count
                    try await writer.write(buffer)
                }
                guard offset < range.upperBound else { break }
                try await caughtUp(channel)
                pieces = try await store.gridFSRead(file, layout: layout, range: offset..<range.upperBound, maxChunks: gridFSChunksPerRead)
            }
            try await writer.finish(nil)
        }
    }
}

/// A file descriptor closed when the last reference to it goes: whether the download's body is
/// written to the end, fails, or is never started (a connection closed before it), the file is
/// closed exactly once.
final class OpenFile: Sendable {
    let descriptor: Int32
    init(_ descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }
}

extension ImageError {
    /// The bytes themselves are not a decodable image (as opposed to an image this server will
    /// not thumbnail, or a failure of the server's own).
    var isUndecodable: Bool {
        switch self {
        case .empty, .unrecognizedFormat, .decodeFailed, .corruptData: return true
        case .tooLarge, .outOfMemory, .encodeFailed, .invalidSpec: return false
        }
    }
}
