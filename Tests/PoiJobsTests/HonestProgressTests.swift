import Foundation
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiJobs

/// Progress counts work done, not input read ahead ("Progress lies"): importing
/// 1,000 rows with 50 photos used to report 100 % and all 1,000 records after the first window,
/// because the reader had read the whole file by then.
@Suite(.tags(.unit)) struct HonestProgressTests {
    /// The case trying `poi` as a user met: 1,000 rows, every 20th with a photo of `ImportJobTests.fixture()`.
    static func thousandRowsWithFiftyPhotos(in dir: URL) throws -> String {
        var csv = "id,name,lat,lon,image\n"
        for i in 0..<1000 {
            let image = i % 20 == 0 ? ImportJobTests.images[i / 20 % ImportJobTests.images.count] : ""
            csv += "p\(i),Place \(i),\(Double(i) / 100),\(Double(i) / 200),\(image)\n"
        }
        let file = dir.appendingPathComponent("thousand.csv").path
        try csv.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func importProgressCountsRecordsDoneAndReaches100OnlyAtTheEnd() throws {
        let dir = try ImportJobTests.fixture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try Self.thousandRowsWithFiftyPhotos(in: dir)
        var options = ImportOptions()
        options.dryRun = true
        options.batchSize = 250  // four windows
        options.jobs = 2
        let events = Mutex<[JobProgress]>([])
        let job = ImportJob(options: options, places: nil, images: nil) { event in
            if case .progress(let p) = event { events.withLock { $0.append(p) } }
        }
        let summary = try job.run(files: [file])
        #expect(summary.inserted == 1000)
        let reports = events.withLock { $0 }
        let interim = reports.filter { !$0.isFinal }
        #expect(!interim.isEmpty)
        // After the first window, 250 records are done, whatever the reader has read.
        #expect(interim.first?.items == 250)
        for p in interim {
            // Whole windows only: records count when written, not when read.
            #expect(p.items % 250 == 0, "\(p.items) records reported done mid-window")
            #expect((p.fraction ?? 0) < 1, "\(p.fraction ?? 0) reported before the end")
        }
        let final = try #require(reports.last)
        #expect(final.isFinal)
        #expect(final.items == 1000)
        #expect(final.fraction == 1)
        #expect(reports.filter(\.isFinal).count == 1)
    }

    @Test func localThumbnailProgressEndsWithOneFinalReport() throws {
        let dir = try ImportJobTests.fixture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = ImportJobTests.images.map { dir.appendingPathComponent($0).path }
        let events = Mutex<[JobProgress]>([])
        var options = LocalThumbnailOptions()
        options.jobs = 2
        let summary = try LocalThumbnailJob(files: files, outputFolder: dir.appendingPathComponent("out").path,
                                            options: options) { event in
            if case .progress(let p) = event { events.withLock { $0.append(p) } }
        }.run()
        #expect(summary.written == 6)
        let final = try #require(events.withLock { $0.last })
        #expect(final.isFinal && final.items == 6 && final.total == 6 && final.images == 6)
    }
}
