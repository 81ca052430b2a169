import PoiImaging

/// Everything `poi serve` was told on its command line. A value: the server keeps no other state
/// between requests (any number of processes can share one database and GridFS).
/// More than ten stored properties: one per option of `poi serve`, set independently of the others.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 3000
    /// Upload limit in bytes, enforced while the body streams (the reference's own 100 MB).
    public var maxUpload = 100 * 1024 * 1024
    /// Cap on the documents one `GET /:collection` answers with.
    public var maxResults = 1000
    /// `maxTimeMS` on every query.
    public var queryTimeoutMS = 10_000
    /// What a database call may take beyond the query timeout before its request is answered 503
    /// (`maxTimeMS` is the server's own limit; its answer still has to arrive). `poi serve` gives
    /// libmongoc the same sum as its socket timeout, so a thread held by a stalled call is freed
    /// about when its client is told.
    public static let databaseMarginSeconds = 2
    /// How long one request waits for a selectable (primary) server, unless the URI says: an
    /// election takes 5–15 s, and a client told 503 with Retry-After at once does better than one
    /// kept waiting for it. The start-up ping still waits `startupTimeoutMS`.
    public static let requestSelectionSeconds = 2.0
    /// How long the start-up ping waits for the database (`--server-timeout`).
    public var startupTimeoutMS = 10_000
    /// A connection whose client sends nothing for this long is closed: between requests, and
    /// in the middle of a request's head or body (slow-loris clients). A response being sent is
    /// not cut (Hummingbird's idle handler waits while a request is answered).
    public var idleTimeoutMS: Int64 = 60_000
    /// When set, every write needs `Authorization: Bearer <token>`; reads stay open.
    public var writeToken: String?
    /// `Access-Control-Allow-Origin` value; no CORS headers at all when nil.
    public var corsOrigin: String?
    /// Access log as JSON lines instead of text.
    public var jsonLog = false
    /// JSON bodies (`POST`/`PUT /:collection`) larger than this are refused with 413: MongoDB's
    /// own document limit, so nothing the database would refuse is parsed.
    public var maxJSONBody = 16 * 1024 * 1024
    /// The import's thumbnail recipe, so uploads and imports make the same thumbnails.
    public var thumbnailSpec = ThumbnailSpec.default
    /// Threads for blocking database and disk calls: one per pooled client, so no thread ever
    /// waits for a client another thread of the same pool holds.
    public var databaseThreads = 16
    /// Threads for reading and writing files on this machine (downloads, staged uploads), apart
    /// from the database's: a stalled database never holds up a download of a cached file.
    public var diskThreads = 8
    /// How long `/healthz` waits for the database's answer to a ping before answering 503.
    public var healthTimeoutSeconds: Int64 = 2
    /// Where uploads bound for GridFS are staged while they stream in.
    public var stagingDirectory = "/tmp"
    /// How long a cached `files` document is trusted: a document deleted by another kind of
    /// client (the tutorial's server, a shell), which leaves the bytes, is no longer served once
    /// its entry is this old. One lookup per id per period keeps the cache's speed-up.
    public var filesCacheSeconds = 30.0
    /// Memory for the bytes of small disk-stored files (`SmallFileCache`); 0: none.
    public var fileCacheBytes = 32 << 20
    /// How long SIGTERM waits for in-flight requests before giving up on them.
    public var shutdownGraceSeconds = 30
    /// The base map under `GET /map` (`--map-tiles`); nil draws the places on a plain background.
    public var mapTiles: MapTiles? = .openStreetMap
    /// Where Leaflet and its marker-cluster plug-in are read from at start (`--assets`): Debian's
    /// libjs-leaflet and libjs-leaflet.markercluster put both here.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// Most places `GET /map` loads for one view (`--map-max-places`): the page follows the list's
    /// next links up to this many, then says the view holds more.
    public var mapMaxPlaces = 5000

    public init() {}
}
