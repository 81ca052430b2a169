import Foundation
import PoiTestSupport
import Testing

/// `poi check` of dumps without an id: the key is derived from the normalised name and the
/// coordinates rounded to 7 decimals (ImportKey). Pass one may find repeats by something cheaper
/// than the key itself, but the verdicts must be the key's, to the line and the message: these
/// outputs are those of the check that made every key (before pass one stopped making them).
@Suite(.tags(.process)) struct CheckDerivedKeyVerdictsTests {
    /// Near collisions: a last digit apart (distinct), the same spot under another name
    /// (distinct), the same name up to case and whitespace (same key), coordinates equal once
    /// rounded (same key), a Kelvin sign that NFC makes an ASCII K (same key as "Kafe").
    static let near = """
        name,lat,lon,category
        Café Central,48.2100001,16.3600001,cafe
        Café Central,48.2100002,16.3600001,cafe
        Café Centrai,48.2100001,16.3600001,cafe
          CAFÉ   central ,48.2100001,16.3600001,cafe
        Café Central,48.2100001,16.3600001,cafe
        Café Central,48.21000014,16.3600001,cafe
        Café Central,48.21000016,16.3600001,cafe
        Kafe,1.5,2.5,shop
        \u{212A}AFE,1.5,2.5,shop
        "kafe\t",1.5,2.5,shop
        Old  Mill,-0.00000001,10,mill
        old mill,0,10,mill
        Old Mill,0,-10,mill
        Old Mill,0,10.00000005,mill

        """
    static let nearVerdicts = """
        near.csv:5: record 4: duplicate key of line 2 (same name and coordinates, no id)
        near.csv:7: record 6: duplicate key of line 2 (same name and coordinates, no id)
        near.csv:8: record 7: duplicate key of line 3 (same name and coordinates, no id)
        near.csv:10: record 9: duplicate key of line 9 (same name and coordinates, no id)
        near.csv:11: record 10: duplicate key of line 9 (same name and coordinates, no id)
        near.csv:13: record 12: duplicate key of line 12 (same name and coordinates, no id)

        """
    /// An export's importKey that is the derived key of "Kafe" at (1.5, 2.5): the same key as
    /// near.csv's line 9 whichever file comes first.
    static let export = """
        name,lat,lon,importKey
        Kafe,1.5,2.5,sha256:9cfabaad16362fadee638c6580354f666c32a12204a2a52fdc1f2b5f98355f7b
        Elsewhere,3,4,x-1

        """
    static let mills = #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[10,0]},"properties":{"name":"OLD MILL"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[10,0.0000001]},"properties":{"name":"old mill"}}]}"#
    static let other = "name,lat,lon\nGood,1,1\nBad,95,1\n"
    /// The same spot under other names, and one rounded onto it: one repeat only.
    static let same = "name,lat,lon\nA,1,1\nB,1,1\nA,1,1.0000001\n a ,1.00000004,1\n"
    static let otherReject = "other.csv:3: record 2: latitude: latitude 95 out of range [-90, 90] "
        + "(looks swapped: latitude 1, longitude 95 would fit; check which column is which)\n"

    static func check(_ files: [String]) throws -> PoiProcess.Result {
        let dir = try OutputSafetyTests.scratch("derived-verdicts")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (name, text) in [("near.csv", near), ("export.csv", export), ("mills.geojson", mills), ("other.csv", other),
                             ("same.csv", same)] {
            try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        }
        return try PoiProcess.run(["check"] + files, currentDirectory: URL(fileURLWithPath: dir))
    }

    @Test func nearCollisionsInOneFile() throws {
        let r = try Self.check(["near.csv"])
        #expect(r.status == 1)
        #expect(r.stdout == Self.nearVerdicts + "near.csv: 8 valid, 6 rejected\n"
                + "of the valid: 1 exact repeat(s) of an earlier record of their key\n", "\(r.all)")
    }

    @Test func sameSpotOtherNamesIsNoRepeatAndReportsInOrder() throws {
        // same.csv's own repeat defers its line until pass two; other.csv's reject comes first.
        let r = try Self.check(["same.csv", "other.csv"])
        #expect(r.stdout == Self.otherReject + "same.csv:5: record 4: duplicate key of line 2 (same name and coordinates, no id)\n"
                + "same.csv: 3 valid, 1 rejected\nother.csv: 1 valid, 1 rejected\ntotal: 4 valid, 2 rejected\n", "\(r.all)")
        // No repeat in the first file: its line comes before the second file's reject.
        let sameSpot = try Self.check(["mills.geojson", "other.csv"])
        #expect(sameSpot.stdout == "mills.geojson: 2 valid, 0 rejected\n" + Self.otherReject
                + "other.csv: 1 valid, 1 rejected\ntotal: 3 valid, 1 rejected\n", "\(sameSpot.all)")
    }

    @Test func derivedKeysAcrossCSVAndGeoJSON() throws {
        let r = try Self.check(["near.csv", "other.csv", "mills.geojson"])
        #expect(r.stdout == Self.otherReject + Self.nearVerdicts + "near.csv: 8 valid, 6 rejected\nother.csv: 1 valid, 1 rejected\n"
                + "mills.geojson: feature 0 (record 1): duplicate key of near.csv line 12 (same name and coordinates, no id)\n"
                + "mills.geojson: 1 valid, 1 rejected\ntotal: 10 valid, 8 rejected\n"
                + "of the valid: 1 exact repeat(s) of an earlier record of their key\n", "\(r.all)")
    }

    @Test func anExportsDerivedKeyTextMeetsTheDerivedKey() throws {
        let exportFirst = try Self.check(["export.csv", "near.csv"])
        #expect(exportFirst.stdout == """
            export.csv: 2 valid, 0 rejected
            near.csv:5: record 4: duplicate key of line 2 (same name and coordinates, no id)
            near.csv:7: record 6: duplicate key of line 2 (same name and coordinates, no id)
            near.csv:8: record 7: duplicate key of line 3 (same name and coordinates, no id)
            near.csv:9: record 8: duplicate key of export.csv line 2 (same name and coordinates, no id)
            near.csv:10: record 9: duplicate key of export.csv line 2 (same name and coordinates, no id)
            near.csv:11: record 10: duplicate key of export.csv line 2 (same name and coordinates, no id)
            near.csv:13: record 12: duplicate key of line 12 (same name and coordinates, no id)
            near.csv: 7 valid, 7 rejected
            total: 9 valid, 7 rejected
            of the valid: 1 exact repeat(s) of an earlier record of their key

            """, "\(exportFirst.all)")
        let exportLast = try Self.check(["other.csv", "mills.geojson", "near.csv", "export.csv"])
        #expect(exportLast.stdout == Self.otherReject + """
            other.csv: 1 valid, 1 rejected
            mills.geojson: 2 valid, 0 rejected
            near.csv:5: record 4: duplicate key of line 2 (same name and coordinates, no id)
            near.csv:7: record 6: duplicate key of line 2 (same name and coordinates, no id)
            near.csv:8: record 7: duplicate key of line 3 (same name and coordinates, no id)
            near.csv:10: record 9: duplicate key of line 9 (same name and coordinates, no id)
            near.csv:11: record 10: duplicate key of line 9 (same name and coordinates, no id)
            near.csv:12: record 11: duplicate key of mills.geojson feature 0 (same name and coordinates, no id)
            near.csv:13: record 12: duplicate key of mills.geojson feature 0 (same name and coordinates, no id)
            near.csv: 7 valid, 7 rejected
            export.csv:2: record 1: importKey: duplicate key of near.csv line 9
            export.csv: 1 valid, 1 rejected
            total: 11 valid, 9 rejected
            of the valid: 1 exact repeat(s) of an earlier record of their key

            """, "\(exportLast.all)")
    }
}
