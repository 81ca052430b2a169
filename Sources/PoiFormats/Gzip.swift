import CZlib
import Dispatch
import Synchronization

/// gzip (RFC 1952) input, inflated by zlib on a thread of its own while the reader parses, so a
/// gzip'd dump costs about what zlib needs to inflate it rather than inflate + parse in turn.
/// zlib rather than a Swift package: it is on every machine already (libpng's dependency), it is
/// the reference implementation `gzip` itself uses, and no mirrored package streams it.
///
/// Memory is bounded: at most `GzipStage.depth` decoded chunks of `ByteSource.chunkSize` wait
/// for the reader, and one compressed chunk is in zlib's hands. Concatenated members (`cat a.gz
/// b.gz`, what `gzip` itself accepts) are read one after another. Damage — a truncated stream, a
/// bad CRC or length, bytes that are not gzip after a member — is reported after every byte
/// decoded before it, as `FormatError.damagedCompression` naming the offset in the compressed
/// file, so the rows before it are read like those before any read error midway.
public enum Gzip {
    /// The two bytes every gzip member starts with.
    public static let magic: [UInt8] = [0x1F, 0x8B]

    public static func isGzip(_ prefix: ArraySlice<UInt8>) -> Bool { prefix.starts(with: magic) }

    /// Whether the file at `path` starts with the gzip magic bytes.
    public static func isGzip(file path: String) -> Bool {
        guard let source = try? ByteSource(path: path) else { return false }
        var head: [UInt8] = []
        while head.count < 2, let n = try? source.read(appendingTo: &head), n > 0 {}
        return isGzip(head[...])
    }

    /// The decoded content of the gzip file at `path` when it is at most `limit` bytes; nil when
    /// it is longer, cannot be read, or is damaged (never more than `limit` + 1 bytes decoded).
    public static func contents(ofFile path: String, limit: Int) -> [UInt8]? {
        guard let source = try? ByteSource(path: path) else { return nil }
        let stage = GzipStage.stage(compressed: source, maxBytes: limit)
        var out: [UInt8] = []
        while true {
            guard let n = try? stage.read(appendingTo: &out) else { return nil }
            if n == 0 { return out }
        }
    }
}

/// What an inflating thread (gzip, a zip member) hands the reader, in order.
enum DecodedPiece: Sendable {
    case bytes([UInt8])
    case end
    case failed(FormatError)
}

/// A bounded hand-over between the inflating thread and the reader: the thread blocks when
/// `depth` pieces wait, the reader when none does.
final class DecodedChannel: Sendable {
    private struct State {
        var pieces: [DecodedPiece] = []
        var head = 0
        var cancelled = false
        var compressedRead = 0
    }
    private let state = Mutex(State())
    private let free = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)

    init(depth: Int) {
        // Made at 0 and raised, not made at `depth`: libdispatch traps (SIGILL) when a semaphore
        // is freed below the value it was made with, which is what a channel whose reader went
        // away with pieces still waiting is. `poi convert` of a gzip or zip whose output could
        // not be opened crashed that way one run in ten, after its error message.
        for _ in 0..<depth { free.signal() }
    }

    /// False once the reader went away: the thread stops.
    func put(_ piece: DecodedPiece, compressedRead: Int) -> Bool {
        free.wait()
        let open = state.withLock { s -> Bool in
            if s.cancelled { return false }
            s.pieces.append(piece)
            s.compressedRead = compressedRead
            return true
        }
        if open { ready.signal() }
        return open
    }

    func take() -> DecodedPiece {
        ready.wait()
        let piece = state.withLock { s -> DecodedPiece in
            let p = s.pieces[s.head]
            s.head += 1
            if s.head == s.pieces.count { s.pieces.removeAll(keepingCapacity: true); s.head = 0 }
            return p
        }
        free.signal()
        return piece
    }

    var compressedRead: Int { state.withLock { $0.compressedRead } }

    /// The reader is gone: wake the thread if it waits for room, so it sees `cancelled` and ends.
    func cancel() {
        state.withLock { $0.cancelled = true }
        free.signal()
    }
}

/// A `ByteStage` whose bytes come from `produce` (gzip's inflate, a zip member's), run on a serial
/// queue of its own through a bounded `DecodedChannel`. A queue of its own: it targets an
/// overcommitting pool, so a thread blocked waiting for the reader never takes one of the workers
/// the CSV reader converts batches on.
final class ThreadedStage: ByteStage {
    private let channel = DecodedChannel(depth: GzipStage.depth)
    private var finished = false
    private var failure: FormatError?
    let inputTotalBytes: Int?

    init(label: String, inputTotalBytes: Int?, produce: @escaping @Sendable (DecodedChannel) -> Void) {
        self.inputTotalBytes = inputTotalBytes
        let channel = self.channel
        DispatchQueue(label: label).async { produce(channel) }
    }

    deinit { channel.cancel() }

    var inputBytesRead: Int { channel.compressedRead }

    func read(appendingTo buffer: inout [UInt8]) throws(FormatError) -> Int {
        if let failure { throw failure }
        if finished { return 0 }
        switch channel.take() {
        case .bytes(let b):
            buffer.append(contentsOf: b)
            return b.count
        case .end:
            finished = true
            return 0
        case .failed(let e):
            failure = e
            throw e
        }
    }
}

/// The compressed source, handed to the inflating thread, which alone touches it from then on.
final class SourceHandOver: @unchecked Sendable {
    let source: ByteSource
    init(_ source: ByteSource) { self.source = source }
}

/// gzip input as a `ThreadedStage`: the inflating runs on the stage's own queue.
enum GzipStage {
    /// Decoded chunks that may wait for the reader (1 MiB at the default chunk size).
    static let depth = 4

    /// Starts inflating `compressed` (which must start with the gzip magic) on a thread of its own.
    /// `maxBytes` caps the inflated bytes (`ReadLimits.maxInflatedBytes`): a gzip bomb stops there.
    static func stage(compressed: ByteSource, maxBytes: Int = ReadLimits().maxInflatedBytes,
                      chunkSize: Int = ByteSource.chunkSize) -> ThreadedStage {
        let handOver = SourceHandOver(compressed)
        return ThreadedStage(label: "poi.gunzip", inputTotalBytes: compressed.totalBytes) { channel in
            inflateAll(handOver.source, into: channel, maxBytes: maxBytes, chunkSize: chunkSize)
        }
    }

    private static func inflateAll(_ source: ByteSource, into channel: DecodedChannel, maxBytes: Int, chunkSize: Int) {
        let name = source.name
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        // 15 + 16: a gzip wrapper only (no raw deflate, no zlib wrapper), 32 KiB window.
        guard inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            _ = channel.put(.failed(.readFailed(file: name, reason: "zlib could not start (out of memory)")), compressedRead: 0)
            return
        }
        defer { inflateEnd(stream) }

        var input: [UInt8] = []
        var inputStart = 0            // offset in the file of input[0]
        var output = [UInt8](repeating: 0, count: chunkSize)
        var produced = 0              // bytes of `output` filled
        var memberOpen = false        // inside a member: the input may not end here
        var compressedRead = 0
        var handedOut = 0             // decoded bytes put in the channel so far

        func fail(_ offset: Int, _ reason: String) {
            if produced > 0 { _ = channel.put(.bytes(Array(output[0..<produced])), compressedRead: compressedRead) }
            _ = channel.put(.failed(.damagedCompression(file: name, offset: offset, reason: reason)), compressedRead: compressedRead)
        }

        var eof = false
        while true {
            if stream.pointee.avail_in == 0 && !eof {
                inputStart += input.count
                input.removeAll(keepingCapacity: true)
                let n: Int
                do { n = try source.read(appendingTo: &input) } catch {
                    if produced > 0 { _ = channel.put(.bytes(Array(output[0..<produced])), compressedRead: compressedRead) }
                    _ = channel.put(.failed(error), compressedRead: compressedRead)
                    return
                }
                compressedRead = source.bytesRead
                stream.pointee.avail_in = UInt32(n)
                if n == 0 { eof = true }
            }
            if eof && stream.pointee.avail_in == 0 && !memberOpen {
                if produced > 0, !channel.put(.bytes(Array(output[0..<produced])), compressedRead: compressedRead) { return }
                _ = channel.put(.end, compressedRead: compressedRead)
                return
            }
            let consumedBefore = input.count - Int(stream.pointee.avail_in)
            let ret: Int32 = input.withUnsafeMutableBufferPointer { inBuf in
                output.withUnsafeMutableBufferPointer { outBuf in
                    stream.pointee.next_in = inBuf.baseAddress! + consumedBefore
                    stream.pointee.next_out = outBuf.baseAddress! + produced
                    stream.pointee.avail_out = UInt32(chunkSize - produced)
                    let r = inflate(stream, Z_NO_FLUSH)
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                    return r
                }
            }
            memberOpen = true
            produced = chunkSize - Int(stream.pointee.avail_out)
            if handedOut + produced > maxBytes {
                // A bomb (or a dump over the cap): what fits is handed out, then the reason.
                produced = maxBytes - handedOut
                if produced > 0 { _ = channel.put(.bytes(Array(output[0..<produced])), compressedRead: compressedRead) }
                _ = channel.put(.failed(.decompressionLimit(file: name, reason: InflateCaps.overBytes(maxBytes))),
                                compressedRead: compressedRead)
                return
            }
            let offset = inputStart + input.count - Int(stream.pointee.avail_in)
            switch ret {
            case Z_OK:
                break
            case Z_BUF_ERROR:
                // No progress without more input (zlib may still have had output to give with
                // none: that is why the end of the file is only damage once it says so).
                if eof { return fail(inputStart + input.count, "the compressed data ends early (truncated file?)") }
            case Z_STREAM_END:
                // The member's CRC and length checked out. Another member may follow.
                memberOpen = false
                inflateReset(stream)
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(ret)"
                return fail(offset, ret == Z_MEM_ERROR ? "out of memory" : "corrupt gzip data (\(message))")
            }
            if produced == chunkSize {
                if !channel.put(.bytes(output), compressedRead: compressedRead) { return }
                handedOut += produced
                produced = 0
            }
        }
    }
}

/// gzip output (`poi export -o x.geojson.gz`, `--gzip`): zlib's deflate at its default level, a
/// single member, written through the sink it wraps in blocks of up to 256 KiB.
public final class GzipDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var out = [UInt8](repeating: 0, count: 256 * 1024)
    private var ended = false

    public init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper; 8: zlib's default memory level.
        let r = deflateInit2_(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                              ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(r == Z_OK, "deflateInit2 failed (\(r)): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `bytes` (or, with `finish`, whatever is pending plus the trailer), handing each
    /// full block of output to `emit`.
    public func compress(_ bytes: UnsafeRawBufferPointer, finish: Bool,
                         emit: (UnsafeRawBufferPointer) throws(FormatError) -> Void) throws(FormatError) {
        guard !ended else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(bytes.count)
        defer { stream.pointee.next_in = nil }
        while true {
            let (ret, have): (Int32, Int) = out.withUnsafeMutableBufferPointer { o in
                stream.pointee.next_out = o.baseAddress!
                stream.pointee.avail_out = UInt32(o.count)
                let r = deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
                stream.pointee.next_out = nil
                return (r, o.count - Int(stream.pointee.avail_out))
            }
            if have > 0 {
                var failure: FormatError?
                out.withUnsafeBytes { raw in
                    do throws(FormatError) { try emit(UnsafeRawBufferPointer(rebasing: raw[0..<have])) } catch { failure = error }
                }
                if let failure { throw failure }
            }
            if finish {
                if ret == Z_STREAM_END { ended = true; return }
            } else if stream.pointee.avail_in == 0 && have < out.count {
                return
            }
        }
    }
}
