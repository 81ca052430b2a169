import Foundation
import PoiTestSupport
import Testing

/// Honest cron runs: `--json` always prints one object, rejects files
/// stay out of the dumps they sit beside, a typo is not an empty success, a password never shows,
/// an endless input fails fast. Each case failed against the build before its fix.
/// Over 500 lines: 25 cases of one behaviour (what a nightly cron run sees and is told), each a
/// few lines of setup around one `poi` run; split by command if it grows.
@Suite(.tags(.live, .process)) struct CronSafetyTests {
    /// The README's Atlas-style URI where DNS has no answer is a
    /// server not reached (3), not a bad URI; an unencoded `@` or `/` in the password is told
    /// how to encode it, masked.
    @Test func uriProblemsSayWhatToFix() throws {
        let srv = try PoiProcess.run(["export", "-o", "/dev/null", "--server-timeout", "2",
                                      "--uri", "mongodb+srv://app:hunter2@cluster0.example.invalid/db"])
        #expect(srv.status == 3, "\(srv.all)")
        #expect(srv.stderr.contains("the DNS lookup of _mongodb._tcp.cluster0.example.invalid"), "\(srv.all)")
        let unencoded = try PoiProcess.run(["export", "-o", "/dev/null", "--uri", "mongodb://app:p@ss:w0/rd@127.0.0.1:1/db"])
        #expect(unencoded.status == 2, "\(unencoded.all)")
        #expect(unencoded.stderr.contains("percent-encode them (%40, %3A, %2F)"), "\(unencoded.all)")
        #expect(!srv.all.contains("hunter2") && !unencoded.all.contains("w0/rd"))
    }

    /// libmongoc (Debian's 1.23) starts itself before `main` and keeps counters in
    /// /dev/shm/mongoc-PID, removed only at a clean exit: a `poi` killed with -9 left one, and a
    /// later process with that pid printed "Falling back to malloc for counters." (cron mail).
    /// `poi` removes the segment's name first thing, so a killed run leaves nothing.
    @Test func aKilledRunLeavesNoSharedMemorySegment() throws {
        let process = Process()
        process.executableURL = PoiProcess.binary
        process.arguments = ["import", "-", "--dry-run"]
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "MONGOC_DISABLE_SHM")  // the test process sets it for itself
        process.environment = env
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Waiting on standard input, past its start (and its exec).
        Thread.sleep(forTimeInterval: 1.5)
        let segment = "/dev/shm/mongoc-\(process.processIdentifier)"
        let whileRunning = FileManager.default.fileExists(atPath: segment)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(!whileRunning, "\(segment) exists while poi runs")
        #expect(!FileManager.default.fileExists(atPath: segment), "\(segment) outlived a killed poi")
    }

    static let unreachable = ["--uri", "mongodb://127.0.0.1:1", "--server-timeout", "0.5"]

    static func scratch(_ name: String) throws -> String { try OutputSafetyTests.scratch("cron-" + name) }

    static func shell(_ line: String, in dir: String, environment: [String: String] = [:]) throws -> PoiProcess.Result {
        try PoiProcess.execute(URL(fileURLWithPath: "/bin/bash"), ["-c", line],
                               environment: ["POI": PoiProcess.binary.path].merging(environment) { $1 },
                               currentDirectory: URL(fileURLWithPath: dir))
    }

    static func object(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    // MARK: --json

    @Test func importJSONPrintsAnErrorObjectOnUsageAndDatabaseFailures() throws {
        let dir = try Self.scratch("jsonerr")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases: [(args: [String], status: Int32, error: String)] = [
            (["import", "p.csv", "--json"] + Self.unreachable, 3, "cannot reach MongoDB at 127.0.0.1:1: "),
            (["import", "p.csv", "--json", "--batch-size", "0"], 2, "--batch-size must be between 1 and 100000"),
            (["import", "p.csv", "--json", "--uri", "mongodb://frank:sekrit@/"], 2, "invalid MongoDB URI mongodb://frank:****@/"),
            (["import", "missing.csv", "--json", "--dry-run"], 2, "missing.csv: cannot open"),
            (["export", "-o", "x.geojson", "--json"] + Self.unreachable, 3, "cannot reach MongoDB at 127.0.0.1:1: "),
            // `--uploads .`: a folder that is there (gc refuses a missing one before connecting).
            (["gc", "--json", "--uploads", "."] + Self.unreachable, 3, "cannot reach MongoDB at 127.0.0.1:1: "),
            (["doctor", "--json", "--uri", "mongodb://frank:sekrit@/"], 2, "invalid MongoDB URI mongodb://frank:****@/"),
        ]
        for c in cases {
            let r = try PoiProcess.run(c.args, currentDirectory: URL(fileURLWithPath: dir))
            #expect(r.status == c.status, "\(c.args): \(r.all)")
            let object = Self.object(r.stdout)
            #expect((object?["error"] as? String)?.contains(c.error) == true, "\(c.args): stdout \(r.stdout)")
            #expect(object?["exitStatus"] as? Int == Int(c.status), "\(c.args): stdout \(r.stdout)")
            #expect(r.stdout.split(separator: "\n").count == 1, "one line: \(r.stdout)")
            #expect(!r.all.contains("sekrit"))
        }
    }

    /// A gzip'd or zipped dump whose output fails (a full disk, a folder that is not there)
    /// while its inflating thread still has pieces waiting: the run ends with its message and
    /// status 3, every time. Before, libdispatch trapped (SIGILL, status 132) when the reader
    /// went away, in 1 run of 10 for a missing folder and 3 of 4 for /dev/full.
    @Test func aFailedOutputEndsACompressedInputCleanly() throws {
        let dir = try Self.scratch("compressed-fail")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var text = "id,name,lat,lon,description\n"
        for i in 0..<150_000 { text += "p\(i),Place \(i),\(Double(i % 170) - 85),\(Double(i % 360) - 180),a line of text \(i)\n" }
        try text.write(toFile: dir + "/p.csv", atomically: false, encoding: .utf8)
        _ = try Self.shell("gzip -c -n p.csv > p.csv.gz && python3 -m zipfile -c p.zip p.csv", in: dir)
        for line in ["\"$POI\" convert p.csv.gz -o - --quiet > /dev/full", "\"$POI\" convert p.csv.gz -o missing/out.geojson --quiet",
                     "\"$POI\" convert p.zip -o missing/out.geojson --quiet", "\"$POI\" check p.csv.gz --json > /dev/full"] {
            var statuses: [String] = []
            for _ in 0..<8 {
                let r = try Self.shell(line + " 2>/dev/null; echo \"status $?\"", in: dir)
                statuses.append(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(statuses == Array(repeating: "status 3", count: 8), "\(line): \(statuses)")
        }
    }

    /// An input truncated by another program while `poi` reads it (a dump rewritten in place)
    /// ended with status 1 and a reject for its cut last line, or with status 0 when cut at a line
    /// end: a shorter file read as if whole. Now it is said, exit 3, and
    /// a file output keeps what it was; on standard output the places before it go out closed.
    /// The reader of the output holds `poi` on a full pipe until the file is cut.
    @Test func anInputTruncatedWhileReadIsSaidAndExits3() throws {
        let dir = try Self.scratch("changed-while-read")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.writePlaces(400_000, to: dir + "/p.csv", withDescriptions: true)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dir + "/p.csv")[.size] as? Int)
        let r = try Self.shell("""
            "$POI" convert p.csv -o - --quiet 2>err | { IFS= read -r -n 1 x; sleep 1; truncate -s 1000000 p.csv; cat > /dev/null; }
            echo "status ${PIPESTATUS[0]}"; cat err
            """, in: dir)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "status 3", "\(r.stdout)")
        let said = try #require(lines.dropFirst().first)
        #expect(said.hasPrefix("poi: p.csv: changed while it was read (\(size) bytes when opened, 1000000 at its end, "), "\(said)")
        #expect(said.contains(" read): another program was writing or truncating it, so what was read is not the file; the "), "\(said)")
        #expect(said.hasSuffix(" places read before it were written to standard output. "
                               + "Run again once the file is complete (write it under another name and rename it when done)."), "\(said)")
        // To a file: the earlier output stays as it was.
        try Self.writePlaces(400_000, to: dir + "/p.csv", withDescriptions: true)
        try "earlier".write(toFile: dir + "/out.geojson", atomically: true, encoding: .utf8)
        let f = try Self.shell("""
            "$POI" convert p.csv -o out.geojson --quiet 2>err & pid=$!
            until ls -l /proc/$pid/fd 2>/dev/null | grep -q 'p.csv$'; do sleep 0.01; done
            truncate -s 1000000 p.csv; wait $pid; echo "status $?"; cat err
            """, in: dir)
        #expect(f.stdout.hasPrefix("status 3\npoi: p.csv: changed while it was read ("), "\(f.stdout)")
        #expect(f.stdout.contains("; out.geojson was not written (left as it was)"), "\(f.stdout)")
        #expect(try String(contentsOfFile: dir + "/out.geojson", encoding: .utf8) == "earlier")
        // `check`, held by its rejects on a full pipe: the same message and status as import's.
        var rejects = "id,name,lat,lon\n"
        for i in 0..<400_000 { rejects += "k\(i),Place \(i),north,\(i % 359 - 179)\n" }
        try rejects.write(toFile: dir + "/r.csv", atomically: true, encoding: .utf8)
        let c = try Self.shell("""
            "$POI" check r.csv 2>err | { IFS= read -r -n 1 x; sleep 1; truncate -s 1000000 r.csv; cat > /dev/null; }
            echo "status ${PIPESTATUS[0]}"; cat err
            """, in: dir)
        #expect(c.stdout.hasPrefix("status 3\npoi: r.csv: changed while it was read (\(rejects.utf8.count) bytes when opened, 1000000 at its end, "),
                "\(c.stdout)")
    }

    @Test func everyJSONSummaryWriteIsCheckedWithoutADatabase() throws {
        let dir = try Self.scratch("fulljson")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let image = OutputSafetyTests.samples.appendingPathComponent("images/coffee.jpg").path
        for line in ["\"$POI\" check p.csv --json > /dev/full",
                     "\"$POI\" import p.csv --dry-run --json > /dev/full",
                     "\"$POI\" thumb \(image) -o out --json > /dev/full"] {
            let r = try Self.shell(line + "; echo \"status $?\" >&2", in: dir)
            #expect(r.stderr.hasSuffix("status 3\n"), "\(line): \(r.stderr)")
            #expect(r.stderr.contains("No space left on device"), "\(line): \(r.stderr)")
        }
    }

    @Test(.liveServer) func everyJSONSummaryWriteIsCheckedWithADatabase() throws {
        let ws = try Workspace("cronfull")
        defer { ws.cleanUp() }
        let db = "--db \(ws.database) --uploads \(ws.path("uploads"))"
        for line in ["\"$POI\" import Samples/places.csv \(db) --json > /dev/full",
                     "\"$POI\" gc \(db) --json > /dev/full",
                     "\"$POI\" doctor \(db) --json > /dev/full"] {
            let r = try Self.shell(line + "; echo \"status $?\" >&2", in: ws.root.path, environment: ["MONGODB_URI": ws.uri])
            #expect(r.stderr.hasSuffix("status 3\n"), "\(line): \(r.stderr)")
        }
    }

    // MARK: rejects files

    @Test func importSkipsItsOwnRejectsFilesWithOneLine() throws {
        let dir = try Self.scratch("ownrejects")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Yesterday's rejects beside the dumps, as a real run leaves them.
        for (input, rejects) in [("p.csv", "p.rejects.csv"), ("x.geojson", "x.rejects.geojson")] {
            let r = try PoiProcess.run(["import", input, "--dry-run", "--rejects", rejects, "--quiet"], currentDirectory: URL(fileURLWithPath: dir))
            #expect(r.status == 1, "\(r.all)")
        }
        // Named like one but not one (no reason columns): a dump like any other.
        try "id,name,lat,lon\nq1,Quay,1,2\n".write(toFile: dir + "/q.rejects.csv", atomically: true, encoding: .utf8)
        let r = try PoiProcess.run(["import", "p.csv", "p.rejects.csv", "q.rejects.csv", "x.geojson", "x.rejects.geojson", "--dry-run", "--json"],
                                   currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.status == 1, "\(r.all)")
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("poi: skipped") }
        #expect(lines == ["poi: skipped p.rejects.csv: a rejects file of an earlier import, not a dump (import it alone once fixed)",
                          "poi: skipped x.rejects.geojson: a rejects file of an earlier import, not a dump (import it alone once fixed)"],
                "\(r.stderr)")
        let summary = Self.object(r.stdout)
        #expect(summary?["files"] as? Int == 3, "\(r.stdout)")
        #expect(summary?["skippedRejectsFiles"] as? [String] == ["p.rejects.csv", "x.rejects.geojson"])
        #expect(!FileManager.default.fileExists(atPath: dir + "/p.rejects.rejects.csv"))
        // Named alone, it is imported: fix the rejects and import them again.
        let alone = try PoiProcess.run(["import", "p.rejects.csv", "--dry-run", "--json"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(Self.object(alone.stdout)?["files"] as? Int == 1, "\(alone.all)")
        #expect(!alone.stderr.contains("skipped"), "\(alone.stderr)")
    }

    @Test func theReadmeCronLineChainsOnFinishedWithRejects() throws {
        let readme = try String(contentsOf: PoiProcess.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let cron = readme.components(separatedBy: "```cron\n").dropFirst().first?.components(separatedBy: "```").first ?? ""
        #expect(cron.contains("poi import /data/dumps/*.csv"), "\(cron)")
        #expect(cron.contains("; [ $? -le 1 ] && /opt/poikit/poi export"), "\(cron)")
        #expect(!cron.contains("--quiet && "), "exit 1 (finished with rejects) must not stop the export: \(cron)")
    }

    @Test(.liveServer) func defaultRejectsOfStdinAndPipesGoToAWritablePlaceNamedInTheSummary() throws {
        let ws = try Workspace("cronstdin")
        defer { ws.cleanUp() }
        let env = ["MONGODB_URI": ws.uri]
        let common = "--db \(ws.database) --uploads \(ws.path("uploads")) --json"
        let cases: [(line: String, rejects: String)] = [
            ("\"$POI\" import - \(common) < Samples/places.csv", ws.path("stdin.rejects.csv")),
            ("\"$POI\" import /dev/stdin \(common) < Samples/places.csv", ws.path("stdin.rejects.csv")),
            ("\"$POI\" import <(cat Samples/places.csv) \(common)", ws.path("fd")),
        ]
        for c in cases {
            try? FileManager.default.removeItem(atPath: ws.path("stdin.rejects.csv"))
            let r = try Self.shell(c.line, in: ws.root.path, environment: env)
            #expect(r.status == 1, "\(c.line): \(r.all)")
            let files = Self.object(r.stdout)?["rejectsFiles"] as? [String] ?? []
            #expect(files.count == 1 && files[0].hasPrefix(c.rejects) && files[0].hasSuffix(".rejects.csv"), "\(c.line): \(r.stdout)")
            if let file = files.first {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                #expect(text.hasPrefix("id,name,address,lat,lon,description,tags,photo,opening_hours,_line,_field,_reason"))
                try? FileManager.default.removeItem(atPath: file)
            }
            let summary = Self.object(r.stdout) ?? [:]
            #expect(["inserted", "updated", "unchanged"].map { summary[$0] as? Int ?? 0 }.reduce(0, +) > 0, "\(r.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/stdin.rejects.csv"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/fd/stdin.rejects.csv"))
    }

    @Test(.liveServer, .enabled(if: geteuid() == 0, "runs poi as nobody to make a folder read-only for it"))
    func defaultRejectsOfAReadOnlyDumpsFolderGoToTheCurrentFolder() throws {
        let ws = try Workspace("cronro")
        defer { ws.cleanUp() }
        // Root may write anywhere: an unprivileged user (nobody) sees the dumps folder read-only.
        let work = ws.path("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        for path in [ws.root.path, ws.path("Samples"), ws.path("Samples/images")] { chmod(path, 0o755) }
        chmod(work, 0o777)
        let line = "setpriv --reuid=65534 --regid=65534 --clear-groups \"$POI\" import ../Samples/places.csv "
            + "--db \(ws.database) --gridfs --json"
        let r = try Self.shell(line, in: work, environment: ["MONGODB_URI": ws.uri])
        #expect(r.status == 1, "\(r.all)")
        #expect(Self.object(r.stdout)?["rejectsFiles"] as? [String] == [work + "/places.rejects.csv"], "\(r.all)")
        #expect(FileManager.default.fileExists(atPath: work + "/places.rejects.csv"))
    }

    // MARK: a typo is not an empty success

    @Test(.liveServer) func exportOfADatabaseWithoutLocationsIsAnErrorNamingTheOnesWithIt() throws {
        let ws = try Workspace("crontypo")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)
        #expect(try ws.poi(["export", "-o", "keep.geojson", "--quiet"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson")))
        let typo = ws.database + "x"
        let r = try PoiProcess.run(["export", "--db", typo, "-o", "keep.geojson"], environment: ["MONGODB_URI": ws.uri],
                                   currentDirectory: ws.root)
        #expect(r.status == 2, "\(r.all)")
        #expect(r.stderr.hasPrefix("poi: database \(typo) has no locations collection (the database"), "\(r.stderr)")
        #expect(r.stderr.contains(ws.database + ",") || r.stderr.contains(ws.database + ")"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("Name the database with --db (or in the URI).\n"), "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson"))) == before)
        // Nothing was created by looking.
        #expect(try ws.python("import pymongo,sys; print(sys.argv[2] + 'x' in pymongo.MongoClient(sys.argv[1]).list_database_names())") == "False")
    }

    @Test(.liveServer) func anEmptyExportReplacesANonEmptyFileOnlyWithAllowEmpty() throws {
        let ws = try Workspace("cronempty")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)
        #expect(try ws.poi(["export", "-o", "keep.geojson", "--quiet"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson")))
        let r = try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson"])
        #expect(r.status == 2, "\(r.all)")
        #expect(r.stderr == "poi: no places matched, and the empty result would replace keep.geojson, which is not empty; "
                + "left as it was. Give --allow-empty to replace it with the empty result.\n", "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.path("keep.geojson"))) == before)
        #expect(ws.files(in: ".").filter { $0.contains(".tmp-") }.isEmpty)
        let allowed = try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson", "--allow-empty", "--quiet"])
        #expect(allowed.status == 0, "\(allowed.all)")
        #expect(try ws.features("keep.geojson").isEmpty)
        // An empty export over an empty one (a nightly run with nothing to say) needs nothing.
        #expect(try ws.poi(["export", "--category", "no-such-category", "-o", "keep.geojson", "--quiet"]).status == 0)
        #expect(try ws.poi(["export", "--category", "no-such-category", "-o", "new.geojson", "--quiet"]).status == 0)
    }

    @Test func aQueryMustBeAJSONObject() throws {
        for query in ["[]", "[1,2]", " [ {\"a\": 1} ]", "1", "\"x\""] {
            let r = try PoiProcess.run(["export", "--query", query] + Self.unreachable)
            #expect(r.status == 2, "\(query): \(r.all)")
            #expect(r.stderr.hasPrefix("poi: query refused: the query must be a JSON object such as {\"categories\": \"museum\"}, and this is "),
                    "\(query): \(r.stderr)")
        }
    }

    @Test(.liveServer) func anUnknownOperatorIsAUsageErrorAndRepeatedQueriesCombine() throws {
        let ws = try Workspace("cronquery")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        for query in [#"{"$badop": 1}"#, #"{"name": {"$badop": 1}}"#] {
            let r = try ws.poi(["export", "--query", query])
            #expect(r.status == 2, "\(query): \(r.all)")
            #expect(r.stderr.hasPrefix("poi: query refused: the server refused it: unknown "), "\(query): \(r.stderr)")
            #expect(r.stderr.contains("operator: $badop"), "\(r.stderr)")
        }
        let both = try ws.poi(["export", "-o", "both.geojson", "--quiet",
                               "--query", #"{"extra.wheelchair": true}"#, "--query", #"{"categories": "museum"}"#])
        #expect(both.status == 0, "\(both.all)")
        #expect(ExportAndThumbnailsTests.keys(try ws.features("both.geojson")) == ["geo-ams-1"])
    }

    @Test func aPasswordWithAnUnescapedAtNeverShows() throws {
        let uri = "mongodb://bob:p@ssW0RD@127.0.0.1:1/db"
        let dir = try Self.scratch("at")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let commands: [[String]] = [
            ["import", "p.csv"], ["export", "-o", "out.geojson"], ["gc"], ["doctor"], ["thumbnails"],
        ]
        for command in commands {
            for json in [false, true] {
                let args = command + ["--uri", uri, "--server-timeout", "0.5"] + (json ? ["--json"] : [])
                let r = try PoiProcess.run(args, currentDirectory: URL(fileURLWithPath: dir))
                #expect(r.status == 2, "\(args): \(r.all)")
                #expect(!r.all.lowercased().contains("ssw0rd"), "\(args): \(r.all)")
                #expect(r.all.contains("invalid MongoDB URI mongodb://bob:****@127.0.0.1:1/db: the user name or password holds an '@'"),
                        "\(args): \(r.all)")
                if json { #expect(Self.object(r.stdout)?["exitStatus"] as? Int == 2, "\(args): \(r.stdout)") }
            }
        }
        // The same from the environment, as cron sets it.
        let env = try PoiProcess.run(["doctor", "--server-timeout", "0.5"], environment: ["MONGODB_URI": uri])
        #expect(env.status == 2 && !env.all.lowercased().contains("ssw0rd"), "\(env.all)")
    }

    @Test func anEndlessInputFailsFastAtTheHeaderLimit() throws {
        let dir = try Self.scratch("zero")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let message = "poi: -: invalid header: no header line within the first 1048576 bytes"
        for (line, expected) in [
            ("head -c 50M /dev/zero | timeout 20 \"$POI\" check -", message),
            ("timeout 20 \"$POI\" check /dev/zero", "poi: /dev/zero: invalid header: no header line within the first 1048576 bytes"),
            ("yes '' | timeout 20 \"$POI\" check -", "poi: -: invalid header: more than 4096 blank lines and no header line"),
            ("head -c 50M /dev/zero | timeout 20 \"$POI\" import - --dry-run", message),
        ] {
            let started = Date()
            let r = try Self.shell(line + "; echo \"status $?\" >&2", in: dir)
            let seconds = Date().timeIntervalSince(started)
            #expect(r.stderr.hasSuffix("status 2\n"), "\(line): \(r.stderr.suffix(300))")
            #expect(r.stderr.hasPrefix(expected), "\(line): \(r.stderr.prefix(300))")
            #expect(seconds < 10, "\(line): \(seconds) s")
        }
    }

    // MARK: messages

    @Test func aDanglingUploadsLinkIsNamedAsSuch() throws {
        let dir = try Self.scratch("dangling")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(symlink("nowhere/uploads", dir + "/uploads") == 0)
        let r = try PoiProcess.run(["import", "p.csv", "--uploads", "uploads"] + Self.unreachable,
                                   currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.status == 3, "\(r.all)")
        #expect(r.stderr == "poi: uploads: the uploads folder is a symbolic link to nowhere/uploads, which does not exist\n", "\(r.stderr)")
    }

    @Test func aColumnTakenByAnotherFieldIsSaidToBe() throws {
        let dir = try Self.scratch("taken")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try PoiProcess.run(["check", "p.csv", "--field", "name=lat"], currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.status == 2, "\(r.all)")
        #expect(r.stderr.contains("p.csv: no latitude column: column lat is mapped to name. "
                                  + "Map name to another column, or name the latitude column with --field latitude=COLUMN."),
                "\(r.stderr)")
    }

    /// A cron line under timeout(1) ends with SIGTERM; Ctrl-C is SIGINT. `--json` still prints its
    /// one object, the exit status stays the signal's (before: nothing on stdout at all).
    @Test(arguments: [("TERM", 143), ("INT", 130)])
    func aSignalStillPrintsTheJSONObject(signal: String, status: Int) throws {
        let dir = try Self.scratch("signal-" + signal)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A FIFO held open for writing keeps `poi check -` waiting for input; the second gives it
        // time to start (a signal before the handler is installed would kill it silently).
        let r = try Self.shell("""
            mkfifo in; exec 3<>in
            "$POI" check - --json <in & pid=$!
            sleep 2; kill -\(signal) $pid; wait $pid; echo "status=$?" >&2
            """, in: dir)
        #expect(r.stderr.hasSuffix("status=\(status)\n"), "\(r.stderr)")
        let message = "interrupted by SIG\(signal); run the command again to finish"
        #expect(r.stderr.contains("poi: " + message), "\(r.stderr)")
        let object = try #require(Self.object(r.stdout), "stdout: \(r.stdout)")
        #expect(object["error"] as? String == message)
        #expect(object["exitStatus"] as? Int == status)
    }

    /// `count` valid places with distinct keys, as a CSV file at `path`.
    static func writePlaces(_ count: Int, to path: String, withDescriptions: Bool = false) throws {
        var csv = withDescriptions ? "id,name,lat,lon,description\n" : "id,name,lat,lon\n"
        for i in 0..<count {
            csv += "k\(i),Place \(i),\(i % 179 - 89),\(i % 359 - 179)" + (withDescriptions ? ",a description of place \(i)\n" : "\n")
        }
        try csv.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A file size limit (`ulimit -f`) is a write that fails: said, exit status 3, no temporary
    /// file left (SIGXFSZ killed the process and left it).
    @Test func aFileSizeLimitIsAFailedWrite() throws {
        let dir = try Self.scratch("fsize")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.writePlaces(20_000, to: dir + "/big.csv")
        let before = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        let r = try Self.shell("ulimit -f 200; \"$POI\" convert big.csv -o out.geojson; echo \"status=$?\" >&2", in: dir)
        // The file named once: it read "cannot write out.geojson: out.geojson: write failed: …".
        #expect(r.stderr == "poi: cannot write out.geojson: File too large\nstatus=3\n", "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == before)
    }

    /// A signal while worker threads are busy (a conversion in full swing) ends the process once:
    /// the message was printed again and again, up to 22,000 times, in four runs of ten (found
    /// trying `poi` as a new user) — the signal raised again to end the process came back to the same
    /// handler, as every Dispatch thread blocks it. The signal is sent once the output's
    /// temporary file exists: the handler is installed and the conversion under way.
    /// Why a private mount namespace without /proc cannot be made here (nil: it can).
    static let noProcUnavailable: String? = {
        guard getuid() == 0 else { return "needs root to unmount /proc in a private mount namespace" }
        guard let r = try? PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/unshare"), ["-m", "/bin/sh", "-c", "umount -l /proc && echo ok"]),
              r.status == 0, r.stdout == "ok\n" else { return "unshare -m with umount /proc is not available" }
        return nil
    }()

    /// Without /proc the Swift runtime has no arguments (it reads /proc/self/cmdline), and poi
    /// printed the help and exited 0 for any command line: a cron job that did nothing, reported
    /// as a success (new-user pass). Now: a usage error that says why.
    @Test(.enabled(if: noProcUnavailable == nil, Comment(rawValue: "SKIPPED: \(noProcUnavailable ?? "")")))
    func withoutProcTheCommandLineIsAnErrorNotHelp() throws {
        let dir = try Self.scratch("noproc")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "name,lat,lon\nA,1,2\n".write(toFile: dir + "/p.csv", atomically: true, encoding: .utf8)
        let r = try PoiProcess.execute(URL(fileURLWithPath: "/usr/bin/unshare"),
                                       ["-m", "/bin/sh", "-c", "umount -l /proc && exec \"$0\" convert p.csv -o out.geojson",
                                        PoiProcess.binary.path],
                                       currentDirectory: URL(fileURLWithPath: dir))
        #expect(r.status == 2, "\(r.all)")
        #expect(r.stderr == "poi: cannot read the command line (the Swift runtime reads it from /proc/self/cmdline: "
                + "is /proc mounted?)\n", "\(r.all)")
        #expect(r.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.geojson"))
    }

    /// SIGQUIT (Ctrl-\\) ends a run as SIGTERM does. Left to the Swift runtime, its backtracer
    /// printed a "Program crashed" backtrace and the process ran on, never ending (a signal from
    /// another process, swiftlang/swift#89461). Started with Process, not from a shell's
    /// background job, which would start it with SIGQUIT ignored.
    @Test func aQuitSignalEndsTheRunAsTermDoes() throws {
        let dir = try Self.scratch("signal-quit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.writePlaces(400_000, to: dir + "/big.csv", withDescriptions: true)
        let process = Process()
        process.executableURL = PoiProcess.binary
        process.arguments = ["convert", "big.csv", "-o", "out.geojson"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        func temporaries() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".out.geojson.tmp-") }
        }
        for _ in 0..<400 where try temporaries().isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try !temporaries().isEmpty, "no temporary output appeared")
        kill(process.processIdentifier, SIGQUIT)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(ended, "still running 20 s after SIGQUIT: \(stderr.prefix(300))")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGQUIT)
        #expect(stderr == "poi: interrupted by SIGQUIT; run the command again to finish\n", "\(stderr.prefix(400))")
        #expect(try temporaries().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.geojson"))
    }

    @Test func aSignalDuringBusyWorkEndsTheProcessAtOnce() throws {
        let dir = try Self.scratch("signal-busy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.writePlaces(400_000, to: dir + "/big.csv", withDescriptions: true)
        let message = "poi: interrupted by SIGTERM; run the command again to finish\n"
        let before = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        for round in 0..<10 {
            let r = try Self.shell("""
                "$POI" convert big.csv -o out.geojson & pid=$!
                for i in $(seq 400); do ls .out.geojson.tmp-* >/dev/null 2>&1 && break; sleep 0.05; done
                sleep 0.\(1 + round % 3); kill -TERM $pid; wait $pid; echo "status=$?" >&2
                """, in: dir)
            #expect(r.stderr == message + "status=143\n", "round \(round): \(r.stderr.prefix(400))")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out.geojson"), "round \(round)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == before, "round \(round)")
        }
    }

    /// A `--query` the server refuses as a bad value is a usage error ("$badop" exits
    /// 2), but an invalid regular expression (`{"name":{"$regex":"("}}`) exits 3, "database or
    /// I/O failure", with `MongoDB error 51091`: a cron wrapper pages for a database outage.
    @Test(.liveServer) func anInvalidRegexInQueryIsAUsageError() throws {
        let ws = try Workspace("t2regex")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let r = try ws.poi(["export", "-o", "q.geojson", "--query", #"{"name":{"$regex":"("}}"#])
        #expect(r.status == 2, "\(r.all)")
    }
}
