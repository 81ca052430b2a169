import Hummingbird
import HTTPTypes

/// `GET /map`: the places of `locations` on a slippy map, for a person who wants to see an
/// import rather than read it (a swapped latitude in the ocean, empty coordinates at 0,0, which
/// places have photos). The page is a static shell; its script (Resources/map.js) asks the list
/// API for the places in view only, a `$geoWithin` `$box` page after page up to a cap, so a
/// collection of any size costs the browser at most `mapMaxPlaces` markers. The page only reads.
struct MapRoutes: Sendable {
    let configuration: ServerConfiguration
    let assets: MapAssets

    /// The HTML shell. Everything the server knows goes into `data-` attributes (escaped), never
    /// into a script: the Content-Security-Policy runs only the server's own script files.
    func page() -> Response {
        let tiles = configuration.mapTiles
        let pageSize = min(1000, configuration.maxResults)
        var html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Places on a map · poi serve</title>
        <link rel="icon" href="data:,">

        """
        if assets.leafletProblem == nil {
            for sheet in ["leaflet.css", "MarkerCluster.css", "MarkerCluster.Default.css"] {
                html += "<link rel=\"stylesheet\" href=\"/assets/leaflet/\(sheet)\">\n"
            }
        }
        html += """
        <link rel="stylesheet" href="/assets/map/map.css">
        </head>
        <body>
        <header id="bar">
        <a href="/">poi serve</a>
        <label for="category">Category</label>
        <input id="category" list="categories" placeholder="any" autocomplete="off" spellcheck="false">
        <datalist id="categories"></datalist>
        <span id="count" aria-live="polite">Loading…</span>
        <span id="note"></span>
        <a href="/locations">table</a>
        </header>

        """
        if let problem = assets.leafletProblem {
            html += "<p id=\"problem\">\(ExpressJSON.escape(problem))</p>\n"
        }
        html += "<div id=\"map\""
        html += " data-tiles=\"\(ExpressJSON.escape(tiles?.template ?? "none"))\""
        html += " data-attribution=\"\(ExpressJSON.escape(tiles?.attribution ?? ""))\""
        html += " data-attribution-url=\"\(ExpressJSON.escape(tiles?.attributionURL ?? ""))\""
        html += " data-max-places=\"\(configuration.mapMaxPlaces)\" data-page-size=\"\(pageSize)\"></div>\n"
        if assets.leafletProblem == nil {
            html += "<script src=\"/assets/leaflet/leaflet.min.js\"></script>\n"
            html += "<script src=\"/assets/leaflet/leaflet.markercluster.min.js\"></script>\n"
        }
        html += "<script src=\"/assets/map/map.js\"></script>\n</body>\n</html>\n"
        var response = Reply.html(Array(html.utf8))
        response.headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy(tiles: tiles)
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// Scripts and styles from this server only (no inline script, so a place's name that got
    /// into the page as markup still could not run); images from here and the tile host; data
    /// from here; no forms, no framing, no `<base>`.
    static func contentSecurityPolicy(tiles: MapTiles?) -> String {
        let images = ["'self'", "data:"] + (tiles.map { [$0.origin] } ?? [])
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images.joined(separator: " ")); "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// `/assets/map/<name>`: the page's own script and style.
    func pageAsset(_ name: String) throws(APIError) -> Response {
        guard let asset = MapAssets.pageFiles[name] else { throw .notFound("no such file in /assets/map/: \(MediaType.printable(name))") }
        return Self.response(asset)
    }

    /// `/assets/leaflet/<name>`: Leaflet's files as read at start, or 404 saying how to install them.
    func leafletAsset(_ name: String) throws(APIError) -> Response {
        if let problem = assets.leafletProblem { throw .notFound(problem) }
        guard let asset = assets.leaflet[name] else { throw .notFound("no such file in /assets/leaflet/: \(MediaType.printable(name))") }
        return Self.response(asset)
    }

    static func response(_ asset: MapAssets.Asset) -> Response {
        var response = Reply.bytesResponse(.ok, contentType: asset.contentType, asset.bytes)
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        // Revalidated each time (a 304 by the ETag): a new binary or Debian package shows at once.
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// The hello page as browsers get it: the reference's, plus the way to the map. Programs
    /// (no `Accept: text/html`) keep getting the reference's bytes exactly.
    static let browserHello = Array(
        #"<html><body><h1>Hello World</h1><p><a href="/map">The places on a map</a> · <a href="/locations">the places as a table</a></p></body></html>"#.utf8)
    static let hello = Array("<html><body><h1>Hello World</h1></body></html>".utf8)
}
