import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One piece of blocking work on a thread of its own, whose result the caller collects later.
///
/// Why a thread and not a task: the work is a libmongoc call, which blocks its thread for as long
/// as the server takes; on Swift's cooperative pool (two threads on a two-core machine) that
/// would stall every task, and the jobs are synchronous code anyway. A POSIX thread rather than
/// Foundation's `Thread`: the least machinery that is certainly a thread of its own, started at
/// once, whatever else the process (a test runner's parallel tests, their child processes) does.
final class BackgroundWork<Value: Sendable>: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let slot = Mutex<Value?>(nil)

    init(_ body: @escaping @Sendable () -> Value) {
        let work = RunBox { [self] in
            let value = body()
            slot.withLock { $0 = value }
            finished.signal()
        }
        let raw = Unmanaged.passRetained(work).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let created = pthread_create(&thread, &attributes, { raw in
            Unmanaged<RunBox>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, raw)
        pthread_attr_destroy(&attributes)
        if created != 0 {
            // No thread to be had (a resource limit): the work runs here, late rather than never.
            Unmanaged<RunBox>.fromOpaque(raw).takeRetainedValue().run()
        }
    }

    /// Blocks until the work is done; may be called again (returns the same value).
    func wait() -> Value {
        finished.wait()
        finished.signal()
        return slot.withLock { $0! }
    }
}

/// The closure a new thread runs, carried through `pthread_create`'s pointer.
private final class RunBox: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
