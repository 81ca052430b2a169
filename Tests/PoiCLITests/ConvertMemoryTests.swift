import Foundation
import PoiTestSupport
import Testing

/// `poi convert` prepares places in batches on other threads: batches end at a size as well as
/// a count, so big records are never gathered a thousand at a time. Peak RSS is the child's
/// `ru_maxrss`, taken by a Python parent that runs nothing else.
@Suite(.tags(.process, .budget)) struct ConvertMemoryTests {
    static let megabyte = 1 << 20

    /// 20 features of 4 MB each: read one by one they take about 60 MB at peak; gathered into
    /// one batch (a count cap alone) the places and their encoded features took 419 MB for 60
    /// of them.
    @Test func bigFeaturesAreNotGatheredIntoOneBatch() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-convert-memory-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("big.geojson").path
        let handle = try #require(FileHandle(forWritingAtPath: { FileManager.default.createFile(atPath: input, contents: nil); return input }()))
        let blob = String(repeating: "x", count: 4 * Self.megabyte)
        try handle.write(contentsOf: Data(#"{"type":"FeatureCollection","features":["#.utf8))
        for i in 0..<20 {
            let feature = (i == 0 ? "" : ",") + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"#
                + #""properties":{"name":"n\#(i)","blob":""# + blob + #""}}"#
            try handle.write(contentsOf: Data(feature.utf8))
        }
        try handle.write(contentsOf: Data("]}".utf8))
        try handle.close()
        let output = dir.appendingPathComponent("out.geojson").path
        let r = try ThumbMemoryTests.peakRSS(["convert", input, "-o", output])
        #expect(r.status == 0)
        #expect(r.bytes < 110 * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB")
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        #expect((attributes[.size] as? Int ?? 0) > 20 * 4 * Self.megabyte)
    }

    /// CSV is prepared on the reader's workers, one prepared batch per tokenized batch, which
    /// ends at 2 MiB of record bytes: 60 records of 1 MB (the record limit) are never held all at
    /// once either: about 75 MB at peak, where the places alone, held together, would be 60 MB
    /// and their features 60 MB more.
    @Test func bigCSVRecordsAreNotGatheredIntoOneBatch() throws {
        let blob = String(repeating: "x", count: 1_000_000)
        var text = "name,lat,lon,blob\n"
        for i in 0..<60 { text += "n\(i),1.5,2.5,\(blob)\n" }
        let (peak, outputBytes) = try Self.convertCSV(text)
        #expect(peak < 110 * Self.megabyte, "peak \(peak / Self.megabyte) MB")
        #expect(outputBytes > 60 * 1_000_000)
    }

    /// A feature can be 6 times its CSV text (`\u00XX` for each control character), and the
    /// reader's workers hold two sets of prepared batches: their record bytes are capped per set
    /// (`CSVPlaceReader.preparedSetBytes`), so such a file stays near what plain text takes.
    /// Without the cap: 120–150 MB on 2 cores, more with more cores (new-user trial).
    @Test func controlCharacterHeavyCSVStaysWithinTheSetBound() throws {
        let controls = String(String.UnicodeScalarView((1...8).map { Unicode.Scalar(UInt8($0)) } + (14...31).map { Unicode.Scalar(UInt8($0)) }))
        let cell = String(repeating: controls, count: 80)  // 2,080 bytes, over 12,000 in JSON
        var text = "name,lat,lon,notes\n"
        for i in 0..<12_000 { text += "n\(i),1.5,2.5,\(cell)\n" }
        let (peak, outputBytes) = try Self.convertCSV(text)
        #expect(peak < 100 * Self.megabyte, "peak \(peak / Self.megabyte) MB")
        #expect(outputBytes > 12_000 * 12_000)
    }

    /// A wide file's features are many times its text: each field becomes a property that
    /// repeats the column's name (600 one-letter columns, 1.2 KB a row, make 7 KB of GeoJSON).
    /// Each field weighs its property's share against a set's bound
    /// (`CSVPlaceReader.preparedFieldBytes`); counted by record bytes alone, this file peaked at
    /// 140 MB in a debug build, 55 MB now (release, a 24 MB file of them: 182 MB, 48 MB now).
    @Test func aWideCSVsFeaturesCountAgainstTheSetBound() throws {
        let columns = (0..<600).map { "c\($0)" }.joined(separator: ",")
        let cells = Array(repeating: "x", count: 600).joined(separator: ",")
        var text = "name,lat,lon,\(columns)\n"
        for i in 0..<8_000 { text += "n\(i),1.5,2.5,\(cells)\n" }
        let (peak, outputBytes) = try Self.convertCSV(text)
        #expect(peak < 100 * Self.megabyte, "peak \(peak / Self.megabyte) MB")
        #expect(outputBytes > 8_000 * 6_000)
    }

    /// `poi convert` of `text` as a CSV file: its peak RSS and the output's size (status 0 expected).
    static func convertCSV(_ text: String) throws -> (peak: Int, outputBytes: Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-convert-memory-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.csv").path, output = dir.appendingPathComponent("out.geojson").path
        try text.write(toFile: input, atomically: false, encoding: .utf8)
        let r = try ThumbMemoryTests.peakRSS(["convert", input, "-o", output])
        #expect(r.status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        return (r.bytes, attributes[.size] as? Int ?? 0)
    }
}
