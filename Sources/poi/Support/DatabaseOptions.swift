import ArgumentParser
import Foundation
import PoiStore

/// `--uri` and `--db`, shared by every command that talks to MongoDB.
struct DatabaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("MongoDB connection string (default: $MONGODB_URI, else mongodb://127.0.0.1:27017).",
                               valueName: "uri"))
    var uri: String?

    @Option(help: "Database name (default: the URI's database, else MyDatabase, the backend's default).")
    var db: String?

    @Option(help: ArgumentHelp("Give up on an unreachable server after this many seconds.", valueName: "seconds"))
    var serverTimeout: Double = 10

    var resolvedURI: String {
        if let uri { return uri }
        if let env = ProcessInfo.processInfo.environment["MONGODB_URI"], !env.isEmpty { return env }
        return "mongodb://127.0.0.1:27017"
    }

    func validate() throws {
        guard serverTimeout > 0, serverTimeout <= 3600 else {
            throw ValidationError("--server-timeout must be between 0 and 3600 seconds")
        }
    }

    /// Opens the pool. A malformed URI is a usage error (exit 2); its message has the password masked.
    func connect() throws -> MongoConnection {
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = Int32(serverTimeout * 1000)
        options.connectTimeoutMS = min(options.connectTimeoutMS, Int32(serverTimeout * 1000))
        do {
            return try MongoConnection(uri: resolvedURI, options: options)
        } catch {
            printError(error.description)
            throw ExitStatus.usage
        }
    }

    func databaseName(for connection: MongoConnection) -> String {
        db ?? connection.uriDatabase ?? "MyDatabase"
    }
}
