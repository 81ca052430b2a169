import ArgumentParser
import Foundation
import PoiServer
import PoiStore

/// More than ten stored properties: swift-argument-parser declares each option of the command as one.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the TourMyTown app's REST API (and a map).",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        A drop-in for the tutorial's Express server, plus thumbnails, GET /healthz, \
        GET /openapi.json and a map at GET /map. Stateless: run several (--gridfs). \
        Exit status: 0 stopped by a signal, 2 bad arguments, 3 cannot listen or \
        reach the database. All rules and options: docs/poi.md#poi-serve.

        Examples:
          poi serve --uploads /srv/app/uploads --port 8080
          poi serve --host 0.0.0.0 --gridfs --write-token "$TOKEN"
          poi serve --map-tiles none                  # the map with no base map
        """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var storage: StorageOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port (0: any free one, printed).")
    var port = 3000

    @Option(help: ArgumentHelp("Largest upload in bytes.", valueName: "bytes"))
    var maxUpload = 100 * 1024 * 1024

    @Option(help: ArgumentHelp("Most documents a list returns.", valueName: "n"))
    var maxResults = 1000

    @Option(help: ArgumentHelp("Time limit of each query, then 503.", valueName: "secs"))
    var queryTimeout: Double = 10

    @Option(help: ArgumentHelp("Close a connection whose client sends nothing for this long: between requests, and "
                               + "in the middle of a request's head or body (a response being sent is never cut).",
                               valueName: "seconds", visibility: .hidden))
    var idleTimeout: Double = 60

    @Option(help: ArgumentHelp("Bearer token writes need (default: $POI_WRITE_TOKEN).", valueName: "token"))
    var writeToken: String?

    @Option(help: ArgumentHelp("Let this origin call the API from a browser (CORS).", valueName: "origin"))
    var cors: String?

    @Flag(help: "Write the access log as JSON lines.")
    var jsonLog = false

    // `.unconditional`: `-1` is a value to refuse with the range, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("How long a files document read once is served without asking the database again "
                               + "(a file deleted by another kind of client stops being served after this).", valueName: "seconds",
                               visibility: .hidden))
    var filesCacheSeconds: Double = 30

    @Option(help: ArgumentHelp("Memory for the bytes of small files (up to 256 KiB: thumbnails above all), served "
                               + "without reading the disk; each hit is checked against the file with one stat, so a "
                               + "file deleted or replaced elsewhere is never served from it. 0 turns it off.",
                               valueName: "bytes", visibility: .hidden))
    var fileCacheBytes = 32 * 1024 * 1024

    @Option(help: ArgumentHelp("Tile URL template ({z}/{x}/{y}), or none.",
                               valueName: "url"))
    var mapTiles = MapTiles.openStreetMap.template

    @Option(help: ArgumentHelp("Credit shown on the map for --map-tiles (OpenStreetMap's by default; none for a custom template).",
                               valueName: "text", visibility: .hidden))
    var mapAttribution: String?

    @Option(help: ArgumentHelp("Folder holding Leaflet's and Leaflet.markercluster's files (leaflet.min.js, "
                               + "leaflet.markercluster.min.js, their CSS and images/), read at start.", valueName: "dir",
                               visibility: .hidden))
    var assets = ServerConfiguration().leafletDirectory

    @Option(help: ArgumentHelp("Most places the map shows in one view.", valueName: "n"))
    var mapMaxPlaces = ServerConfiguration().mapMaxPlaces

    /// `--map-tiles` as the server takes it: nil for `none`; OpenStreetMap's keeps its credit.
    func tiles() throws -> MapTiles? {
        if mapTiles.lowercased() == "none" { return nil }
        if mapTiles == MapTiles.openStreetMap.template, mapAttribution == nil { return .openStreetMap }
        do {
            return try MapTiles(template: mapTiles, attribution: mapAttribution ?? "")
        } catch {
            throw ValidationError("--map-tiles: \(error)")
        }
    }

    func validate() throws {
        _ = try tiles()
        guard mapMaxPlaces > 0 else { throw ValidationError("--map-max-places must be at least 1") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535, got \(port)") }
        guard maxUpload > 0 else { throw ValidationError("--max-upload must be more than 0 bytes") }
        guard fileCacheBytes >= 0 else { throw ValidationError("--file-cache-bytes must be 0 or more, got \(fileCacheBytes)") }
        guard maxResults > 0 else { throw ValidationError("--max-results must be at least 1") }
        guard filesCacheSeconds >= 0, filesCacheSeconds <= 86_400 else {
            throw ValidationError("--files-cache-seconds must be 0...86400, got \(filesCacheSeconds)")
        }
        guard idleTimeout > 0, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be more than 0 and at most 86400 seconds, got \(idleTimeout)")
        }
        guard queryTimeout > 0, queryTimeout <= 3600 else {
            throw ValidationError("--query-timeout must be more than 0 and at most 3600 seconds, got \(queryTimeout)")
        }
        // `--write-token "$TOKEN"` with TOKEN unset is an empty token: refusing it beats starting
        // a server that says writes need a token and takes them all.
        if let writeToken, writeToken.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--write-token is empty (is the variable it comes from set?); give a token, "
                + "or leave the option out for open writes")
        }
        if let cors, cors.isEmpty || cors.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw ValidationError("--cors needs an origin such as https://app.example.com")
        }
    }

    func run() async throws {
        // Before anything else runs async work (see `PoiServer.runTasksOnEventLoops`).
        PoiServer.runTasksOnEventLoops()
        // As servers do: a peer or a log reader that went away is an EPIPE to handle where it
        // happens (a dropped log line, a closed connection), never a signal that ends the process.
        signal(SIGPIPE, SIG_IGN)
        // A call waits for its reply at most the query timeout plus the margin: a stalled
        // database (a paused process, a peer that never answers) fails requests with 503 and
        // frees their threads, instead of holding both for libmongoc's 300 s.
        let margin = Double(ServerConfiguration.databaseMarginSeconds)
        let connection = try database.connect(socketTimeout: queryTimeout + margin,
                                              selection: ServerConfiguration.requestSelectionSeconds)
        let health = try database.connect(probe: Double(ServerConfiguration().healthTimeoutSeconds))
        let dbName = database.databaseName(for: connection)
        let db = MongoDatabase(connection: connection, name: dbName)
        let files = try storage.preparedFileStore(database: db)

        var config = ServerConfiguration()
        config.host = host
        config.port = port
        config.maxUpload = maxUpload
        config.fileCacheBytes = fileCacheBytes
        config.maxResults = maxResults
        config.queryTimeoutMS = Int(queryTimeout * 1000)
        config.startupTimeoutMS = Int(database.serverTimeout * 1000)
        config.idleTimeoutMS = Int64(idleTimeout * 1000)
        let envToken = ProcessInfo.processInfo.environment["POI_WRITE_TOKEN"]
        config.writeToken = writeToken ?? (envToken?.isEmpty == false ? envToken : nil)
        config.corsOrigin = cors
        config.jsonLog = jsonLog
        config.filesCacheSeconds = filesCacheSeconds
        config.stagingDirectory = NSTemporaryDirectory()
        config.mapTiles = try tiles()
        config.leafletDirectory = assets
        config.mapMaxPlaces = mapMaxPlaces

        let server = PoiServer(configuration: config, database: db, files: files, healthConnection: health)
        let where_ = storage.gridfs ? "GridFS" : "uploads \(storage.uploads)"
        let host = self.host
        let writes = config.writeToken == nil ? "open" : "need a bearer token"
        do {
            try await server.run { port in
                // The URI is printed redacted: never its password.
                Console.writeError("poi serve: listening on http://\(host):\(port) (database \(dbName) at "
                    + "\(connection.redactedURI), \(where_), writes \(writes))\n")
            }
        } catch {
            switch error {
            case .databaseUnreachable(let store): printError("serve: " + CLIHints.message(for: store))
            case .cannotListen:
                // The option to change, which the library cannot name.
                printError("serve: \(error) (choose another with --host or --port)")
            case .failed: printError("serve: \(error)")
            }
            throw ExitStatus.failure
        }
        Console.writeError("poi serve: stopped\n")
    }
}
