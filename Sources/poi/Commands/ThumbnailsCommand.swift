import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

struct ThumbnailsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Regenerate thumbnails for the images already stored.",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Makes the missing or outdated thumbnails of stored images (--all: every one), \
        then relinks the places (their updated_at moves): the app never sees a broken \
        link. Exit status 1: some originals failed. All rules: docs/poi.md#poi-thumbnails.

        Examples:
          poi thumbnails --size 512x512
          poi thumbnails --format webp --quality 80    # every thumbnail as WebP
          poi thumbnails --category museum --jobs 4
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions
    @OptionGroup var recipe: ThumbnailRecipeOptions
    @OptionGroup var parallel: ParallelOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Regenerate every thumbnail, also the up-to-date ones.")
    var all = false

    @Option(help: ArgumentHelp("Only images of places in this category (repeatable).", valueName: "name"))
    var category: [String] = []

    @Option(help: ArgumentHelp("Only images of places matching this filter.", valueName: "json"))
    var query: String?

    @Option(help: ArgumentHelp("Only originals whose id hashes to shard I of N.", valueName: "I/N"))
    var shard: Shard?

    func run() throws {
        var options = ThumbnailJobOptions()
        options.spec = try recipe.spec()
        options.decode = recipe.decodeOptions
        options.all = all
        options.jobs = parallel.resolvedJobs
        options.memory = parallel.memoryBytes
        options.shard = shard ?? .all
        if !category.isEmpty || query != nil {
            let userQuery: BSONDocument?
            do { userQuery = try query.map { (json) throws(StoreError) in try PlaceFilter.userQuery(json: json) } } catch {
                throw ValidationError(error.description)
            }
            options.placeFilter = PlaceFilter(categories: category, userQuery: userQuery)
        }

        let connection = try database.connect()
        let db = MongoDatabase(connection: connection, name: database.databaseName(for: connection))
        let store = try storage.fileStore(database: db, creating: false)
        let printer = EventPrinter(options: output, unit: "originals")
        let summary = try printer.run(server: connection.hosts) { () throws(JobError) in try ThumbnailJob(database: db, store: store, options: options, observer: printer.observer).run() }
        if output.json {
            try printJSON(summary)
        } else if output.showsSummary {
            try printOut("\(summary.originals) originals: \(summary.thumbnailsMade) thumbnails made (\(options.spec.canonical)), "
                + "\(summary.upToDate) up to date, \(summary.failed) failed"
                + (summary.colorUnmanaged > 0 ? ", \(summary.colorUnmanaged) made as if untagged (colour profile not usable)" : "")
                + "; \(summary.placesRelinked) places relinked, "
                + (summary.brokenLinksRepaired > 0
                    ? "\(summary.brokenLinksRepaired) links to thumbnails that were gone repaired, " : "")
                + "\(summary.oldThumbnailsDeleted) old thumbnails deleted; \(String(format: "%.1f", summary.seconds)) s")
        }
        if summary.bytesMissing > 0 {
            printError(CLIHints.missingBytes("\(summary.bytesMissing) of the originals", storage: storage))
        }
        if summary.failed > 0 { throw ExitStatus.rejects }
    }
}
