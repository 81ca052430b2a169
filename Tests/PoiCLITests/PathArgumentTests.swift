import Foundation
import PoiTestSupport
import Testing

/// Paths from users are bytes: no command may trap on an odd one. `poi import -`, `poi import p`
/// and `poi doctor --uploads u` died with SIGILL: Foundation's `NSString.deletingLastPathComponent`
/// traps on one-character paths and on "x/". Each command runs in a fresh folder where
/// the path, when it can name a file, is a valid CSV (so the import gets past opening it), and
/// "-" gets the CSV on standard input.
@Suite(.tags(.process)) struct PathArgumentTests {
    static let odd = ["a", "-", "x/", "..", "./", String(repeating: "n", count: 255), "new\nline.csv"]
    static let csv = Data("id,name,lat,lon\nk1,Alpha,1,2\n".utf8)

    @Test(arguments: odd)
    func noCommandCrashesOnAnOddPath(_ path: String) throws {
        let samples = PoiProcess.repoRoot.appendingPathComponent("Samples").path
        // An unreachable server with a short timeout: database commands fail fast, exit 3.
        let db = ["--uri", "mongodb://127.0.0.1:1", "--server-timeout", "0.5"]
        let commands: [[String]] = [
            ["import", path, "--dry-run"],
            ["import", samples + "/places.csv", "--dry-run", "--images-dir", path, "--rejects", path],
            ["import", samples + "/places.csv", "--uploads", path] + db,
            ["check", path],
            ["convert", path, "-o", "out.geojson"],
            ["convert", samples + "/landmarks.geojson", "-o", path],
            ["thumb", path, "-o", "out"],
            ["thumb", samples + "/images/coffee.jpg", "-o", path],
            ["export", "-o", path] + db,
            ["export", "-o", "e.geojson", "--with-images", path] + db,
            ["doctor", "--uploads", path] + db,
            ["gc", "--uploads", path] + db,
            ["thumbnails", "--uploads", path] + db,
        ]
        for args in commands {
            // The command runs one level down, so that ".." (`poi thumb coffee.jpg -o ..`) is
            // this test's folder too, removed with it, not the temporary folder itself.
            let scratch = NSTemporaryDirectory() + "poi-paths-\(UUID().uuidString.prefix(8))"
            let dir = scratch + "/cwd"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            if !["-", "..", "./", "x/"].contains(path) { FileManager.default.createFile(atPath: dir + "/" + path, contents: Self.csv) }
            let r = try PoiProcess.run(args, currentDirectory: URL(fileURLWithPath: dir), stdin: path == "-" ? Self.csv : nil)
            // 0-3 are PoiKit's statuses; a crash ends the process by a signal.
            #expect((0...3).contains(r.status), "\(args.map { $0.debugDescription }): exit \(r.status): \(r.stderr.prefix(200))")
        }
    }
}
