import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

private func feature(_ id: String?, _ geometry: String, _ props: String) -> String {
    "{\"type\":\"Feature\",\(id.map { "\"id\":\($0)," } ?? "")\"geometry\":\(geometry),\"properties\":\(props)}"
}
private let point = "{\"type\":\"Point\",\"coordinates\":[2.35,48.85]}"

@Suite(.tags(.unit)) struct GeoJSONReaderTests {
    @Test func featureCollectionWithMixedGeometriesAndIds() throws {
        let features = [
            feature("\"a-1\"", point, #"{"name":"A","categories":["x","y","x"],"nested":{"k":[1,2.5,null,true]}}"#),
            feature("17", point, #"{"title":"B","tags":"p;q"}"#),
            feature(nil, #"{"type":"LineString","coordinates":[[0,0],[1,1]]}"#, #"{"name":"L"}"#),
            feature(nil, "null", #"{"name":"N"}"#),
            #"{"type":"Feature","properties":{"name":"M"}}"#,
            feature("{}", point, #"{"name":"O"}"#),
            feature(nil, #"{"type":"Point","coordinates":[200,0]}"#, #"{"name":"R"}"#),
            feature(nil, #"{"type":"Point","coordinates":[1,2,3]}"#, #"{"name":"Z","id":"pid"}"#),
        ]
        let doc = #"{"type":"FeatureCollection","crs":{"x":1},"features":["# + features.joined(separator: ",\n") + "]}"
        let (places, rejects) = try readAll(doc, name: "t.geojson")
        #expect(places.map(\.name) == ["A", "B", "Z"])
        #expect(places.map(\.importKey) == ["a-1", "17", "pid"])
        #expect(places[0].categories == ["x", "y"])
        #expect(places[0].extra == JSONObject([JSONMember("nested", .object(JSONObject([
            JSONMember("k", .array([.integer(1), .double(2.5), .null, .bool(true)]))])))]))
        #expect(places[1].categories == ["p", "q"])
        #expect(rejects.map(\.reason) == [
            "geometry type LineString not supported, Point required",
            "geometry null, Point required",
            "geometry missing, Point required",
            "id must be a string or a number, got object",
            "longitude 200 out of range [-180, 180]",
        ])
        #expect(rejects.map { $0.source.feature! } == [2, 3, 4, 5, 6])
        #expect(places.map { $0.source.feature! } == [0, 1, 7])
    }

    @Test func singleFeatureAndSequences() throws {
        let f1 = feature("1", point, #"{"name":"One"}"#)
        let f2 = feature("2", point, #"{"name":"Two"}"#)
        #expect(try readAll(f1, name: "f.json").places.count == 1)
        // RFC 8142, with one broken text in the middle: skipped, reading resumes at the next RS.
        let seq = "\u{1E}" + f1 + "\n\u{1E}{\"type\":\"Feature\",\"geometry\":\n\u{1E}" + f2 + "\n"
        let (p, r) = try readAll(seq, name: "s.geojsons")
        #expect(p.map(\.name) == ["One", "Two"])
        #expect(r.count == 1)
        #expect(r[0].reason.hasPrefix("malformed JSON text at byte"))
        // Newline-delimited features.
        let nd = f1 + "\n" + f2 + "\n"
        #expect(try readAll(nd, name: "n.ndjson").places.map(\.name) == ["One", "Two"])
    }

    @Test func hostileFeatures() throws {
        var limits = ReadLimits()
        limits.maxFeatureBytes = 10_000
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let features = [
            feature(nil, point, #"{"name":"dup","name":"again"}"#),
            feature(nil, #"{"type":"Point","coordinates":[1e400,0]}"#, #"{"name":"big"}"#),
            feature(nil, point, "{\"name\":\"deep\",\"d\":\(deep)}"),
            feature(nil, point, "{\"name\":\"" + String(repeating: "y", count: 20_000) + "\"}"),
            feature(nil, point, #"{"name":"esc\u0000ok","bad":"\ud800"}"#),
            feature(nil, point, "{\"name\":\"ctl\ttab\"}"),
            feature(nil, point, #"{"name":"Fine \u00e9\ud83d\ude00"}"#),
        ]
        var bytes = Array((#"{"type":"FeatureCollection","features":["# + features.joined(separator: ",")).utf8)
        bytes += Array((",\n" + feature(nil, point, #"{"name":"X"}"#)).utf8)
        bytes.insert(contentsOf: [0xC3, 0x28], at: bytes.count - 3)  // invalid UTF-8 inside "X"
        bytes += Array("]}".utf8)
        let (places, rejects) = try readAll(bytes: bytes, name: "h.geojson", options: ReadOptions(limits: limits))
        #expect(places.map(\.name) == ["Fine é😀"])
        try #require(rejects.count == 7)
        #expect(rejects[0].reason.hasPrefix("invalid JSON: duplicate key \"name\""))
        #expect(rejects[1].reason.hasPrefix("invalid JSON: number 1e400 is out of range"))
        #expect(rejects[2].reason.hasPrefix("invalid JSON: nesting deeper than 64 levels"))
        #expect(rejects[3].reason.hasPrefix("feature is "))
        #expect(rejects[4].reason.hasPrefix("invalid JSON: lone surrogate"))
        #expect(rejects[5].reason.hasPrefix("invalid JSON: raw control character"))
        #expect(rejects[6].reason.hasPrefix("invalid JSON: string is not valid UTF-8"))
    }

    @Test func largeCollectionKeepsOrderAcrossParallelBatches() throws {
        // Enough features for several batches converted on all cores; every 7th one is bad.
        var parts: [String] = []
        for i in 0..<9000 {
            let lat = i % 7 == 3 ? "95" : "\(Double(i % 180) - 89.5)"
            parts.append(feature("\(i)", "{\"type\":\"Point\",\"coordinates\":[1.5,\(lat)]}", "{\"name\":\"n\(i)\",\"k\":\(i)}"))
        }
        let doc = #"{"type":"FeatureCollection","features":["# + parts.joined(separator: ",") + "]}"
        let (p, r) = try readAll(doc, name: "big.geojson")
        let bad = (0..<9000).filter { $0 % 7 == 3 }
        #expect(r.count == bad.count)
        #expect(p.count == 9000 - bad.count)
        #expect(r.map { $0.source.feature! } == bad)
        #expect(p.map(\.importKey) == (0..<9000).filter { $0 % 7 != 3 }.map(String.init))
        #expect(p.map { $0.source.record } == (0..<9000).filter { $0 % 7 != 3 }.map { $0 + 1 })
    }

    @Test func brokenFramingStopsWithOneReject() throws {
        let doc = #"{"type":"FeatureCollection","features":["# + feature(nil, point, #"{"name":"A"}"#) + " " + feature(nil, point, #"{"name":"B"}"#) + "]}"
        let (p, r) = try readAll(doc, name: "b.geojson")
        #expect(p.map(\.name) == ["A"])
        #expect(r.count == 1)
        #expect(r[0].reason.contains("expected ',' or ']' between features"))
        #expect(r[0].source.feature == 1 && r[0].source.record == 2)
        let truncated = #"{"type":"FeatureCollection","features":["# + feature(nil, point, #"{"name":"A"}"#) + #",{"type":"Feat"#
        let (p2, r2) = try readAll(truncated, name: "t.geojson")
        #expect(p2.count == 1)
        #expect(r2.map { $0.source.feature! } == [1])
        #expect(r2.first?.reason.contains("unexpected end of file inside a value") == true)
    }

    @Test func topLevelGeometryIsRejected() throws {
        let (p, r) = try readAll(#"{"type":"Point","coordinates":[1,2]}"#, name: "p.geojson")
        #expect(p.isEmpty)
        #expect(r.map(\.reason) == ["top-level type Point not supported; FeatureCollection, Feature or a sequence of Features required"])
    }

    @Test func samplesLandmarks() throws {
        let reader = try PlaceReader(path: repoRoot + "/Samples/landmarks.geojson")
        var good = 0, bad: [Reject] = []
        while let item = try reader.next() {
            if case .reject(let r, _) = item { bad.append(r) } else { good += 1 }
        }
        #expect(good == 13)
        #expect(bad.count == 2)
    }
}
