import CMongoC
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Connection settings besides the URI. Defaults suit a nightly cron job: fail within seconds when
/// the server is gone rather than hang, but give slow operations time to finish.
public struct ConnectionOptions: Sendable {
    public var serverSelectionTimeoutMS: Int32 = 10_000
    public var connectTimeoutMS: Int32 = 10_000
    public var socketTimeoutMS: Int32 = 300_000
    public var maxPoolSize: Int32 = 16
    public var appName = "poikit"
    /// How long a job keeps retrying an operation that failed with a transient error (`--retry-for`;
    /// 0: never retried). See `MongoConnection.retrying`.
    public var retryForMS = 60_000
    /// The timeouts and pool size above win over the URI's own: for a probe that must answer
    /// within its time whatever the URI says (`poi serve`'s health check).
    public var overridingURI = false
    public init() {}
}

/// Debian's libmongoc 1.23 initialises itself in a library constructor, before `main`, and keeps
/// its performance counters in a shared-memory segment `/dev/shm/mongoc-PID`, removed at a clean
/// exit only (`mongoc_cleanup`). A process killed (kill -9, the OOM killer, a crash), or one that
/// simply never calls `mongoc_cleanup` (the test runner), left its segment, and a later process
/// that got the same pid printed "Falling back to malloc for counters." on stderr, which cron
/// mails.
///
/// The segment's name is removed instead: the counters stay mapped (an unlinked segment lives as
/// long as its mapping), and nothing is left for a later process whatever ends this one. `poi`
/// does it first thing, and `libmongocReady` for any other process. `poi` used to run itself
/// again with `MONGOC_DISABLE_SHM` set, which the constructor honours; that second start (every
/// library loaded and libmongoc's constructor run again) was half of `poi`'s start-up, 18 of
/// 39 ms for `poi --version` (measured).
public enum LibmongocCounters {
    public static func removeSegmentName() {
        // Only this process can hold the name while it lives; a dead process's with this pid is
        // the segment that would have made the warning.
        shm_unlink("/mongoc-\(getpid())")
        setenv("MONGOC_DISABLE_SHM", "1", 1)
    }
}

/// libmongoc must be initialised once per process before any other call. A lazily initialised
/// global constant gives exactly that without mutable state. Its logging is switched off: every
/// failure reaches us as a `bson_error_t` anyway, and its log lines could echo connection strings.
///
/// Its performance counters are kept in process memory, not in /dev/shm: a shared-memory
/// segment per process outlives it (no `mongoc_cleanup` at exit), and a later process with the
/// same pid made libmongoc print "Falling back to malloc for counters" on stderr, which cron mails.
/// The handler goes first so that nothing mongoc_init says reaches stderr either.
private let libmongocReady: Void = {
    mongoc_log_set_handler(nil, nil)
    LibmongocCounters.removeSegmentName()
    mongoc_init()
}()

/// A pool of libmongoc clients for one URI, safe to share between concurrent tasks.
///
/// `mongoc_client_pool_t` is thread-safe; a `mongoc_client_t` is not, so each call pops its own
/// client, uses it on the calling thread and pushes it back (the pattern libmongoc documents).
public final class MongoConnection: @unchecked Sendable {
    private let pool: OpaquePointer
    private let uri: OpaquePointer
    public let redactor: Redactor
    /// Hosts as "host:port[,host:port]" — what error messages name.
    public let hosts: String
    /// The user, its authSource and mechanism, and TLS, as the URI gives them.
    public let identity: ConnectionIdentity
    /// The default database named in the URI path, if any.
    public let uriDatabase: String?
    /// How long one operation may wait for a server (`serverSelectionTimeoutMS`, from the URI or
    /// `ConnectionOptions`): retries of a failed write stop when it is spent, so a dead server is
    /// reported within the time the user gave, not a multiple of it.
    public let serverTimeoutMS: Int
    /// `ConnectionOptions.retryForMS`.
    public let retryForMS: Int
    /// Some operation of this process has had the server's answer (`markReached`). A server
    /// never reached is a wrong URI, a firewall or a server that is down, reported after
    /// `--server-timeout` rather than retried for `--retry-for`: retries are for outages.
    public var hasBeenReached: Bool { reached.load(ordering: .relaxed) }
    private let reached = Atomic<Bool>(false)
    public func markReached() { reached.store(true, ordering: .relaxed) }

    public var redactedURI: String { redactor.redactedURI }
    /// Size limits from `hello`, asked once per connection (bulk writes need them every batch).
    let limitsCache = WriteLimitsCache()

    public init(uri uriString: String, options: ConnectionOptions = ConnectionOptions()) throws(StoreError) {
        _ = libmongocReady
        var error = bson_error_t()
        let preliminary = Redactor(uri: uriString)
        guard let uri = mongoc_uri_new_with_error(uriString, &error) else {
            var reason = preliminary.scrub(MongoErrorText.message(of: error))
            // `user:p@ss:w0rd@host` or a `/` in the password: libmongoc sees a bad host, the
            // user a bad password. Said when the user information holds what must be encoded.
            if let scheme = uriString.range(of: "://"), let at = uriString.range(of: "@", options: .backwards),
               scheme.upperBound < at.lowerBound {
                let info = uriString[scheme.upperBound..<at.lowerBound]
                if info.contains("@") || info.contains("/") || info.filter({ $0 == ":" }).count > 1 {
                    reason += "; if the user name or password holds '@', ':' or '/', percent-encode them (%40, %3A, %2F)"
                }
            }
            throw .invalidURI(uri: preliminary.redactedURI, reason: reason)
        }
        // libmongoc ends the user information at the FIRST `@`: `bob:p@ssW0RD@host` has password
        // "p" and host "ssw0rd@host", so every later message named a piece of the password as
        // the server. Such a URI can never connect (no host name holds an `@`): refuse it here,
        // masked up to the last `@` as `Redactor` does.
        if Self.hostList(uri).contains("@") {
            mongoc_uri_destroy(uri)
            throw .invalidURI(uri: preliminary.redactedURI,
                              reason: "the user name or password holds an '@' that is not percent-encoded "
                                  + "(write it as %40; the same for ':' '/' '?' '#' '[' ']' and '%')")
        }
        let password = mongoc_uri_get_password(uri).map { String(cString: $0) }
        self.redactor = Redactor(uri: uriString, decodedPassword: password, parsedByDriver: true)
        self.hosts = Self.hostList(uri)
        self.identity = ConnectionIdentity(uri: uri)
        self.uriDatabase = mongoc_uri_get_database(uri).map { String(cString: $0) }

        // Options the user put in the URI win over our defaults.
        func setDefault(_ name: String, _ value: Int32) {
            if options.overridingURI || !mongoc_uri_has_option(uri, name) { mongoc_uri_set_option_as_int32(uri, name, value) }
        }
        setDefault(MONGOC_URI_SERVERSELECTIONTIMEOUTMS, options.serverSelectionTimeoutMS)
        setDefault(MONGOC_URI_CONNECTTIMEOUTMS, options.connectTimeoutMS)
        setDefault(MONGOC_URI_SOCKETTIMEOUTMS, options.socketTimeoutMS)
        setDefault(MONGOC_URI_MAXPOOLSIZE, options.maxPoolSize)
        // After a "not primary" answer libmongoc marks the server unknown and finds the primary
        // again at the next heartbeat (SDAM): at the default 10 s, each write that met one
        // election error waited 10 s even when the primary answered at once (three such errors
        // took an import 30 s). A second bounds that wait; a hello a second per server is nothing.
        setDefault(MONGOC_URI_HEARTBEATFREQUENCYMS, 1000)
        if mongoc_uri_get_appname(uri) == nil { _ = mongoc_uri_set_appname(uri, options.appName) }
        retryForMS = max(0, options.retryForMS)
        serverTimeoutMS = Int(mongoc_uri_get_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS,
                                                              options.serverSelectionTimeoutMS))

        guard let pool = mongoc_client_pool_new(uri) else {
            // A mongodb+srv:// URI is resolved here (DNS SRV and TXT records): a name that does
            // not resolve is a server not reached, not a malformed URI.
            if let service = mongoc_uri_get_srv_hostname(uri).map({ String(cString: $0) }) {
                mongoc_uri_destroy(uri)
                throw .unreachable(hosts: service, reason: "the DNS lookup of _mongodb._tcp.\(service) (the SRV record a "
                                   + "mongodb+srv:// URI names) failed")
            }
            mongoc_uri_destroy(uri)
            throw .invalidURI(uri: redactor.redactedURI, reason: "libmongoc refused the URI options")
        }
        mongoc_client_pool_set_error_api(pool, Int32(MONGOC_ERROR_API_VERSION_2))
        self.uri = uri
        self.pool = pool
    }

    deinit {
        mongoc_client_pool_destroy(pool)
        mongoc_uri_destroy(uri)
    }

    /// Runs `body` with a client popped from the pool (blocks while `maxPoolSize` are in use).
    func withClient<R, E: Error>(_ body: (OpaquePointer) throws(E) -> R) throws(E) -> R {
        let client = mongoc_client_pool_pop(pool)!
        defer { mongoc_client_pool_push(pool, client) }
        return try body(client)
    }

    /// For objects that keep a client beyond one call (cursors): pair every pop with a push.
    func popClient() -> OpaquePointer { mongoc_client_pool_pop(pool)! }
    func pushClient(_ client: OpaquePointer) { mongoc_client_pool_push(pool, client) }

    /// Maps a libmongoc error (and the reply, when there is one) to a scrubbed `StoreError`.
    func storeError(_ error: bson_error_t, reply: BSONDocument? = nil) -> StoreError {
        MongoErrorText.storeError(error, reply: reply, hosts: hosts, redactor: redactor, identity: identity)
    }

    /// Runs a database command and returns the server's reply.
    public func runCommand(_ command: BSONDocument, database: String) throws(StoreError) -> BSONDocument {
        try withClient { (client) throws(StoreError) -> BSONDocument in
            var error = bson_error_t()
            let (ok, reply) = LibBSON.withPointer(command) { cmd in
                LibBSON.withReply { reply in
                    mongoc_client_command_simple(client, database, cmd, nil, reply, &error)
                }
            }
            guard ok else { throw storeError(error, reply: reply) }
            return reply
        }
    }

    public func ping() throws(StoreError) {
        _ = try runCommand(["ping": 1], database: "admin")
    }

    private static func hostList(_ uri: OpaquePointer) -> String {
        var names: [String] = []
        var node = mongoc_uri_get_hosts(uri)
        while let host = node {
            names.append(withUnsafeBytes(of: host.pointee.host_and_port) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            })
            node = UnsafePointer(host.pointee.next)
        }
        if names.isEmpty, let service = mongoc_uri_get_srv_hostname(uri) {  // mongodb+srv://
            names.append(String(cString: service))
        }
        return names.joined(separator: ",")
    }
}
