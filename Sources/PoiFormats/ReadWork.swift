import Dispatch

/// The readers' background work: one set of batches at a time worked on off the reading thread,
/// on the cores, while the reading thread tokenizes or frames the next set. At most one set is in
/// flight (the double buffering bounds memory to two sets); the work writes its results into
/// slots the reader hands out in input order. `CSVPlaceReader` and `GeoJSONReader` both start and
/// wait through it; it is an `OrderedWork` of depth one whose piece spreads the set over the cores.
struct ReadWork {
    private var line = OrderedWork<Void>(label: "poi.read.convert", depth: 1, concurrent: false)

    /// A set is in flight (started, not yet waited for).
    var isRunning: Bool { !line.isEmpty }

    /// Runs `body(0..<n)` off this thread — on all cores unless `cores` is 1 — to be waited for
    /// by `finish()`. Nothing may be in flight.
    mutating func start(_ n: Int, cores: Int, _ body: @escaping @Sendable (Int) -> Void) {
        precondition(line.isEmpty, "ReadWork.start with a set in flight")
        line.start {
            // concurrentPerform spreads the batches over the global workers, and runs them on
            // this (overcommit) thread alone when none is free.
            if cores == 1 || n == 1 {
                for i in 0..<n { body(i) }
            } else {
                DispatchQueue.concurrentPerform(iterations: n, execute: body)
            }
        }
    }

    /// Waits for the set in flight: true once it is done, false when none was.
    @discardableResult
    mutating func finish() -> Bool {
        line.next() != nil
    }
}
