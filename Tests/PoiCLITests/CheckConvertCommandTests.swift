import Foundation
import PoiTestSupport
import Testing

/// `poi check` and `poi convert` end to end: no database needed.
@Suite(.tags(.process)) struct CheckConvertCommandTests {
    static let samples = PoiProcess.repoRoot.appendingPathComponent("Samples")
    static var placesCSV: String { samples.appendingPathComponent("places.csv").path }
    static var landmarks: String { samples.appendingPathComponent("landmarks.geojson").path }

    static func tempDir(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-cli-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func checkSamplesListsEachRejectAndExits1() throws {
        let r = try PoiProcess.run(["check", Self.placesCSV, Self.landmarks])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("places.csv:22: record 20: latitude: latitude 95 out of range [-90, 90] (looks swapped: latitude 10, longitude 95 would fit; check which column is which)\n"))
        #expect(r.stdout.contains("places.csv:23: record 21: longitude: longitude \"abc\" is not a number\n"))
        #expect(r.stdout.contains("landmarks.geojson: feature 12 (record 13): geometry: geometry type LineString not supported, Point required\n"))
        #expect(r.stdout.contains("places.csv: 19 valid, 3 rejected\n"))
        #expect(r.stdout.contains("landmarks.geojson: 13 valid, 2 rejected\n"))
        #expect(r.stdout.hasSuffix("total: 32 valid, 5 rejected\n"))
    }

    @Test func checkJSONIsOneDocumentWithExactCounts() throws {
        let r = try PoiProcess.run(["check", "--json", Self.placesCSV, Self.landmarks])
        #expect(r.status == 1)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["valid"] as? Int == 32)
        #expect(o["rejected"] as? Int == 5)
        let rejects = try #require(o["rejects"] as? [[String: Any]])
        #expect(rejects.count == 5)
        #expect(rejects.compactMap { $0["field"] as? String } == ["name", "latitude", "longitude", "geometry", "geometry"])
        #expect(rejects.compactMap { $0["line"] as? Int } == [21, 22, 23])
        #expect(rejects.compactMap { $0["feature"] as? Int } == [12, 13])
    }

    @Test func checkExitCodes() throws {
        let dir = try Self.tempDir("check")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.csv")
        try Data("Title;Breite;Länge\nCafé;48,85;2,35\n".utf8).write(to: good)
        let ok = try PoiProcess.run(["check", good.path, "--field", "name=Title", "--field", "lat=Breite", "--field", "lon=Länge"])
        #expect(ok.status == 0, "\(ok.all)")
        #expect(ok.stdout == "\(good.path): 1 valid, 0 rejected\n")
        let missingColumn = try PoiProcess.run(["check", good.path])
        #expect(missingColumn.status == 2)
        #expect(missingColumn.stderr.contains("no name column (looked for name, title)") == false)
        #expect(missingColumn.stderr.contains("no latitude column"))
        let missing = try PoiProcess.run(["check", dir.appendingPathComponent("nope.csv").path])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot open: No such file or directory"))
        // Parsed by swift-argument-parser: the message names the option and --help lists the fields.
        for bad in ["colour=X", "name", "name=", "name=  "] {
            let badField = try PoiProcess.run(["check", good.path, "--field", bad])
            #expect(badField.status == 2, "\(bad)")
            #expect(badField.stderr.contains("The value '\(bad)' is invalid for '--field <field=column>'"), "\(badField.stderr)")
        }
        let twice = try PoiProcess.run(["check", good.path, "--field", "name=A", "--field", "name=B"])
        #expect(twice.status == 2)
        #expect(twice.stderr.contains("--field name=B: name is already mapped to 'A'"))
    }

    @Test func convertWritesValidGeoJSONAtomically() throws {
        let dir = try Self.tempDir("convert")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("places.geojson")
        let r = try PoiProcess.run(["convert", Self.placesCSV, "-o", out.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("19 places written to \(out.path), 3 rejected"))
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any])
        #expect(doc["type"] as? String == "FeatureCollection")
        let features = try #require(doc["features"] as? [[String: Any]])
        #expect(features.count == 19)
        let first = try #require(features.first?["properties"] as? [String: Any])
        #expect(first["importKey"] as? String == "ldn-001")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["places.geojson"])  // no temp left

        // The output re-reads with the same places and keys.
        let again = try PoiProcess.run(["check", "--json", out.path])
        #expect(again.status == 0)

        let seq = dir.appendingPathComponent("places.geojsons")
        let s = try PoiProcess.run(["convert", Self.landmarks, "-o", seq.path, "--seq", "--precision", "3", "--quiet"])
        #expect(s.status == 1)
        let text = try String(contentsOf: seq, encoding: .utf8)
        #expect(text.components(separatedBy: "\u{1E}").count - 1 == 13)
        let coordinates = text.components(separatedBy: "\"coordinates\":[").dropFirst().map { $0.prefix { $0 != "]" } }
        #expect(coordinates.count == 13)
        for c in coordinates {
            for number in c.split(separator: ",") {
                let decimals = number.contains(".") ? number.split(separator: ".")[1].count : 0
                #expect(!number.contains("e") && decimals <= 3, "\(c)")
            }
        }

        let unreadable = try PoiProcess.run(["convert", dir.appendingPathComponent("none.csv").path, "-o", dir.appendingPathComponent("x.geojson").path])
        #expect(unreadable.status == 2)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.geojson").path))
    }
}
