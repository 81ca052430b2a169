import ArgumentParser
import PoiStore

/// `--uploads DIR` or `--gridfs`: where image bytes live.
struct StorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The backend's uploads folder.", valueName: "dir"))
    var uploads: String = "uploads"

    @Flag(help: "Image bytes in GridFS (bucket 'fs'), not --uploads.")
    var gridfs = false

    /// `creating`: false for commands that only read what is stored (see `DiskUploads`); true,
    /// `prepare()` makes a missing folder, which a job does once its inputs are checked.
    func fileStore(database: MongoDatabase, creating: Bool = true) throws -> any FileStore {
        if gridfs { return GridFSStore(database: database) }
        do {
            return try DiskUploads(database: database, directory: uploads, creating: creating)
        } catch {
            throw Self.failure(error)
        }
    }

    /// A store made ready now (the server, which has no inputs to check first).
    func preparedFileStore(database: MongoDatabase) throws -> any FileStore {
        let store = try fileStore(database: database)
        do { try store.prepare() } catch { throw Self.failure(error) }
        return store
    }

    /// Says `error` and gives the exit status: a folder that is not there is the user's to name
    /// right (2), not a disk failure (3).
    private static func failure(_ error: StoreError) -> ExitCode {
        printError(CLIHints.message(for: error))
        if case .uploadsFolderMissing = error { return ExitStatus.usage }
        return ExitStatus.failure
    }
}
