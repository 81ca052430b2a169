import Foundation
import PoiTestSupport
import Testing

/// `--columns` names for a file without a header line: too few stop at the first line, a longer
/// later line is a reject naming the names given, and GeoJSON says they are not used.
@Suite(.tags(.process))
struct ColumnNamesTests: DumpFixtures {
    /// More fields than names on the first line: one message, exit 2, nothing read (instead of
    /// one reject per line of a 12-million-line file).
    @Test func tooFewColumnNamesStopAtTheFirstLine() throws {
        let dir = try Self.scratch("columns")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.geonamesRows.write(to: dir.appendingPathComponent("allCountries.txt"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "allCountries.txt", "--delimiter", "tab", "--quote", "none", "--columns",
                                    "geonameid,name,asciiname,alternatenames,latitude,longitude", "--field", "id=geonameid"],
                                   currentDirectory: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("allCountries.txt: line 1 has 19 fields, but 6 column names were given for this file "
                                  + "without a header line; nothing was read. Name all 19 columns with --columns"), "\(r.stderr)")
        #expect(!r.stdout.contains("record 2"), "no reject per line: \(r.stdout)")
    }

    /// A later line with more fields than names is a reject that names the names given, not a
    /// header the file does not have.
    @Test func aLongerLaterLineSaysColumnNamesNotHeader() throws {
        let dir = try Self.scratch("columns-later")
        defer { try? FileManager.default.removeItem(at: dir) }
        try "a,1.0,2.0\nb,1.0,2.0,extra\n".write(to: dir.appendingPathComponent("h.csv"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "h.csv", "--columns", "name,lat,lon"], currentDirectory: dir)
        #expect(r.status == 1)
        #expect(r.stdout.contains("h.csv:2: record 2: record has 4 fields, 3 column names were given"), "\(r.stdout)")
        // convert says where the places went in words ("written to -" before).
        let c = try PoiProcess.run(["convert", "h.csv", "--columns", "name,lat,lon", "-o", "-", "-q"], currentDirectory: dir)
        #expect(c.status == 1)
        #expect(c.stderr == "poi: 1 places written to standard output, 1 rejected\n", "\(c.stderr)")
    }

    /// `--columns` on GeoJSON is said, not silently ignored.
    @Test func columnsOnGeoJSONIsNoted() throws {
        let dir = try Self.scratch("columns-geojson")
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"name":"a"}}]}"#
            .write(to: dir.appendingPathComponent("p.geojson"), atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "p.geojson", "--columns", "name,lat,lon"], currentDirectory: dir)
        #expect(r.status == 0)
        #expect(r.stderr.contains("note: p.geojson: column names were given for a CSV file without a header line, "
                                  + "but this file is GeoJSON; not used"), "\(r.stderr)")
    }
}
