import Foundation
import Synchronization

/// One piece of blocking work on a thread of its own, whose result the caller collects later.
///
/// Why a thread and not a task: the work is a libmongoc call, which blocks its thread for as long
/// as the server takes; on Swift's cooperative pool (two threads on a two-core machine) that
/// would stall every task, and the jobs are synchronous code anyway.
final class BackgroundWork<Value: Sendable>: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let slot = Mutex<Value?>(nil)

    init(_ body: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            let value = body()
            slot.withLock { $0 = value }
            finished.signal()
        }
        thread.name = "poi-write"
        thread.start()
    }

    /// Blocks until the work is done; may be called again (returns the same value).
    func wait() -> Value {
        finished.wait()
        finished.signal()
        return slot.withLock { $0! }
    }
}
