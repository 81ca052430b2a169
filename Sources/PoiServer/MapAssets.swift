import Foundation

/// The files the map page loads from `poi serve` itself, so it works with no network beyond the
/// server: Leaflet and its marker-cluster plug-in, read once at start from a folder (Debian's
/// libjs-leaflet and libjs-leaflet.markercluster, or `--assets`), and the page's own script and
/// style, compiled into the binary. Only the names listed here are served: a request can never
/// name another file of that folder.
struct MapAssets: Sendable {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
    }

    /// Leaflet's files by the name the page asks for (`/assets/leaflet/<name>`).
    let leaflet: [String: Asset]
    /// Why Leaflet's files could not be read (the first one missing, and how to install it);
    /// nil when every file is there.
    let leafletProblem: String?

    /// The files of Debian's two packages that the page needs; the images are the ones
    /// leaflet.css names for markers and the layer control.
    static let leafletFiles: [(name: String, contentType: String)] = [
        ("leaflet.min.js", "text/javascript; charset=utf-8"),
        ("leaflet.css", "text/css; charset=utf-8"),
        ("leaflet.markercluster.min.js", "text/javascript; charset=utf-8"),
        ("MarkerCluster.css", "text/css; charset=utf-8"),
        ("MarkerCluster.Default.css", "text/css; charset=utf-8"),
        ("images/marker-icon.png", "image/png"),
        ("images/marker-icon-2x.png", "image/png"),
        ("images/marker-shadow.png", "image/png"),
        ("images/layers.png", "image/png"),
        ("images/layers-2x.png", "image/png"),
    ]

    /// The page's own files (Sources/PoiServer/Resources), by their name under `/assets/map/`.
    static let pageFiles: [String: Asset] = [
        "map.js": Asset(bytes: PackageResources.map_js, contentType: "text/javascript; charset=utf-8"),
        "map.css": Asset(bytes: PackageResources.map_css, contentType: "text/css; charset=utf-8"),
    ]

    /// Reads every listed file from `directory`. A missing folder or file is not an error for the
    /// server (the REST API does not need them): the map page and `/assets/leaflet/` say why instead.
    static func load(from directory: String) -> MapAssets {
        var found: [String: Asset] = [:]
        for file in leafletFiles {
            let path = directory + "/" + file.name
            guard let data = FileManager.default.contents(atPath: path) else {
                let package = file.name.lowercased().contains("cluster") ? "libjs-leaflet.markercluster" : "libjs-leaflet"
                return MapAssets(leaflet: [:], leafletProblem: "the map needs Leaflet, and \(path) cannot be read "
                                 + "(on Debian: apt-get install libjs-leaflet libjs-leaflet.markercluster, which puts it there; "
                                 + "or start poi serve with --assets DIR, a folder holding \(package)'s files)")
            }
            found[file.name] = Asset(bytes: [UInt8](data), contentType: file.contentType)
        }
        return MapAssets(leaflet: found, leafletProblem: nil)
    }
}
