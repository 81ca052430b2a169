import PoiFormats

/// The numbers of one import run, printed by `--json` and used for the exit status.
/// More than ten stored properties: each is one number of the `--json` summary that scripts read by name.
public struct ImportSummary: Sendable, Codable, Equatable {
    public var files = 0
    /// Records (rows or features) read, valid or not.
    public var rowsRead = 0
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    public var rejected = 0
    /// Valid records another shard owns (`--shard`).
    public var skippedByShard = 0
    /// Records set aside for another record with the same key (`--on-duplicate first|last`);
    /// exact copies count as unchanged instead, and with the default choice a duplicate is a reject.
    public var duplicates = 0
    /// New originals written.
    public var imagesStored = 0
    /// Image references satisfied by an original already stored (earlier run or earlier row).
    public var imagesReused = 0
    /// Image references whose content is listed in `files` but whose bytes are not in the file
    /// store of this run (another uploads folder, or GridFS read as a folder): linked as before,
    /// reported, never counted as reused.
    public var imagesMissing = 0
    /// Places imported without their image (missing, corrupt, refused path), or rejected for it
    /// with `--require-images`.
    public var imagesFailed = 0
    public var thumbnailsMade = 0
    /// New originals whose embedded ICC profile could not be used (damaged, unreadable, for other
    /// pixels): stored, and thumbnailed as if untagged; each is reported as an image problem.
    public var imagesColorUnmanaged = 0
    public var seconds = 0.0
    public var dryRun = false
    public var rejectsFiles: [String] = []
    /// Inputs skipped because they are rejects files an earlier import wrote
    /// (`RejectsLocation.isOwnRejectsFile`) given among other inputs (a rejects file named
    /// alone is imported).
    public var skippedRejectsFiles: [String] = []
    /// Members of zip archives that are not dumps (a README, an image…), not read.
    public var skippedMembers: [SkippedMember] = []

    public init() {}
}
