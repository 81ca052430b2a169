import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// GridFS downloads are streamed: many clients of a large photo keep the process's memory bounded.
@Suite("poi serve: GridFS downloads are streamed, not buffered", .tags(.live, .process, .budget), .serialized, .liveServer)
struct GridFSDownloadMemoryTests {
    /// With `--gridfs` (the README's scale-out and systemd setup) every download, even a 100-byte
    /// range, reads the whole file into memory, twice: 8 clients of a 60 MB photo took the process
    /// to 1 GB. The bound is 150 MB while 64 clients download the largest photo.
    @Test func gridFSDownloadsAreNotBufferedWhole() async throws {
        let s = try ServeHarness("t14gridmem", extraArguments: ["--gridfs"])
        if case .unsupported(let reason) = s.database.connection.probeGridFS(database: s.databaseName) {
            try Test.cancel("the server lacks GridFS: \(reason)")
        }
        let big = try ServeHarness.sample("coffee.jpg") + trialRandomBytes(24 * 1024 * 1024)
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: big, timeout: 300)
        #expect(up.status == 201)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try s.request("GET", "/files/\(id)", timeout: 300).status } }
            var out: [Int] = []
            for try await status in group { out.append(status) }
            return out
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        let peakMB = trialPeakRSSKB(s.process.processIdentifier) / 1024
        #expect(peakMB > 0 && peakMB <= 150, "peak RSS \(peakMB) MB for 8 downloads of a 24 MB GridFS file")
    }
}
