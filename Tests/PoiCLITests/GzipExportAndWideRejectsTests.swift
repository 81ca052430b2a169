import Foundation
import PoiTestSupport
import Testing

/// An empty export to an existing `.gz` behaves exactly as to a plain file
/// (`--allow-empty`), and a UTF-16 rejects file written without a BOM (its input had none) is
/// recognised as a rejects file.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct GzipExportAndWideRejectsTests {
    @Test func anEmptyExportTreatsAGzipFileAsItsContent() throws {
        let ws = try Workspace("gz-empty")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)
        #expect(try ws.poi(["export", "-o", "keep.geojson.gz", "--quiet"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson.gz")))
        let r = try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson.gz"])
        #expect(r.status == 2, "\(r.all)")
        #expect(r.stderr == "poi: no places matched, and the empty result would replace keep.geojson.gz, which is not empty; "
                + "left as it was. Give --allow-empty to replace it with the empty result.\n", "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson.gz"))) == before)
        let allowed = try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson.gz", "--allow-empty", "--quiet"])
        #expect(allowed.status == 0, "\(allowed.all)")
        let plainEmpty = try ws.poi(["export", "--category", "no-such-category", "--quiet"]).stdout
        #expect(try PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/gzip"), ["-dc", ws.path("keep.geojson.gz")]).stdout == plainEmpty)
        // An empty export over an empty one (a nightly run with nothing to say) needs nothing,
        // gzip'd as plain; so does an empty gzip file (no member).
        let again = try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson.gz"])
        #expect(again.status == 0, "\(again.all)")
        try Data().write(to: URL(fileURLWithPath: ws.path("zero.geojson.gz")))
        #expect(try ws.poi(["export", "--category", "no-such-category", "-o", "zero.geojson.gz", "--quiet"]).status == 0)
    }

    @Test func aUTF16RejectsFileWithoutABOMIsRecognised() throws {
        let ws = try Workspace("u16-nobom")
        defer { ws.cleanUp() }
        let plain = try Data(contentsOf: URL(fileURLWithPath: ws.path("Samples/places.csv")))
        let text = try #require(String(data: plain, encoding: .utf8))
        try #require(text.data(using: .utf16LittleEndian)).write(to: URL(fileURLWithPath: ws.path("Samples/wide.csv")))
        let r = try ws.poi(["import", "Samples/wide.csv", "--encoding", "utf-16le", "--quiet"])
        #expect(r.status == 1, "\(r.stderr)")
        let rejects = try #require(FileManager.default.contents(atPath: ws.path("Samples/wide.rejects.csv")))
        #expect(Array(rejects.prefix(4)) == Array("id".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }), "no BOM, as its input")
        // Among other inputs (a glob), it is skipped as the import's own rejects file.
        let again = try ws.poi(["import", "Samples/wide.csv", "Samples/wide.rejects.csv", "--encoding", "utf-16le", "--json", "--quiet"])
        #expect(again.status == 1, "\(again.stderr)")
        let json = try ws.json(again)
        #expect(json["skippedRejectsFiles"] as? [String] == ["Samples/wide.rejects.csv"], "\(again.stdout)")
        #expect(int(json, "files") == 1)
    }
}
