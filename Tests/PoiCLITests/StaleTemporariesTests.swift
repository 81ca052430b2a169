import Foundation
import PoiTestSupport
import Testing

/// A run killed with -9 leaves one temporary file beside its output; the next run of the same
/// output removes it, for every command that writes one.
@Suite(.tags(.live, .process), .serialized)
struct StaleTemporariesTests: ScratchFolderRuns {
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
}
