import Foundation
import PoiFormats
import PoiStore
import PoiTestSupport
import Testing
@testable import PoiJobs

/// `JobError` keeps the facts (which store error, which path, which clash) and its messages name
/// no command-line flag: the CLI adds those, an HTTP server maps the cases to statuses.
@Suite(.tags(.unit)) struct JobErrorTests {
    static let examples: [JobError] = [
        .input(.missingColumn(file: "p.csv", field: .latitude, looked: ["latitude", "lat", "y"])),
        .configuration(.oneRejectsFileForManyInputs(inputs: 3)),
        .configuration(.imagesNeedFileStore),
        .store(.unreachable(hosts: "db1:27017", reason: "connection refused")),
        .store(.bytesMissing(id: ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!, fileName: "5f1d7a0c9b1e8a0012345678.png")),
        .store(.unsupportedContentType("jpeg")),
        .output(path: "out.geojson", reason: "No space left on device"),
        .output(path: "-", reason: "Broken pipe"),
    ]

    @Test func messagesNameNoFlagOrMakeTarget() {
        for error in Self.examples {
            #expect(!error.description.contains("--"), "\(error)")
            #expect(!error.description.contains("make "), "\(error)")
            #expect(!error.description.contains("poi "), "\(error)")
        }
    }

    @Test func messagesSayWhatFailed() {
        #expect(JobError.output(path: "out.geojson", reason: "No space left on device").description
                == "cannot write out.geojson: No space left on device")
        #expect(JobError.output(path: "-", reason: "Broken pipe").description == "cannot write to standard output: Broken pipe")
        #expect(JobError.store(.unreachable(hosts: "db1:27017", reason: "connection refused")).description
                == "cannot reach MongoDB at db1:27017: connection refused")
        #expect(JobError.store(.bytesMissing(id: ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!, fileName: "5f1d7a0c9b1e8a0012345678.png"))
                    .description == "file 5f1d7a0c9b1e8a0012345678: the files document exists but its bytes (5f1d7a0c9b1e8a0012345678.png) are missing")
        let free: ConfigurationProblem = "batch size \(0) is too small"
        #expect(free == .other("batch size 0 is too small"))
    }

    @Test func oneRejectsFileForSeveralInputsIsAConfigurationProblem() {
        var options = ImportOptions()
        options.dryRun = true
        options.rejectsPath = "/tmp/never-written.rejects.csv"
        do {
            _ = try ImportJob(options: options, places: nil, images: nil).run(files: ["a.csv", "b.csv"])
            Issue.record("two inputs with one rejects file ran")
        } catch {
            guard case .configuration(let problem) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(problem == .oneRejectsFileForManyInputs(inputs: 2))
        }
    }
}
