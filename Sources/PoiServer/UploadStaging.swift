import PoiDigest
import MultipartKit
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// An upload that has arrived completely: on disk (staged), hashed, its type checked.
struct StagedBody: Sendable {
    var path: String
    var length: Int
    var sha256: String
    var type: AcceptedImageType
    var originalName: String?
}

/// Streams a request body into a staged file: counted against the limit as it arrives (413 the
/// moment it is exceeded), hashed as it is written, its first bytes checked against the declared
/// type (415). Nothing is kept in memory beyond one write batch; any failure removes the file.
struct Stager: ~Copyable {
    let path: String
    let limit: Int
    let pool: NIOThreadPool
    private var fd: Int32
    private var hasher = SHA256()
    private(set) var length = 0
    private var pending: ByteBuffer
    private var head: [UInt8] = []
    var expected: AcceptedImageType?

    /// Writes go to disk in batches of this size: fewer thread-pool hops than per network read,
    /// little memory per upload.
    static let batchBytes = 1 << 20

    static func open(directory: String, name: String, limit: Int, pool: NIOThreadPool) async throws(APIError) -> Stager {
        let path = directory + "/" + name
        // errno is read on the pool thread that failed: after the hop back it is another thread's.
        let (fd, failure): (Int32, Int32)
        do {
            (fd, failure) = try await pool.runIfActive {
                let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                return (fd, fd < 0 ? errno : 0)
            }
        } catch {
            throw .internalError("the server is shutting down")
        }
        guard fd >= 0 else { throw .internalError("cannot create a staged upload in \(directory): \(String(cString: strerror(failure)))") }
        return Stager(path: path, limit: limit, pool: pool, fd: fd)
    }

    private init(path: String, limit: Int, pool: NIOThreadPool, fd: Int32) {
        self.path = path
        self.limit = limit
        self.pool = pool
        self.fd = fd
        self.pending = ByteBufferAllocator().buffer(capacity: 0)
    }

    mutating func append(_ chunk: ByteBuffer) async throws(APIError) {
        length += chunk.readableBytes
        guard length <= limit else { throw .payloadTooLarge(limit: limit) }
        chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        if head.count < AcceptedImageType.magicLength {
            head += chunk.getBytes(at: chunk.readerIndex, length: min(chunk.readableBytes, AcceptedImageType.magicLength - head.count)) ?? []
            if head.count >= AcceptedImageType.magicLength { try checkMagic() }
        }
        var chunk = chunk
        pending.writeBuffer(&chunk)
        if pending.readableBytes >= Self.batchBytes { try await flush() }
    }

    /// The declared type must match the bytes; with no declaration (a multipart part without its
    /// own Content-Type) the bytes decide, among the accepted types only.
    mutating func checkMagic() throws(APIError) {
        if let expected {
            guard expected.magic(head) else {
                let actual = AcceptedImageType.byMediaType.values.first { $0.magic(head) }
                throw .unsupportedMediaType("the body is not \(expected.contentType)"
                    + (actual.map { " (its bytes are \($0.contentType))" } ?? " (its first bytes match no accepted image type)"))
            }
        } else {
            guard let sniffed = [AcceptedImageType.jpeg, .png, .gif, .webp].first(where: { $0.magic(head) }) else {
                throw .unsupportedMediaType("the file is not an accepted image type; accepted: \(AcceptedImageType.acceptedList)")
            }
            expected = sniffed
        }
    }

    private mutating func flush() async throws(APIError) {
        guard pending.readableBytes > 0 else { return }
        let batch = pending
        pending.clear()
        let fd = self.fd
        // 0, or the errno of the failed write, read on the pool thread that failed.
        let failure: Int32
        do {
            failure = try await pool.runIfActive {
                batch.withUnsafeReadableBytes { buf -> Int32 in
                    var offset = 0
                    while offset < buf.count {
                        let n = write(fd, buf.baseAddress! + offset, buf.count - offset)
                        if n < 0 { if errno == EINTR { continue }; return errno }
                        offset += n
                    }
                    return 0
                }
            }
        } catch {
            throw .internalError("the server is shutting down")
        }
        guard failure == 0 else { throw .internalError("cannot write the staged upload: \(String(cString: strerror(failure)))") }
    }

    /// Flushes, closes and returns the complete upload (the store fsyncs it when it adopts it).
    consuming func finish(originalName: String?) async throws(APIError) -> StagedBody {
        do throws(APIError) {
            try checkMagic()
            if let problem = expected?.containerProblem(head: head, length: length) {
                throw APIError.unsupportedMediaType("the upload is not a readable image (\(problem))")
            }
            try await flush()
        } catch {
            await discard()
            throw error
        }
        close(fd)
        fd = -1
        let digest = hasher.finalize()
        let hex = digest.map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
        return StagedBody(path: path, length: length, sha256: hex, type: expected!, originalName: originalName)
    }

    /// Removes the staged file (failed, refused or abandoned upload).
    consuming func discard() async {
        let fd = self.fd, path = self.path
        _ = try? await pool.runIfActive {
            if fd >= 0 { close(fd) }
            unlink(path)
        }
        self.fd = -1
    }

    deinit {
        // Reached only when neither finish nor discard ran (a cancelled task): never leave bytes.
        if fd >= 0 {
            close(fd)
            unlink(path)
        }
    }
}

/// Collects the `file` part of a multipart/form-data body from MultipartKit's callbacks, between
/// two calls to `execute` (the parser is synchronous; the writes that follow are not).
final class MultipartFilePart {
    private var headers: [(String, String)] = []
    private var decided = false
    private var inFile = false
    private(set) var found = false
    private(set) var complete = false
    private(set) var contentType: String?
    private(set) var fileName: String?
    var pending: [ByteBuffer] = []

    func install(on parser: MultipartParser) {
        parser.onHeader = { [unowned self] name, value in headers.append((name.lowercased(), value)) }
        parser.onBody = { [unowned self] buffer in
            decide()
            if inFile { pending.append(buffer) }
        }
        parser.onPartComplete = { [unowned self] in
            decide()
            if inFile { complete = true; inFile = false }
            headers = []
            decided = false
        }
    }

    private func decide() {
        guard !decided else { return }
        decided = true
        guard !found, let disposition = headers.first(where: { $0.0 == "content-disposition" })?.1,
              MediaType.parameter("name", of: disposition) == "file" else { return }
        found = true
        inFile = true
        contentType = headers.first(where: { $0.0 == "content-type" })?.1
        fileName = MediaType.parameter("filename", of: disposition).map(Self.safeName)
    }

    /// The client's file name as a label only (never a path): last component, no control
    /// characters, at most 255 bytes.
    static func safeName(_ raw: String) -> String {
        let last = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var out = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        while out.utf8.count > 255 { out.removeLast() }
        return out
    }
}
