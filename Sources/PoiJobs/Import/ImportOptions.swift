import PoiFormats
import PoiImaging

/// A second record with a key already seen in the run (ARCHITECTURE.md §4: never a silent merge).
public enum DuplicatePolicy: String, Sendable, CaseIterable {
    /// Rejected, naming the first record's line or feature.
    case reject
    /// The first record is kept; later ones are counted in `duplicates` and not written.
    case first
    /// The last record is kept: it replaces the earlier one (counted in `duplicates`).
    case last
}

/// What one `poi import` is asked to do.
/// More than ten stored properties: one per option of the command, set independently of the others.
public struct ImportOptions: Sendable {
    public var read = ReadOptions()
    /// Folder image paths resolve against; nil: each input file's own folder.
    public var imagesDir: String?
    /// Default `256x256 inside`, format auto (PNG when the source has alpha, else JPEG q85).
    public var thumbnail = try! ThumbnailSpec()
    /// True when the user gave the recipe: an image whose stored thumbnail was made with another
    /// recipe gets a new one. False: an existing thumbnail (e.g. from `poi thumbnails`) is kept.
    public var thumbnailIsExplicit = false
    public var decode = DecodeOptions()
    /// Reject a row whose image cannot be stored, instead of importing the place without it.
    public var requireImages = false
    /// Rejects file for a single input; nil: `NAME.rejects.csv` / `.rejects.geojson` beside it.
    public var rejectsPath: String?
    public var dryRun = false
    public var jobs = 1
    /// Bytes the image work may reserve at once (`ThumbnailBudget`); nil: 100 MB + 60 MB per job.
    public var memory: Int?
    public var memoryBytes: Int { memory ?? ThumbnailBudget.defaultBytes(jobs: jobs) }
    public var shard = Shard.all
    /// Places per bulk write and per window of image work (bounds memory).
    public var batchSize = 500
    /// Image files over this size are refused before they are read.
    public var maxImageFileBytes = 256 << 20
    /// Paths and contents remembered across windows (so repeated photos cost nothing); the
    /// memory is bounded by trimming the caches to empty when they reach this many entries.
    public var imageCacheLimit = 100_000
    /// What to do with a record whose key an earlier record of the same run had (an exact copy
    /// of that record is always just counted as unchanged).
    public var onDuplicate = DuplicatePolicy.reject

    public init() {}

    /// `places.csv` → `places.rejects.csv`, `dump.json` → `dump.rejects.geojson`.
    public static func defaultRejectsPath(for input: String, format: InputFormat) -> String {
        let slash = input.lastIndex(of: "/")
        let dir = slash.map { String(input[...$0]) } ?? ""
        var base = slash.map { String(input[input.index(after: $0)...]) } ?? input
        // places.csv.gz → places.rejects.csv: the rejects file is not compressed.
        if base.lowercased().hasSuffix(".gz"), base.count > 3 { base.removeLast(3) }
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        return dir + base + (format == .csv ? ".rejects.csv" : ".rejects.geojson")
    }
}
