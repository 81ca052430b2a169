import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary files this process is writing right now, so SIGINT/SIGTERM/SIGHUP can remove
/// them before the process ends (an interrupted 28 MB convert used to leave its temporary file).
///
/// This is the one piece of process-wide mutable state in PoiKit, and it has to be: a signal ends
/// the whole process, whichever job owns the file, so the list must be reachable from the one
/// handler. It holds paths only, under a lock.
public final class TemporaryFiles: Sendable {
    public static let shared = TemporaryFiles()

    private let paths = Mutex<Set<String>>([])
    private let sources = Mutex<[any DispatchSourceSignal]>([])
    /// A termination signal is being handled: the process is ending.
    private let ending = Mutex(false)

    func register(_ path: String) { _ = paths.withLock { $0.insert(path) } }
    func unregister(_ path: String) { _ = paths.withLock { $0.remove(path) } }

    /// Paths registered now (tests).
    public var current: Set<String> { paths.withLock { $0 } }

    /// Removes every registered temporary file, then lets the signal end the process as it would
    /// have (exit status 128 + signal), so a shell or cron sees the interruption. Signals are
    /// received on a Dispatch queue, not in a signal handler, so the cleanup may take locks and
    /// allocate. Call once, early. `lastWords` runs after the cleanup and before the process
    /// ends, with the signal's number: the command line uses it to keep `--json`'s promise of one
    /// object on stdout.
    public func removeOnTerminationSignals(
        _ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP],
        lastWords: @escaping @Sendable (Int32) -> Void = { _ in }
    ) {
        sources.withLock { installed in
            guard installed.isEmpty else { return }
            // A parent may have started us with these blocked (the mask survives exec): unblock
            // them, or a TERM would stay pending and the job run on.
            var set = sigset_t()
            sigemptyset(&set)
            for sig in signals { sigaddset(&set, sig) }
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            for sig in signals {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { [self] in
                    // Once, whatever comes after: a second signal (or this one again) finds the
                    // process on its way out.
                    guard ending.withLock({ (done: inout Bool) -> Bool in
                        defer { done = true }
                        return !done
                    }) else { return }
                    for path in paths.withLock({ $0 }) { unlink(path) }
                    lastWords(sig)
                    signal(sig, SIG_DFL)
                    // Raised on this thread, with the signal unblocked here. Sent to the process
                    // instead, it came back to this handler: Dispatch blocks it on every thread
                    // it runs and reads it from there, so while workers were busy it was read
                    // again and again and the message printed thousands of times.
                    var only = sigset_t()
                    sigemptyset(&only)
                    sigaddset(&only, sig)
                    pthread_sigmask(SIG_UNBLOCK, &only, nil)
                    raise(sig)
                    // Not reached: the default action ends the process. Should it not, the exit
                    // status is still the one a shell gives a process ended by this signal.
                    _exit(128 + sig)
                }
                source.resume()
                installed.append(source)
            }
        }
    }
}
