import Foundation
import PoiTestSupport
import Testing

/// Defects found trying the restructured `poi` as a user and as a careless cron job
/// would, outside the suites. Each test reproduces one finding with the real binary and fails
/// until it is fixed; the report of the trial names them.
@Suite struct TrialFindingsTests {
    static let samples = PoiProcess.repoRoot.appendingPathComponent("Samples")

    /// A scratch folder with a clean CSV (`good.csv`), one with a reject (`bad.csv`) and the
    /// GeoJSON sample (`x.geojson`).
    static func scratch(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "poi-trial-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        do {
            try "id,name,lat,lon\na1,Alpha,1,2\n".write(toFile: dir + "/good.csv", atomically: true, encoding: .utf8)
            try "id,name,lat,lon\na1,Alpha,1,2\na2,Beta,999,2\n".write(toFile: dir + "/bad.csv", atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(atPath: samples.appendingPathComponent("landmarks.geojson").path,
                                             toPath: dir + "/x.geojson")
        } catch {
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
        return dir
    }

    static func run(_ args: [String], in dir: String) throws -> PoiProcess.Result {
        try PoiProcess.run(args, currentDirectory: URL(fileURLWithPath: dir))
    }

    static func shell(_ line: String, in dir: String) throws -> PoiProcess.Result {
        try PoiProcess.execute(URL(fileURLWithPath: "/bin/sh"), ["-c", line],
                               environment: ["POI": PoiProcess.binary.path], currentDirectory: URL(fileURLWithPath: dir))
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func read(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    // MARK: --rejects

    /// `poi import good.csv --rejects good.csv`: a run without rejects "removes the stale rejects
    /// file" at that path with a bare unlink(2), so the input itself is deleted. With rejects, the
    /// rejects file replaces the input (the rejects writer does not pass its inputs to AtomicFile,
    /// as convert does). Either way the dump is gone; `convert x -o x` is refused with status 2.
    @Test func rejectsNamingTheInputNeverDeletesOrReplacesIt() throws {
        let dir = try Self.scratch("rejects-input")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = Self.read(dir + "/good.csv"), bad = Self.read(dir + "/bad.csv")

        let clean = try Self.run(["import", "good.csv", "--dry-run", "--rejects", "good.csv"], in: dir)
        #expect(Self.read(dir + "/good.csv") == good, "the input was deleted: \(clean.all) (status \(clean.status))")

        let rejected = try Self.run(["import", "bad.csv", "--dry-run", "--rejects", "bad.csv"], in: dir)
        #expect(rejected.status == 2, "\(rejected.all)")
        #expect(Self.read(dir + "/bad.csv") == bad, "the input was replaced by its rejects: \(rejected.all)")
    }

    /// `poi import dump.csv --rejects /dev/null` (a cron job discarding rejects) run as root, with
    /// no rejects, unlinks /dev/null itself: README promises a device or FIFO is written in place,
    /// never replaced. Reproduced on a null device and a FIFO made in a scratch folder, never /dev;
    /// a symlink given as --rejects (README: "the link stays") is removed the same way.
    @Test(.enabled(if: geteuid() == 0, "mknod needs root"))
    func rejectsOnADeviceFIFOOrLinkIsNeverUnlinked() throws {
        let dir = try Self.scratch("rejects-device")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mknod(dir + "/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        #expect(mkfifo(dir + "/pipe", 0o600) == 0)
        #expect(symlink("kept.csv", dir + "/link.csv") == 0)
        FileManager.default.createFile(atPath: dir + "/kept.csv", contents: Data("earlier rejects\n".utf8))
        for target in ["null", "pipe", "link.csv"] {
            let r = try Self.run(["import", "good.csv", "--dry-run", "--rejects", target], in: dir)
            #expect(r.status == 0, "\(target): \(r.all)")
            #expect(Self.exists(dir + "/" + target), "--rejects \(target) with no rejects deleted \(target)")
        }
    }

    // MARK: /dev/stdout

    /// `poi convert x.geojson -o /dev/stdout >> log`: /dev/stdout resolves to the log file, a
    /// regular file, so AtomicFile replaces it by rename: every earlier line of the log is lost.
    /// A shell redirection (or `-o -`) appends. Same for `export -o /dev/stdout >> all.geojson`.
    @Test func devStdoutAppendedToAFileIsAppendedToNotReplaced() throws {
        let dir = try Self.scratch("devstdout")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "earlier log line\n".write(toFile: dir + "/log.txt", atomically: true, encoding: .utf8)
        let r = try Self.shell("\"$POI\" convert x.geojson -o /dev/stdout --quiet >> log.txt; echo \"status $?\" >&2", in: dir)
        #expect(r.stderr.contains("status 1"), "\(r.all)")
        let log = String(decoding: Self.read(dir + "/log.txt") ?? Data(), as: UTF8.self)
        #expect(log.hasPrefix("earlier log line\n{\"type\":\"FeatureCollection\""), "log now starts: \(log.prefix(80))")
    }

    // MARK: temporary files of killed runs

    /// README: "a run killed with -9 leaves one [temporary file] that the next run of the same
    /// output removes". Only `convert` calls `removeStaleTemporaries`: a killed import leaves
    /// `.NAME.rejects.csv.tmp-PID.XXXXXX`, a killed `poi thumb` `.photo.jpeg.tmp-…`, and the next
    /// runs leave them there (a nightly cron job piles them up).
    @Test func aKilledRunsTemporaryIsRemovedByTheNextRunOfTheSameOutput() throws {
        let dir = try Self.scratch("stale")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A pid that is not running (above the default pid_max of 4194304 is never used).
        let staleRejects = dir + "/.bad.rejects.csv.tmp-4194999.abcdef"
        FileManager.default.createFile(atPath: staleRejects, contents: Data("partial".utf8))
        let imported = try Self.run(["import", "bad.csv", "--dry-run", "--rejects", "bad.rejects.csv"], in: dir)
        #expect(imported.status == 1, "\(imported.all)")
        #expect(Self.exists(dir + "/bad.rejects.csv"))
        #expect(!Self.exists(staleRejects), "import left the killed run's temporary rejects file")

        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let staleThumb = dir + "/out/.coffee.jpeg.tmp-4194999.abcdef"
        FileManager.default.createFile(atPath: staleThumb, contents: Data("partial".utf8))
        let thumb = try Self.run(["thumb", Self.samples.appendingPathComponent("images/coffee.jpg").path, "-o", "out"], in: dir)
        #expect(thumb.status == 0, "\(thumb.all)")
        #expect(Self.exists(dir + "/out/coffee.jpeg"))
        #expect(!Self.exists(staleThumb), "thumb left the killed run's temporary thumbnail")
    }

    // MARK: FIFOs among the images

    /// `poi thumb photos/* -o thumbs` with a FIFO among the files, or an import whose dump names a
    /// FIFO in its images folder, hangs for ever: `WholeFile.read` opens before it checks that
    /// the path is a regular file, and open(2) of a FIFO blocks until a writer comes. The check
    /// it then makes ("not a regular file") should come first (O_NONBLOCK, or lstat/stat before
    /// open). `timeout` ends the hang here (status 124).
    @Test func aFIFOAmongTheImagesIsRefusedNotWaitedOn() throws {
        let dir = try Self.scratch("fifo-image")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo(dir + "/pipe.jpg", 0o600) == 0)
        try FileManager.default.copyItem(atPath: Self.samples.appendingPathComponent("images/coffee.jpg").path,
                                         toPath: dir + "/coffee.jpg")
        let thumb = try Self.shell("timeout 20 \"$POI\" thumb pipe.jpg coffee.jpg -o out; echo \"status $?\"", in: dir)
        #expect(thumb.stdout.contains("status 1"), "\(thumb.all)")
        #expect(thumb.stderr.contains("pipe.jpg: not a regular file"), "\(thumb.stderr)")
        #expect(Self.exists(dir + "/out/coffee.jpeg"))

        try "id,name,lat,lon,photo\nf1,Fifo,1,2,pipe.jpg\n".write(toFile: dir + "/f.csv", atomically: true, encoding: .utf8)
        let imported = try Self.shell("timeout 20 \"$POI\" import f.csv --dry-run; echo \"status $?\"", in: dir)
        // A failed image is a failed file: exit 1, the place kept without it.
        #expect(imported.stdout.contains("status 1"), "\(imported.all)")
        #expect(imported.stderr.contains("pipe.jpg"), "\(imported.stderr)")
    }

    // MARK: poi thumb

    /// `poi thumb empty/coffee.jpg photos/coffee.jpg -o out`: the empty file is reported as empty
    /// (a finding of trying `poi` as a new user), but it still owns the name `coffee`, so the good photo gets no thumbnail and
    /// is told "output name 'coffee' is already used by empty/coffee.jpg" although nothing was
    /// written under that name. A name should go to the first input that yields a thumbnail.
    @Test func aFailedInputDoesNotTakeTheOutputNameOfAGoodOne() throws {
        let dir = try Self.scratch("thumbname")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/empty", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/photos", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir + "/empty/coffee.jpg", contents: Data())
        try FileManager.default.copyItem(atPath: Self.samples.appendingPathComponent("images/coffee.jpg").path,
                                         toPath: dir + "/photos/coffee.jpg")
        let r = try Self.run(["thumb", "empty/coffee.jpg", "photos/coffee.jpg", "-o", "out", "--json"], in: dir)
        #expect(r.status == 1, "\(r.all)")  // the empty file still fails
        #expect(r.stderr.contains("empty/coffee.jpg: empty file"), "\(r.stderr)")
        #expect(!r.stderr.contains("already used by empty/coffee.jpg"), "\(r.stderr)")
        #expect(Self.exists(dir + "/out/coffee.jpeg"), "the good photo got no thumbnail: \(r.stderr)")
    }
}

/// Findings that need the server.
@Suite(.serialized) struct TrialLiveFindingsTests {
    /// README: "a run killed with -9 leaves one [temporary file] that the next run of the same
    /// output removes". `ExportJob` never calls `removeStaleTemporaries`: a nightly
    /// `poi export -o /srv/www/places.geojson` killed once leaves `.places.geojson.tmp-PID.XXXXXX`
    /// (as large as the export) for good; `--with-images` copies likewise.
    @Test(.liveServer) func aKilledExportsTemporaryIsRemovedByTheNextExport() throws {
        let ws = try Workspace("trialstale")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let stale = ws.path(".places.geojson.tmp-4194999.abcdef")
        FileManager.default.createFile(atPath: stale, contents: Data("{\"type\":\"FeatureCo".utf8))
        let r = try ws.poi(["export", "-o", "places.geojson", "--quiet"])
        #expect(r.status == 0, "\(r.all)")
        #expect(FileManager.default.fileExists(atPath: ws.path("places.geojson")))
        #expect(!FileManager.default.fileExists(atPath: stale), "the killed export's temporary file is still there")
    }

    /// `poi import shops.csv shops.txt` (both CSV, as `poi import /data/dumps/*` meets them; also
    /// `x.json` + `x.geojson`): both default to `shops.rejects.csv`. The first input's rejects are
    /// written, then the second input, which has none, "removes the stale rejects file": the
    /// summary still says `rejectsFiles: ["shops.rejects.csv"]` and "rejects written to:
    /// shops.rejects.csv", and there is no such file. (With rejects in both, the second replaces
    /// the first's.) Each input's rejects should survive the run, or the collision be refused.
    @Test(.liveServer) func twoInputsWithTheSameRejectsNameDoNotLoseTheFirstsRejects() throws {
        let ws = try Workspace("trialrejname")
        defer { ws.cleanUp() }
        try "id,name,lat,lon\nc1,Alpha,1,2\nc2,Beta,999,2\n".write(toFile: ws.path("shops.csv"), atomically: true, encoding: .utf8)
        try "id,name,lat,lon\nd1,Gamma,1,2\n".write(toFile: ws.path("shops.txt"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", "shops.csv", "shops.txt", "--json"])
        #expect(r.status == 1, "\(r.all)")
        let listed = try ws.json(r)["rejectsFiles"] as? [String] ?? []
        for file in listed {
            #expect(FileManager.default.fileExists(atPath: ws.path(file)), "the summary names \(file), which does not exist")
        }
        let rejects = (try? String(contentsOfFile: ws.path("shops.rejects.csv"), encoding: .utf8)) ?? ""
        #expect(rejects.contains("c2,Beta,999,2"), "the rejected row of shops.csv is nowhere: \(listed)")
    }
}

/// `poi gc --delete` on two databases sharing one uploads folder. The guard refuses
/// a delete of more than 10 % of the stored files, at least 10; a second database that is small
/// beside the first (here 1 photo: 2 files beside 20) is under both, and its bytes are deleted
/// with exit status 0, leaving its places with images whose bytes are gone.
@Suite(.serialized) struct TrialSharedUploadsTests {
    @Test(.liveServer) func gcDeleteLeavesTheFilesOfASmallerDatabaseSharingTheFolder() throws {
        let big = try Workspace("trialgcbig")
        defer { big.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(big)

        // A second database, one photo, the same uploads folder.
        let small = try Workspace("trialgcsmall")
        defer { small.cleanUp() }
        try FileManager.default.copyItem(atPath: small.path("Samples/images/coffee.jpg"), toPath: small.path("coffee.jpg"))
        try "id,name,lat,lon,photo\nb1,Corner shop,1,2,coffee.jpg\n".write(toFile: small.path("b.csv"), atomically: true, encoding: .utf8)
        let shared = try PoiProcess.run(["import", small.path("b.csv"), "--db", small.database, "--uploads", big.path("uploads"), "--quiet"],
                                        environment: ["MONGODB_URI": small.uri], currentDirectory: small.root)
        #expect(shared.status == 0, "\(shared.all)")
        let before = big.files(in: "uploads")
        #expect(before.count == 22, "\(before)")

        // Nothing else is writing: --min-age 0, as the help allows.
        let gc = try PoiProcess.run(["gc", "--db", big.database, "--uploads", big.path("uploads"), "--delete", "--min-age", "0", "--json"],
                                    environment: ["MONGODB_URI": big.uri], currentDirectory: big.root)
        #expect(big.files(in: "uploads").count == 22, "gc --delete removed the other database's files: \(gc.all) (status \(gc.status))")
        let check = try PoiProcess.run(["gc", "--db", small.database, "--uploads", big.path("uploads"), "--json"],
                                       environment: ["MONGODB_URI": small.uri], currentDirectory: small.root)
        let report = try small.json(check)
        #expect((report["documentsWithoutBytes"] as? [String] ?? []).isEmpty, "the small database lost its bytes: \(check.stdout)")
    }
}
