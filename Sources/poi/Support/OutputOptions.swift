import ArgumentParser
import Foundation
import PoiJobs

/// `--json`, `--quiet`, `--progress`: what a job prints. Defaults suit both people and cron: a
/// progress line only on a terminal, and under cron nothing but problems on stderr.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON summary object on stdout (and nothing else there).")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Show progress and the closing summary even when not on a terminal (e.g. into a log).")
    var progress = false

    var showsProgress: Bool { !quiet && (progress || isatty(2) == 1) }

    /// The text summary at the end. Under cron (no terminal) a successful run prints nothing, so
    /// cron mails only problems; `--json` or `--progress` ask for it explicitly.
    var showsSummary: Bool { !quiet && (progress || isatty(1) == 1 || isatty(2) == 1) }
}

/// Renders `JobEvent`s on stderr: one line per reject or image problem (unless quiet) and a
/// progress line redrawn in place (on a terminal) or printed every few seconds (`--progress`
/// into a log).
final class EventPrinter: @unchecked Sendable {
    private let options: OutputOptions
    private let unit: String
    private let lock = NSLock()
    private var progressShown = false
    private var lastLogged = Date.distantPast
    private let isTerminal = isatty(2) == 1

    init(options: OutputOptions, unit: String) {
        self.options = options
        self.unit = unit
    }

    var observer: JobObserver { { [self] event in handle(event) } }

    private func handle(_ event: JobEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .rejected(let reject):
            guard !options.quiet else { return }
            line("reject: " + rejectLine(reject))
        case .imageProblem(let problem):
            guard !options.quiet else { return }
            if let source = problem.source {
                line("image: \(sourceLocation(source)): \(problem.image): \(problem.reason)")
            } else {
                line("image: " + problem.message)
            }
        case .progress(let p):
            guard options.showsProgress else { return }
            var text = "\(p.items)\(p.total.map { "/\($0)" } ?? "") \(unit), \(Self.rate(p.itemsPerSecond))/s"
            if p.total == nil, let fraction = p.fraction { text = "\(Int(fraction * 100))% " + text }
            if p.images > 0 { text += ", \(p.images) images (\(Self.rate(p.imagesPerSecond))/s)" }
            if let eta = p.eta { text += ", ETA \(Self.duration(eta))" }
            if isTerminal {
                FileDescriptorOutput.write("\r\u{1B}[K" + text, fd: 2)
                progressShown = true
            } else if Date().timeIntervalSince(lastLogged) >= 5 {
                lastLogged = Date()
                FileDescriptorOutput.write(text + "\n", fd: 2)
            }
        }
    }

    /// Ends a progress line drawn in place, so what follows starts on a clean line.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if progressShown { FileDescriptorOutput.write("\n", fd: 2); progressShown = false }
    }

    private func line(_ text: String) {
        if progressShown { FileDescriptorOutput.write("\r\u{1B}[K", fd: 2) }
        FileDescriptorOutput.write(text + "\n", fd: 2)
    }

    static func rate(_ v: Double) -> String { v >= 100 ? String(Int(v.rounded())) : String(format: "%.1f", v) }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" : s >= 60 ? "\(s / 60)m\(String(format: "%02d", s % 60))s" : "\(s)s"
    }
}

/// Prints an Encodable summary as one JSON object on stdout.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    FileDescriptorOutput.write(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n", fd: 1)
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
            printError(naming(server: server, in: error.description))
            switch error {
            case .input, .configuration: throw ExitStatus.usage
            case .store, .output: throw ExitStatus.failure
            }
        }
    }
}

/// A cron log line like "lost the connection to MongoDB: socket error" does not say which server
/// went away; this adds it (hosts only, never the URI's credentials) to database failures.
func naming(server hosts: String?, in message: String) -> String {
    guard let hosts, !hosts.isEmpty, message.contains("MongoDB"), !message.contains(hosts) else { return message }
    return message + " (server \(hosts))"
}
