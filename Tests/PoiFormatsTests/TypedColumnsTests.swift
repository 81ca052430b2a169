import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// `--types population=int,elevation=double,opened=date` types columns kept under
/// extra (a CSV cell is otherwise text), with typed rejects; `--ignore-blanks` leaves blank cells
/// out. GeoJSON string properties are read as their type, so an export's ISO dates come back as dates.
@Suite(.tags(.unit)) struct TypedColumnsTests {
    static func options(_ types: [(String, ColumnType)], ignoreBlanks: Bool = false) -> ReadOptions {
        var o = ReadOptions()
        for (name, type) in types { o.columnTypes.add(name, type) }
        o.ignoreBlanks = ignoreBlanks
        return o
    }

    static let all: [(String, ColumnType)] = [("population", .int), ("elevation", .double), ("opened", .date),
                                               ("open", .bool), ("code", .string)]

    @Test func typedCellsBecomeTypedValues() throws {
        let csv = "name,lat,lon,population,elevation,opened,open,code,note\n"
            + "A,1,2,1200, 35.5 ,2024-03-01,Yes,007,x\n"
            + "B,1,2,-3,2,2024-03-01T10:00:00+02:00,0,,\n"
            + "C,1,2,99999999999999999999,\"1,5\",2024-03-01T10:00:00.5Z,FALSE, ,\n"
        let (places, rejects) = try readAll(csv, options: Self.options(Self.all))
        #expect(rejects == [])
        #expect(places.map(\.extra) == [
            JSONObject([JSONMember("population", .integer(1200)), JSONMember("elevation", .double(35.5)),
                        JSONMember("opened", .date(millisecondsSince1970: 1_709_251_200_000)), JSONMember("open", .bool(true)),
                        JSONMember("code", .string("007")), JSONMember("note", .string("x"))]),
            JSONObject([JSONMember("population", .integer(-3)), JSONMember("elevation", .double(2)),
                        JSONMember("opened", .date(millisecondsSince1970: 1_709_280_000_000)), JSONMember("open", .bool(false)),
                        JSONMember("code", .string("")), JSONMember("note", .string(""))]),
            JSONObject([JSONMember("population", .bigInteger("99999999999999999999")), JSONMember("elevation", .double(1.5)),
                        JSONMember("opened", .date(millisecondsSince1970: 1_709_287_200_500)), JSONMember("open", .bool(false)),
                        JSONMember("code", .string(" ")), JSONMember("note", .string(""))]),
        ])
    }

    @Test func blankTypedCellsAreNullOrLeftOut() throws {
        let csv = "name,lat,lon,population,note\nA,1,2,,\nB,1,2, ,n\nC,1,2\n"
        let (places, _) = try readAll(csv, options: Self.options([("population", .int)]))
        #expect(places.map(\.extra) == [
            JSONObject([JSONMember("population", .null), JSONMember("note", .string(""))]),
            JSONObject([JSONMember("population", .null), JSONMember("note", .string("n"))]),
            JSONObject([JSONMember("population", .null), JSONMember("note", .string(""))]),
        ])
        let (kept, _) = try readAll(csv, options: Self.options([("population", .int)], ignoreBlanks: true))
        #expect(kept.map(\.extra) == [JSONObject(), JSONObject([JSONMember("note", .string("n"))]), JSONObject()])
        // Without types too: blank text cells are left out, others kept as written.
        let (plain, _) = try readAll("name,lat,lon,a,b\nA,1,2, x ,\n", options: Self.options([], ignoreBlanks: true))
        #expect(plain.map(\.extra) == [JSONObject([JSONMember("a", .string(" x "))])])
    }

    @Test func aValueNotOfItsTypeRejectsTheRowNamingTheColumn() throws {
        let csv = "name,lat,lon,population,elevation,opened,open\n"
            + "A,1,2,12a,1,2024-01-01,true\n"
            + "B,1,2,1.5,1,2024-01-01,true\n"
            + "C,1,2,1,1e400,2024-01-01,true\n"
            + "D,1,2,1,1,2024-02-30,true\n"
            + "E,1,2,1,1,12/03/2024,true\n"
            + "F,1,2,1,1,2024-01-01T10:00,true\n"
            + "G,1,2,1,1,2024-01-01,maybe\n"
            + "H,1,2,1,NaN,2024-01-01,true\n"
            + "I,1,2,1,1,2024-01-01,true\n"
        let (places, rejects) = try readAll(csv, options: Self.options(Array(Self.all.prefix(4))))
        #expect(places.map(\.name) == ["I"])
        #expect(rejects.map { "\($0.source.position) \($0.field ?? "-"): \($0.reason)" } == [
            #"line(2) population: typed int (--types): "12a" is not an integer"#,
            #"line(3) population: typed int (--types): "1.5" is not an integer"#,
            #"line(4) elevation: typed double (--types): "1e400" is not a number (out of range)"#,
            #"line(5) opened: typed date (--types): "2024-02-30" is not an ISO 8601 date (2024-03-01 or 2024-03-01T14:30:00Z)"#,
            #"line(6) opened: typed date (--types): "12/03/2024" is not an ISO 8601 date (2024-03-01 or 2024-03-01T14:30:00Z)"#,
            #"line(7) opened: typed date (--types): "2024-01-01T10:00" is not an ISO 8601 date (2024-03-01 or 2024-03-01T14:30:00Z)"#,
            #"line(8) open: typed bool (--types): "maybe" is not true or false"#,
            #"line(9) elevation: typed double (--types): "NaN" is not a number"#,
        ])
    }

    @Test func aTypeForAColumnTheFileCannotTypeStopsTheFile() throws {
        let csv = "name,lat,lon,population\nA,1,2,1\n"
        #expect(throws: FormatError.typedColumn(file: "t.csv", name: "popluation",
                                                reason: "no column popluation in this file (its extra columns: population)")) {
            _ = try readAll(csv, options: Self.options([("popluation", .int)]))
        }
        #expect(throws: FormatError.typedColumn(file: "t.csv", name: "lat",
                                                reason: "column lat is read as the place's latitude, which has its own type; --types applies to columns kept under extra")) {
            _ = try readAll(csv, options: Self.options([("lat", .double)]))
        }
        // A column named like a field but kept under extra (another column took the field) can be typed.
        let (places, _) = try readAll("name,lat,lon,y\nA,1,2,5\n", options: Self.options([("y", .int)]))
        #expect(places.first?.extra == JSONObject([JSONMember("y", .integer(5))]))
    }

    @Test func geoJSONPropertiesAreReadAsTheirType() throws {
        let geojson = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"A","population":"1200","elevation":3,"opened":"2024-03-01T00:00:00.000Z","open":"yes","code":"007"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"B","population":1200,"elevation":3.5,"opened":null,"open":false,"code":"x"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"C","population":5.0,"elevation":"1e3","code":"y"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"D","population":true}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"E","code":7}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"F","population (extra)":"x"}}
        ]}
        """
        let (places, rejects) = try readAll(geojson, name: "t.geojson", options: Self.options(Self.all))
        #expect(places.map(\.extra) == [
            JSONObject([JSONMember("population", .integer(1200)), JSONMember("elevation", .double(3)),
                        JSONMember("opened", .date(millisecondsSince1970: 1_709_251_200_000)), JSONMember("open", .bool(true)),
                        JSONMember("code", .string("007"))]),
            JSONObject([JSONMember("population", .integer(1200)), JSONMember("elevation", .double(3.5)),
                        JSONMember("opened", .null), JSONMember("open", .bool(false)), JSONMember("code", .string("x"))]),
            JSONObject([JSONMember("population", .integer(5)), JSONMember("elevation", .double(1000)), JSONMember("code", .string("y"))]),
        ])
        #expect(rejects.map { "\($0.source.position) \($0.field ?? "-"): \($0.reason)" } == [
            "feature(3) population: typed int (--types): expected an integer (got a boolean)",
            "feature(4) code: typed string (--types): expected text (got a number)",
            // An export's "NAME (extra)" is typed by the name it is kept under.
            #"feature(5) population: typed int (--types): "x" is not an integer"#,
        ])
    }

    @Test func typeNamesReadAsMongoimportAndGDALWriteThem() {
        #expect(ColumnType(name: "int64") == .int && ColumnType(name: "Integer") == .int && ColumnType(name: "long") == .int)
        #expect(ColumnType(name: "Real") == .double && ColumnType(name: "boolean") == .bool && ColumnType(name: "DateTime") == .date)
        #expect(ColumnType(name: "int8") == nil && ColumnType(name: "") == nil)
    }
}
