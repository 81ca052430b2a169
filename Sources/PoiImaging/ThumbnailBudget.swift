#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bounds the memory of thumbnailing on many threads at once. Each image reserves its estimated
/// peak (`Thumbnailer.estimatedPeakBytes` from the header, plus its encoded bytes) out of
/// `capacity` and starts as soon as that fits; when several wait, the largest goes first. An image
/// larger than the whole budget runs alone. One budget per job, shared by all its workers.
///
/// Without it, N workers meeting N huge progressive JPEGs would each hold every DCT coefficient
/// of one; with an all-or-nothing gate instead, two big images that fit together wait for each
/// other.
public final class ThumbnailBudget: @unchecked Sendable {
    /// `--memory` when not given: what the process may use besides its baseline.
    public static func defaultBytes(jobs: Int) -> Int { (100 << 20) + max(1, jobs) * (60 << 20) }

    public var capacity: Int { queue.capacity }

    // `queue` is only read or changed with `mutex` held; `cond` wakes waiters after a release.
    private var queue: BudgetQueue
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init(bytes: Int) {
        queue = BudgetQueue(capacity: bytes)
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        cond.deallocate()
    }

    /// `Thumbnailer.make` inside a reservation. The header is read once: it sizes the
    /// reservation and then plans the thumbnail (a header that fails its checks ends here,
    /// reserving nothing).
    public func make(from bytes: [UInt8], spec: ThumbnailSpec, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        let header = try Thumbnailer.probe(bytes, options: options)
        let need = Thumbnailer.estimatedPeakBytes(source: header, spec: spec) + bytes.count
        return try withReservation(need) { () throws(ImageError) in
            try Thumbnailer.make(from: bytes, info: header, spec: spec, options: options)
        }
    }

    /// Runs `body` once `bytes` could be reserved, blocking the calling thread until then.
    /// Workers are Dispatch threads doing blocking C work, so blocking here is what they want.
    public func withReservation<T, E: Error>(_ bytes: Int, _ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        let ticket = queue.arrive(bytes)
        while !queue.isRunning(ticket) { pthread_cond_wait(cond, mutex) }
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            queue.finish(ticket)
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}

/// The budget's bookkeeping, without threads: who waits, who runs, who is admitted next. A value
/// type so its admission order can be tested exactly.
struct BudgetQueue: Sendable {
    let capacity: Int
    private(set) var reserved = 0
    private var nextTicket = 0
    /// Waiting reservations, kept in admission order: largest first, then by arrival.
    private var waiting: [(ticket: Int, bytes: Int)] = []
    private var running: [Int: Int] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var runningTickets: Set<Int> { Set(running.keys) }
    var waitingTickets: [Int] { waiting.map(\.ticket) }

    func isRunning(_ ticket: Int) -> Bool { running[ticket] != nil }

    /// Queues a reservation and admits whatever now fits; returns its ticket.
    mutating func arrive(_ bytes: Int) -> Int {
        let ticket = nextTicket
        nextTicket += 1
        // An image over the whole budget reserves all of it: it starts when nothing runs, and
        // nothing starts beside it (every reservation is at least a byte, so not even an empty one).
        let need = min(max(1, bytes), capacity)
        let at = waiting.firstIndex { $0.bytes < need } ?? waiting.endIndex
        waiting.insert((ticket, need), at: at)
        admit()
        return ticket
    }

    mutating func finish(_ ticket: Int) {
        guard let bytes = running.removeValue(forKey: ticket) else { return }
        reserved -= bytes
        admit()
    }

    /// Strictly in order: a smaller image does not start before a larger one that is waiting,
    /// or a steady stream of small images could keep a big one waiting forever.
    private mutating func admit() {
        while let first = waiting.first, reserved + first.bytes <= capacity {
            waiting.removeFirst()
            running[first.ticket] = first.bytes
            reserved += first.bytes
        }
    }
}
