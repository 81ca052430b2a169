import ArgumentParser
import Foundation
import PoiStore

/// `--uri` and `--db`, shared by every command that talks to MongoDB.
struct DatabaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("MongoDB URI (default: $MONGODB_URI, else local).", valueName: "uri"))
    var uri: String?

    @Option(help: "Database (default: the URI's, else MyDatabase).")
    var db: String?

    // Hidden from `--help` (`--help-hidden` and docs/poi.md list them): tuning few people need.
    @Option(help: ArgumentHelp("Give up on an unreachable server after this many seconds.", valueName: "seconds",
                               visibility: .hidden))
    var serverTimeout: Double = 10

    @Option(help: ArgumentHelp("Retry a write that failed transiently (a dropped connection, an election) for up "
                               + "to this many seconds; 0: never. Writes are idempotent, a retry never duplicates.",
                               valueName: "seconds", visibility: .hidden))
    var retryFor: Double = 60

    var resolvedURI: String {
        if let uri { return uri }
        if let env = ProcessInfo.processInfo.environment["MONGODB_URI"], !env.isEmpty { return env }
        return "mongodb://127.0.0.1:27017"
    }

    func validate() throws {
        guard retryFor >= 0, retryFor <= 86_400 else {
            throw ValidationError("--retry-for must be 0...86400 seconds, got \(retryFor)")
        }
        guard serverTimeout > 0, serverTimeout <= 3600 else {
            throw ValidationError("--server-timeout must be more than 0 and at most 3600 seconds, got \(serverTimeout)")
        }
        if let db, let problem = Self.problem(withDatabaseName: db) { throw ValidationError("--db \(db): \(problem)") }
    }

    /// MongoDB's rules for a database name, checked before connecting: a typo such as a space or a
    /// dot would otherwise reach the server, or create a database nobody meant.
    static func problem(withDatabaseName name: String) -> String? {
        if name.isEmpty { return "a database name cannot be empty" }
        if name.utf8.count > 63 { return "a database name has at most 63 bytes, this one has \(name.utf8.count)" }
        if let bad = name.first(where: { "/\\. \"$*<>:|?".contains($0) || $0 == "\0" }) {
            return "a database name cannot contain '\(bad)'"
        }
        return nil
    }

    /// Opens the pool. A malformed URI is a usage error (exit 2); its message has the password masked.
    /// `socketTimeout`: how long one call waits for the server's reply before giving up on the
    /// connection (libmongoc's `socketTimeoutMS`; a URI that sets it wins). The batch jobs keep
    /// libmongoc's 300 s (a slow bulk write is still progress); `poi serve` gives its query
    /// timeout plus a margin, so a stalled database fails a request instead of holding it.
    /// `probe`: tight timeouts that win over the URI's, for a health check that must answer.
    /// `selection`: how long one operation waits for a server, when shorter than
    /// `--server-timeout` (a URI that sets `serverSelectionTimeoutMS` wins).
    func connect(socketTimeout: Double? = nil, probe: Double? = nil, selection: Double? = nil) throws -> MongoConnection {
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = Int32(min(serverTimeout, selection ?? serverTimeout) * 1000)
        options.connectTimeoutMS = min(options.connectTimeoutMS, Int32(serverTimeout * 1000))
        options.retryForMS = Int(retryFor * 1000)
        if let socketTimeout { options.socketTimeoutMS = Int32(min(socketTimeout * 1000, Double(Int32.max))) }
        if let probe {
            let ms = Int32(probe * 1000)
            options.serverSelectionTimeoutMS = ms
            options.connectTimeoutMS = ms
            options.socketTimeoutMS = ms
            options.maxPoolSize = 1
            options.overridingURI = true
        }
        do {
            return try MongoConnection(uri: resolvedURI, options: options)
        } catch {
            // A malformed URI is the user's to fix (2); a mongodb+srv:// name that does not
            // resolve is a server not reached (3), as for any other URI.
            if case .unreachable = error {
                printError(CLIHints.message(for: error))
                throw ExitStatus.failure
            }
            printError(error.description)
            throw ExitStatus.usage
        }
    }

    func databaseName(for connection: MongoConnection) -> String {
        db ?? connection.uriDatabase ?? "MyDatabase"
    }
}
