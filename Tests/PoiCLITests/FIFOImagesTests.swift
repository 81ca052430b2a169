import Foundation
import PoiTestSupport
import Testing

/// A FIFO where an image is expected is refused as "not a regular file", never opened and waited
/// on, by `poi thumb` and by an import.
@Suite(.tags(.process))
struct FIFOImagesTests: ScratchFolderRuns {
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
}
