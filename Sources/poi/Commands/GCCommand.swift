import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

struct GCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Find (and with --delete remove) files that are inconsistent or no place uses.",
        discussion: """
        Compares the `files` collection, the stored bytes (the uploads folder, or GridFS with \
        --gridfs) and the places in `locations`, and lists:
          - bytes with no files document (e.g. from an import killed between the two writes)
          - files documents whose bytes are missing
          - damaged bytes: a stored size that is not the document's length (a file cut short or \
        overwritten), GridFS chunks missing, and with --verify content that does not match the \
        document's sha256. Each is named with the places that show it (importKey) and never \
        deleted: restore an original from a backup; poi thumbnails makes a thumbnail of the \
        wrong size again (poi thumbnails --all any damaged thumbnail)
          - thumbnails whose original has no files document
          - unreferenced files: originals no place shows, and thumbnails no place shows whose \
        original no place shows either
          - stale temporary files left by an interrupted write
          - places referencing a file id that has no files document (reported only: rerun the \
        import to repair them)

        Nothing is changed unless --delete is given. --delete never removes a file a place \
        references, nor a file in the uploads folder whose name PoiKit does not write \
        (<24 hex digits><ext>), nor anything younger than --min-age (an hour by default): an \
        import or thumbnail run going on stores its files just before the places that will \
        reference them. Give --min-age 0 only when nothing else writes to the database.

        --delete also refuses, deleting nothing, when it would remove more than 10 % of the \
        stored files (files documents plus bytes no document describes), and at least 10: that \
        many is what a wrong --uploads or --db looks like, e.g. a folder two databases share, \
        where every file of the other has no document in this one. Check the folder, then \
        confirm with --max-delete N (at most N files) or --max-delete all.

        Sizes and GridFS chunk counts come from listings and cost no reads; --verify reads every \
        stored file whole to compare its sha256 (as long as reading the whole store).

        Exit status: 0 nothing inconsistent (or, with --delete, everything found was removed), \
        1 inconsistencies found (dry run) or some remain after --delete (damaged bytes always \
        remain), 2 bad arguments or a \
        delete refused by --max-delete (nothing deleted), 3 database or disk failure.

        Examples:
          poi gc                                     # dry run: list what is inconsistent
          poi gc --json                              # the same as one JSON object
          poi gc --verify                            # also read every file and check its sha256
          poi gc --delete                            # cron: remove garbage older than an hour
          poi gc --delete --min-age 0                # nothing else running: remove all of it
          poi gc --delete --max-delete 812           # confirm a large delete gc refused
          poi gc --gridfs --uri mongodb://user:secret@db.example.com/MyDatabase
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Remove what was found (default: only list it).")
    var delete = false

    @Flag(help: "Also read every stored file and compare its sha256 (sizes and GridFS chunk counts are always compared).")
    var verify = false

    @Option(parsing: .unconditional, help: ArgumentHelp("With --delete, leave items younger than this many seconds.", valueName: "seconds"))
    var minAge: Double = 3600

    @Option(parsing: .unconditional, help: ArgumentHelp("With --delete, remove at most this many files, or any number with 'all' "
                               + "(default: 10 % of the stored files, at least 10).", valueName: "count|all"))
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
