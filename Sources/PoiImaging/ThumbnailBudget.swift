#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Bounds the memory of thumbnailing on many threads at once. Each image reserves its estimated
/// peak (`Thumbnailer.estimatedPeakBytes` from the header, plus its encoded bytes) out of
/// `capacity` and starts as soon as that fits; when several wait, the largest goes first. An image
/// larger than the whole budget runs alone. One budget per job, shared by all its workers.
///
/// Without it, N workers meeting N huge progressive JPEGs would each hold every DCT coefficient
/// of one; with an all-or-nothing gate instead, two big images that fit together wait for each
/// other.
///
/// It also keeps the workers' decode arenas (`DecodeArena`): each running image borrows one, so
/// its decoder's big buffers land on pages an earlier image already faulted in. An idle arena's
/// memory counts against the budget as if reserved (the peak stays within `capacity`); it is
/// given back to the system when an image waits only on it, and once nothing has run for
/// `idleRelease`, so a burst's memory comes back.
public final class ThumbnailBudget: @unchecked Sendable {
    /// `--memory` when not given: what the process may use besides its baseline.
    public static func defaultBytes(jobs: Int) -> Int { (100 << 20) + max(1, jobs) * (60 << 20) }

    public var capacity: Int { queue.capacity }

    // `queue`, `arenas`, `nextArena` and `idleSince` are only read or changed with `mutex`
    // held; `cond` wakes waiters after a release.
    private var queue: BudgetQueue
    /// Every arena, idle or lent, by the id `queue` knows it by.
    private var arenas: [Int: DecodeArena] = [:]
    private var nextArena = 0
    private var idleSince = 0
    private let idleRelease: Duration
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    /// `idleRelease`: how long thumbnailing must have been idle before the arenas' memory goes
    /// back to the system; a second bridges the gaps of a batch between images, and a server's
    /// burst is gone within the few seconds its memory may stay up.
    public init(bytes: Int, idleRelease: Duration = .seconds(1)) {
        queue = BudgetQueue(capacity: bytes)
        self.idleRelease = idleRelease
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
        try ImageCodec.withBytes(bytes) { (raw) throws(ImageError) in try make(from: raw, spec: spec, options: options) }
    }

    /// `make` for bytes the caller keeps (a worker's reused read buffer). `residentBytes`: what
    /// the buffer holding them keeps mapped, when more than the bytes (a buffer grown to an
    /// earlier, larger file keeps those pages; the reservation counts them, or a run of small
    /// files after a big one would go over `capacity` by the difference, once per worker).
    public func make(from bytes: UnsafeRawBufferPointer, spec: ThumbnailSpec, options: DecodeOptions = DecodeOptions(),
                     residentBytes: Int = 0) throws(ImageError) -> Thumbnail {
        let header = try Thumbnailer.probe(bytes, options: options)
        var need = Thumbnailer.estimatedPeakBytes(source: header, spec: spec) + max(bytes.count, residentBytes)
        var options = options
        let whole = wholeInflateBytes(need: need, whole: Thumbnailer.pngWholeInflateBytes(source: header, encodedBytes: bytes.count))
        need += whole
        options.pngWholeInflateBytes = whole
        return try withReservation(need) { (arena) throws(ImageError) in
            try Thumbnailer.make(from: bytes, info: header, spec: spec, options: options, arena: arena)
        }
    }

    /// What a PNG decode reserves to inflate its image data in one libdeflate call, on top of
    /// `need`: `whole` when both fit in the budget, else 0 (zlib streams it). Worth it whenever it
    /// fits: zlib's inflate was 75 % of a PNG thumbnail's CPU, and libdeflate takes less than
    /// half of that. The rule was "while two such images fit side by side", so as never to
    /// serialise a job; measured (22 bench PNGs, 2 jobs, 220 MB), that left the largest
    /// (4096² RGB, 33 MB file: 119 MB) to zlib, 0.40 s where libdeflate takes 0.27 s, and the
    /// run 6 % slower, for 17 MB less at peak. The price: two such images at once now take turns
    /// (0.48 s where zlib ran both side by side in 0.44 s, for 0.49 s of CPU instead of 0.79), so
    /// a run of nothing but PNGs over half the budget each is about 10 % slower; a larger
    /// `--memory` lets them side by side again. Deterministic (the budget's capacity, not its
    /// load), because the two paths differ on a few malformed streams (png_codec.c).
    func wholeInflateBytes(need: Int, whole: Int) -> Int {
        whole > 0 && need + whole <= capacity ? whole : 0
    }

    /// Runs `body` once `bytes` could be reserved, blocking the calling thread until then.
    /// Workers are Dispatch threads doing blocking C work, so blocking here is what they want.
    public func withReservation<T, E: Error>(_ bytes: Int, _ body: () throws(E) -> T) throws(E) -> T {
        try withReservation(bytes) { (_: DecodeArena?) throws(E) in try body() }
    }

    /// `withReservation`, lending `body` a decode arena (nil when none can be made: the decode
    /// then mallocs as it always did).
    func withReservation<T, E: Error>(_ bytes: Int, _ body: (DecodeArena?) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        let ticket = queue.arrive(bytes)
        releaseIdleArenasIfSomeoneWaitsOnThem()
        while !queue.isRunning(ticket) { pthread_cond_wait(cond, mutex) }
        let arena = arena(for: ticket)
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            queue.finish(ticket, arenaBytes: arena?.retainedBytes ?? 0)
            releaseIdleArenasIfSomeoneWaitsOnThem()
            if queue.isIdle { scheduleIdleRelease() }
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
        }
        return try body(arena)
    }

    /// Bytes the idle arenas keep now (for tests and the memory benchmarks).
    var idleArenaBytes: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queue.held
    }

    // MARK: - arenas (all with `mutex` held)

    /// The arena `queue` lent this image, or a new one it adopts.
    private func arena(for ticket: Int) -> DecodeArena? {
        if let id = queue.lent[ticket] { return arenas[id] }
        guard let arena = DecodeArena() else { return nil }
        let id = nextArena
        nextArena += 1
        arenas[id] = arena
        queue.adopt(arena: id, by: ticket)
        return arena
    }

    private func releaseIdleArenas() {
        for id in queue.dropIdleArenas() { arenas.removeValue(forKey: id) } // deinit gives the memory back
        pthread_cond_broadcast(cond)
    }

    /// An image that would start but for what idle arenas keep gets that memory.
    private func releaseIdleArenasIfSomeoneWaitsOnThem() {
        if queue.waitsOnHeld { releaseIdleArenas() }
    }

    /// Nothing runs or waits: if that is still so after `idleRelease`, the arenas' memory goes.
    private func scheduleIdleRelease() {
        idleSince += 1
        let mark = idleSince
        DispatchQueue.global().asyncAfter(deadline: .now() + idleRelease.timeInterval) { [weak self] in
            guard let self else { return }
            pthread_mutex_lock(self.mutex)
            if self.idleSince == mark && self.queue.isIdle { self.releaseIdleArenas() }
            pthread_mutex_unlock(self.mutex)
        }
    }
}

private extension Duration {
    var timeInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

/// The budget's bookkeeping, without threads: who waits, who runs, who is admitted next, and
/// which idle decode arena each admitted image takes. A value type so its admission order can be
/// tested exactly.
///
/// Arenas are known here by id and size only. An idle arena's bytes count like a reservation
/// (`held`); an image admitted takes the idle arena that holds the most within its reservation,
/// or else the smallest, and its reservation grows to that arena's size: the bytes move from
/// `held` into what runs, so admitting it costs only what it needs beyond its arena.
struct BudgetQueue: Sendable {
    let capacity: Int
    private(set) var reserved = 0
    private var nextTicket = 0
    /// Waiting reservations, kept in admission order: largest first, then by arrival.
    private var waiting: [(ticket: Int, bytes: Int)] = []
    private var running: [Int: Int] = [:]
    /// Idle arenas: id -> bytes they keep.
    private var idle: [Int: Int] = [:]
    /// Arenas lent to running images: ticket -> arena id.
    private(set) var lent: [Int: Int] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var runningTickets: Set<Int> { Set(running.keys) }
    var waitingTickets: [Int] { waiting.map(\.ticket) }
    var idleArenas: [Int: Int] { idle }
    var isIdle: Bool { running.isEmpty && waiting.isEmpty }
    /// What idle arenas keep.
    var held: Int { idle.values.reduce(0, +) }

    func isRunning(_ ticket: Int) -> Bool { running[ticket] != nil }

    /// The first waiting image would start if the idle arenas' memory were given back.
    var waitsOnHeld: Bool {
        guard !idle.isEmpty, let first = waiting.first else { return false }
        return reserved + first.bytes <= capacity
    }

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

    /// A running image that took no idle arena gets a new one, `id` (of 0 bytes so far).
    mutating func adopt(arena id: Int, by ticket: Int) {
        guard running[ticket] != nil, lent[ticket] == nil else { return }
        lent[ticket] = id
    }

    /// The image is done; its arena, now keeping `arenaBytes`, goes idle.
    mutating func finish(_ ticket: Int, arenaBytes: Int = 0) {
        guard let bytes = running.removeValue(forKey: ticket) else { return }
        reserved -= bytes
        if let id = lent.removeValue(forKey: ticket) { idle[id] = max(0, arenaBytes) }
        admit()
    }

    /// Every idle arena, to be given back to the system; returns their ids.
    mutating func dropIdleArenas() -> [Int] {
        let ids = Array(idle.keys)
        idle.removeAll()
        admit()
        return ids
    }

    /// Strictly in order: a smaller image does not start before a larger one that is waiting,
    /// or a steady stream of small images could keep a big one waiting forever.
    private mutating func admit() {
        while let first = waiting.first {
            let arena = arenaFor(first.bytes)
            let charge = max(first.bytes, arena?.bytes ?? 0)
            guard reserved + held - (arena?.bytes ?? 0) + charge <= capacity else { break }
            waiting.removeFirst()
            running[first.ticket] = charge
            reserved += charge
            if let arena {
                idle[arena.id] = nil
                lent[first.ticket] = arena.id
            }
        }
    }

    /// The idle arena that keeps the most within `bytes`, else the smallest.
    private func arenaFor(_ bytes: Int) -> (id: Int, bytes: Int)? {
        let ordered = idle.map { (id: $0.key, bytes: $0.value) }.sorted { ($0.bytes, $0.id) < ($1.bytes, $1.id) }
        return ordered.last { $0.bytes <= bytes } ?? ordered.first
    }
}
