import ArgumentParser
import PoiStore

/// `--uploads DIR` or `--gridfs`: where image bytes live.
struct StorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder the backend serves files from (bytes at <dir>/<id><ext>).", valueName: "dir"))
    var uploads: String = "uploads"

    @Flag(help: "Store image bytes in GridFS (bucket 'fs') instead of the uploads folder.")
    var gridfs = false

    /// `creating`: false for commands that only read what is stored (see `DiskUploads`).
    func fileStore(database: MongoDatabase, creating: Bool = true) throws -> any FileStore {
        if gridfs { return GridFSStore(database: database) }
        do {
            return try DiskUploads(database: database, directory: uploads, creating: creating)
        } catch {
            // A folder that is not there is the user's to name right (exit 2), not a disk failure.
            if case .uploadsFolderMissing(_, let filesListed) = error {
                printError(error.description + " (name the backend's uploads folder with --uploads, or use --gridfs"
                           + (filesListed ? "; if those files really are gone, create the folder first)" : ")"))
                throw ExitStatus.usage
            }
            printError(error.description)
            throw ExitStatus.failure
        }
    }
}
