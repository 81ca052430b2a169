import Foundation
import PoiTestSupport
import Testing

/// An output path that names an input, a device, a FIFO, a link or /dev/stdout is written in place
/// or refused: never replaced by rename, never unlinked. No database.
@Suite(.tags(.process))
struct OutputInPlaceTests: ScratchFolderRuns {
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
}
