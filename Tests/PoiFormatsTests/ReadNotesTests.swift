import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// Readers return structured notes about columns they kept but did not map.
@Suite(.tags(.unit)) struct ReadNotesTests {
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

    /// The one rule for colliding names: an extra named like a field (any recognised name), like
    /// one of PoiKit's own properties, or ending in " (extra)" is written as "name (extra)" —
    /// whether or not the place has that property — and every other extra under its own name;
    /// reading takes one suffix off. So `extra` survives write → read as it was, and PoiKit's own
    /// properties of a feature stay apart from it.
    @Test func everyExtraNameSurvivesWriteAndRead() throws {
        let names = ["created_at", "updated_at", "imageId", "thumbnailId", "_source", "imageSource", "imageError",
                     "_line", "_feature", "_field", "_reason", "name", "Title", "address", "lat", "Longitude", "id",
                     "importKey", "image", "Image Path", "tags", "a (extra)", "name (extra)", "opening_hours", "source", "x2"]
        var extra = JSONObject(names.enumerated().map { JSONMember($0.element, .string("v\($0.offset)")) })
        extra.append("_source (extra) (extra)", .object(JSONObject([JSONMember("file", .string("f")), JSONMember("line", .integer(2))])))
        let own = JSONObject([JSONMember("imageId", .string("5f1d7a0c9b1e8a0012345678")), JSONMember("created_at", .string("2020-01-01T00:00:00.000Z")),
                              JSONMember("_source", .object(JSONObject([JSONMember("file", .string("f.csv")), JSONMember("line", .integer(3))])))])
        let place = Place(name: "A", coordinate: Coordinate(longitude: 2, latitude: 1), importKey: "k", extra: extra,
                          source: PlaceSource(file: "f.csv", record: 1, position: .line(2)), poiKitProperties: own)
        let feature = GeoJSONFeature(place: place)
        let keys = feature.properties.members.map(\.key)
        #expect(Array(keys.prefix(8)) == ["name", "importKey", "imageId", "created_at", "_source", "created_at (extra)", "updated_at (extra)", "imageId (extra)"])
        #expect(keys.contains("Image Path (extra)") && keys.contains("a (extra) (extra)") && keys.contains("opening_hours") && keys.contains("source") && keys.contains("x2"))
        var w = GeoJSONWriter(sink: MemorySink())
        try w.write(feature)
        try w.finish()
        let (read, rejects) = try readAll(bytes: w.sink.bytes, name: "out.geojson")
        #expect(rejects.isEmpty)
        #expect(read.first?.extra == extra)
        #expect(read.first?.poiKitProperties == own)
        #expect(try Self.notes(String(decoding: w.sink.bytes, as: UTF8.self), name: "out.geojson") == [])
        // Someone else's `_source` (not the shape exports write) is the user's: kept in extra.
        let other = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"A","_source":"survey"}}"#
        #expect(try readAll(other, name: "o.geojson").0.first?.extra == JSONObject([JSONMember("_source", .string("survey"))]))
    }

    /// The writer's allocation-free alias check agrees with the mapping itself.
    @Test func defaultFieldAgreesWithTheMapping() {
        let names = ["name", "Title", "Image Path", "image_path", "decimal_Longitude", "decimallongitudes", "LAT.", "x", "y ",
                     "opening_hours", "", " ", "-_-", "place-name", "Lat\u{A0}", "név", "IMG", "importKey", "import key", "id", "ID#2"]
        for name in names {
            #expect(FieldMapping.defaultField(forColumn: name) == FieldMapping().field(forColumn: name), "\(name)")
        }
        for field in PlaceField.allCases {
            for alias in field.aliases { #expect(FieldMapping.defaultField(forColumn: alias) != nil, "\(alias)") }
        }
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
