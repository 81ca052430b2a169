import Foundation
import PoiFormats
import PoiTestSupport
import Testing
@testable import PoiJobs

/// `poi convert` prepares features in batches on other threads (`PreparedRecords`) and judges and
/// writes them in input order: over many batches in flight, the features, the counts and the
/// rejects come out as a one-record-at-a-time run would give them.
@Suite(.tags(.unit)) struct ConvertJobTests {
    /// Collects what the job reports, from whichever thread.
    final class Rejects: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ event: JobEvent) {
            guard case .rejected(let r) = event else { return }
            lock.withLock { list.append(r.message) }
        }
        var messages: [String] { lock.withLock { list } }
    }

    /// 30,000 places, then 10,000 records repeating their keys (even ones exact copies, odd ones
    /// conflicting), with a bad latitude every 997 records: about 40 batches, more than are ever
    /// in flight at once.
    static func fixture(in dir: URL) throws -> (path: String, rejects: [String], copies: Int, conflicts: Int) {
        let path = dir.appendingPathComponent("many.csv").path
        var csv = "id,name,lat,lon,description\n"
        var line = 1
        var lineOf: [Int: Int] = [:]
        var rejects: [String] = []
        var copies = 0, conflicts = 0
        func row(_ i: Int) -> (lat: Int, lon: Int) { (i % 179 - 89, i % 359 - 179) }
        for i in 0..<40_000 {
            if i > 0 && i % 997 == 0 {
                line += 1
                csv += "bad\(i),Bad \(i),95,0,\"quoted, with a comma\"\n"
                rejects.append("\(path):\(line) (record \(line - 1)): latitude: latitude 95 out of range [-90, 90] "
                               + "(looks swapped: latitude 0, longitude 95 would fit; check which column is which)")
            }
            line += 1
            if i < 30_000 {
                let (lat, lon) = row(i)
                csv += "k\(i),Place \(i),\(lat),\(lon),\"text \"\"\(i)\"\"\"\n"
                lineOf[i] = line
            } else {
                let j = i - 30_000
                let (lat, lon) = row(j)
                if i % 2 == 0 {
                    csv += "k\(j),Place \(j),\(lat),\(lon),\"text \"\"\(j)\"\"\"\n"
                    copies += 1
                } else {
                    csv += "k\(j),Other \(j),\(lat),\(lon),x\n"
                    conflicts += 1
                    rejects.append("\(path):\(line) (record \(line - 1)): id: duplicate key of line \(lineOf[j]!)")
                }
            }
        }
        try csv.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, rejects, copies, conflicts)
    }

    @Test(arguments: [DuplicatePolicy.reject, .first])
    func manyBatchesComeOutInInputOrder(policy: DuplicatePolicy) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-convertjob-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, expectedRejects, copies, conflicts) = try Self.fixture(in: dir)
        let output = dir.appendingPathComponent("out.geojson").path
        var options = ConvertOptions()
        options.onDuplicate = policy
        let seen = Rejects()
        let summary = try ConvertJob(input: input, output: output, options: options, observer: seen.add).run()

        let bad = expectedRejects.count - conflicts
        #expect(summary.features == 30_000)
        #expect(summary.unchanged == copies)
        #expect(copies == 5_000 && conflicts == 5_000 && bad == 40)
        if policy == .reject {
            #expect(summary.rejected == conflicts + bad)
            #expect(summary.duplicates == 0)
            #expect(seen.messages == expectedRejects)
        } else {
            #expect(summary.rejected == bad)
            #expect(summary.duplicates == conflicts)
            #expect(seen.messages == expectedRejects.filter { !$0.contains("duplicate key") })
        }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as! [String: Any]
        let features = json["features"] as! [[String: Any]]
        #expect(features.count == 30_000)
        let names = features.map { ($0["properties"] as! [String: Any])["name"] as! String }
        #expect(names == (0..<30_000).map { "Place \($0)" })
        let details = (features[12_345]["properties"] as! [String: Any])["details"] as? String
        #expect(details == "text \"12345\"")
        #expect(features[12_345]["id"] as? String == "k12345")
    }
}
