/// MongoDB server error codes PoiStore acts on, by the names the server gives them
/// (`codeName`; the full list is the server's `error_codes.yml`). libmongoc passes these through
/// unchanged as the `code` of errors in the server domains.
public enum ServerErrorCode {
    /// A malformed request: for a query, an unknown operator (`$badop`) or an operator given the
    /// wrong type of argument (`{"$in": 1}`).
    public static let badValue = 2
    /// A query or update the server could not parse.
    public static let failedToParse = 9
    /// Codes that, on a find with a user's query, mean the query itself is wrong (the user's
    /// mistake, like a refused query), not that the database failed.
    public static let malformedQuery: Set<Int> = [badValue, failedToParse, invalidRegex]
    /// A `$regex` the server cannot compile (`"("`).
    public static let invalidRegex = 51091
    /// Wrong user name or password (the server's own check, after the handshake).
    public static let authenticationFailed = 18
    /// Unauthorized: the command needs a user (or a role) this connection does not have.
    public static let unauthorized = 13
    /// The collection (or database) does not exist: dropping or listing the indexes of nothing.
    public static let namespaceNotFound = 26
    /// Dropping an index that is not there (another run dropped it first).
    public static let indexNotFound = 27
    /// An index with the same name but other keys or options already exists.
    public static let indexOptionsConflict = 85
    /// The same, as some servers say it (SecantusDB for a 2dsphere index made by another run).
    public static let indexKeySpecsConflict = 86
    /// A document is over `maxBsonObjectSize`; PoiStore also uses it for documents it refuses to
    /// send for that reason.
    public static let bsonObjectTooLarge = 10334
    /// A unique index (for places: `importKey`) already holds the key.
    public static let duplicateKey = 11000

    /// Codes that say the database (its state, load, configuration or rights), not the request's
    /// filter or document, is at fault: anything else a query or write provokes is the client's.
    public static let serverSide: Set<Int> = retryable.union([
        1,      // InternalError
        13,     // Unauthorized (the database user lacks a right)
        18,     // AuthenticationFailed
        24,     // LockTimeout
        50,     // MaxTimeMSExpired
        64,     // WriteConcernFailed
        79,     // UnknownReplWriteConcern
        100,    // UnsatisfiableWriteConcern
        112,    // WriteConflict
        202,    // NetworkInterfaceExceededTimeLimit
        8000,   // AtlasError
        11601,  // Interrupted
        14031,  // OutOfDiskSpace
    ])

    /// The member asked is not (or no longer) the primary, or is going down: what a replica set
    /// answers during an election or a failover.
    public static let notPrimary: Set<Int> = [91, 189, 10107, 11600, 11602, 13435, 13436]

    /// The names of the codes a replica set answers during an election, for replies that carry
    /// no `codeName` (a fail point's, some proxies').
    public static let notPrimaryNames: [Int: String] = [
        91: "ShutdownInProgress", 189: "PrimarySteppedDown", 10107: "NotWritablePrimary", 11600: "InterruptedAtShutdown",
        11602: "InterruptedDueToReplStateChange", 13435: "NotPrimaryNoSecondaryOk", 13436: "NotPrimaryOrSecondary",
    ]

    /// Write-concern failures: the write reached the primary, but its durability (replication to
    /// `w` members) is not known.
    public static let writeConcern: Set<Int> = [64, 79, 100]

    /// Codes the retryable-writes specification lists as retryable: the primary stepped down or
    /// is shutting down, or the network failed between the server and a node it called.
    public static let retryable: Set<Int> = [
        6,      // HostUnreachable
        7,      // HostNotFound
        89,     // NetworkTimeout
        91,     // ShutdownInProgress
        189,    // PrimarySteppedDown
        262,    // ExceededTimeLimit
        9001,   // SocketException
        10107,  // NotWritablePrimary
        11600,  // InterruptedAtShutdown
        11602,  // InterruptedDueToReplStateChange
        13435,  // NotPrimaryNoSecondaryOk
        13436,  // NotPrimaryOrSecondary
    ]
}
