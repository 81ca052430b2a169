/// Results computed by worker threads, handed out in order without copying.
///
/// A `Place` holds a dozen reference-counted fields, so every copy of a `ReadItem` costs a dozen
/// retains and releases; at 100k records that was a quarter of `poi check`'s time. Workers
/// initialise their own disjoint slots in place, and `pop()` moves items out.
final class SlotQueue<Element>: @unchecked Sendable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private var head = 0
    private var count = 0

    init() {
        capacity = 0
        base = .allocate(capacity: 1)
    }

    var isEmpty: Bool { head >= count }

    /// Prepares `n` slots; the queue must be empty. Every slot must then be initialised once.
    func reset(count n: Int) {
        precondition(isEmpty)
        if n > capacity {
            base.deallocate()
            base = .allocate(capacity: n)
            capacity = n
        }
        head = 0
        count = n
    }

    /// Initialises slot `i` (each slot once; distinct slots may be set from different threads).
    func set(_ i: Int, _ item: consuming Element) {
        (base + i).initialize(to: item)
    }

    func pop() -> Element? {
        guard head < count else { return nil }
        head += 1
        return (base + head - 1).move()
    }

    deinit {
        if head < count { (base + head).deinitialize(count: count - head) }
        base.deallocate()
    }
}

typealias ReadItemQueue = SlotQueue<ReadItem>
