import Foundation

/// Runs `count` independent work items on up to `jobs` threads and returns their results in order.
///
/// Why threads and not a task group: image work is CPU-bound C (libjpeg, libpng, resampling) that
/// never suspends, so blocking Dispatch workers with one item each is the simplest way to keep
/// every core busy without starving Swift's cooperative pool. The caller bounds `count` (one
/// batch), which bounds memory.
enum WorkerPool {
    static func map<T: Sendable>(count: Int, jobs: Int, _ body: @Sendable (Int) -> T) -> [T] {
        guard count > 0 else { return [] }
        let slots = Slots<T>(count: count)
        let next = Counter()
        let workers = max(1, min(jobs, count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let i = next.take()
                if i >= count { return }
                slots.set(i, body(i))
            }
        }
        return slots.values()
    }

    /// Hands out indices 0, 1, 2, … to whichever worker asks next.
    private final class Counter: @unchecked Sendable {
        private var value = 0
        private let lock = NSLock()
        func take() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value - 1
        }
    }

    /// One slot per item; each index is written by exactly one worker, under a lock for the
    /// memory model's sake (the lock is uncontended next to the work each item does).
    private final class Slots<T>: @unchecked Sendable {
        private var storage: [T?]
        private let lock = NSLock()
        init(count: Int) { storage = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ value: T) {
            lock.lock()
            storage[i] = value
            lock.unlock()
        }
        func values() -> [T] {
            lock.lock()
            defer { lock.unlock() }
            return storage.map { $0! }
        }
    }
}
