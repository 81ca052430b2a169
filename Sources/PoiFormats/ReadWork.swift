import Dispatch

/// The readers' background work: one set of batches at a time worked on off the reading thread,
/// on the cores, while the reading thread tokenizes or frames the next set. At most one set is in
/// flight (the double buffering bounds memory to two sets); the work writes its results into
/// slots the reader hands out in input order. `CSVPlaceReader` and `GeoJSONReader` both start and
/// wait through it, so how their work reaches the cores is decided in one place.
struct ReadWork {
    private var running: DispatchGroup?

    /// A set is in flight (started, not yet waited for).
    var isRunning: Bool { running != nil }

    /// Runs `body(0..<n)` off this thread — on all cores unless `cores` is 1 — to be waited for
    /// by `finish()`. Nothing may be in flight.
    mutating func start(_ n: Int, cores: Int, _ body: @escaping @Sendable (Int) -> Void) {
        precondition(running == nil, "ReadWork.start with a set in flight")
        let group = DispatchGroup()
        // A private queue, not the global one: it targets libdispatch's overcommit pool, which
        // starts a thread even when every global worker is busy or blocked by someone else's
        // code (a server's handlers, a test runner's parallel tests). On the global queue, whose
        // pool is one thread per core on Linux, a reader could wait for a free thread while
        // its caller, itself perhaps on that pool, waits for it.
        // concurrentPerform below still spreads the batches over the global workers, and runs
        // them on this thread alone when none is free.
        DispatchQueue(label: "poi.read.convert").async(group: group) {
            if cores == 1 || n == 1 {
                for i in 0..<n { body(i) }
            } else {
                DispatchQueue.concurrentPerform(iterations: n, execute: body)
            }
        }
        running = group
    }

    /// Waits for the set in flight: true once it is done, false when none was.
    @discardableResult
    mutating func finish() -> Bool {
        guard let group = running else { return false }
        group.wait()
        running = nil
        return true
    }
}
