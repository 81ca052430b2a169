import ArgumentParser
import Foundation
import PoiJobs
import PoiStore

struct ThumbnailsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Regenerate thumbnails for the images already stored.",
        discussion: """
        Makes a thumbnail with the given recipe for every stored original that lacks one \
        (missing, or made with another size/fit/format/quality), or for all with --all. Each new \
        thumbnail is stored first, then the places showing that image are switched to it, then \
        the old thumbnails are deleted: the app never sees a broken link. A thumbnail whose bytes \
        are gone or cut short is made again. A PNG thumbnail made with another --quality is up \
        to date (PNG ignores the quality). --format webp stores lossy WebP thumbnails (alpha \
        kept; content-type image/webp, ext .webp), which `poi serve` serves as image/webp; a \
        recipe with another format makes every stored thumbnail outdated, so switching formats \
        remakes each once. Corrupt originals, and originals whose bytes are \
        missing or damaged (a GridFS chunk gone, a file cut short), are named, skipped, and the \
        run goes on.

        A relink sets the place's updated_at to the time the run started, so an incremental \
        export (poi export --since) sends the new thumbnailId before the old thumbnail is \
        deleted. Places already showing the new thumbnail, and reruns of an import, keep their \
        updated_at.

        Runs that overlap (a slow weekly run still going when the next starts, an import beside \
        it) stay consistent: the newest thumbnail of an image wins, and each run deletes the \
        others no place shows. Every run first repairs places whose thumbnailId names a file \
        that is gone, pointing them at their image's newest thumbnail (or making one).

        Exit status: 0 done, 1 some originals could not be thumbnailed, 2 bad arguments, \
        3 database or disk failure (rerun to finish).

        Examples:
          poi thumbnails --size 512x512
          poi thumbnails --size 300x200 --fit cover --format jpeg --quality 80 --all
          poi thumbnails --format webp --quality 80    # every thumbnail as WebP
          poi thumbnails --category museum --jobs 4
          poi thumbnails --gridfs --shard 1/3
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

    @Option(help: ArgumentHelp("Only images of places matching this MongoDB filter (Extended JSON).", valueName: "json"))
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
