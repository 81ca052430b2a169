import PoiModel

/// What a running job tells the outside world. Jobs never print; the CLI decides what to show.
public enum JobEvent: Sendable {
    /// Periodic progress (about every 200 ms, and once at the end).
    case progress(JobProgress)
    /// A record was rejected (the same reject also goes to the rejects file).
    case rejected(Reject)
    /// A place was imported without its image, or a stored original could not be thumbnailed.
    case imageProblem(ImageProblem)
}

public typealias JobObserver = @Sendable (JobEvent) -> Void

public struct JobProgress: Sendable {
    /// Items (rows, features, places or originals) handled so far.
    public var items: Int
    /// Total items when known in advance (thumbnails, export); nil for streaming imports.
    public var total: Int?
    public var images: Int
    public var seconds: Double
    /// Share of the input consumed (0...1) when items cannot be counted ahead but bytes can.
    public var fraction: Double? = nil

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
