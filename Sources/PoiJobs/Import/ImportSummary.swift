/// The numbers of one import run, printed by `--json` and used for the exit status.
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
    /// New originals written.
    public var imagesStored = 0
    /// Image references satisfied by an original already stored (earlier run or earlier row).
    public var imagesReused = 0
    /// Places imported without their image (missing, corrupt, refused path), or rejected for it
    /// with `--require-images`.
    public var imagesFailed = 0
    public var thumbnailsMade = 0
    public var seconds = 0.0
    public var dryRun = false
    public var rejectsFiles: [String] = []

    public init() {}
}
