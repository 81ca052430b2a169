import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// The CSV a `poi export --format csv` writes, the GDAL `.csvt` it reads and writes,
/// and the `json` column type, byte for byte.
@Suite(.tags(.unit)) struct CSVWriterTests {
    static func written(_ dialect: CSVDialect = .csv, _ rows: [[(String, Bool)]]) throws -> String {
        var w = CSVWriter(sink: MemorySink(), dialect: dialect)
        for row in rows {
            for (value, isText) in row { w.field(value, isText: isText) }
            try w.endRow()
        }
        try w.finish()
        return String(decoding: w.sink.bytes, as: UTF8.self)
    }

    @Test func fieldsAreQuotedOnlyWhenTheyMustBe() throws {
        let row = ["plain", "a,b", "say \"hi\"", "two\nlines", "cr\rhere", " lead", "trail\t", "", "ünï;|"].map { ($0, true) }
        #expect(try Self.written(.csv, [row])
                == "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rhere\",\" lead\",\"trail\t\",,ünï;|\n")
        // TSV: a tab is what needs quotes; a comma does not.
        #expect(try Self.written(.tsv, [[("a,b", true), ("c\td", true), ("\"", true)]]) == "a,b\t\"c\td\"\t\"\"\"\"\n")
    }

    @Test func excelGetsABOMCRLFAndFormulasAsTextButNumbersAsThey() throws {
        var excel = CSVDialect.csv
        excel.excel = true
        let text = try Self.written(excel, [[("=1+1", true), ("-3", false), ("+x", true), ("@SUM(A1)", true), ("-x", true), ("ok", true)],
                                            [("\tindent", true), ("2", false)]])
        #expect(Array(text.utf8.prefix(3)) == [0xEF, 0xBB, 0xBF])
        #expect(String(text.dropFirst()) == "'=1+1,-3,'+x,'@SUM(A1),'-x,ok\r\n'\tindent,2\r\n")
    }

    /// The longest row counts the values' bytes, as a reader's record limit does, not the quotes.
    @Test func theLongestRowCountsValueBytes() throws {
        var w = CSVWriter(sink: MemorySink())
        try w.row(["\"\"\"\"", "ab"])   // 4 quote characters, written as 10 bytes
        try w.row(["x"])
        #expect(w.longestRow == 6)
    }

    @Test func aLargeOutputIsWrittenWhole() throws {
        var w = CSVWriter(sink: MemorySink())
        for i in 0..<20_000 { try w.row(["row \(i)", "x,y"]) }
        try w.finish()
        let text = String(decoding: w.sink.bytes, as: UTF8.self)
        #expect(text.utf8.count == (0..<20_000).reduce(0) { $0 + "row \($1),\"x,y\"\n".utf8.count })
        #expect(text.hasSuffix("row 19999,\"x,y\"\n"))
    }

    @Test func csvtNamesReadAsGDALWritesThem() throws {
        #expect(CSVTypeSidecar.path(forCSV: "dir/places.csv") == "dir/places.csvt")
        // As GDAL names it: the last extension replaced.
        #expect(CSVTypeSidecar.path(forCSV: "places.CSV.gz") == "places.CSV.csvt")
        #expect(CSVTypeSidecar.path(forCSV: "p.tsv") == "p.csvt")
        #expect(CSVTypeSidecar.path(forCSV: "noext") == "noext.csvt")
        #expect(CSVTypeSidecar.path(forCSV: "a.b/noext") == "a.b/noext.csvt")
        #expect(CSVTypeSidecar.path(forCSV: ".hidden") == ".hidden.csvt")
        #expect(CSVTypeSidecar.path(forCSV: "-") == nil)
        let names = ["String", "integer", "Integer64", "Integer(Boolean)", "Integer(Int16)", "Real", "Real(Float32)", "Real(10.2)",
                     "Date", "DateTime", "Time", "String(JSON)", "String(20)", "JSONStringList", "WKT", "CoordX", "Point(Y)", "Nonsense"]
        #expect(names.map(CSVTypeSidecar.columnType(gdalName:)) == [nil, .int, .int, .bool, .int, .double, .double, .double,
                                                                     .date, .date, nil, .json, nil, .json, nil, nil, nil, nil])
        let types: [ColumnType?] = [nil, .int, .double, .bool, .date, .json, .string]
        #expect(CSVTypeSidecar.text(types)
                == "\"String\",\"Integer64\",\"Real\",\"Integer(Boolean)\",\"DateTime\",\"String(JSON)\",\"String\"\n")
        // What is written reads back as it was (text as nil).
        #expect(CSVTypeSidecar.text(types).dropLast().split(separator: ",").map { CSVTypeSidecar.columnType(gdalName: String($0.dropFirst().dropLast())) }
                == [nil, .int, .double, .bool, .date, .json, nil])
    }

    @Test func aJSONCellIsAnyJSONValueAndAnythingElseIsARejectReason() {
        #expect(ColumnType.json.value(text: "\"5\"") == .success(.string("5")))
        #expect(ColumnType.json.value(text: " 5 ") == .success(.integer(5)))
        #expect(ColumnType.json.value(text: "-0.0") == .success(.double(-0.0)))
        #expect(ColumnType.json.value(text: "null") == .success(.null))
        #expect(ColumnType.json.value(text: "[1,{\"a\":true}]")
                == .success(.array([.integer(1), .object(JSONObject([JSONMember("a", .bool(true))]))])))
        guard case .failure(let p) = ColumnType.json.value(text: "open") else { Issue.record("open is not JSON"); return }
        #expect(p.message.hasPrefix("typed json (--types): \"open\" is not a JSON value"), "\(p.message)")
        #expect(ColumnType(name: "JSON") == .json)
    }

    /// What ogr2ogr writes for a DateTime or Date field of a CSV with a `.csvt`.
    @Test func gdalDatesReadAsTheirISO8601() {
        #expect(ColumnType.gdalDateTime("2024/03/01 10:00:00+00") == "2024-03-01T10:00:00+00:00")
        #expect(ColumnType.gdalDateTime("2024/03/01 10:00:00.5+0530") == "2024-03-01T10:00:00.5+05:30")
        #expect(ColumnType.gdalDateTime("2024/03/01 10:00:00-03:00") == "2024-03-01T10:00:00-03:00")
        #expect(ColumnType.gdalDateTime("2024/03/01 10:00:00") == "2024-03-01T10:00:00Z")
        #expect(ColumnType.gdalDateTime("2024/03/01") == "2024-03-01")
        for bad in ["2024/3/1", "2024/03/01T10:00:00", "2024/03/01 10:00", "2024/03/01 10:00:00+0", "2024/03/01 10:00:00.+00"] {
            #expect(ColumnType.gdalDateTime(bad) == nil, "\(bad)")
        }
        #expect(ColumnType.date.value(text: "2024/03/01 10:00:00+00") == .success(.date(millisecondsSince1970: 1_709_287_200_000)))
    }

    /// A `""` cell is an empty text, a cell with nothing in it no value, in PoiKit's own CSV
    /// exports (and only there: elsewhere both are "").
    @Test func quotedEmptyAndNothingDifferOnlyInAPoiKitExport() throws {
        let export = "id,name,lat,lon,importKey,created_at,updated_at,note,hours\n1,A,1,2,k1,,,\"\",x\n2,B,1,2,k2,,,,\n"
        let (places, _) = try readAll(export)
        #expect(places.map(\.extra) == [
            JSONObject([JSONMember("note", .string("")), JSONMember("hours", .string("x"))]),
            JSONObject(),
        ])
        let plain = "id,name,lat,lon,note,hours\n1,A,1,2,\"\",x\n2,B,1,2,,\n"
        let (others, _) = try readAll(plain)
        #expect(others.map(\.extra) == [
            JSONObject([JSONMember("note", .string("")), JSONMember("hours", .string("x"))]),
            JSONObject([JSONMember("note", .string("")), JSONMember("hours", .string(""))]),
        ])
    }

    /// A `.csvt` beside the file types its extra columns, a blank typed cell is no value at all,
    /// and one with another number of columns is ignored, as GDAL ignores it.
    @Test func sidecarTypesApplyToExtraColumnsOnly() throws {
        var options = ReadOptions()
        options.sidecarTypes = [nil, .double, .double, .int, .json, .bool]
        options.sidecarName = "t.csvt"
        let csv = "name,lat,lon,pop,labels,open\nA,1,2,12,\"[\"\"x\"\"]\",true\nB,1,2,,,\n"
        let (places, rejects) = try readAll(csv, options: options)
        #expect(rejects == [])
        #expect(places.map(\.extra) == [
            JSONObject([JSONMember("pop", .integer(12)), JSONMember("labels", .array([.string("x")])), JSONMember("open", .bool(true))]),
            JSONObject(),
        ])
        options.sidecarTypes = [nil, .double, .double, .int]
        let (untyped, _) = try readAll(csv, options: options)
        #expect(untyped.first?.extra["pop"] == .string("12"))
    }
}
