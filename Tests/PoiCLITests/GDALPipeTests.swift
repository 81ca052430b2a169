import Foundation
import PoiTestSupport
import Testing

/// Every format GDAL reads reaches `poi import` through a pipe, as README shows it:
/// `ogr2ogr -f GeoJSONSeq /vsistdout/ INPUT | poi import - …`. A GeoPackage, a Shapefile in a
/// projected CRS (read back with `-t_srs EPSG:4326`), a KML and a GPX are made at test time from
/// the samples with ogr2ogr; each piped import gives the same places (name, position within
/// 1e-7 degrees) as the direct import of the GeoJSON they were made from.
@Suite(.tags(.live, .process), .serialized, .liveServer) struct GDALPipeTests {
    static let ogr2ogr: String? = ["/usr/bin/ogr2ogr", "/usr/local/bin/ogr2ogr"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `name → [lon, lat]` of the places in `database`, read with pymongo.
    static func places(_ ws: Workspace, database: String) throws -> [String: [Double]] {
        let text = try PoiProcess.python("""
        import json, pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(json.dumps({p['name']: p['location']['coordinates'] for p in db.locations.find()}))
        """, [ws.uri, database])
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [Double]]) ?? [:]
    }

    /// Runs a shell pipeline in the workspace (the poi binary as $POI, the database's URI set).
    static func shell(_ ws: Workspace, _ command: String) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-o", "pipefail", "-c", command]
        p.currentDirectoryURL = ws.root
        p.environment = ProcessInfo.processInfo.environment.merging(["MONGODB_URI": ws.uri, "POI": PoiProcess.binary.path]) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    @Test func everyGDALFormatThroughAPipeGivesTheSamePlaces() throws {
        guard let ogr2ogr = Self.ogr2ogr else {
            try Test.cancel("SKIPPED: ogr2ogr is not installed (apt-get install gdal-bin)")
            return
        }
        let ws = try Workspace("gdalpipe")
        defer { ws.cleanUp() }
        // The samples' valid places as GeoJSON (convert drops the rows the import would reject).
        let converted = try ws.poi(["convert", "Samples/places.csv", "-o", "clean.geojson"])
        #expect(converted.status == 1, "convert: \(converted.stderr)")  // the sample's bad rows are rejected
        let direct = try ws.poi(["import", "clean.geojson", "--images-dir", "Samples", "--json"])
        #expect(int(try ws.json(direct), "inserted") == 19, "\(direct.stderr)")
        let expected = try Self.places(ws, database: ws.database)
        #expect(expected.count == 19)

        // StringList as JSON text: categories stay a list (the import reads a JSON array in a string).
        let make = "\(ogr2ogr) -mapFieldType StringList=String"
        let cases: [(name: String, make: String, pipe: String)] = [
            ("GeoPackage", "\(make) -f GPKG c.gpkg clean.geojson", "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ c.gpkg"),
            ("Shapefile in EPSG:3857", "\(make) -f 'ESRI Shapefile' -lco ENCODING=UTF-8 -t_srs EPSG:3857 c3857.shp clean.geojson",
             "\(ogr2ogr) -f GeoJSONSeq -t_srs EPSG:4326 /vsistdout/ c3857.shp"),
            ("KML", "\(make) -f KML c.kml clean.geojson", "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ c.kml"),
            ("GPX", "\(make) -f GPX -dsco GPX_USE_EXTENSIONS=YES c.gpx clean.geojson",
             "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ c.gpx waypoints"),
        ]
        for (i, c) in cases.enumerated() {
            let made = try Self.shell(ws, c.make)
            #expect(made.status == 0, "\(c.name): \(made.stderr)")
            let database = ws.database + "_p\(i)"
            defer { _ = try? PoiProcess.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])",
                                               [ws.uri, database]) }
            let piped = try Self.shell(ws, "\(c.pipe) | \"$POI\" import - --db \(database) --uploads uploads-\(i) --images-dir Samples --quiet")
            // Images the samples name outside the folder are refused, as in the direct import.
            #expect(piped.status == 0 || piped.status == 1, "\(c.name): \(piped.stderr)")
            let got = try Self.places(ws, database: database)
            #expect(got.count == expected.count, "\(c.name): \(got.count) places")
            for (name, position) in expected {
                guard let other = got[name], other.count == 2, position.count == 2 else {
                    Issue.record("\(c.name): \(name) missing")
                    continue
                }
                #expect(abs(other[0] - position[0]) <= 1e-7 && abs(other[1] - position[1]) <= 1e-7,
                        "\(c.name): \(name) at \(other), directly at \(position)")
            }
        }
    }

    /// The other way: ogr2ogr reads `poi export --format csv` with its `.csvt`, so positions
    /// come as written and typed columns keep their type (a boolean stays a boolean).
    @Test func ogr2ogrReadsTheCSVExportTyped() throws {
        guard let ogr2ogr = Self.ogr2ogr else {
            try Test.cancel("SKIPPED: ogr2ogr is not installed (apt-get install gdal-bin)")
            return
        }
        let ws = try Workspace("gdalcsv")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/landmarks.geojson", "--quiet"]).status == 1)  // deliberate rejects
        #expect(try ws.poi(["export", "-o", "out.csv", "--quiet"]).status == 0)
        let made = try Self.shell(ws, "\(ogr2ogr) -f GeoJSON back.geojson out.csv -oo X_POSSIBLE_NAMES=lon -oo Y_POSSIBLE_NAMES=lat")
        #expect(made.status == 0, "\(made.stderr)")
        let exported = try ws.python("""
        import pymongo, sys, json
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(json.dumps(sorted([d['name'], d['location']['coordinates'], d['extra'].get('wheelchair')] for d in db.locations.find())))
        """)
        let read = try PoiProcess.python("""
        import json, sys
        fs = json.load(open(sys.argv[1]))['features']
        print(json.dumps(sorted([f['properties']['name'], f['geometry']['coordinates'], f['properties'].get('wheelchair')] for f in fs)))
        """, [ws.path("back.geojson")])
        #expect(read == exported)
        #expect(exported.contains("true"), "a boolean extra is in the samples: \(exported)")
    }

    /// Lists through GDAL 3.6: places whose categories (and another list property) are JSON
    /// arrays, one holding an item with a comma.
    static let lists = """
    {"type":"FeatureCollection","features":[
    {"type":"Feature","geometry":{"type":"Point","coordinates":[2.35,48.85]},"properties":{"name":"A",
     "categories":["aerodrome","medium airport","scheduled service"],"runways":["09/27","13/31"]}},
    {"type":"Feature","geometry":{"type":"Point","coordinates":[2.36,48.86]},"properties":{"name":"B",
     "categories":["x,y","z"],"runways":["18"]}}
    ]}
    """

    /// `[name, categories, extra.runways]` of each place in `database`, sorted.
    static func lists(_ ws: Workspace, database: String) throws -> String {
        try PoiProcess.python("""
        import json, pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        x = lambda p: p.get('extra', {})
        # GPX keeps a property of its own extensions under a prefixed name.
        print(json.dumps(sorted([p['name'], p.get('categories'), x(p).get('runways', x(p).get('ogr_runways'))] for p in db.locations.find())))
        """, [ws.uri, database])
    }

    /// GDAL 3.6 stores a list in a format without list fields, made with `-mapFieldType
    /// StringList=String`, as its list text `(3:aerodrome,medium airport,scheduled service)`: such
    /// a text is read as its items, with a note, and one whose items cannot be told apart (an
    /// item holds a comma) is refused naming the property, never stored as one category.
    @Test func gdalListTextIsReadAsItsItemsAndAnAmbiguousOneIsRefused() throws {
        guard let ogr2ogr = Self.ogr2ogr else {
            try Test.cancel("SKIPPED: ogr2ogr is not installed (apt-get install gdal-bin)")
            return
        }
        let ws = try Workspace("gdallisttext")
        defer { ws.cleanUp() }
        try Self.lists.write(toFile: ws.path("lists.geojson"), atomically: true, encoding: .utf8)
        for (i, format) in [("GPKG", "s.gpkg"), ("FlatGeobuf", "s.fgb")].enumerated() {
            let made = try Self.shell(ws, "\(ogr2ogr) -f \(format.0) -mapFieldType StringList=String \(format.1) lists.geojson")
            #expect(made.status == 0, "\(format.0): \(made.stderr)")
            let database = ws.database + "_l\(i)"
            defer { _ = try? PoiProcess.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])",
                                               [ws.uri, database]) }
            let piped = try Self.shell(ws, "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ \(format.1) | \"$POI\" import - --db \(database) --uploads up")
            #expect(piped.status == 1, "\(format.0): \(piped.stderr)")  // B refused
            #expect(piped.stderr.contains(#"property "categories" holds GDAL's text for a list, "(N:a,b,…)"; read as its N items"#),
                    "\(format.0): \(piped.stderr)")
            #expect(piped.stderr.contains(#"property "runways" holds GDAL's text for a list"#), "\(format.0): \(piped.stderr)")
            #expect(try Self.lists(ws, database: database)
                    == #"[["A", ["aerodrome", "medium airport", "scheduled service"], ["09/27", "13/31"]]]"#, "\(format.0)")
            let rejects = try String(contentsOfFile: ws.path("stdin.rejects.geojson"), encoding: .utf8)
            #expect(rejects.contains(#""_field":"categories""#) && rejects.contains(
                #"\"(2:x,y,z)\" is GDAL's text for a list of 2 items, but it holds 3 comma-separated pieces (an item holds a comma)"#),
                    "\(format.0): \(rejects)")
        }
    }

    /// The README's commands for making a GDAL file from GeoJSON keep lists as lists on GDAL
    /// 3.6 (`-oo ARRAY_AS_STRING=YES`: each list is stored as its JSON text), for every format
    /// it names: the piped import stores exactly the lists of the GeoJSON, with no note.
    @Test func theREADMEsGDALCommandsKeepListsAsLists() throws {
        guard let ogr2ogr = Self.ogr2ogr else {
            try Test.cancel("SKIPPED: ogr2ogr is not installed (apt-get install gdal-bin)")
            return
        }
        let ws = try Workspace("gdallists")
        defer { ws.cleanUp() }
        try Self.lists.write(toFile: ws.path("lists.geojson"), atomically: true, encoding: .utf8)
        let expected = #"[["A", ["aerodrome", "medium airport", "scheduled service"], ["09/27", "13/31"]], ["B", ["x,y", "z"], ["18"]]]"#
        let make = "\(ogr2ogr) -oo ARRAY_AS_STRING=YES"
        let cases: [(name: String, make: String, pipe: String, flags: String)] = [
            ("GeoPackage", "\(make) -f GPKG l.gpkg lists.geojson", "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ l.gpkg", ""),
            ("FlatGeobuf", "\(make) -f FlatGeobuf l.fgb lists.geojson", "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ l.fgb", ""),
            ("Shapefile", "\(make) -f 'ESRI Shapefile' -lco ENCODING=UTF-8 l.shp lists.geojson",
             "\(ogr2ogr) -f GeoJSONSeq -t_srs EPSG:4326 /vsistdout/ l.shp", ""),
            ("KML", "\(make) -f KML l.kml lists.geojson", "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ l.kml", ""),
            ("GPX", "\(make) -f GPX -dsco GPX_USE_EXTENSIONS=YES l.gpx lists.geojson",
             "\(ogr2ogr) -f GeoJSONSeq /vsistdout/ l.gpx waypoints", "--field categories=ogr_categories"),
        ]
        for (i, c) in cases.enumerated() {
            let made = try Self.shell(ws, c.make)
            #expect(made.status == 0, "\(c.name): \(made.stderr)")
            let database = ws.database + "_m\(i)"
            defer { _ = try? PoiProcess.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])",
                                               [ws.uri, database]) }
            let piped = try Self.shell(ws, "\(c.pipe) | \"$POI\" import - --db \(database) --uploads up-\(i) \(c.flags)")
            #expect(piped.status == 0, "\(c.name): \(piped.stderr)")
            #expect(!piped.stderr.contains("GDAL's text"), "\(c.name): \(piped.stderr)")
            #expect(try Self.lists(ws, database: database) == expected, "\(c.name)")
        }
    }
}
