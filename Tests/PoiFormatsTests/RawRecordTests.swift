import PoiTestSupport
import Testing
@_spi(Fuzzing) @testable import PoiFormats
import PoiModel

/// `ReadOptions.keepRawRecords`: every item carries its record's bytes exactly as they are in the
/// input, whatever the read sizes (a pipe's short reads put chunk boundaries anywhere).
@Suite(.tags(.unit)) struct RawRecordTests {
    static let keep = ReadOptions(keepRawRecords: true)
    /// Read sizes that put a boundary on every byte of the small inputs below, and the real one.
    static let sizes = Array(1...17) + [64, ByteSource.chunkSize]

    /// Every item's raw record, read with `size`-byte reads and one worker, as the fuzz oracle's
    /// second read does; the first element is the production read (`PlaceReader`, batches on
    /// worker threads).
    static func raws(_ input: [UInt8], format: InputFormat, size: Int, options: ReadOptions = keep) throws -> [RawRecord?] {
        let source = ByteSource(bytes: input, name: "t.\(format.rawValue)", chunkSize: size)
        var out: [RawRecord?] = []
        switch format {
        case .csv:
            let reader = try CSVPlaceReader(source: source, options: options, parallelism: 1)
            while let item = try reader.next() { out.append(item.raw) }
        case .geojson:
            let reader = try GeoJSONReader(source: source, options: options)
            while let item = try reader.next() { out.append(item.raw) }
        }
        return out
    }

    static func csv(_ text: String, _ lineEnd: Int, fields: Int, unterminated: Bool = false) -> RawRecord {
        .csv(RawCSVRecord(bytes: Array(text.utf8), lineEndLength: lineEnd, fieldCount: fields, unterminatedQuote: unterminated))
    }

    @Test func csvRecordsAreTheirInputBytes() throws {
        let header = "\u{FEFF}name,\"lat\",lon,note\r\n"
        let r1 = "A,51.50,-0.10,plain\r\n"
        let r2 = "\"B \"\"q\"\"\",\"48,85\",2,\"multi\r\nline\"\n"
        let r3 = "C,abc,1,x\r"        // a lone CR ends it; rejected (latitude)
        let r4 = "D,1,2,ü 🗽\n"
        let r5 = "\"E\",3,4,"           // the last line, without a line end
        // Blank lines between records belong to no record.
        let input = Array((header + r1 + "\r\n" + r2 + r3 + r4 + "\n" + r5).utf8)
        let expected: [RawRecord?] = [Self.csv(r1, 2, fields: 4), Self.csv(r2, 1, fields: 4), Self.csv(r3, 1, fields: 4),
                                      Self.csv(r4, 1, fields: 4), Self.csv(r5, 0, fields: 4)]
        for size in Self.sizes {
            #expect(try Self.raws(input, format: .csv, size: size) == expected, "reads of \(size)")
            let reader = try CSVPlaceReader(source: ByteSource(bytes: input, name: "t.csv", chunkSize: size), options: Self.keep)
            #expect(reader.rawHeader == RawCSVRecord(bytes: Array(header.utf8), lineEndLength: 2, fieldCount: 4), "reads of \(size)")
            #expect(ReadConsistency.read(input, as: .csv, chunkSize: size, options: Self.keep).agree)
        }
        // The production read, places and rejects alike.
        let reader = try PlaceReader(source: ByteSource(bytes: input, name: "t.csv"), options: Self.keep)
        var items: [ReadItem] = []
        while let item = try reader.next() { items.append(item) }
        #expect(items.map(\.raw) == expected)
        #expect(items.map { $0.reject?.field } == [nil, nil, "latitude", nil, nil])
        #expect(items.map { $0.place?.source.line ?? $0.reject?.source.line } == [2, 4, 6, 7, 9])
        #expect(reader.csvRawHeader?.bytes == Array(header.utf8))
        // `poi check` sees the same rejects with the same raw bytes.
        var valid = 0, rejected: [RawRecord?] = []
        try PlaceReader(source: ByteSource(bytes: input, name: "t.csv"), options: Self.keep)
            .validateRemaining(valid: &valid) { _, raw in rejected.append(raw) }
        #expect(valid == 4 && rejected == [expected[2]])
    }

    @Test func csvReaderRejectsAreTheirInputBytes() throws {
        // Wrong field count, invalid UTF-8, a NUL, and a quote the file ends inside.
        let rows: [[UInt8]] = [Array("a,1\n".utf8), Array("b,1,2,x\n".utf8), [0x63, 0xFF, 0x2C, 0x31, 0x2C, 0x32, 0x0A],
                               Array("d,1,\u{0}\n".utf8), Array("e,1,\"open\nend".utf8)]
        let input = Array("name,lat,lon\n".utf8) + rows.joined()
        let expected: [RawRecord?] = [
            .csv(RawCSVRecord(bytes: rows[0], lineEndLength: 1, fieldCount: 2)),
            .csv(RawCSVRecord(bytes: rows[1], lineEndLength: 1, fieldCount: 4)),
            .csv(RawCSVRecord(bytes: rows[2], lineEndLength: 1, fieldCount: 3)),
            .csv(RawCSVRecord(bytes: rows[3], lineEndLength: 1, fieldCount: 3)),
            .csv(RawCSVRecord(bytes: rows[4], lineEndLength: 0, fieldCount: 3, unterminatedQuote: true)),
        ]
        for size in Self.sizes {
            #expect(try Self.raws(input, format: .csv, size: size) == expected, "reads of \(size)")
        }
        let (places, rejects) = try readAll(bytes: input, options: Self.keep)
        #expect(places.isEmpty && rejects.count == 5)
    }

    @Test func withoutKeepRawRecordsNothingIsCopied() throws {
        let input = Array("name,lat,lon\nA,1,2\nB,x,2\n".utf8)
        #expect(try Self.raws(input, format: .csv, size: 3, options: ReadOptions()) == [nil, nil])
        let geo = Array(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"A"}}]}"#.utf8)
        #expect(try Self.raws(geo, format: .geojson, size: 3, options: ReadOptions()) == [nil])
        // The header is kept either way: it is one line, and the rejects file needs it.
        let reader = try CSVPlaceReader(source: ByteSource(bytes: input, name: "t.csv"))
        #expect(reader.rawHeader.bytes == Array("name,lat,lon\n".utf8))
    }

    @Test func csvRecordsOverTheLimitGiveNoRawBytes() throws {
        var options = Self.keep
        options.limits.maxRecordBytes = 16
        options.limits.maxFields = 4
        let input = Array("name,lat,lon\n\"\(String(repeating: "q", count: 20))\",1,2\na,1,2,,,,\nB,\"1\",2\r\n".utf8)
        for size in Self.sizes {
            #expect(try Self.raws(input, format: .csv, size: size, options: options)
                    == [nil, nil, Self.csv("B,\"1\",2\r\n", 2, fields: 3)], "reads of \(size)")
        }
    }

    @Test func blankLineBeforeAQuotedFieldKeepsItQuoted() throws {
        // After a blank line the next record starts a field: its quote opens a quoted field.
        let (places, rejects) = try readAll("name,lat,lon\n\n\"A, quoted\",1,2\r\n\r\n\"B\",3,4\n")
        #expect(rejects.isEmpty)
        #expect(places.map(\.name) == ["A, quoted", "B"])
    }

    @Test func geojsonFeaturesAreTheirInputBytes() throws {
        let f1 = """
        { "properties" : { "name":"Zero", "nested": {"b": [1, 2.50, {"c": "}]\\""}], "a": "x"}, "n": 51.50 },
            "geometry": {"coordinates": [ -0.0, 51.50 ], "type": "Point"},
            "type": "Feature" }
        """
        let f2 = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1e1,2.0E0]},"properties":{}}"#
        let f3 = #"{"type":"Feature","x":tru}"#   // brackets balance, JSON does not: a reject
        let input = Array(("{\"type\": \"FeatureCollection\", \"features\": [\n  " + f1 + " ,\n" + f2 + ",\t" + f3 + "\n]}\n").utf8)
        let expected: [RawRecord?] = [.feature(Array(f1.utf8)), .feature(Array(f2.utf8)), .feature(Array(f3.utf8))]
        for size in Self.sizes {
            #expect(try Self.raws(input, format: .geojson, size: size) == expected, "reads of \(size)")
            #expect(ReadConsistency.read(input, as: .geojson, chunkSize: size, options: Self.keep).agree)
        }
    }

    @Test func geojsonTopLevelFeaturesAreTheirInputBytes() throws {
        // RFC 8142 sequences and single Features are read member by member, across compactions
        // of the reader's buffer: their bytes are gathered on the way.
        let f1 = #"{"id": 7, "type":"Feature","properties":{"name":"Seq","tags":"a|b"},"geometry":{"type":"Point","coordinates":[2.50,-0.0]}}"#
        let f2 = "{ \"type\" : \"Feature\",\n \"foreign\": [1, {\"deep\": true}], \"geometry\":null }"
        let f3 = #"{"type":"Feature","properties":{"name":"dup","name":"twice"},"geometry":{"type":"Point","coordinates":[1,2]}}"#
        let seq = Array(("\u{1E}" + f1 + "\n\u{1E}" + f2 + "\n\u{1E}" + f3 + "\n").utf8)
        let expected: [RawRecord?] = [.feature(Array(f1.utf8)), .feature(Array(f2.utf8)), .feature(Array(f3.utf8))]
        for size in Self.sizes {
            #expect(try Self.raws(seq, format: .geojson, size: size) == expected, "reads of \(size)")
            #expect(ReadConsistency.read(seq, as: .geojson, chunkSize: size, options: Self.keep).agree)
        }
        let single = Array(("\u{FEFF}  \n" + f1 + "\n").utf8)
        for size in Self.sizes {
            #expect(try Self.raws(single, format: .geojson, size: size) == [.feature(Array(f1.utf8))], "reads of \(size)")
        }
    }

    @Test func geojsonFeaturesOverTheLimitGiveNoRawBytes() throws {
        var options = Self.keep
        options.limits.maxFeatureBytes = 100
        let big = #"{"type":"Feature","properties":{"name":""# + String(repeating: "x", count: 200) + #""},"geometry":null}"#
        let small = #"{"type":"Feature","properties":{"name":"S"},"geometry":{"type":"Point","coordinates":[1,2]}}"#
        let collection = Array(("{\"type\":\"FeatureCollection\",\"features\":[" + big + "," + small + "]}").utf8)
        let seq = Array(("\u{1E}" + big + "\n\u{1E}" + small + "\n").utf8)
        for size in Self.sizes {
            #expect(try Self.raws(collection, format: .geojson, size: size, options: options) == [nil, .feature(Array(small.utf8))], "reads of \(size)")
            #expect(try Self.raws(seq, format: .geojson, size: size, options: options) == [nil, .feature(Array(small.utf8))], "reads of \(size)")
        }
    }

    /// The fuzz oracle over inputs made of the bytes that matter to framing, with a fixed seed:
    /// raw bytes agree across read sizes and are slices of the input, in order.
    @Test func randomFramingBytesReadTheSameInPieces() {
        let alphabet = Array("ab,;\"\"\r\n\n{}[]:1.-\u{1E} ".utf8)
        let csvHead = Array("name,lat,lon\n".utf8)
        let geoHead = Array(#"{"type":"Feature","properties":{"name":"x"},"geometry":{"type":"Point","coordinates":[1,2]}}"#.utf8)
        var state: UInt64 = 13
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for round in 0..<400 {
            var body: [UInt8] = []
            for _ in 0..<(next() % 120) { body.append(alphabet[next() % alphabet.count]) }
            let format: InputFormat = round % 2 == 0 ? .csv : .geojson
            let input = (format == .csv ? csvHead : geoHead + [0x0A, 0x1E]) + body
            let reads = ReadConsistency.read(input, as: format, chunkSize: 1 + next() % 7)
            #expect(reads.agree, "\(format) \(String(decoding: input, as: UTF8.self).debugDescription): \(reads.difference)")
        }
    }
}
