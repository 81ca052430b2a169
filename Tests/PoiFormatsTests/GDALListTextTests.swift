import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// GDAL's list text, `(N:a,b,c)`: read as its N items when the pieces between commas are N,
/// ambiguous otherwise, and anything else is not a list.
@Suite(.tags(.unit))
struct GDALListTextTests {
    @Test func readsTheItemsOnlyWhenThePiecesMatchTheCount() {
        #expect(GDALListText.read("(3:aerodrome,medium airport,scheduled service)")
                == .items(["aerodrome", "medium airport", "scheduled service"]))
        #expect(GDALListText.read("(1:a)") == .items(["a"]))
        #expect(GDALListText.read("(0:)") == .items([]))
        #expect(GDALListText.read("(2:x,y,z)") == .ambiguous(count: 2, pieces: 3))
        #expect(GDALListText.read("(2:a)") == .ambiguous(count: 2, pieces: 1))
        for text in ["museum", "(3 items)", "(:a)", "(1:a", "1:a)", "()", "(a:b)", "(12345678901:a)"] {
            #expect(GDALListText.read(text) == .notAList, "\(text)")
        }
    }

    /// In a GeoJSON feature: the categories and any other property, with a note; an ambiguous
    /// one rejects the feature naming the property; a `--types` property is left to its type.
    @Test func aFeatureGetsTheItemsOrIsRefusedNamingTheProperty() throws {
        let text = """
        {"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"A","categories":"(2:museum,art)","runways":"(1:09/27)","code":"(1:x)"}}
        {"type":"Feature","geometry":{"type":"Point","coordinates":[1,3]},"properties":{"name":"B","tags":"(2:a,b,c)"}}
        """
        var options = ReadOptions()
        options.columnTypes.add("code", .string)
        let (places, rejects) = try readAll(text, name: "g.geojsonl", options: options)
        #expect(places.count == 1)
        #expect(places.first?.categories == ["museum", "art"])
        #expect(places.first?.extra["runways"] == .array([.string("09/27")]))
        #expect(places.first?.extra["code"] == .string("(1:x)"))
        #expect(rejects.map(\.field) == ["tags"])
        #expect(rejects.first?.reason.hasPrefix(#""(2:a,b,c)" is GDAL's text for a list of 2 items, but it holds 3 comma-separated pieces"#) == true)
        let reader = try PlaceReader(source: ByteSource(bytes: Array(text.utf8), name: "g.geojsonl"), options: options)
        while try reader.next() != nil {}
        #expect(Set(reader.notes.map(\.name)) == ["categories", "runways"])
    }
}

/// The `alt` column of a PoiKit CSV export is the altitude; in any other CSV it is an extra.
@Suite(.tags(.unit))
struct ExportAltitudeColumnTests {
    static let header = "id,name,lat,lon,alt,importKey,created_at,updated_at,alt (extra)\n"

    @Test func anExportsAltColumnIsTheAltitude() throws {
        let (places, rejects) = try readAll(Self.header + "i1,A,1,2,581.0,k1,t,t,roof\ni2,B,3,4,,k2,t,t,\ni3,C,5,6,high,k3,t,t,\n")
        #expect(places.map(\.altitude) == [581.0, nil])
        #expect(places.first?.extra["alt"] == .string("roof"))
        #expect(rejects.map(\.field) == ["alt"])
        #expect(rejects.first?.reason == #"altitude must be a number, got "high""#)
    }

    @Test func anyOtherCSVsAltColumnIsAnExtra() throws {
        let (places, _) = try readAll("name,lat,lon,alt\nA,1,2,581.0\n")
        #expect(places.first?.altitude == nil)
        #expect(places.first?.extra["alt"] == .string("581.0"))
    }
}
