import Foundation
import PoiFormats
import PoiModel
import PoiTestSupport
import Testing
@testable import PoiJobs

/// `RejectsWriter` over raw records: what it adds to a record's bytes, and nothing else.
@Suite(.tags(.unit)) struct LosslessRejectsWriterTests {
    /// Writes `rejects` with `style` and returns the file's bytes.
    func written(_ style: RejectsWriter.Style, _ rejects: [(Reject, RawRecord?)]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-rejects-\(UUID().uuidString)").path
        defer { unlink(path) }
        let writer = RejectsWriter(path: path, style: style)
        for (reject, raw) in rejects { try writer.add(reject, raw: raw) }
        try writer.finish()
        return String(decoding: try #require(FileManager.default.contents(atPath: path)), as: UTF8.self)
    }

    func csvReject(line: Int, field: String?, reason: String) -> Reject {
        Reject(source: PlaceSource(file: "in.csv", record: line - 1, position: .line(line)), field: field, reason: reason)
    }

    func featureReject(_ index: Int, field: String?, reason: String) -> Reject {
        Reject(source: PlaceSource(file: "in.geojson", record: index + 1, position: .feature(index)), field: field, reason: reason)
    }

    @Test func csvEdgesOfARecord() throws {
        let header = RawCSVRecord(bytes: Array("\u{FEFF}name,lat,lon\r\n".utf8), lineEndLength: 2, fieldCount: 3)
        let text = try written(.csv(header: header, delimiter: UInt8(ascii: ",")), [
            // The file ended inside quotes: the quote is closed, so the reasons stay columns.
            (csvReject(line: 2, field: nil, reason: "unterminated quoted field"),
             .csv(RawCSVRecord(bytes: Array("a,1,\"open\nend".utf8), lineEndLength: 0, fieldCount: 3, unterminatedQuote: true))),
            // Over the size limits: no raw bytes, empty fields.
            (csvReject(line: 4, field: nil, reason: "record exceeds the limit"), nil),
            // A lone CR stays a lone CR; extra fields stay, the reasons come after them.
            (csvReject(line: 5, field: nil, reason: "record has 4 fields, header has 3"),
             .csv(RawCSVRecord(bytes: Array("b,1,2,x\r".utf8), lineEndLength: 1, fieldCount: 4))),
        ])
        #expect(text == "\u{FEFF}name,lat,lon,_line,_field,_reason\r\n"
            + "a,1,\"open\nend\",2,,unterminated quoted field\r\n"
            + ",,,4,,record exceeds the limit\r\n"
            + "b,1,2,x,5,,\"record has 4 fields, header has 3\"\r")
    }

    @Test func geojsonReasonsAreSplicedIntoTheFeaturesBytes() throws {
        let features = [
            // Properties already holding reasons (a rejects file rejected again): replaced.
            #"{"type":"Feature", "properties": {"_reason": "old", "name": "A", "_field": null, "n": 1.50}, "geometry": null}"#,
            // Properties null: an object takes its place.
            #"{"type":"Feature","properties" : null,"geometry":null}"#,
            // Not JSON: kept whole, as a string.
            #"{"type":"Feature","x":tru}"#,
            // JSON, but no object: kept whole, verbatim.
            #"[1, 2.50]"#,
            // Properties of another type: kept whole, verbatim.
            #"{"type":"Feature","properties":"text"}"#,
            // An empty feature: the properties become its only member.
            #"{ }"#,
        ]
        var rejects: [(Reject, RawRecord?)] = features.enumerated().map { k, f in
            (featureReject(k, field: nil, reason: "r\(k)"), .feature(Array(f.utf8)))
        }
        rejects.append((featureReject(6, field: "type", reason: "too large"), nil))
        let text = try written(.geojson, rejects)
        let r = { (k: Int) in #""_feature":\#(k),"_field":null,"_reason":"r\#(k)""# }
        #expect(text == #"{"type":"FeatureCollection","features":["# + "\n"
            + #"{"type":"Feature", "properties": {"name": "A","n": 1.50,"# + r(0) + #"}, "geometry": null}"# + ",\n"
            + #"{"type":"Feature","properties" : {"# + r(1) + #"},"geometry":null}"# + ",\n"
            + #"{"type":"Feature","geometry":null,"properties":{"# + r(2) + #","_original":"{\"type\":\"Feature\",\"x\":tru}"}}"# + ",\n"
            + #"{"type":"Feature","geometry":null,"properties":{"# + r(3) + #","_original":[1, 2.50]}}"# + ",\n"
            + #"{"type":"Feature","geometry":null,"properties":{"# + r(4) + #","_original":{"type":"Feature","properties":"text"}}}"# + ",\n"
            + #"{"properties":{"# + r(5) + "} }" + ",\n"
            + #"{"type":"Feature","geometry":null,"properties":{"_feature":6,"_field":"type","_reason":"too large"}}"#
            + "\n]}\n")
    }
}
