import ArgumentParser
import Foundation
import PoiFiles

/// Standard output and error, as `poi` uses them: every write to stdout is checked (a full disk
/// or a closed stdout is a failure, exit 3, never a silent success), stderr is best effort.
enum Console {
    /// The standard descriptors (0, 1, 2) that were closed when `poi` started. `start()` opens
    /// /dev/null on them first, so a socket or file opened later cannot take descriptor 1 and
    /// receive the GeoJSON meant for stdout (libmongoc's socket did). Written once, at start.
    static let closedAtStart: Set<Int32> = {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closed.insert(fd)
            // open() returns the lowest free descriptor: this one.
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened != fd && opened >= 0 { close(opened) }
        }
        return closed
    }()

    /// Call first thing: fills closed standard descriptors and lets SIGINT/SIGTERM remove the
    /// temporary files of outputs being written. `poi serve` handles those signals itself (a
    /// graceful shutdown that lets requests finish), so it asks for the descriptors only.
    static func start(handlingTerminationSignals: Bool = true) {
        _ = closedAtStart
        // Over a file size limit (`ulimit -f`), a write fails with EFBIG, which every writer
        // reports and cleans up after; the signal's default action killed the process instead,
        // and left the output's temporary file behind.
        signal(SIGXFSZ, SIG_IGN)
        // SIGQUIT (Ctrl-\, `kill -QUIT`) is a termination signal here too. Left to Swift 6.3's
        // runtime, its crash backtracer caught it, printed a "Program crashed" backtrace, and then,
        // the signal having come from another process, let the process run on
        // (swiftlang/swift#89461), its memory-server thread at times spinning at 100 % CPU: a
        // quit `poi` never ended. `poi serve` takes its default action (quit at once).
        guard handlingTerminationSignals else {
            signal(SIGQUIT, SIG_DFL)
            return
        }
        TemporaryFiles.shared.removeOnTerminationSignals([SIGINT, SIGTERM, SIGHUP, SIGQUIT]) { signal in
            // A cron job under timeout(1) ends with SIGTERM; the script reading --json must
            // still get its object. What was written stays written: a rerun finishes the job.
            let name = switch signal {
            case SIGINT: "SIGINT"
            case SIGTERM: "SIGTERM"
            case SIGHUP: "SIGHUP"
            case SIGQUIT: "SIGQUIT"
            default: "signal \(signal)"
            }
            let message = "interrupted by \(name); run the command again to finish"
            printError(message)
            JSONFailure.report(message, exitStatus: 128 + signal)
        }
    }

    /// Writes all of `text` to stdout, or throws the reason it could not.
    static func writeOut(_ text: String) throws(FileError) {
        if closedAtStart.contains(1) { throw .cannotWrite(path: "standard output", errno: EBADF) }
        try write(text, fd: 1, name: "standard output")
    }

    /// Best effort: there is nowhere else to report a failure to write to stderr.
    static func writeError(_ text: String) {
        try? write(text, fd: 2, name: "standard error")
    }

    private static func write(_ text: String, fd: Int32, name: String) throws(FileError) {
        var s = text
        var failure: Int32 = 0
        s.withUTF8 { buf in
            var offset = 0
            while offset < buf.count {
                let n = systemWrite(fd, buf.baseAddress! + offset, buf.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        if failure != 0 { throw .cannotWrite(path: name, errno: failure) }
    }
}

/// Prints to stdout; a failed write ends the command with exit 3 and says why on stderr.
func printOut(_ text: String) throws {
    do { try Console.writeOut(text + "\n") } catch {
        printError(error.description)
        throw ExitStatus.failure
    }
}

/// Prints one summary object as one line of JSON on stdout: the one encoder of every `--json`.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    JSONFailure.objectPrinted = true
    try printOut(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// `--json` promises one object on stdout, failure or not: a command that fails before it
/// prints its summary (a usage error, an unreachable server, a malformed URI) prints
/// `{"error": "<what printError said>", "exitStatus": N}` instead (as `doctor --json` puts its
/// failure in its report), so a script reading stdout never gets nothing. The exit status is
/// the same as without `--json`.
enum JSONFailure {
    /// Set by `printJSON`: on the main thread before the command ends, or by the termination
    /// signal's last words, after which the process ends.
    nonisolated(unsafe) static var objectPrinted = false
    /// The last message `printError` printed: the reason the command failed.
    nonisolated(unsafe) static var lastError: String?

    /// Whether the command line asks for `--json` (before a `--` that ends the options).
    static var requested: Bool {
        for argument in CommandLine.arguments.dropFirst() {
            if argument == "--" { return false }
            if argument == "--json" { return true }
        }
        return false
    }

    /// Prints the error object when `--json` was asked for and nothing was printed yet.
    static func report(_ message: String?, exitStatus: Int32) {
        guard requested, !objectPrinted, exitStatus != 0 else { return }
        struct Failure: Encodable { var error: String; var exitStatus: Int32 }
        let text = message ?? lastError ?? "failed"
        try? printJSON(Failure(error: text, exitStatus: exitStatus))
    }
}

/// Prints `message` to stderr as `poi: message`, with control characters escaped: a cell or file
/// name must not be able to move the cursor or change the terminal's colours. Line breaks stay
/// (usage messages have several lines); text from dumps is escaped whole by `rejectLine`.
func printError(_ message: String) {
    JSONFailure.lastError = message
    Console.writeError("poi: " + TerminalText.escaped(message, keepingNewlines: true) + "\n")
}

/// Text from dumps and file names, made safe for a terminal or a log line.
enum TerminalText {
    /// C0 controls (but tab), DEL and C1 controls as `\u{…}`; newlines as `\n` unless kept.
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" { out += keepingNewlines ? "\n" : "\\n" } else if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        (s.value < 0x20 && s != "\t") || (s.value >= 0x7F && s.value < 0xA0)
    }
}

#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemWrite = Musl.write
#else
import Darwin
private let systemWrite = Darwin.write
#endif
