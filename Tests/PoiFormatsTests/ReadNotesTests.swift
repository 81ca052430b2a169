import Testing
@testable import PoiFormats
import PoiModel

/// Issue 18 §4/§5: readers return structured notes about columns they kept but did not map.
@Suite struct ReadNotesTests {
    static func notes(_ text: String, name: String = "t.csv", options: ReadOptions = ReadOptions()) throws -> [ReadNote] {
        let reader = try PlaceReader(source: ByteSource(bytes: Array(text.utf8), name: name), options: options)
        while try reader.next() != nil {}
        return reader.notes
    }

    @Test func columnsPoiKitWritesItselfAreKeptAndSaidOnce() throws {
        let names = ["created_at", "updated_at", "imageId", "thumbnailId", "_line", "_feature", "_field", "_reason"]
        let csv = "name,lat,lon," + names.joined(separator: ",") + "\nA,1,2,a,b,c,d,e,f,g,h\nB,1,2,a,b,c,d,e,f,g,h\n"
        let (places, _) = try readAll(csv)
        #expect(places.first?.extra.members.map(\.key) == names)
        let notes = try Self.notes(csv)
        #expect(notes.map(\.name) == names)
        #expect(notes.allSatisfy { $0.kind == .reservedName })
        #expect(notes.first?.message == "column \"created_at\" is a name PoiKit writes itself; kept as extra.created_at")
    }

    @Test func columnsThatLookLikeAFieldAreNamed() throws {
        let notes = try Self.notes("name,lat,lon,image_url,photo_file,source_id,picture_link\nA,1,2,,,,\n")
        #expect(notes.map(\.kind) == [.looksLike(.image), .looksLike(.image), .looksLike(.id), .looksLike(.image)])
        #expect(notes.first?.message == "column \"image_url\" looks like the image")
        // Once the field is mapped, look-alikes are left alone.
        #expect(try Self.notes("name,lat,lon,image,image_url,id,source_id\nA,1,2,,,,\n") == [])
    }

    @Test func collidingColumnsSayWhereTheyWent() throws {
        let csv = "name,lat,lon,address,placename,name\nA,1,2,Street,Town,Second\n"
        let (places, _) = try readAll(csv)
        #expect(places.first?.placename == "Street")
        #expect(places.first?.extra == JSONObject([JSONMember("placename", .string("Town")), JSONMember("name", .string("Second"))]))
        #expect(try Self.notes(csv).map(\.message) == [
            "column \"placename\" names the placename, already taken by column \"address\"; kept as extra.placename",
            "column \"name\" names the name, already taken by column \"name\"; kept as extra.name",
        ])
    }

    @Test func geojsonAliasOfTheWrongTypeIsSaidOnce() throws {
        let f = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5,47.3]},"properties":{"name":"Z","address":{"a":1}}}"#
        let notes = try Self.notes(f + "\n" + f + "\n", name: "z.geojson")
        #expect(notes.map(\.message) == ["property \"address\" looks like the placename but holds an object; kept as extra.address"])
    }

    @Test func categorySeparatorsAreAnOption() throws {
        var options = ReadOptions()
        options.categorySeparators = [UInt8(ascii: ",")]
        let (places, _) = try readAll("name,lat,lon,tags\nA,1,2,\"a, b;c\"\n", options: options)
        #expect(places.first?.categories == ["a", "b;c"])
    }

    @Test func altitudeIsKept() throws {
        let f = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[2.2944813,48.8583701,330.5]},"properties":{"name":"Eiffel"}}"#
        let (places, _) = try readAll(f, name: "e.geojson")
        #expect(places.first?.coordinate == Coordinate(longitude: 2.2944813, latitude: 48.8583701))
        #expect(places.first?.altitude == 330.5)
        var w = GeoJSONWriter(sink: MemorySink(), style: .featureCollection, precision: 7)
        try w.write(try #require(places.first))
        try w.finish()
        #expect(String(decoding: w.sink.bytes, as: UTF8.self).contains(#""coordinates":[2.2944813,48.8583701,330.5]"#))
    }

    /// What `poi convert` and `poi export` write for an extra named like a property they write
    /// themselves ("placename (extra)") reads back as that extra, under its own name.
    @Test func renamedExtraReadsBackUnderItsOwnName() throws {
        let f = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"A","placename":"Street","placename (extra)":"Town","name (extra)":"B"}}"#
        let (places, _) = try readAll(f, name: "x.geojson")
        #expect(places.first?.placename == "Street")
        #expect(places.first?.extra == JSONObject([JSONMember("placename", .string("Town")), JSONMember("name", .string("B"))]))
        let (csvPlaces, _) = try readAll("name,lat,lon,address,placename (extra)\nA,1,2,S,T\n")
        #expect(csvPlaces.first?.extra == JSONObject([JSONMember("placename", .string("T"))]))
    }
}
