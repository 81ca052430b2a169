import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

struct GCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Find (--delete: remove) broken or unused files.",
        // Spelled out: with the rarer options hidden, the generated synopsis lists them all, past 80 columns.
        usage: "poi gc [<options>]",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Lists files with no bytes, bytes with no document, damaged bytes (--verify: \
        sha256 too) and files no place uses. A dry run unless --delete, which keeps \
        what a place uses or is younger than --min-age, and refuses a large delete.

        Exit status: 0 nothing inconsistent, 1 some found or left, 2 bad arguments \
        or a refused delete, 3 failure. All rules: docs/poi.md#poi-gc.

        Examples:
          poi gc --verify                            # list, also checking sha256s
          poi gc --delete                            # cron: garbage older than an hour
          poi gc --delete --min-age 0                # nothing else running: all of it
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Remove what was found (default: only list it).")
    var delete = false

    @Flag(help: "Also read every file and compare its sha256.")
    var verify = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep items younger than this.", valueName: "seconds"))
    var minAge: Double = 3600

    @Option(parsing: .unconditional, help: ArgumentHelp("Most files --delete removes (default: 10 %).", valueName: "count|all"))
    var maxDelete: MaxDelete?

    func validate() throws {
        guard minAge >= 0, minAge.isFinite else { throw ValidationError("--min-age must be 0 or more seconds") }
    }

    func run() throws {
        let connection = try database.connect()
        let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
        let store = try storage.fileStore(database: db, creating: false)
        var options = GCOptions()
        options.delete = delete
        options.minimumAge = minAge
        options.verify = verify
        if let maxDelete { options.deleteLimit = maxDelete.limit }
        let report: GCReport
        do {
            report = try GarbageCollector(database: db, store: store).run(options: options)
        } catch {
            printError(naming(server: connection.hosts, in: CLIHints.message(for: error), for: error))
            throw ExitStatus.failure
        }
        if output.json {
            try printJSON(report)
        } else if !output.quiet {
            try printOut(text(report))
        }
        if let refused = report.refused {
            printError(refusal(refused))
            throw ExitStatus.usage
        }
        let remaining = delete ? report.danglingReferences.count + report.damagedBytes.count + report.kept.count : report.problems
        if remaining > 0 { throw ExitStatus.rejects }
    }

    private func text(_ r: GCReport) -> String {
        var lines: [String] = []
        let sections: [(String, [String])] = [
            ("bytes without a files document", r.bytesWithoutDocument),
            ("files documents without bytes", r.documentsWithoutBytes),
            ("thumbnails whose original is gone", r.thumbnailsWithoutOriginal),
            ("files no place uses", r.unreferencedFiles),
            ("stale temporary files", r.staleTemporaryFiles),
            ("places referencing a missing file (rerun the import)", r.danglingReferences),
        ]
        for (title, items) in sections where !items.isEmpty {
            lines.append("\(title): \(items.count)")
            for item in items { lines.append("  \(item)") }
        }
        if !r.damagedBytes.isEmpty {
            lines.append("damaged bytes (never deleted): \(r.damagedBytes.count)")
            for d in r.damagedBytes {
                let users = d.places.isEmpty ? "no place uses it" : "used by " + d.places.joined(separator: ", ")
                lines.append("  \(d.file) (\(d.role)): \(d.problem); \(users)")
            }
        }
        if r.isEmpty {
            lines.append("consistent: nothing to collect")
        } else if r.refused != nil {
            lines.append("\(r.problems) found; nothing deleted (refused)")
        } else if delete {
            lines.append("\(r.problems) found, \(r.deleted) deleted, \(r.kept.count) kept")
            for k in r.kept { lines.append("  kept \(k)") }
        } else if r.problems == r.damagedBytes.count + r.danglingReferences.count {
            // Nothing --delete would remove: do not suggest it.
            lines.append("\(r.problems) found; nothing deleted (gc deletes neither damaged bytes nor dangling references)")
        } else {
            lines.append("\(r.problems) found; nothing deleted (dry run: rerun with --delete to remove them)")
        }
        return lines.joined(separator: "\n")
    }

    /// One line: how much, against what limit, the likely cause, and how to confirm.
    private func refusal(_ r: GCRefusal) -> String {
        let limit: String
        switch maxDelete?.limit ?? GCDeleteLimit.standard {
        case .share(let percent, let minimum): limit = "by default \(percent) % of what is stored, at least \(minimum)"
        case .items(let n): limit = "\(n)"
        case .unlimited: limit = "all"
        }
        // Mostly bytes without a document: the folder (or GridFS bucket) holds another
        // database's files. Mostly documents no place uses: the places are not where expected.
        let cause = r.bytesWithoutDocument * 2 >= r.wouldDelete
            ? (storage.gridfs ? "is --db the database these GridFS files belong to?" : "is --uploads the folder of this database?")
            : "does --db name the database whose places use these files?"
        return "refusing to delete \(r.wouldDelete) of \(r.stored) stored files (\(r.percent) %): "
            + "more than --max-delete allows (\(limit)); \(cause) Use --max-delete \(r.wouldDelete) to confirm"
    }
}

/// `--max-delete N` or `--max-delete all`.
struct MaxDelete: ExpressibleByArgument {
    let limit: GCDeleteLimit

    init?(argument: String) {
        if argument == "all" {
            limit = .unlimited
        } else if let n = Int(argument), n >= 0 {
            limit = .items(n)
        } else {
            return nil
        }
    }
}
