import Foundation
import PoiFormats
import PoiTestSupport
import Testing
@testable import PoiJobs

/// The import pipeline without a database (dry run: every stage but the writes).
@Suite(.tags(.unit)) struct ImportJobTests {
    static let images = ["coffee.jpg", "rocket.jpg", "coins.png", "brick.png", "retina.jpg", "chelsea-cutout.png"]

    /// A folder with six distinct photos and a CSV naming each twice, over two windows.
    static func fixture() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-importjob-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/images")
        var csv = "id,name,lat,lon,image\n"
        do {
            for (i, name) in images.enumerated() {
                try FileManager.default.copyItem(at: samples.appendingPathComponent(name), to: dir.appendingPathComponent(name))
                csv += "a\(i),Place \(i),\(i),\(i),\(name)\n"
            }
            for (i, name) in images.enumerated() { csv += "b\(i),Again \(i),\(i),\(i + 1),\(name)\n" }
            try csv.write(to: dir.appendingPathComponent("places.csv"), atomically: true, encoding: .utf8)
        } catch {
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
        return dir
    }

    @Test(arguments: [1, 2, 100_000]) func everyPlaceKeepsItsImageWhateverTheCacheSize(limit: Int) throws {
        let dir = try Self.fixture()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = ImportOptions()
        options.dryRun = true
        options.batchSize = 4  // three windows
        options.jobs = 2
        options.imageCacheLimit = limit
        options.rejectsPath = dir.appendingPathComponent("r.csv").path
        let summary = try ImportJob(options: options, places: nil, images: nil)
            .run(files: [dir.appendingPathComponent("places.csv").path])
        #expect(summary.rowsRead == 12)
        #expect(summary.inserted == 12)
        #expect(summary.imagesFailed == 0)
        // A dry run stores nothing, so a content seen again after the caches were emptied counts as new.
        #expect(summary.imagesStored + summary.imagesReused == 12)
        if limit == 100_000 { #expect(summary.imagesStored == 6) }
    }
}
