import ArgumentParser
import PoiFormats
import PoiJobs

/// `poi check`: reads and validates dumps exactly as `poi import` would, without a database.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate dumps as import would, without a database.",
        // Spelled out: with the rarer options hidden, the generated synopsis lists them all, past 80 columns.
        usage: "poi check [<options>] <file> ...",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Prints each rejected record and each file's counts: import --dry-run's. \
        \(FieldMappingOptions.readingRules) Exit status 1: some records rejected. All \
        rules and options: docs/poi.md#poi-check.

        Examples:
          poi check Samples/places.csv Samples/landmarks.geojson
          poi check dump.csv --field name=Title --delimiter ';'
          poi check export.geojson --json | jq .rejected
        """
    )

    /// Rejects kept for `--json`: enough to fix a file by, bounded whatever the input.
    static let maxListedRejects = 10_000

    @Argument(help: ArgumentHelp("CSV/GeoJSON files, .gz or .zip too ('-': stdin).", valueName: "file"))
    var files: [String]

    @OptionGroup var mapping: FieldMappingOptions

    @Option(help: ArgumentHelp("A key seen before: reject, or as import's first/last.",
                               valueName: "rule"))
    var onDuplicate: DuplicatePolicy = .reject

    @Flag(help: "Print counts and rejects as one JSON object.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only the counts, not each reject.")
    var quiet = false

    struct Report: Encodable {
        var files: [CheckFileResult]
        var valid: Int
        var rejected: Int
        var unreadable: Int
        var skippedMembers: [SkippedMember]
        var skippedRejectsFiles: [String]
        var unchanged: Int
        var duplicates: Int
        var rejects: [RejectRecord]
        var rejectsListed: Int
    }

    func run() throws {
        let out = BufferedOutput()
        let listed = RejectList(limit: Self.maxListedRejects)
        let job = CheckJob(files: files, options: try mapping.readOptions(), onDuplicate: onDuplicate) { [json, quiet] event in
            if case .note(let n) = event {
                if !quiet { out.flush(); Console.writeError(noteLine(n) + "\n") }
                return
            }
            guard case .rejected(let r) = event else { return }
            if json {
                listed.add(RejectRecord(r))
            } else if !quiet {
                out.append(rejectLine(r) + "\n")
            }
        }
        let summary = job.run { result in
            if let error = result.error {
                out.flush()
                printError(result.failure.map { CLIHints.message(for: $0) } ?? error)
            }
            if !json && result.format != nil { out.append("\(result.file): \(result.valid) valid, \(result.rejected) rejected\n") }
        }
        if !quiet && !json {
            for member in summary.skippedMembers { out.flush(); Console.writeError(skippedMemberLine(member) + "\n") }
            for file in summary.skippedRejectsFiles {
                out.flush()
                Console.writeError("poi: skipped \(TerminalText.escaped(file)): a rejects file of an earlier import, "
                    + "not a dump (check it alone once fixed)\n")
            }
        }
        if json {
            try printJSON(Report(files: summary.files, valid: summary.valid, rejected: summary.rejected,
                                 unreadable: summary.unreadable, skippedMembers: summary.skippedMembers,
                                 skippedRejectsFiles: summary.skippedRejectsFiles, unchanged: summary.unchanged,
                                 duplicates: summary.duplicates, rejects: listed.records, rejectsListed: listed.records.count))
        } else {
            if summary.files.count > 1 {  // a zip's members count as files
                out.append("total: \(summary.valid) valid, \(summary.rejected) rejected"
                           + (summary.unreadable > 0 ? ", \(summary.unreadable) file(s) unreadable" : "") + "\n")
            }
            // Valid, but written once: what import --dry-run counts as unchanged or duplicates.
            if summary.unchanged > 0 || summary.duplicates > 0 {
                out.append("of the valid: \(summary.unchanged) exact repeat(s) of an earlier record of their key"
                           + (summary.duplicates > 0 ? ", \(summary.duplicates) duplicate key(s) settled by --on-duplicate \(onDuplicate.rawValue)" : "")
                           + "\n")
            }
        }
        try out.finish()
        // The status import would give the worst unreadable file (a file changed under the check: 3).
        if let worst = summary.files.compactMap({ $0.failure.map(ExitStatus.of) }).max(by: { $0.rawValue < $1.rawValue }) {
            throw worst
        }
        if summary.unreadable > 0 { throw ExitStatus.usage }
        if summary.rejected > 0 { throw ExitStatus.rejects }
    }
}

/// Text for stdout, written in blocks of 64 KiB: a file with a million rejects prints them all
/// without holding them. The first failed write is kept and reported by `finish()` (exit 3).
final class BufferedOutput: @unchecked Sendable {
    private var buffer = ""
    private var failure: (any Error)?

    func append(_ text: String) {
        buffer += text
        if buffer.utf8.count >= 64 * 1024 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        if failure == nil {
            do { try Console.writeOut(buffer) } catch { failure = error }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func finish() throws {
        flush()
        if let failure {
            printError(String(describing: failure))
            throw ExitStatus.failure
        }
    }
}

/// The first `limit` rejects, for a `--json` report.
final class RejectList: @unchecked Sendable {
    private(set) var records: [RejectRecord] = []
    let limit: Int
    init(limit: Int) { self.limit = limit }
    /// Called from the job's thread only (check reports rejects in order, on the caller's thread).
    func add(_ r: RejectRecord) { if records.count < limit { records.append(r) } }
}
