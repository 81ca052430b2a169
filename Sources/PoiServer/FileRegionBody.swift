import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

#if canImport(Glibc)
import Glibc
#endif

/// The body of a large download from the uploads folder, sent with sendfile(2): the kernel copies
/// the file's pages from its page cache to the socket, and no byte of it passes through this
/// process's memory.
///
/// Why not buffers: reading each 256 kB slice into a fresh buffer made every download fault in
/// (and the kernel zero) a new mapping per slice, because `MallocPolicy` hands every buffer of
/// 128 KiB or more to mmap so that upload bursts give their memory back. A 6.7 MB photo cost
/// about 1,650 page faults per request, and downloads ran at a third of nginx's rate.
///
/// Why written below the router: Hummingbird's `ResponseBodyWriter` takes `ByteBuffer`s only, so
/// NIO's `FileRegion` cannot go through it. The slices are written instead from the place in the
/// pipeline where responses become HTTP/1 parts (`HTTP1ToHTTPServerCodec`), as
/// `HTTPServerResponsePart.body(.fileRegion)`: NIO's own HTTP/1 encoder frames them and its socket
/// channel sends them with sendfile. The head is written first through Hummingbird's writer, the
/// end after, by the same writer, so the response is whole and in order
/// (a task on the event loop first makes sure the head has reached the pipeline).
///
/// The file is sent in slices of `sliceBytes`, at most `slicesInFlight` of them handed to NIO at
/// once, each one written when an earlier one has gone out, all on the connection's event loop:
/// - a client that stops reading holds nothing but its file descriptor (no CPU: NIO waits for the
///   socket to be writable), and closing the connection fails the slices, which ends the body;
/// - the access log counts a slice when the connection takes it, as it counts a buffer, so a client
///   that goes away midway is logged with about what it was sent (at most two slices more).
enum FileRegionBody {
    static let sliceBytes = 1 << 20
    static let slicesInFlight = 2

    /// `span` of `file` as a response body sent with sendfile over `channel`. A connection that
    /// is not plain HTTP/1 as `poi serve` builds it (no `HTTP1ToHTTPServerCodec`; a TLS handler,
    /// should one ever sit below it, could not take a file region either) gets `fallback`.
    static func make(_ file: OpenFile, span: ClosedRange<Int>, channel: any Channel,
                     fallback: @escaping @Sendable () -> ResponseBody) -> ResponseBody {
        ResponseBody(contentLength: span.count) { writer in
            // Also waits for the head, written through Hummingbird's writer, to reach the
            // pipeline: the slices go in below it and must come after it.
            let plainHTTP1 = try await channel.eventLoop.submit {
                (try? channel.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)) != nil
            }.get()
            guard plainHTTP1 else {
                try await fallback().write(writer)
                return
            }
            // The access log's line, when the access log counts this body (bodies this large).
            let line = (writer as? CountingBodyWriter)?.line
            let sending = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
                guard let context = try? channel.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self) else {
                    return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
                }
                return Sender(file: file, span: span, context: context, line: line).start()
            }
            // At the end of the shutdown grace period the task is cancelled: closing the
            // connection fails the slices still queued, so the download ends and SIGTERM with it.
            try await withTaskCancellationHandler {
                try await sending.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            try await writer.finish(nil)
        }
    }

    /// Hands the slices of one download to NIO, on the connection's event loop only.
    /// More than ten stored properties: one download's file, its slices, its progress and the connection's event-loop state, which live and end together.
    private final class Sender {
        private let file: OpenFile
        /// Borrows `file`'s descriptor: NIO's sendfile takes a `NIOFileHandle`, and this one
        /// gives the descriptor back (never closes it) once no slice is queued; `OpenFile`
        /// closes it when the last reference goes.
        private let handle: NIOFileHandle
        private let context: ChannelHandlerContext
        private let line: PendingLogLine?
        private let done: EventLoopPromise<Void>
        private var next: Int
        private let end: Int
        private var inFlight = 0
        private var failure: (any Error)?
        private var pumping = false
        private var pumpAgain = false

        init(file: OpenFile, span: ClosedRange<Int>, context: ChannelHandlerContext, line: PendingLogLine?) {
            self.file = file
            self.handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.descriptor)
            self.context = context
            self.line = line
            self.done = context.eventLoop.makePromise()
            self.next = span.lowerBound
            self.end = span.upperBound + 1
        }

        func start() -> EventLoopFuture<Void> {
            pump()
            return done.futureResult
        }

        /// Queues slices up to the window, and ends the body when none is queued and none is left
        /// (or one failed). A slice can complete inside the write that queues it (the socket took
        /// it at once), so a completion arriving while this runs only asks it to go round again.
        private func pump() {
            if pumping {
                pumpAgain = true
                return
            }
            pumping = true
            repeat {
                pumpAgain = false
                while failure == nil, inFlight < FileRegionBody.slicesInFlight, next < end {
                    queueSlice()
                }
            } while pumpAgain
            pumping = false
            guard inFlight == 0, failure != nil || next >= end else { return }
            _ = try? handle.takeDescriptorOwnership()
            if let failure { done.fail(failure) } else { done.succeed(()) }
        }

        private func queueSlice() {
            let count = min(FileRegionBody.sliceBytes, end - next)
            // sendfile of a file cut shorter than the slice sends nothing and NIO would try again
            // for as long as the socket is writable: a file that shrank is an error, as when it
            // was read (the uploads folder only gains whole files, by rename, but a hand can cut one).
            var st = stat()
            guard fstat(file.descriptor, &st) == 0, Int(st.st_size) >= next + count else {
                failure = APIError.internalError("the file shrank while it was sent")
                return
            }
            let region = FileRegion(fileHandle: handle, readerIndex: next, endIndex: next + count)
            next += count
            inFlight += 1
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { result in
                self.inFlight -= 1
                if case .failure(let error) = result, self.failure == nil { self.failure = error }
                self.pump()
            }
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))), promise: written)
            line?.add(count)
        }
    }
}
