/// The base map `GET /map` draws under the places: a slippy-map tile URL template such as
/// `https://tile.openstreetmap.org/{z}/{x}/{y}.png`, and the credit its provider asks for.
/// The template's origin is the one outside host the page's Content-Security-Policy lets images
/// come from, so it is checked here, once, rather than trusted into a header.
public struct MapTiles: Sendable, Equatable {
    public let template: String
    /// Shown as text in the map's corner (never as HTML).
    public let attribution: String
    /// Where the attribution links to, when the provider has a page for it.
    public let attributionURL: String?
    /// `https://tile.openstreetmap.org`, or `https://*.tile.example.com` for a `{s}` subdomain.
    public let origin: String

    /// OpenStreetMap's own tile server and the credit its tile usage policy asks for.
    public static let openStreetMap = try! MapTiles(template: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
                                                    attribution: "© OpenStreetMap contributors",
                                                    attributionURL: "https://www.openstreetmap.org/copyright")

    /// Why a template cannot be used, in words for the command line.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(template: String, attribution: String = "", attributionURL: String? = nil) throws(Invalid) {
        guard let schemeEnd = template.range(of: "://") else {
            throw Invalid(description: "a tile URL template starts with http:// or https://, got \(template)")
        }
        let scheme = template[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw Invalid(description: "a tile URL template starts with http:// or https://, got \(template)")
        }
        for placeholder in ["{z}", "{x}", "{y}"] where !template.contains(placeholder) {
            throw Invalid(description: "a tile URL template needs {z}, {x} and {y}; \(placeholder) is missing in \(template)")
        }
        let rest = template[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        // `{s}` stands for a subdomain the map picks (a, b, c): the policy allows any of them.
        let host = authority.replacingOccurrences(of: "{s}", with: "*")
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:*[]")
        guard !host.isEmpty, host.allSatisfy({ allowed.contains($0) }) else {
            throw Invalid(description: "a tile URL template's host can hold only letters, digits, '.', '-', a port and {s}, got \(authority)")
        }
        if let attributionURL, !(attributionURL.hasPrefix("https://") || attributionURL.hasPrefix("http://")) {
            throw Invalid(description: "the attribution link must be an http(s) URL, got \(attributionURL)")
        }
        self.template = template
        self.attribution = attribution
        self.attributionURL = attributionURL
        self.origin = scheme + "://" + host
    }
}
