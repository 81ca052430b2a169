import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

@Suite(.tags(.unit)) struct CSVReaderTests {
    @Test func quotedNewlinesDelimitersAndDoubledQuotes() throws {
        let csv = "name,lat,lon,description\n"
            + "\"Café, \"\"Le\"\" Flore\",48.85,2.33,\"line one\nline two\r\nline three\"\n"
            + "Louvre,48.86,2.34,plain\n"
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.count == 2)
        #expect(places[0].name == "Café, \"Le\" Flore")
        #expect(places[0].details == "line one\nline two\r\nline three")
        #expect(places[0].source.line == 2)
        #expect(places[1].source.line == 5)  // physical line after 2 quoted newlines
        #expect(places[1].source.record == 2)
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func lineEndsAndBOM(eol: String) throws {
        let csv = "\u{FEFF}Name,Latitude,Longitude" + eol + "A,1,2" + eol + eol + "B,3,4" + eol + "C,95,4"
        let (places, rejects) = try readAll(csv)
        #expect(places.map(\.name) == ["A", "B"])
        #expect(places.map { $0.source.line } == [2, 4])
        #expect(rejects.count == 1)
        #expect(rejects[0].source.line == 5)
        #expect(rejects[0].source.record == 3)
        #expect(rejects[0].field == "latitude")
        #expect(rejects[0].reason == "latitude 95 out of range [-90, 90] (looks swapped: latitude 4, longitude 95 would fit; check which column is which)")
    }

    @Test(arguments: [(";", "48,85", "2,35"), ("\t", "48.85", "2.35"), ("|", "48.85", "2.35")])
    func detectedDelimiters(d: String, lat: String, lon: String) throws {
        let csv = ["title", "y", "x", "tags"].joined(separator: d) + "\n"
            + ["Café", lat, lon, "a;b"].joined(separator: d == ";" ? ";" : d) + "\n"
        if d == ";" {
            // ';' is the delimiter, so tags hold only "a" and "b" spills into an extra field.
            let (places, rejects) = try readAll(csv)
            #expect(places.count == 0)
            #expect(rejects.map(\.reason) == ["record has 5 fields, header has 4"])
            return
        }
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.count == 1)
        #expect(places[0].coordinate == Coordinate(longitude: 2.35, latitude: 48.85))
        #expect(places[0].categories == ["a", "b"])
    }

    @Test func semicolonFileWithDecimalCommas() throws {
        let csv = "Name;Lat;Lon;Tags\nCafé;48,85;2,35;\"a;b\"\nBad;abc;2\n"
        let (places, rejects) = try readAll(csv)
        #expect(places.count == 1)
        #expect(places[0].categories == ["a", "b"])
        #expect(rejects.count == 1)
        #expect(rejects[0].reason == "latitude \"abc\" is not a number (the row has 3 of 4 fields)")
    }

    @Test func unicodeNames() throws {
        let csv = "name,lat,lon\n故宫博物院,39.9163,116.3972\nالمسجد الحرام,21.4225,39.8262\n🗽 Statue,40.6892,-74.0445\n"
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.map(\.name) == ["故宫博物院", "المسجد الحرام", "🗽 Statue"])
    }

    @Test func everyInvalidCoordinateCase() throws {
        let csv = """
        name,lat,lon
        ok,10,20
        nan,NaN,20
        inf,Infinity,20
        abc,abc,20
        empty,,20
        big,95,20
        lonbig,10,181
        huge,1e400,20
        ok2,-90,-180

        """
        let (places, rejects) = try readAll(csv)
        #expect(places.map(\.name) == ["ok", "ok2"])
        #expect(rejects.count == 7)
        #expect(rejects.map(\.reason) == [
            "latitude \"NaN\" is not a number",
            "latitude \"Infinity\" is not a number",
            "latitude \"abc\" is not a number",
            "latitude is empty",
            "latitude 95 out of range [-90, 90] (looks swapped: latitude 20, longitude 95 would fit; check which column is which)",
            "longitude 181 out of range [-180, 180]",
            "latitude 1e400 is not a finite number",
        ])
        #expect(rejects.map { $0.source.line! } == [3, 4, 5, 6, 7, 8, 9])
    }

    @Test func raggedRowsAndDuplicates() throws {
        let csv = "name,lat,lon,note\nA,1,2,x\nB,1,2\nC,1,2,x,extra\nD,1,2,x,,\nA,1,2,x\n"
        let (places, rejects) = try readAll(csv)
        // A short row has its missing cells empty; a long one is refused.
        #expect(places.map(\.name) == ["A", "B", "D", "A"])
        #expect(places[1].extra == JSONObject([JSONMember("note", .string(""))]))
        #expect(rejects.map(\.reason) == ["record has 5 fields, header has 4"])
        // Duplicate rows get the same importKey: the store upserts them into one place.
        #expect(places[0].importKey == places[3].importKey)
        #expect(places[0].extra == JSONObject([JSONMember("note", .string("x"))]))
    }

    @Test func mappingOverridesAndExtra() throws {
        let csv = "Title,name,Breite,Länge,source_id,Opening Hours,,Opening Hours\nT,N,1,2,s-1,9-5,e,late\n"
        let mapping = FieldMapping(overrides: [.name: "Title", .latitude: "Breite", .longitude: "Länge", .id: "source_id"])
        let (places, rejects) = try readAll(csv, options: ReadOptions(mapping: mapping))
        #expect(rejects.isEmpty)
        let p = try #require(places.first)
        #expect(p.name == "T")
        #expect(p.importKey == "s-1")
        #expect(p.extra.members.map(\.key) == ["name", "Opening Hours", "column 7", "Opening Hours#2"])
        #expect(p.extra["name"] == .string("N"))
    }

    @Test func missingColumnsAreFileErrors() {
        #expect(throws: FormatError.missingColumn(file: "t.csv", field: .latitude, looked: PlaceField.latitude.aliases, header: ["name", "lon"])) {
            try readAll("name,lon\nA,1\n")
        }
        #expect(throws: FormatError.emptyFile(file: "t.csv")) { try readAll("") }
        // A wrong delimiter shows: the header read as one column holding another delimiter.
        #expect(FormatError.missingColumn(file: "t.csv", field: .name, looked: ["name", "title"], header: ["name;lat;lon"]).description
                == "t.csv: no name column (looked for name, title; the header was read as 1 column: \"name;lat;lon\", which holds ';': "
                + "is that the delimiter? (--delimiter ';'))")
    }

    @Test func hostileBytes() throws {
        var bytes = Array("name,lat,lon\n".utf8)
        bytes += Array("ok,1,2\n".utf8)
        bytes += [0x41, 0xFF, 0xFE] + Array(",1,2\n".utf8)        // invalid UTF-8
        bytes += [0x41, 0x00, 0x42] + Array(",1,2\n".utf8)        // NUL
        bytes += Array("\"unterminated,1,2\nok2,1,2\n".utf8)      // swallows the rest
        let (places, rejects) = try readAll(bytes: bytes)
        #expect(places.map(\.name) == ["ok"])
        #expect(rejects.map(\.reason) == ["not valid UTF-8", "contains a NUL byte",
                                          "unterminated quoted field (the file ends inside quotes opened in this record, so every line after it was read into it: lines 5–6; if \" is plain text in this file, read it with --quote none)"])
        #expect(rejects.map(\.field) == ["name", "name", nil])
        #expect(rejects.map { $0.source.line! } == [3, 4, 5])
    }

    @Test func hugeFieldIsRejectedWithFlatMemory() throws {
        var limits = ReadLimits()
        limits.maxRecordBytes = 1000
        let big = String(repeating: "x", count: 5000)
        let csv = "name,lat,lon\n\(big),1,2\nok,1,2\n"
        let (places, rejects) = try readAll(csv, options: ReadOptions(limits: limits))
        #expect(places.map(\.name) == ["ok"])
        #expect(rejects.count == 1)
        #expect(rejects[0].reason == "record exceeds the limit of 1000 bytes or 4096 fields")
    }

    @Test func fieldsOverTheLimitDoNotLeakIntoTheNextRecord() throws {
        var limits = ReadLimits()
        limits.maxFields = 3
        let (places, rejects) = try readAll("name,lat,lon\na,1,2,EXTRA\nb,3,4\n", options: ReadOptions(limits: limits))
        #expect(places.map(\.name) == ["b"])
        #expect(rejects.map(\.reason) == ["record exceeds the limit of 1048576 bytes or 3 fields"])
    }

    @Test func chunkBoundariesDoNotMatter() throws {
        // Many records so CRLFs and quotes straddle the 256 KiB chunk boundary somewhere.
        var csv = "name,lat,lon,details\r\n"
        for i in 0..<20000 { csv += "\"n\(i)\",1.5,2.5,\"a\r\nb\"\r\n" }
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.count == 20000)
        #expect(places.last!.source.line == 2 + 19999 * 2)
        let odd = places.filter { $0.details != "a\r\nb" }.map { "\($0.source.line!): \(String(reflecting: $0.details))" }
        #expect(odd == [])
    }

    @Test func samplesPlacesCSV() throws {
        let reader = try PlaceReader(path: repoRoot + "/Samples/places.csv")
        var good = 0, bad: [Reject] = []
        while let item = try reader.next() {
            if case .reject(let r, _) = item { bad.append(r) } else { good += 1 }
        }
        #expect(good == 19)
        #expect(bad.count == 3)
    }
}
