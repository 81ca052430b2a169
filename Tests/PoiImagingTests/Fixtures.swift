import Foundation
import PoiTestSupport
import Testing

/// Test fixtures, generated once per test process by Tests/PoiImagingTests/Fixtures/make_fixtures.py
/// with the project's .venv Python (Pillow; ImageMagick for 16-bit colour and Adam7).
struct Manifest: Decodable {
    struct Probe: Decodable {
        var width: Int, height: Int, channels: Int, bitDepth: Int, hasAlpha: Bool, progressive: Bool
    }
    struct Decode: Decodable {
        var name: String, file: String, format: String
        var width: Int, height: Int, channels: Int, bitDepth: Int
        var ref: String, compare: String, minPSNR: Double?
        var probe: Probe
    }
    struct Orientation: Decodable { var file: String, orientation: Int, storedWidth: Int, storedHeight: Int }
    struct Hostile: Decodable { var file: String, kind: String }
    struct Resample: Decodable { var file: String, width: Int, height: Int, ref: String }
    struct Sample: Decodable {
        var file: String
        var pillowError: String?
        var orientation: Int?, format: String?, width: Int?, height: Int?, channels: Int?, bitDepth: Int?
        var ref: String?
    }
    var decode: [Decode]
    var resample: [Resample]
    var samples: [Sample]
    var orientation: [Orientation]
    var hostile: [Hostile]
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
}

struct FixtureSet: Sendable {
    let directory: URL
    let manifest: Manifest

    func bytes(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(file)))
    }

    func decodeFixture(_ name: String) throws -> Manifest.Decode {
        guard let f = manifest.decode.first(where: { $0.name == name }) else {
            throw FixtureError(description: "fixture \(name) missing from manifest.json")
        }
        return f
    }
}

extension Manifest: @unchecked Sendable {}

enum Fixtures {
    static let repoRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Generated on first use (Swift globals initialise once, thread-safely).
    private static let generated: Result<FixtureSet, FixtureError> = generate()

    static func load() throws -> FixtureSet { try generated.get() }

    private static func generate() -> Result<FixtureSet, FixtureError> {
        let python = repoRoot.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            return .failure(FixtureError(description: """
                \(python.path) is missing: the imaging fixtures are made by Pillow in the project's \
                virtualenv. Run `make setup` (or `make test`, which runs it) first.
                """))
        }
        // Shared by every suite of the run: removed when the test process exits.
        let dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory
            .appendingPathComponent("poiimaging-fixtures-\(getpid())"))
        try? FileManager.default.removeItem(at: dir)
        let script = repoRoot.appendingPathComponent("Tests/PoiImagingTests/Fixtures/make_fixtures.py")
        let process = Process()
        process.executableURL = python
        process.arguments = [script.path, dir.path]
        let errPipe = Pipe()
        process.standardError = errPipe
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failure(FixtureError(description: "could not run \(python.path): \(error)"))
        }
        let stderr = errPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(FixtureError(description:
                "make_fixtures.py failed (\(process.terminationStatus)): \(String(decoding: stderr, as: UTF8.self))"))
        }
        do {
            let data = try Data(contentsOf: dir.appendingPathComponent("manifest.json"))
            let manifest = try JSONDecoder().decode(Manifest.self, from: data)
            return .success(FixtureSet(directory: dir, manifest: manifest))
        } catch {
            return .failure(FixtureError(description: "unreadable manifest.json: \(error)"))
        }
    }
}

/// Peak resident set size of this process so far, in bytes (Linux /proc).
func peakRSS() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

/// PSNR in dB between two equally sized 8-bit sample arrays (infinity when identical).
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count)
    var se = 0.0
    for i in 0..<a.count {
        let d = Double(a[i]) - Double(b[i])
        se += d * d
    }
    if se == 0 { return .infinity }
    return 10 * log10(255 * 255 / (se / Double(a.count)))
}

func maxDifference(_ a: [UInt8], _ b: [UInt8], bitDepth: Int) -> Int {
    precondition(a.count == b.count)
    var m = 0
    if bitDepth == 8 {
        for i in 0..<a.count { m = max(m, abs(Int(a[i]) - Int(b[i]))) }
    } else {
        for i in stride(from: 0, to: a.count, by: 2) {
            let x = Int(a[i]) | Int(a[i + 1]) << 8, y = Int(b[i]) | Int(b[i + 1]) << 8
            m = max(m, abs(x - y))
        }
    }
    return m
}
