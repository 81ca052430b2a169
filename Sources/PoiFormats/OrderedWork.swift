import Dispatch
import Synchronization

/// The one way PoiKit runs bounded, ordered background work: each piece starts in the order it
/// is given, runs off the caller's thread, and comes back from `next()` oldest first. At most
/// `depth` pieces (and `maxWeight` of their weight) are in flight, which is what bounds memory:
/// the readers hold one set of batches besides the one they hand out (`ReadWork`), convert a few
/// prepared batches (`ConvertJob`), an import two windows of places at the server
/// (`WritesInFlight`).
///
/// Why Dispatch, and a queue of its own rather than the global one: the pieces are synchronous
/// code (C decoders, libmongoc calls that block for as long as the server takes), which on
/// Swift's cooperative pool would stall every task. A private queue targets libdispatch's
/// overcommit pool, which starts a thread even when every global worker is busy or blocked by
/// someone else's code (a server's handlers, a test runner's parallel tests); on the global
/// queue, whose pool is one thread per core on Linux, a piece could wait for a free thread
/// while its caller, itself perhaps on that pool, waits for it.
///
/// Not for a byte stream (gzip's inflate, a zip member's): one long producer feeding a bounded
/// channel is a `ThreadedStage`; nor for independent items spread over the cores (`WorkerPool`).
package struct OrderedWork<Output: Sendable> {
    /// Pieces in flight at most: `start` with this many in flight is a programming error.
    package let depth: Int
    /// Weight in flight at most; more makes `isFull` true (one heavy piece may pass it alone).
    package let maxWeight: Int
    private let queue: DispatchQueue
    private var inFlight: [(result: PieceResult<Output>, weight: Int)] = []
    private var weight = 0

    /// `concurrent`: pieces may run at the same time (they still come back in order); otherwise
    /// one after the other, on one thread at a time.
    package init(label: String, depth: Int, maxWeight: Int = .max, concurrent: Bool) {
        precondition(depth > 0, "OrderedWork needs a depth of at least 1")
        self.depth = depth
        self.maxWeight = maxWeight
        queue = concurrent ? DispatchQueue(label: label, attributes: .concurrent) : DispatchQueue(label: label)
    }

    package var count: Int { inFlight.count }
    package var isEmpty: Bool { inFlight.isEmpty }
    package var isFull: Bool { inFlight.count >= depth || weight >= maxWeight }

    /// Starts `work`; its output comes back from `next()` after those of the pieces started before.
    package mutating func start(weight: Int = 0, _ work: @escaping @Sendable () -> Output) {
        precondition(inFlight.count < depth, "OrderedWork.start with \(depth) pieces in flight")
        let result = PieceResult<Output>()
        queue.async { result.set(work()) }
        inFlight.append((result, weight))
        self.weight += weight
    }

    /// The oldest piece's output, once it is done (waiting for it); nil when none is in flight.
    package mutating func next() -> Output? {
        guard !inFlight.isEmpty else { return nil }
        let (result, pieceWeight) = inFlight.removeFirst()
        let output = result.wait()
        weight -= pieceWeight
        return output
    }
}

/// One piece's output, set on the worker's thread and taken once on the caller's.
private final class PieceResult<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let slot = Mutex<Value?>(nil)

    func set(_ value: Value) {
        slot.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Value {
        done.wait()
        return slot.withLock { $0.take()! }
    }
}
