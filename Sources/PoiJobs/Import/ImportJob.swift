import PoiStore

/// `poi import`: dumps → validated places → stored images → upserted `locations`.
///
/// The job is only its configuration: the options, and where places and images are stored.
/// Each `run` works in an `ImportRun` of its own, so one job may be run again (a second run
/// starts from nothing and gives its own honest summary).
///
/// Streaming: records are read one at a time and handled in windows of `batchSize` places; a
/// window's images are worked on by `jobs` threads (`ImageAttacher`), then its places go to the
/// server in one bulk upsert while the next window is read (`WritesInFlight`). Memory is bounded
/// by the windows, whatever the input size.
///
/// Crash safety comes from the order inside a window — image bytes, then their `files`
/// documents, then the places that point at them — and from idempotent keys: a rerun finds stored
/// images by SHA-256 and upserts places by `importKey`, so it completes the job without duplicates.
public final class ImportJob: Sendable {
    public let options: ImportOptions
    /// nil in a dry run: nothing is written.
    let places: (any PlaceRepository)?
    let images: any ImageRepository
    let observer: JobObserver

    /// `places`/`images` nil with `options.dryRun`: nothing is written.
    public init(options: ImportOptions, places: (any PlaceRepository)?, images: (any ImageRepository)?,
                observer: @escaping JobObserver = { _ in }) {
        self.options = options
        self.places = options.dryRun ? nil : places
        self.images = options.dryRun ? DryRunImages() : (images ?? DryRunImages())
        self.observer = observer
    }

    /// Imports `files` in order (`-` is standard input; a zip archive is its dump members).
    public func run(files: [String]) throws(JobError) -> ImportSummary {
        try ImportRun(job: self).run(files: files)
    }
}
