import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// What real third-party dumps hold, read as they mean it.
@Suite(.tags(.unit)) struct RealDumpsTests {
    /// A list is a list: its items are not split again, in GeoJSON or in a CSV cell.
    @Test func categoriesGivenAsAListAreNotSplitAgain() throws {
        let geojson = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""properties":{"name":"A","categories":["Fish | Chips","Bar; Pub"," Bar; Pub ",""]}}"#
        let (places, rejects) = try readAll(geojson + "\n", name: "a.geojsonl")
        #expect(rejects.isEmpty)
        #expect(places.map(\.categories) == [["Fish | Chips", "Bar; Pub"]])
        let csv = "name,lat,lon,categories\nA,2,1,\"[\"\"Fish | Chips\"\",\"\"Bar; Pub\"\"]\"\nB,2,1,Fish | Chips;Bar\n"
        let (rows, _) = try readAll(csv)
        #expect(rows.map(\.categories) == [["Fish | Chips", "Bar; Pub"], ["Fish", "Chips", "Bar"]])
    }

    /// No separators: each text is one category.
    @Test func noSeparatorsKeepsTextWhole() throws {
        var options = ReadOptions()
        options.categorySeparators = []
        let (rows, _) = try readAll("name,lat,lon,categories\nB,2,1,Fish | Chips;Bar\n", options: options)
        #expect(rows.map(\.categories) == [["Fish | Chips;Bar"]])
    }

    /// `"tags": null` does not take the categories from the `category` after it.
    @Test func aNullAliasIsAbsent() throws {
        let feature = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""properties":{"name":"A","tags":null,"category":"cafe","description":null,"details":"d"}}"#
        let (places, _) = try readAll(feature + "\n", name: "a.geojsonl")
        #expect(places.map(\.categories) == [["cafe"]])
        #expect(places.map(\.details) == ["d"])
        #expect(places.first?.extra == JSONObject())
        // In either order (found by a new-user trial: after the field, the null was kept as an extra).
        let reversed = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""properties":{"name":"A","category":"cafe","tags":null,"details":"d","description":null}}"#
        let (again, _) = try readAll(reversed + "\n", name: "a.geojsonl")
        #expect(again.map(\.categories) == [["cafe"]] && again.first?.extra == JSONObject())
        // A position that fits swapped is named as a GeoJSON position, not a column.
        let swapped = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[10,95]},"properties":{"name":"S"}}"#
        let (_, rejects) = try readAll(swapped + "\n", name: "s.geojsonl")
        #expect(rejects.map(\.reason) == ["latitude 95 out of range [-90, 90] (looks swapped: latitude 10, longitude 95 would fit; "
                                          + "GeoJSON positions are [longitude, latitude])"])
    }

    /// RFC 7946 positions are numbers; text is refused with both values named.
    @Test func coordinatesAsStringsAreRefused() throws {
        func feature(_ coordinates: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":"# + coordinates + #"},"properties":{"name":"A"}}"# + "\n"
        }
        let (places, rejects) = try readAll(feature(#"["2,5","48"]"#) + feature(#"[2.5,"48"]"#) + feature("[true,null]")
                                            + feature("[2.5,48]"), name: "a.geojsonl")
        #expect(places.count == 1)
        #expect(rejects.map(\.field) == ["geometry", "geometry", "geometry"])
        #expect(rejects.map(\.reason) == [
            #"Point coordinates must be numbers (RFC 7946): longitude is the string "2,5", latitude is the string "48""#,
            #"Point coordinates must be numbers (RFC 7946): latitude is the string "48""#,
            "Point coordinates must be numbers (RFC 7946): longitude is a boolean, latitude is null",
        ])
    }

    /// Excel's `sep=;` first line names the delimiter and is no record; lines stay physical.
    @Test(arguments: ["\n", "\r\n", "\r"]) func excelSeparatorLineIsHonoured(eol: String) throws {
        let csv = ["sep=;", "name;lat;lon;note", "A;48,85;2,35;x,y", "B;95;2;z"].joined(separator: eol) + eol
        for chunk in [1, 2, 5, 7, 1 << 16] {
            let reader = try PlaceReader(source: ByteSource(bytes: Array(csv.utf8), name: "e.csv", chunkSize: chunk))
            var places: [Place] = [], rejects: [Reject] = []
            while let item = try reader.next() {
                switch item {
                case .place(let p, _): places.append(p)
                case .reject(let r, _): rejects.append(r)
                }
            }
            #expect(places.map(\.name) == ["A"], "chunk \(chunk)")
            #expect(places.map(\.source.line) == [3], "chunk \(chunk)")
            #expect(places.map { $0.extra["note"] } == [.string("x,y")])
            #expect(rejects.map(\.source.line) == [4], "chunk \(chunk)")
        }
        _ = try readAll(csv, name: "e.csv")
    }

    /// A short row that fails says how short it is.
    @Test func aShortRowSaysHowShort() throws {
        let (_, rejects) = try readAll("name,lat,lon,a,b,c,d,e,f\nA,1\n")
        #expect(rejects.map(\.reason) == ["longitude is empty (the row has 2 of 9 fields)"])
    }

    /// A pre-RFC 7946 file in a projected CRS is refused once, naming the CRS and the fix, rather
    /// than every feature rejected as out of range; WGS 84 names pass.
    @Test func aProjectedCRSIsNamed() throws {
        func collection(_ crs: String) -> String {
            #"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":""# + crs + #""}},"features":["#
                + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[521027.9,6283496.1]},"properties":{"name":"A"}}]}"#
        }
        #expect(throws: FormatError.foreignCRS(file: "l.geojson", name: "urn:ogc:def:crs:EPSG::2154")) {
            _ = try readAll(collection("urn:ogc:def:crs:EPSG::2154"), name: "l.geojson")
        }
        #expect(FormatError.foreignCRS(file: "l.geojson", name: "urn:ogc:def:crs:EPSG::2154").description
                == "l.geojson: coordinates are in urn:ogc:def:crs:EPSG::2154 (the file's crs member), not WGS 84 "
                + "longitude/latitude as RFC 7946 requires; reproject first: ogr2ogr -t_srs EPSG:4326 -f GeoJSON out.geojson l.geojson")
        // The command runs as pasted, whatever the input's name (found by a new-user trial).
        let fixes = ["a.zip:dir/b.geojson": "/vsizip/a.zip/dir/b.geojson", "c.geojson.gz": "/vsigzip/c.geojson.gz",
                     "-dash.geojson": "./-dash.geojson", "my file.geojson": "'my file.geojson'",
                     "it's.geojson": #"'it'\''s.geojson'"#, "-": "in.geojson", "dir/plain-1.geojson": "dir/plain-1.geojson"]
        for (file, source) in fixes {
            #expect(FormatError.foreignCRS(file: file, name: "X").description.hasSuffix("-f GeoJSON out.geojson " + source), "\(file)")
        }
        // A linked CRS (GeoJSON 2008) is no more WGS 84 than a named one.
        let linked = #"{"type":"FeatureCollection","crs":{"type":"link","properties":{"href":"http://example.org/crs","type":"proj4"}},"features":[]}"#
        #expect(throws: FormatError.foreignCRS(file: "k.geojson", name: "the linked CRS http://example.org/crs")) {
            _ = try readAll(linked, name: "k.geojson")
        }
        for wgs84 in ["urn:ogc:def:crs:OGC:1.3:CRS84", "EPSG:4326", "urn:ogc:def:crs:EPSG::4326"] {
            let (places, rejects) = try readAll(collection(wgs84), name: "w.geojson")
            #expect(places.isEmpty && rejects.map(\.reason) == ["longitude 521027.9 out of range [-180, 180]; "
                                                                  + "latitude 6283496.1 out of range [-90, 90]"], "\(wgs84)")
        }
    }

    /// `poi convert` writes no empty categories list.
    @Test func convertWritesNoEmptyCategories() throws {
        let (places, _) = try readAll("name,lat,lon\nA,1,2\n")
        let feature = GeoJSONFeature(place: try #require(places.first))
        #expect(feature.properties.contains("categories") == false)
    }

    /// `poi convert` keeps the id it was given, with its JSON type, as the Feature id beside
    /// `importKey`; the converted file reads back to the same places.
    @Test func convertKeepsTheIdItWasGiven() throws {
        let geojson = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":42,"geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"A"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"B","id":"x7"}},
        {"type":"Feature","id":"abc","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"C","importKey":"k"}},
        {"type":"Feature","id":12345678901234567890,"geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"D"}}
        ]}
        """
        func converted(_ places: [Place]) throws -> String {
            var w = GeoJSONWriter(sink: MemorySink())
            for p in places { try w.write(p) }
            try w.finish()
            return String(decoding: w.sink.bytes, as: UTF8.self)
        }
        let (places, _) = try readAll(geojson, name: "ids.geojson")
        let text = try converted(places)
        #expect(text == """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":42,"geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"A","importKey":"42"}},
        {"type":"Feature","id":"x7","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"B","importKey":"x7"}},
        {"type":"Feature","id":"abc","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"C","importKey":"k"}},
        {"type":"Feature","id":12345678901234567890,"geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"D","importKey":"12345678901234567890"}}
        ]}

        """)
        // The same places, the key now read from importKey (which says where it came from).
        let (again, _) = try readAll(text, name: "ids.geojson")
        #expect(again.map { var p = $0; p.keySource = .id; return p } == places.map { var p = $0; p.keySource = .id; return p })
        // A CSV id column is text; blank is none; beside an importKey it stays under extra.
        let (rows, _) = try readAll("id,name,lat,lon\n007,A,1,2\n ,B,1,2\n")
        #expect(rows.map(\.id) == [.string("007"), nil])
        let (keyed, _) = try readAll("id,importKey,name,lat,lon\n007,k1,A,1,2\n")
        #expect(keyed.first?.id == nil && keyed.first?.extra == JSONObject([JSONMember("id", .string("007"))]))
    }

    /// A WKT geometry column (ogr2ogr -lco GEOMETRY=AS_WKT, GeoPandas) gives the coordinates of a
    /// file with no latitude and longitude columns.
    @Test func aWKTPointColumnGivesTheCoordinates() throws {
        let csv = "WKT,name,amenity\n\"POINT (2.35 48.85)\",Café,cafe\n\"point z(-0.1 51.5 12)\",Pub,bar\n"
            + "\"LINESTRING (0 0,1 1)\",Road,x\n\"POINT EMPTY\",Nowhere,x\n\"POINT (200 1)\",Far,x\n,Blank,x\n"
        let (places, rejects) = try readAll(csv, name: "wkt.csv")
        #expect(places.map(\.name) == ["Café", "Pub"])
        #expect(places.map(\.coordinate) == [Coordinate(longitude: 2.35, latitude: 48.85), Coordinate(longitude: -0.1, latitude: 51.5)])
        #expect(places.first?.extra == JSONObject([JSONMember("amenity", .string("cafe"))]))
        #expect(rejects.map(\.field) == ["WKT", "WKT", "longitude", "WKT"])
        #expect(rejects.map(\.reason) == ["WKT geometry LINESTRING not supported, POINT required",
                                          "POINT EMPTY has no coordinates",
                                          "longitude 200 out of range [-180, 180]",
                                          "geometry is empty"])
        // GeoPandas names it `geometry`; a file with latitude and longitude keeps its WKT as an extra.
        let (gp, _) = try readAll("name,geometry\nA,POINT (1 2)\n", name: "gp.csv")
        #expect(gp.map(\.coordinate) == [Coordinate(longitude: 1, latitude: 2)])
        let (both, _) = try readAll("name,lat,lon,WKT\nA,5,6,POINT (1 2)\n", name: "b.csv")
        #expect(both.map(\.coordinate) == [Coordinate(longitude: 6, latitude: 5)])
        #expect(both.first?.extra == JSONObject([JSONMember("WKT", .string("POINT (1 2)"))]))
        // A Z point keeps its altitude (as a GeoJSON position does); an M point's third number
        // is no altitude; PostGIS's EWKT SRID=4326 prefix is read, another SRID named.
        let (z, _) = try readAll("name,WKT\nA,POINT Z (1 2 3.5)\nB,POINT M (1 2 9)\nC,SRID=4326;POINT(3 4)\n", name: "z.csv")
        #expect(z.map(\.altitude) == [3.5, nil, nil])
        #expect(z.last?.coordinate == Coordinate(longitude: 3, latitude: 4))
        let (_, srid) = try readAll("name,WKT\nA,SRID=2154;POINT(521027 6283496)\n", name: "s.csv")
        #expect(srid.map(\.reason) == ["coordinates are in SRID 2154, not WGS 84 longitude/latitude (4326); reproject first, "
                                       + "e.g. ogr2ogr -t_srs EPSG:4326"])
    }

    /// One Feature per line (.ndjson, .geojsonl): a damaged line is one reject and reading goes
    /// on at the next line, as an RFC 8142 file goes on at the next RS (found by a new-user trial).
    @Test func aDamagedLineOfNewlineDelimitedGeoJSONIsSkipped() throws {
        func feature(_ name: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":""# + name + #""}}"#
        }
        let text = feature("A") + "\r\n" + String(feature("B").dropLast()) + "\r\n\r\n" + feature("C") + "\n"
        for name in ["d.ndjson", "d.geojsonl", "d.jsonl.gz"] where !name.hasSuffix(".gz") {
            let (places, rejects) = try readAll(text, name: name)
            #expect(places.map(\.name) == ["A", "C"], "\(name)")
            #expect(rejects.count == 1 && rejects.first?.reason.hasSuffix("; skipped to the next line") == true, "\(rejects)")
        }
        // A line that is no JSON at all, or holds a second value after a complete one: skipped.
        let junk = feature("A") + " 7\nxyz\n" + feature("B") + "\n}\n"
        let (kept, refused) = try readAll(junk, name: "j.ndjson")
        #expect(kept.map(\.name) == ["A", "B"], "\(refused)")
        #expect(refused.count == 3, "\(refused)")
        // A file not named as one Feature per line stops there, as before (its framing is unknown).
        let (places, rejects) = try readAll(text, name: "d.json")
        #expect(places.map(\.name) == ["A"] && rejects.first?.reason.hasSuffix("the rest of the file is not read") == true)
    }

    /// A GeoJSON categories string holding a JSON array is that list, as a CSV cell is.
    @Test func aCategoriesStringHoldingAJSONArrayIsAList() throws {
        let feature = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"C","categories":"[\"x;y\",\"z\"]"}}"#
        let (places, _) = try readAll(feature + "\n", name: "c.geojsonl")
        #expect(places.map(\.categories) == [["x;y", "z"]])
    }

    /// OSM-style features keep names and kinds in a `tags` object: dotted paths read them, and
    /// without them the reject says which path would.
    @Test func dottedPathsReadNestedProperties() throws {
        let osm = #"{"type":"Feature","id":"node/1","geometry":{"type":"Point","coordinates":[2.35,48.85]},"#
            + #""properties":{"tags":{"name":"Café","amenity":"cafe"},"source":"osm"}}"# + "\n"
        let (none, rejects) = try readAll(osm, name: "osm.geojsonl")
        #expect(none.isEmpty)
        #expect(rejects.map(\.reason) == ["name is missing; the property tags.name holds one: read it with --field name=tags.name"])
        var options = ReadOptions()
        options.mapping = FieldMapping(overrides: [.name: "tags.name", .categories: "tags.amenity"])
        let (places, _) = try readAll(osm, name: "osm.geojsonl", options: options)
        #expect(places.map(\.name) == ["Café"])
        #expect(places.map(\.categories) == [["cafe"]])
        #expect(places.first?.extra["tags"] == .object(JSONObject([JSONMember("name", .string("Café")), JSONMember("amenity", .string("cafe"))])))
        #expect(places.first?.importKey == "node/1")
    }
}
