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
                    for path in paths.withLock({ $0 }) { unlink(path) }
                    lastWords(sig)
                    signal(sig, SIG_DFL)
                    // To the process, not this thread: Dispatch's worker threads block signals,
                    // so raise() here would leave it pending and the job running.
                    kill(getpid(), sig)
                }
                source.resume()
                installed.append(source)
            }
        }
    }
}
