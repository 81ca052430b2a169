import Dispatch
import Synchronization

/// The one worker pool of the jobs: runs `count` independent items on up to `jobs` threads and
/// returns their results in order. Import, thumbnails and `poi thumb` all use it, together with
/// PoiImaging's `ThumbnailBudget`, which bounds the memory their decodes reserve together.
///
/// Why threads and not a task group: image work is CPU-bound C (libjpeg, libpng, resampling) that
/// never suspends, so blocking Dispatch workers with one item each is the simplest way to keep
/// every core busy without starving Swift's cooperative pool. The caller bounds `count` (one
/// window, or one result slot per input file), which bounds memory: at most `jobs` items are
/// being worked on at once.
enum WorkerPool {
    static func map<T: Sendable>(count: Int, jobs: Int, _ body: @Sendable (Int) -> T) -> [T] {
        guard count > 0 else { return [] }
        let next = Atomic<Int>(0)
        let slots = Mutex<[T?]>(Array(repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, count))) { _ in
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                if i >= count { return }
                let value = body(i)
                slots.withLock { $0[i] = value }
            }
        }
        return slots.withLock { $0.map { $0! } }
    }
}
