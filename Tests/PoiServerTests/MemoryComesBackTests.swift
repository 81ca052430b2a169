import Foundation
import PoiTestSupport
import Synchronization
import Testing

/// After a burst of photo uploads, `poi serve` gives the decoders' memory back.
/// Before the fixed malloc thresholds (`MallocPolicy`, poi's main), 32 uploads of 6-megapixel progressive
/// JPEGs left it about 74 MB above its idle level for good; now about 10.
@Suite(.tags(.live, .process, .budget), .serialized, .liveServer) struct MemoryComesBackTests {
    static func residentMB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kB / 1024
    }

    /// A 3000x2000 JPEG of noise made by Pillow at `path` (noise keeps it large): its bytes.
    static func noisePhoto(at path: String, sigma: Int, quality: Int, progressive: Bool) throws -> [UInt8] {
        let maker = Process()
        maker.executableURL = ServeHarness.repoRoot.appendingPathComponent(".venv/bin/python")
        maker.arguments = ["-c", "import sys; from PIL import Image; Image.effect_noise((3000, 2000), \(sigma))"
                           + ".convert('RGB').save(sys.argv[1], quality=\(quality), progressive=\(progressive ? "True" : "False"))", path]
        try maker.run()
        maker.waitUntilExit()
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func residentMemoryReturnsAfterABurstOfUploads() throws {
        let s = try ServeHarness("memburst")
        defer { _ = s.stop() }
        // A 3000x2000 progressive JPEG of noise (4 MB): its decoding holds the whole image's
        // coefficients, 36 MB, the kind of buffer glibc kept.
        let bytes = try Self.noisePhoto(at: s.scratch + "/burst.jpg", sigma: 50, quality: 92, progressive: true)
        _ = try s.get("/healthz")
        Thread.sleep(forTimeInterval: 1)
        let idle = try #require(Self.residentMB(s.process.processIdentifier))
        // 32 at once, each a different file (a suffix after the JPEG's end), as phones upload.
        // A thread each: `concurrentPerform` would run only as many at once as there are cores.
        let statuses = Mutex<[Int]>([])
        let finished = DispatchGroup()
        for i in 0..<32 {
            finished.enter()
            Thread {
                let status = (try? s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"],
                                             body: bytes + Array("burst-\(i)".utf8), timeout: 300).status) ?? -1
                statuses.withLock { $0.append(status) }
                finished.leave()
            }.start()
        }
        finished.wait()
        #expect(statuses.withLock { $0 } == [Int](repeating: 201, count: 32))
        Thread.sleep(forTimeInterval: 5)
        let after = try #require(Self.residentMB(s.process.processIdentifier))
        #expect(after - idle <= 30, "resident \(idle) MB idle, \(after) MB five seconds after 32 uploads")
    }

    /// 64 clients downloading the largest photo at once hold `poi serve` within
    /// 150 MB: the bytes stream from the file (never a whole copy per client), and the clients'
    /// slow reads park writes, not memory. Sampled every 50 ms while the downloads run.
    @Test func sixtyFourDownloadsOfAPhotoStayWithin150MB() throws {
        let s = try ServeHarness("memdownloads")
        defer { _ = s.stop() }
        let bytes = try Self.noisePhoto(at: s.scratch + "/large.jpg", sigma: 60, quality: 98, progressive: false)
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: bytes, timeout: 120)
        let id = try #require((up.json as? [String: Any])?["_id"] as? String)
        let pid = s.process.processIdentifier
        let peak = Mutex(0)
        let done = Atomic<Bool>(false)
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                if let mb = Self.residentMB(pid) { peak.withLock { $0 = max($0, mb) } }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        sampler.start()
        // A thread each: `concurrentPerform` would run only as many at once as there are cores.
        let complete = Mutex(0)
        let finished = DispatchGroup()
        for _ in 0..<64 {
            finished.enter()
            Thread {
                if let r = try? s.request("GET", "/files/\(id)", timeout: 300), r.status == 200, r.body.count == bytes.count {
                    complete.withLock { $0 += 1 }
                }
                finished.leave()
            }.start()
        }
        finished.wait()
        done.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(complete.withLock { $0 } == 64)
        let mb = peak.withLock { $0 }
        #expect(mb > 0 && mb <= 150, "peak resident \(mb) MB during 64 downloads of a \(bytes.count / 1_000_000) MB photo")
    }
}
