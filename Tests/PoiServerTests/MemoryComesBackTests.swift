import Foundation
import Synchronization
import Testing

/// Issue 26: after a burst of photo uploads, `poi serve` gives the decoders' memory back.
/// Before the fixed malloc thresholds (`MallocPolicy`, poi's main), 32 uploads of 6-megapixel progressive
/// JPEGs left it about 74 MB above its idle level for good; now about 10.
@Suite(.serialized, .liveServer) struct MemoryComesBackTests {
    static func residentMB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kB / 1024
    }

    @Test func residentMemoryReturnsAfterABurstOfUploads() throws {
        let s = try ServeHarness("memburst")
        defer { _ = s.stop() }
        // A 3000x2000 progressive JPEG of noise (4 MB): its decoding holds the whole image's
        // coefficients, 36 MB, the kind of buffer glibc kept.
        let photo = s.scratch + "/burst.jpg"
        let python = ServeHarness.repoRoot.appendingPathComponent(".venv/bin/python").path
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: python)
        maker.arguments = ["-c", "import sys; from PIL import Image; "
                           + "Image.effect_noise((3000, 2000), 50).convert('RGB').save(sys.argv[1], quality=92, progressive=True)", photo]
        try maker.run()
        maker.waitUntilExit()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo)))
        _ = try s.get("/healthz")
        Thread.sleep(forTimeInterval: 1)
        let idle = try #require(Self.residentMB(s.process.processIdentifier))
        // 32 at once, each a different file (a suffix after the JPEG's end), as phones upload.
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 32) { i in
            let status = (try? s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"],
                                         body: bytes + Array("burst-\(i)".utf8), timeout: 300).status) ?? -1
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 } == [Int](repeating: 201, count: 32))
        Thread.sleep(forTimeInterval: 5)
        let after = try #require(Self.residentMB(s.process.processIdentifier))
        #expect(after - idle <= 30, "resident \(idle) MB idle, \(after) MB five seconds after 32 uploads")
    }
}
