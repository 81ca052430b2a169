import Foundation
@testable import PoiServer
import PoiTestSupport
import Testing

/// `GET /map` and its `/assets/…`, over HTTP from a live `poi serve`: what the page is allowed to
/// load, what it is told, and which files the server hands out. What the page does in a browser
/// is `make browser-test`'s (scripts/browser-test.py).
@Suite("poi serve map page", .tags(.live, .process), .serialized, .liveServer)
struct MapRouteTests {
    static let leafletDirectory = "/usr/share/javascript/leaflet"

    @Test func mapPageAllowsOnlyItsOwnScriptsAndTheTileHost() throws {
        let s = try ServeHarness("mappage")
        let r = try s.get("/map")
        #expect(r.status == 200)
        #expect(r.header("content-type") == "text/html; charset=utf-8")
        #expect(r.header("content-security-policy") == "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data: https://tile.openstreetmap.org; connect-src 'self'; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'")
        #expect(r.header("x-content-type-options") == "nosniff")
        #expect(r.text.contains(#"data-tiles="https://tile.openstreetmap.org/{z}/{x}/{y}.png""#))
        #expect(r.text.contains(#"data-attribution="© OpenStreetMap contributors""#))
        #expect(r.text.contains(#"data-max-places="5000" data-page-size="1000""#))
        // Every script is a file of this server: none inline, none from elsewhere.
        let scripts = r.text.components(separatedBy: "<script").dropFirst().map { String($0.prefix { $0 != ">" }) }
        #expect(scripts == [#" src="/assets/leaflet/leaflet.min.js""#, #" src="/assets/leaflet/leaflet.markercluster.min.js""#,
                            #" src="/assets/map/map.js""#])
    }

    @Test func noBaseMapMeansNoOutsideImages() throws {
        let s = try ServeHarness("mapnone", extraArguments: ["--map-tiles", "none", "--map-max-places", "7", "--max-results", "3"])
        let r = try s.get("/map")
        #expect(r.header("content-security-policy")?.contains("img-src 'self' data:; ") == true)
        #expect(r.text.contains(#"data-tiles="none" data-attribution="" data-attribution-url="""#))
        // A page is never more than the server's own cap.
        #expect(r.text.contains(#"data-max-places="7" data-page-size="3""#))
    }

    @Test func tileTemplateIsAnAttributeValueNeverMarkup() throws {
        let template = #"https://{s}.tiles.example.com/{z}/{x}/{y}.png?key="><script>alert(1)</script>"#
        let s = try ServeHarness("maptemplate", extraArguments: ["--map-tiles", template, "--map-attribution", "<b>Tiles</b> & co"])
        let r = try s.get("/map")
        #expect(r.text.contains(#"data-tiles="https://{s}.tiles.example.com/{z}/{x}/{y}.png?key=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;""#))
        #expect(r.text.contains(#"data-attribution="&lt;b&gt;Tiles&lt;/b&gt; &amp; co""#))
        #expect(!r.text.contains("<script>alert"))
        #expect(r.header("content-security-policy")?.contains("img-src 'self' data: https://*.tiles.example.com; ") == true)
    }

    @Test func tileTemplateThatIsNotOneIsRefusedAtStart() throws {
        for (template, message) in [("ftp://tiles.example.com/{z}/{x}/{y}.png", "starts with http:// or https://"),
                                    ("https://tiles.example.com/{z}/{x}.png", "{y} is missing"),
                                    ("https://tiles.example.com;script-src */{z}/{x}/{y}.png", "host can hold only")] {
            let (status, errors) = try Self.runPoi(["serve", "--map-tiles", template])
            #expect(status == 2, "\(template)")
            #expect(errors.contains("--map-tiles: ") && errors.contains(message), "\(template): \(errors)")
        }
    }

    @Test func pageFilesAreTheOnesCompiledIn() throws {
        let s = try ServeHarness("mapassets")
        let js = try s.get("/assets/map/map.js")
        #expect(js.status == 200)
        #expect(js.header("content-type") == "text/javascript; charset=utf-8")
        #expect(js.header("x-content-type-options") == "nosniff")
        #expect(js.body == PackageResources.map_js)
        let css = try s.get("/assets/map/map.css")
        #expect(css.header("content-type") == "text/css; charset=utf-8")
        #expect(css.body == PackageResources.map_css)
        let missing = try s.get("/assets/map/other.js")
        #expect(missing.status == 404)
        #expect(missing.text == #"{"error":"no such file in /assets/map/: \"other.js\""}"#)
    }

    @Test func leafletFilesComeFromTheInstalledPackageOnly() throws {
        guard FileManager.default.fileExists(atPath: Self.leafletDirectory + "/leaflet.min.js") else {
            print("SKIPPED leafletFilesComeFromTheInstalledPackageOnly: libjs-leaflet is not installed (make setup installs it)")
            return
        }
        let s = try ServeHarness("mapleaflet")
        for name in ["leaflet.min.js", "leaflet.markercluster.min.js", "MarkerCluster.Default.css", "images/marker-icon.png"] {
            let r = try s.get("/assets/leaflet/" + name)
            #expect(r.status == 200, "\(name)")
            #expect(r.body == [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.leafletDirectory + "/" + name))), "\(name)")
        }
        #expect(try s.get("/assets/leaflet/images/marker-icon.png").header("content-type") == "image/png")
        // Files of that folder the page does not use, and paths out of it, are not served.
        for path in ["/assets/leaflet/leaflet.js.map", "/assets/leaflet/..%2F..%2F..%2Fetc%2Fpasswd", "/assets/leaflet/images/..%2Fleaflet.css"] {
            #expect(try s.get(path).status == 404, "\(path)")
        }
    }

    @Test func missingLeafletIsExplainedOnThePageAndTheAssets() throws {
        let s = try ServeHarness("mapnoleaflet", extraArguments: ["--assets", "/nonexistent/leaflet"])
        let expected = "the map needs Leaflet, and /nonexistent/leaflet/leaflet.min.js cannot be read (on Debian: apt-get install "
            + "libjs-leaflet libjs-leaflet.markercluster, which puts it there; or start poi serve with --assets DIR, a folder "
            + "holding libjs-leaflet's files)"
        let asset = try s.get("/assets/leaflet/leaflet.min.js")
        #expect(asset.status == 404)
        #expect((asset.json as? [String: Any])?["error"] as? String == expected)
        let page = try s.get("/map")
        #expect(page.status == 200)
        #expect(page.text.contains("<p id=\"problem\">\(ExpressJSON.escape(expected))</p>"))
        #expect(!page.text.contains("/assets/leaflet/"))
        let log = try String(contentsOfFile: s.logPath, encoding: .utf8)
        #expect(log.contains("poi serve: GET /map cannot show a map: \(expected)"))
    }

    @Test func browsersAreLedToTheMapAndProgramsGetTheReferenceHello() throws {
        let s = try ServeHarness("maplinks", environment: ["POI_WRITE_TOKEN": "s3cret"])
        let browser = ["Accept": "text/html,application/xhtml+xml,*/*;q=0.8"]
        let hello = try s.get("/", headers: browser)
        #expect(hello.text == #"<html><body><h1>Hello World</h1><p><a href="/map">The places on a map</a> · <a href="/locations">the places as a table</a></p></body></html>"#)
        #expect(hello.header("vary") == "Accept, Accept-Encoding")
        #expect(try s.get("/").text == "<html><body><h1>Hello World</h1></body></html>")
        _ = try s.request("POST", "/locations", headers: ["Content-Type": "application/json", "Authorization": "Bearer s3cret"],
                          body: Array(#"{"name":"Inside"}"#.utf8))
        #expect(try s.get("/locations", headers: browser).text.contains(#"<h1>locations</h1><p><a href="/map">The places on a map</a></p><table"#))
        #expect(try s.get("/things", headers: browser).text.contains("/map") == false)
        // With a write token the map still reads: its page and files are GETs.
        #expect(try s.get("/map").status == 200)
    }

    /// `poi <arguments>` without a server: its exit status and what it wrote to stderr.
    static func runPoi(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = ServeHarness.binary
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
