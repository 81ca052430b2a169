import Foundation
import PoiTestSupport
import Testing

/// `poi thumb --memory`: peak RSS of the process on large progressive JPEGs (whose decode keeps
/// every DCT coefficient: 137 MB each at 8000x6000 4:2:0) against the budget. Peak RSS is the
/// child's `ru_maxrss`, taken by a Python parent that runs nothing else.
@Suite(.tags(.process, .budget), .serialized) struct ThumbMemoryTests {
    static let megabyte = 1 << 20

    /// Three 8000x6000 progressive JPEGs made from a sample photo, once per run.
    static let images: Result<[String], any Error> = Result {
        let dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory.appendingPathComponent("poi-thumb-memory-\(getpid())"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let made = try PoiProcess.python("""
            import sys
            from PIL import Image
            src = Image.open(sys.argv[1]).convert("RGB").resize((8000, 6000), Image.BILINEAR)
            for i, t in enumerate([None, Image.FLIP_LEFT_RIGHT, Image.FLIP_TOP_BOTTOM]):
                (src if t is None else src.transpose(t)).save(f"{sys.argv[2]}/big{i}.jpg", quality=90, progressive=True)
            print("ok")
            """, [ThumbCommandTests.image("coffee.jpg"), dir.path])
        guard made == "ok" else { throw CocoaError(.fileWriteUnknown) }
        return (0..<3).map { dir.appendingPathComponent("big\($0).jpg").path }
    }

    /// Three 4000x3000 PNGs (36 MB of image data each once inflated), for the libdeflate path.
    static let pngs: Result<[String], any Error> = Result {
        let dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory.appendingPathComponent("poi-thumb-memory-png-\(getpid())"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let made = try PoiProcess.python("""
            import sys
            from PIL import Image
            src = Image.open(sys.argv[1]).convert("RGB").resize((4000, 3000), Image.BILINEAR)
            for i, t in enumerate([None, Image.FLIP_LEFT_RIGHT, Image.FLIP_TOP_BOTTOM]):
                (src if t is None else src.transpose(t)).save(f"{sys.argv[2]}/big{i}.png", compress_level=6)
            print("ok")
            """, [ThumbCommandTests.image("coffee.jpg"), dir.path])
        guard made == "ok" else { throw CocoaError(.fileWriteUnknown) }
        return (0..<3).map { dir.appendingPathComponent("big\($0).png").path }
    }

    /// Runs `poi` under a Python parent; returns its exit status and peak RSS in bytes.
    static func peakRSS(_ arguments: [String]) throws -> (status: Int, bytes: Int) {
        let out = try PoiProcess.python("""
            import resource, subprocess, sys
            r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """, [PoiProcess.binary.path] + arguments)
        let parts = out.split(separator: " ").compactMap { Int($0) }
        guard parts.count == 2 else { throw CocoaError(.fileReadCorruptFile) }
        return (parts[0], parts[1] * 1024)
    }

    static func baseline() throws -> Int {
        let out = try ThumbCommandTests.tempDir("memory-baseline")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try peakRSS(["thumb", ThumbCommandTests.image("coffee.jpg"), "-o", out.path, "--jobs", "2"])
        #expect(r.status == 0)
        return r.bytes
    }

    /// 200 MB holds one of them at a time (each reserves ~140 MB): peak RSS stays within the
    /// budget plus the baseline of a run on one small photo. Without the budget two decode side
    /// by side (~280 MB).
    @Test func peakStaysWithinTheBudget() throws {
        let files = try Self.images.get()
        let base = try Self.baseline()
        let out = try ThumbCommandTests.tempDir("memory-200")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.peakRSS(["thumb"] + files + ["-o", out.path, "--jobs", "2", "--memory", "200"])
        #expect(r.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == 3)
        #expect(r.bytes <= base + 200 * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB, baseline \(base / Self.megabyte) MB")
        // And it did hold one of them: more than 120 MB over the baseline.
        #expect(r.bytes > base + 120 * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB, baseline \(base / Self.megabyte) MB")
    }

    /// A PNG inflated in one call (libdeflate) reserves its whole image data: within
    /// 200 MB two do so side by side, within 100 MB they stream through zlib; either way the peak
    /// stays within the budget and every thumbnail is the same.
    @Test(arguments: [200, 100])
    func pngsInflatedWholeStayWithinTheBudget(megabytes: Int) throws {
        let files = try Self.pngs.get()
        let base = try Self.baseline()
        let out = try ThumbCommandTests.tempDir("memory-png-\(megabytes)")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.peakRSS(["thumb"] + files + ["-o", out.path, "--jobs", "2", "--memory", "\(megabytes)"])
        #expect(r.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == 3)
        #expect(r.bytes <= base + megabytes * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB, baseline \(base / Self.megabyte) MB")
    }

    /// 400 MB holds two: they decode side by side (the all-or-nothing gate ran each alone).
    @Test func imagesThatFitTogetherRunTogether() throws {
        let files = try Self.images.get()
        let base = try Self.baseline()
        let out = try ThumbCommandTests.tempDir("memory-400")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.peakRSS(["thumb"] + files + ["-o", out.path, "--jobs", "2", "--memory", "400"])
        #expect(r.status == 0)
        #expect(r.bytes > base + 250 * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB, baseline \(base / Self.megabyte) MB")
        #expect(r.bytes <= base + 400 * Self.megabyte)
    }

    /// Two 27 MB PNGs of noise first (each worker's read buffer grows to 27 MB and keeps those
    /// pages), then four 4000x3000 photos in small PNG files. Each photo reserves what its
    /// worker's buffer keeps mapped, not just its own file: counting the file alone, two photos
    /// fit side by side in 120 MB and the peak went 164 MB over the baseline.
    @Test func aReadBufferGrownByABigFileCountsAgainstTheBudget() throws {
        let dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory.appendingPathComponent("poi-thumb-memory-mixed-inputs-\(getpid())"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let made = try PoiProcess.python("""
            import random, sys
            from PIL import Image
            noise = random.Random(26)
            for i in range(2):
                Image.frombytes("RGB", (3000, 3000), noise.randbytes(3000 * 3000 * 3)).save(f"{sys.argv[2]}/a{i}.png", compress_level=1)
            src = Image.open(sys.argv[1]).convert("RGB").resize((4000, 3000), Image.BILINEAR)
            for i in range(4):
                src.rotate(i * 90).save(f"{sys.argv[2]}/b{i}.png")
            print("ok")
            """, [ThumbCommandTests.image("coffee.jpg"), dir.path])
        #expect(made == "ok")
        let files = ["a0", "a1", "b0", "b1", "b2", "b3"].map { dir.appendingPathComponent("\($0).png").path }
        let base = try Self.baseline()
        let out = try ThumbCommandTests.tempDir("memory-mix")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.peakRSS(["thumb"] + files + ["-o", out.path, "--jobs", "2", "--memory", "120"])
        #expect(r.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == 6)
        #expect(r.bytes <= base + 120 * Self.megabyte, "peak \(r.bytes / Self.megabyte) MB, baseline \(base / Self.megabyte) MB")
    }
}
