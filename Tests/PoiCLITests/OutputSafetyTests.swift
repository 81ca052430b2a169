import Foundation
import PoiTestSupport
import Testing

/// Outputs never destroy what they did not make, and a failure never exits 0 (ARCHITECTURE.md
/// §4). Each case was reproduced against the earlier build; no database is needed.
/// Device nodes are made with mknod in a temp folder, never the real /dev.
@Suite(.tags(.process)) struct OutputSafetyTests {
    static let samples = PoiProcess.repoRoot.appendingPathComponent("Samples")
    static let landmarks = samples.appendingPathComponent("landmarks.geojson").path
    static let places = samples.appendingPathComponent("places.csv").path

    /// A scratch folder holding a copy of both sample dumps.
    static func scratch(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "poi-safety-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        do {
            try FileManager.default.copyItem(atPath: landmarks, toPath: dir + "/x.geojson")
            try FileManager.default.copyItem(atPath: places, toPath: dir + "/p.csv")
        } catch {
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
        return dir
    }

    /// Runs a shell line with `$POI` set to the binary (redirections, umask, closed descriptors).
    static func shell(_ line: String, in dir: String) throws -> PoiProcess.Result {
        try PoiProcess.execute(URL(fileURLWithPath: "/bin/sh"), ["-c", line],
                               environment: ["POI": PoiProcess.binary.path], currentDirectory: URL(fileURLWithPath: dir))
    }

    static func mode(_ path: String) -> mode_t {
        var st = stat()
        lstat(path, &st)
        return st.st_mode
    }

    @Test func convertRefusesToOverwriteItsInputEvenThroughALink() throws {
        let dir = try Self.scratch("input")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = try Data(contentsOf: URL(fileURLWithPath: dir + "/x.geojson"))
        let csvBefore = try Data(contentsOf: URL(fileURLWithPath: dir + "/p.csv"))
        #expect(symlink("x.geojson", dir + "/alias.geojson") == 0)
        for (input, output) in [("x.geojson", "x.geojson"), ("p.csv", "p.csv"), ("x.geojson", "alias.geojson"), ("x.geojson", "./x.geojson")] {
            let r = try PoiProcess.run(["convert", input, "-o", output], currentDirectory: URL(fileURLWithPath: dir))
            #expect(r.status == 2, "\(input) -o \(output): \(r.all)")
            #expect(r.stderr.contains("refusing"), "\(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/x.geojson")) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/p.csv")) == csvBefore)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["x.geojson", "p.csv", "alias.geojson"])
    }

    @Test(.enabled(if: geteuid() == 0, "mknod needs root"))
    func aDeviceOutputIsWrittenInPlaceNotReplaced() throws {
        let dir = try Self.scratch("device")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // char 1:3 is the null device, 1:7 the full device (glibc's makedev for small numbers).
        #expect(mknod(dir + "/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        #expect(mknod(dir + "/full", S_IFCHR | 0o666, dev_t(1 << 8 | 7)) == 0)
        let ok = try PoiProcess.run(["convert", "x.geojson", "-o", "null"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(ok.status == 1, "\(ok.all)")  // the sample has two rejects
        #expect(Self.mode(dir + "/null") & S_IFMT == S_IFCHR)
        let full = try PoiProcess.run(["convert", "x.geojson", "-o", "full"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(full.status == 3, "\(full.all)")
        #expect(full.stderr.contains("poi: cannot write full: No space left on device\n"), "\(full.stderr)")
        #expect(Self.mode(dir + "/full") & S_IFMT == S_IFCHR)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["x.geojson", "p.csv", "null", "full"])
    }

    @Test func aFIFOOutputIsWrittenInPlaceAndItsReaderGetsTheWhole() throws {
        let dir = try Self.scratch("fifo")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo(dir + "/pipe", 0o600) == 0)
        let r = try Self.shell("cat pipe > got & \"$POI\" convert x.geojson -o pipe --quiet; s=$?; wait; exit $s", in: dir)
        #expect(r.status == 1, "\(r.all)")
        let got = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/got"))) as? [String: Any]
        #expect((got?["features"] as? [Any])?.count == 13)
        #expect(Self.mode(dir + "/pipe") & S_IFMT == S_IFIFO)
    }

    @Test func replacedFilesKeepTheirModeAndNewFilesHonourTheUmask() throws {
        let dir = try Self.scratch("mode")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: dir + "/secret.geojson", contents: Data("old".utf8))
        chmod(dir + "/secret.geojson", 0o600)
        let r = try Self.shell("\"$POI\" convert p.csv -o secret.geojson --quiet; umask 077; \"$POI\" convert p.csv -o new.geojson --quiet; exit 0", in: dir)
        #expect(r.stderr.isEmpty || r.stderr.contains("written"), "\(r.all)")
        #expect(Self.mode(dir + "/secret.geojson") & 0o7777 == 0o600)
        #expect(Self.mode(dir + "/new.geojson") & 0o7777 == 0o600)
    }

    @Test func longOutputNamesWork() throws {
        let dir = try Self.scratch("long")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for length in [240, 250, 255] {
            let name = String(repeating: "n", count: length - ".geojson".count) + ".geojson"
            let r = try PoiProcess.run(["convert", "x.geojson", "-o", name, "--quiet"], currentDirectory: URL(fileURLWithPath: dir))
            #expect(r.status == 1, "\(length): \(r.all)")
            #expect(FileManager.default.fileExists(atPath: dir + "/" + name))
        }
    }

    @Test func sigtermLeavesNoTemporaryFileAndAKilledRunsIsCleanedNextTime() throws {
        let dir = try Self.scratch("signal")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // stdin held open by `sleep`: the convert waits mid-output until it is terminated.
        var big = "id,name,lat,lon\n"
        for i in 0..<5000 { big += "k\(i),Place \(i),\(i % 90),\(i % 180)\n" }
        try big.write(toFile: dir + "/big.csv", atomically: true, encoding: .utf8)
        let r = try Self.shell("""
            (head -c 100000 big.csv; sleep 4) 2>/dev/null | "$POI" convert - -o out.geojson & pid=$!
            sleep 1; ls -a | grep -c '^\\.out\\.geojson\\.tmp-' ; kill -TERM $pid; wait $pid; echo "status $?"
            ls -a | grep -c '^\\.out\\.geojson\\.tmp-'; true
            """, in: dir)
        #expect(r.stdout == "1\nstatus 143\n0\n", "\(r.all)")
        // What kill -9 would leave (a temporary file of a process that is gone) goes on the next run.
        FileManager.default.createFile(atPath: dir + "/.out.geojson.tmp-4194999.abcdef", contents: Data("partial".utf8))
        _ = try PoiProcess.run(["convert", "x.geojson", "-o", "out.geojson", "--quiet"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(!FileManager.default.fileExists(atPath: dir + "/.out.geojson.tmp-4194999.abcdef"))
        #expect(FileManager.default.fileExists(atPath: dir + "/out.geojson"))
    }

    @Test func aSummaryThatCannotBeWrittenIsAFailure() throws {
        let dir = try Self.scratch("full")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let images = Self.samples.appendingPathComponent("images/coffee.jpg").path
        let lines = [
            "\"$POI\" check p.csv --json > /dev/full",
            "\"$POI\" check p.csv > /dev/full",
            "\"$POI\" thumb \(images) -o out --json > /dev/full",
            "\"$POI\" convert x.geojson -o out.geojson --json > /dev/full",
            "\"$POI\" check p.csv >&-",
            "\"$POI\" convert x.geojson -o - >&-",
        ]
        for line in lines {
            let r = try Self.shell(line + "; echo \"status $?\" >&2", in: dir)
            #expect(r.stderr.hasSuffix("status 3\n"), "\(line): \(r.stderr)")
        }
    }

    @Test func strictArgumentsAreUsageErrorsBeforeAnyWork() throws {
        let cases: [[String]] = [
            ["export", "--since", "2026-11-23T23:00:00"],
            ["export", "--since", "2026-11-23 23:00:00Z"],
            ["export", "--since", "2026-11-23T25:00:00Z"],
            ["export", "--since", "2026-11-23garbage"],
            ["export", "--since", "2026-02-30"],
            ["export", "--since", "0000-01-01"],
            ["export", "--bbox", "0x1,0,1,1"],
            ["export", "--bbox", "0,0,1"],
            ["export", "--bbox", "0,2,1,1"],
            ["export", "--db", "MyDatabase.x"],
            ["export", "--db", ""],
            ["export", "--db", String(repeating: "d", count: 64)],
            ["export", "--server-timeout", "0"],
            ["thumb", "x.jpg", "-o", ""],
            ["thumb", "x.jpg", "-o", "out", "--jobs", "257"],
            ["thumbnails", "--shard", "2/2"],
            ["import", "x.csv", "--fit", "stretch"],
        ]
        for args in cases {
            // An unreachable server: if parsing let a bad value through, this would be exit 3.
            let r = try PoiProcess.run(args, environment: ["MONGODB_URI": "mongodb://127.0.0.1:1"])
            #expect(r.status == 2, "\(args): \(r.all)")
        }
        let timeout = try PoiProcess.run(["export", "--server-timeout", "0"])
        #expect(timeout.stderr.contains("--server-timeout must be more than 0 and at most 3600 seconds"))
    }

    @Test func exportDashIsStandardOutputNotAFileNamedDash() throws {
        // No server needed to see where the output goes: the failure comes after choosing it.
        let dir = try Self.scratch("dash")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try PoiProcess.run(["export", "-o", "-", "--uri", "mongodb://127.0.0.1:1", "--server-timeout", "0.5"],
                               currentDirectory: URL(fileURLWithPath: dir))
        #expect(!FileManager.default.fileExists(atPath: dir + "/-"))
    }

    @Test func controlCharactersFromDumpsAreEscapedOnTheTerminal() throws {
        let dir = try Self.scratch("escape")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "name,lat,lon\nred,\"1\u{1B}[31m\",0\n".write(toFile: dir + "/esc.csv", atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["check", "esc.csv"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.status == 1)
        #expect(!r.all.contains("\u{1B}"), "\(r.all)")
    }
}
