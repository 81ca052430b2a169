import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

/// `--json`, `--quiet`, `--progress`: what a job prints. Defaults suit both people and cron: a
/// progress line only on a terminal, and under cron nothing but problems on stderr.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON summary on stdout, nothing else.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Progress and summary even off a terminal (a log).")
    var progress = false

    var showsProgress: Bool { !quiet && (progress || isatty(2) == 1) }

    /// The text summary at the end. Under cron (no terminal) a successful run prints nothing, so
    /// cron mails only problems; `--json` or `--progress` ask for it explicitly.
    var showsSummary: Bool { !quiet && (progress || isatty(1) == 1 || isatty(2) == 1) }
}

/// Renders `JobEvent`s on stderr: one line per reject or image problem (unless quiet) and a
/// progress line, redrawn in place on a terminal; into a log (`--progress`), a line every
/// `logInterval` seconds once the job has run that long, and the final numbers at the end.
final class EventPrinter: @unchecked Sendable {
    private let options: OutputOptions
    private let unit: String
    private let lock = NSLock()
    private var progressShown = false
    private var lastLogged: Double = 0
    private var rate = SmoothedRate()
    private let isTerminal = isatty(2) == 1
    /// Seconds between progress lines in a log (and before the first one).
    let logInterval: Double

    init(options: OutputOptions, unit: String, logInterval: Double = 5) {
        self.options = options
        self.unit = unit
        self.logInterval = logInterval
    }

    var observer: JobObserver { { [self] event in handle(event) } }

    private func handle(_ event: JobEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .rejected(let reject):
            guard !options.quiet else { return }
            line("reject: " + rejectLine(reject))
        case .note(let note):
            guard !options.quiet else { return }
            line(noteLine(note))
        case .imageProblem(let problem):
            guard !options.quiet else { return }
            if let source = problem.source {
                line(TerminalText.escaped("image: \(sourceLocation(source)): \(problem.image): \(problem.reason)"))
            } else {
                line(TerminalText.escaped("image: " + problem.message))
            }
        case .keyNotice(let notice):
            // Under cron only problems reach stderr: the key column in use is news only to
            // someone watching (a terminal, or --progress); keys from name + coordinates are
            // worth a line in any log.
            if case .column = notice.source, !options.showsProgress { return }
            guard !options.quiet else { return }
            line(TerminalText.escaped(Self.keyNoticeText(notice)))
        case .progress(let p):
            guard options.showsProgress else { return }
            let perSecond = rate.update(items: p.items, seconds: p.seconds)
            let text = Self.progressText(p, unit: unit, itemsPerSecond: perSecond)
            if isTerminal {
                Console.writeError("\r\u{1B}[K" + text + (p.isFinal ? "\n" : ""))
                progressShown = !p.isFinal
            } else if p.isFinal || p.seconds - lastLogged >= logInterval {
                // The first line after `logInterval` seconds, then one every `logInterval`, and the
                // final numbers: a 50 ms job logs just its result, not "1/1000 ... ETA 1m14s".
                lastLogged = p.seconds
                Console.writeError(text + "\n")
            }
        }
    }

    /// `places.csv: keys from column "id"`, or the fallback key with the flag that would map an
    /// id-looking column.
    static func keyNoticeText(_ n: KeyNotice) -> String {
        let file = n.file.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? n.file
        switch n.source {
        case .column(let column):
            return "key: \(file): keys from column \"\(column)\" (another column: --field id=COLUMN)"
        case .blankID(let column, let line):
            return "key: \(file): \(line.map { "line \($0) and any other row" } ?? "a row") with a blank \"\(column)\" "
                + "gets its key from name + coordinates (a place with the same name and position as another is a duplicate)"
        case .derived(let candidates):
            var text = "key: \(file): no id column, keys from name + coordinates "
                + "(a place with the same name and position as another is a duplicate)"
            if let first = candidates.first {
                let named = candidates.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")
                text += "; \(named) look\(candidates.count == 1 ? "s" : "") like an id: --field id=\(first)"
            } else {
                text += "; --field id=COLUMN names an id column"
            }
            return text
        }
    }

    /// `1,234/5,000 places (25%), 812/s, 3 images (1.5/s), ETA 5s`.
    static func progressText(_ p: JobProgress, unit: String, itemsPerSecond: Double) -> String {
        var text = "\(p.items)\(p.total.map { "/\($0)" } ?? "") \(unit)"
        let fraction = p.total.map { $0 > 0 ? Double(p.items) / Double($0) : 1 } ?? p.fraction
        if let fraction { text += " (\(Int((min(1, fraction) * 100).rounded(.down)))%)" }
        text += ", \(rate(itemsPerSecond))/s"
        if p.images > 0 { text += ", \(p.images) images (\(rate(p.imagesPerSecond))/s)" }
        if p.isFinal {
            text += ", done in \(duration(p.seconds))"
        } else if let fraction, fraction > 0.001, fraction < 1, p.seconds >= 1, itemsPerSecond > 0 {
            // Time left at the recent rate: work whose pace changes (places, then photos) gets an
            // ETA for the pace it has now, not for its first burst.
            let left = Double(p.items) * (1 - fraction) / fraction / itemsPerSecond
            text += ", ETA \(duration(left))"
        }
        return text
    }

    /// Ends a progress line drawn in place, so what follows starts on a clean line.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if progressShown { Console.writeError("\n"); progressShown = false }
    }

    private func line(_ text: String) {
        if progressShown { Console.writeError("\r\u{1B}[K") }
        Console.writeError(text + "\n")
    }

    static func rate(_ v: Double) -> String { v >= 100 ? String(Int(v.rounded())) : String(format: "%.1f", v) }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" }
        if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return seconds < 10 && seconds > 0 && s < 1 ? String(format: "%.2fs", seconds) : "\(s)s"
    }
}

/// Items per second over the last few seconds (exponentially weighted, time constant 5 s).
struct SmoothedRate {
    private var lastItems = 0
    private var lastSeconds = 0.0
    private var value: Double?

    mutating func update(items: Int, seconds: Double) -> Double {
        let dt = seconds - lastSeconds
        guard dt > 0 else { return value ?? 0 }
        let instant = Double(items - lastItems) / dt
        let weight = 1 - exp(-dt / 5)
        value = value.map { $0 + weight * (instant - $0) } ?? instant
        lastItems = items
        lastSeconds = seconds
        return value!
    }
}

extension EventPrinter {
    /// Runs a job with this printer as its observer: ends the progress line either way, and turns
    /// a `JobError` into its message on stderr and the documented exit status.
    /// `server`: the hosts of the connection, named in database failures that do not name them.
    func run<T>(server: String? = nil, _ job: () throws(JobError) -> T) throws -> T {
        defer { finish() }
        do {
            return try job()
        } catch {
            finish()
            printError(naming(server: server, in: CLIHints.message(for: error), for: error))
            throw ExitStatus.of(error)
        }
    }
}

/// A cron log line like "lost the connection to MongoDB: socket error" does not say which server
/// went away; this adds it (hosts only, never the URI's credentials) to database failures, told
/// apart by their type, not their text.
func naming(server hosts: String?, in message: String, for error: any Error) -> String {
    guard let hosts, !hosts.isEmpty, isDatabaseFailure(error), !message.contains(hosts) else { return message }
    return message + " (server \(hosts))"
}

private func isDatabaseFailure(_ error: any Error) -> Bool {
    let store: StoreError
    switch error {
    case JobError.store(let e): store = e
    case let e as StoreError: store = e
    default: return false
    }
    switch store {
    case .network, .server, .driver, .unreachable, .authentication, .tls, .retried: return true
    case .invalidURI, .refusedQuery, .io, .uploadsFolderMissing, .unsupportedContentType, .bytesMissing, .bytesDamaged: return false
    }
}
