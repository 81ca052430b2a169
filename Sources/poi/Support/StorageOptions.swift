import ArgumentParser
import PoiStore

/// `--uploads DIR` or `--gridfs`: where image bytes live.
struct StorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder the backend serves files from (bytes at <dir>/<id><ext>).", valueName: "dir"))
    var uploads: String = "uploads"

    @Flag(help: "Store image bytes in GridFS (bucket 'fs') instead of the uploads folder.")
    var gridfs = false

    func fileStore(database: MongoDatabase) throws -> any FileStore {
        if gridfs { return GridFSStore(database: database) }
        do {
            return try DiskUploads(database: database, directory: uploads)
        } catch {
            printError(error.description)
            throw ExitStatus.failure
        }
    }
}
