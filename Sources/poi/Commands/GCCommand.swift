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

        Exit status: 0 nothing inconsistent (or, with --delete, everything found was removed), \
        1 inconsistencies found (dry run) or some remain after --delete, 2 bad arguments, \
        3 database or disk failure.

        Examples:
          poi gc                                     # dry run: list what is inconsistent
          poi gc --json                              # the same as one JSON object
          poi gc --delete                            # cron: remove garbage older than an hour
          poi gc --delete --min-age 0                # nothing else running: remove all of it
          poi gc --gridfs --uri mongodb://user:secret@db.example.com/MyDatabase
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Remove what was found (default: only list it).")
    var delete = false

    @Option(help: ArgumentHelp("With --delete, leave items younger than this many seconds.", valueName: "seconds"))
    var minAge: Double = 3600

    func validate() throws {
        guard minAge >= 0, minAge.isFinite else { throw ValidationError("--min-age must be 0 or more seconds") }
    }

    func run() throws {
        let connection = try database.connect()
        let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
        let store = try storage.fileStore(database: db)
        var options = GCOptions()
        options.delete = delete
        options.minimumAge = minAge
        let report: GCReport
        do {
            report = try GarbageCollector(database: db, store: store).run(options: options)
        } catch {
            printError(naming(server: connection.hosts, in: error.description))
            throw ExitStatus.failure
        }
        if output.json {
            try printJSON(report)
        } else if !output.quiet {
            printText(report)
        }
        let remaining = delete ? report.danglingReferences.count + report.kept.count : report.problems
        if remaining > 0 { throw ExitStatus.rejects }
    }

    private func printText(_ r: GCReport) {
        let sections: [(String, [String])] = [
            ("bytes without a files document", r.bytesWithoutDocument),
            ("files documents without bytes", r.documentsWithoutBytes),
            ("thumbnails whose original is gone", r.thumbnailsWithoutOriginal),
            ("files no place uses", r.unreferencedFiles),
            ("stale temporary files", r.staleTemporaryFiles),
            ("places referencing a missing file (rerun the import)", r.danglingReferences),
        ]
        for (title, items) in sections where !items.isEmpty {
            print("\(title): \(items.count)")
            for item in items { print("  \(item)") }
        }
        if r.isEmpty {
            print("consistent: nothing to collect")
        } else if delete {
            print("\(r.problems) found, \(r.deleted) deleted, \(r.kept.count) kept")
            for k in r.kept { print("  kept \(k)") }
        } else {
            print("\(r.problems) found; nothing deleted (dry run: rerun with --delete to remove them)")
        }
    }
}
