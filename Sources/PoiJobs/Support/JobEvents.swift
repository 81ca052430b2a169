import PoiFormats
import PoiModel

/// What a running job tells the outside world. Jobs never print; the CLI decides what to show.
public enum JobEvent: Sendable {
    /// Periodic progress (about every 200 ms, and once at the end).
    case progress(JobProgress)
    /// A record was rejected (the same reject also goes to the rejects file).
    case rejected(Reject)
    /// A place was imported without its image, or a stored original could not be thumbnailed.
    case imageProblem(ImageProblem)
    /// Once per input file of an import: where the places' keys come from.
    case keyNotice(KeyNotice)
    /// A column or property of a file was kept under `extra` without being mapped, or looks like
    /// a field nothing mapped: once per file and note (`PlaceReader.notes`).
    case note(ReadNote)
}

/// Where an input file's keys come from (import), so a merge by key never surprises the user.
public struct KeyNotice: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// A column found by its name (`id`, `importKey`), no mapping given.
        case column(String)
        /// No id: keys are derived from name + coordinates. The columns or properties that look
        /// like ids (`source_id`, `ref`, `osm_id`, …) are named so the user can map one.
        case derived(idLikeColumns: [String])
        /// The file has an id (or importKey) column, but a record's cell is blank: that record's
        /// key is derived from name + coordinates (said once per file, with its line).
        case blankID(column: String, line: Int?)
    }
    public var file: String
    public var source: Source

    public init(file: String, source: Source) {
        self.file = file
        self.source = source
    }
}

public typealias JobObserver = @Sendable (JobEvent) -> Void

public struct JobProgress: Sendable {
    /// Items (rows, features, places or originals) handled so far.
    public var items: Int
    /// Total items when known in advance (thumbnails, export); nil for streaming imports.
    public var total: Int?
    public var images: Int
    public var seconds: Double
    /// Share of the work done (0...1) when items cannot be counted ahead: the import estimates
    /// its total records from the share of input bytes read so far.
    public var fraction: Double? = nil
    /// The last report of the job: the numbers are final.
    public var isFinal = false

    public init(items: Int, total: Int?, images: Int, seconds: Double, fraction: Double? = nil, isFinal: Bool = false) {
        self.items = items
        self.total = total
        self.images = images
        self.seconds = seconds
        self.fraction = fraction
        self.isFinal = isFinal
    }

    public var itemsPerSecond: Double { seconds > 0 ? Double(items) / seconds : 0 }
    public var imagesPerSecond: Double { seconds > 0 ? Double(images) / seconds : 0 }
    /// Seconds left at the current rate, when the total is known.
    public var eta: Double? {
        if let total, items > 0, seconds > 0 { return Double(total - items) / itemsPerSecond }
        if let fraction, fraction > 0.001, seconds > 0 { return seconds * (1 - fraction) / fraction }
        return nil
    }
}

public struct ImageProblem: Sendable, Hashable {
    /// The record that referenced the image (import), nil for a stored file (thumbnails).
    public var source: PlaceSource?
    /// Where the image was referenced ("places.csv:17 (record 16)"), or the stored file's id.
    public var location: String
    /// The reference as given, or the stored file's name.
    public var image: String
    public var reason: String

    public var message: String { "\(location): image \(image): \(reason)" }
}
