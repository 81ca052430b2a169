import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// Reader side: every column and property is kept, and what the reader
/// cannot use it says (rather than guessing silently).
@Suite(.tags(.unit)) struct EveryColumnKeptTests {
    /// A valid Zürich feature whose `address` (an alias of placename) is an object: the feature
    /// is kept and the object goes to `extra` as written.
    @Test func aliasPropertyHoldingAnObjectIsKeptAsExtra() throws {
        let json = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5417,47.3769]},"#
            + #""properties":{"name":"Zürich HB","address":{"street":"Bahnhofplatz","zip":8001}}}"#
        let (places, rejects) = try readAll(json, name: "z.geojson")
        #expect(rejects.map(\.message) == [])
        #expect(places.count == 1)
        #expect(places.first?.placename == nil)
        #expect(places.first?.extra["address"] == .object(JSONObject([
            JSONMember("street", .string("Bahnhofplatz")), JSONMember("zip", .integer(8001)),
        ])))
    }

    /// A required field given as a non-string is still a reject, naming the user's property.
    @Test func aliasRejectNamesTheUsersProperty() throws {
        let json = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5,47.3]},"properties":{"title":7}}"#
        let (places, rejects) = try readAll(json, name: "z.geojson")
        #expect(places.isEmpty)
        #expect(rejects.map(\.field) == ["title"])
        #expect(rejects.map(\.reason) == ["title (the name) must be a string, got number"])
    }

    /// Integers that fit in Int64 stay exact, 19 digits included.
    @Test func nineteenDigitIntegersStayExact() throws {
        let json = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""properties":{"name":"A","big":9223372036854775807,"neg":-9223372036854775808}}"#
        let (places, _) = try readAll(json, name: "z.geojson")
        #expect(places.first?.extra["big"] == .integer(Int64.max))
        #expect(places.first?.extra["neg"] == .integer(Int64.min))
    }

    /// Beyond Int64 an integer keeps its digits (up to Decimal128's 34), is written back as
    /// they were, and as a Feature id gives the key of the same text.
    @Test func integersBeyondInt64KeepTheirDigits() throws {
        let digits34 = "1234567890123456789012345678901234"
        let json = #"{"type":"Feature","id":12345678901234567890,"geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""properties":{"name":"A","big":12345678901234567890,"neg":-9223372036854775809,"#
            + #""max":\#(digits34),"longer":\#(digits34)5,"list":[-12345678901234567890]}}"#
        let (places, rejects) = try readAll(json, name: "z.geojson")
        #expect(rejects.isEmpty)
        let place = try #require(places.first)
        #expect(place.importKey == "12345678901234567890")
        #expect(place.extra["big"] == .bigInteger("12345678901234567890"))
        #expect(place.extra["neg"] == .bigInteger("-9223372036854775809"))
        #expect(place.extra["max"] == .bigInteger(digits34))
        #expect(place.extra["longer"] == .double(12345678901234567890123456789012345.0))
        #expect(place.extra["list"] == .array([.bigInteger("-12345678901234567890")]))
        var w = GeoJSONWriter(sink: MemorySink())
        try w.write(place)
        try w.finish()
        let text = String(decoding: w.sink.bytes, as: UTF8.self)
        #expect(text.contains(#""big":12345678901234567890,"neg":-9223372036854775809,"max":\#(digits34),"#), "\(text)")
        #expect(text.contains(#""list":[-12345678901234567890]"#), "\(text)")
        // A coordinate that large is out of range, named as such.
        let far = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[12345678901234567890,2]},"properties":{"name":"A"}}"#
        #expect(try readAll(far, name: "f.geojson").1.map(\.field) == ["longitude"])
    }

    /// A JSON array in a category cell is a list, not one literal category.
    @Test func jsonArrayCategoryCellIsAList() throws {
        let csv = "name,lat,lon,categories\nA,1,2,\"[\"\"j1\"\",\"\"j2\"\", \"\"j1\"\"]\"\nB,1,2,a;b|c\nC,1,2,\"a, b\"\nD,1,2,[not json\n"
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.map(\.categories) == [["j1", "j2"], ["a", "b", "c"], ["a, b"], ["[not json"]])
    }

    /// "1e-400" underflows to 0: refused like an overflow, never read as 0.
    @Test func underflowingCoordinateIsRejected() throws {
        let (places, rejects) = try readAll("name,lat,lon\nA,1e-400,2\nB,1e-300,2\n")
        #expect(places.map(\.name) == ["B"])
        #expect(rejects.map(\.field) == ["latitude"])
        #expect(rejects.map(\.reason) == ["latitude \"1e-400\" is too small to be represented (it would read as 0)"])
    }

    /// Trailing empty cells left out (as spreadsheets export them) are empty cells.
    @Test func shortRowsHaveTheirMissingCellsEmpty() throws {
        let (places, rejects) = try readAll("name,lat,lon,details,tags\nA,1,2\nB,1,2,d\nC,1\n")
        #expect(places.map(\.name) == ["A", "B"])
        #expect(places.map(\.details) == [nil, "d"])
        #expect(places.first?.extra.isEmpty == true)
        #expect(rejects.map(\.reason) == ["longitude is empty (the row has 2 of 5 fields)"])
    }

    /// A row of nothing but delimiters is skipped like a blank line.
    @Test func allEmptyRowIsSkipped() throws {
        let (places, rejects) = try readAll("name,lat,lon\n,,\nA,1,2\n , ,\n\"\",,\n")
        #expect(places.map(\.name) == ["A"])
        #expect(places.map(\.source.line) == [3])
        #expect(rejects.map(\.message) == ["t.csv:4 (record 2): name: name is empty"])
    }

    /// A NUL byte in a header name is a header error.
    @Test func nulInHeaderIsAHeaderError() throws {
        #expect(throws: FormatError.invalidHeader(file: "t.csv", reason: "column 2 contains a NUL byte")) {
            _ = try readAll(bytes: Array("name,la\u{0}t,lon,x\nA,1,2,3\n".utf8))
        }
    }

    /// Common coordinate and image headers are recognised.
    @Test(arguments: [("latitude_deg", "longitude_deg"), ("decimalLatitude", "decimalLongitude"),
                      ("geo_lat", "geo_lon"), ("Lat.", "Long."), ("geo_lat", "geo_lng")])
    func commonCoordinateHeadersAreRecognised(lat: String, lon: String) throws {
        let (places, rejects) = try readAll("name,\(lat),\(lon),img\nA,1.5,2.5,a.jpg\n")
        #expect(rejects.isEmpty)
        #expect(places.first?.coordinate == Coordinate(longitude: 2.5, latitude: 1.5))
        #expect(places.first?.image == "a.jpg")
        #expect(places.first?.extra.isEmpty == true)
    }
}
