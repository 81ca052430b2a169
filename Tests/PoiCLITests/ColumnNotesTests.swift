import Foundation
import PoiTestSupport
import Testing

/// What the readers did not map is said once per file, with the flag that maps it.
@Suite(.tags(.process))
struct ColumnNotesTests: OwnFolderFiles {
    @Test func checkSaysWhichColumnsLookLikeFieldsOncePerFile() throws {
        let csv = try Self.write("name,lat,lon,image_url,photo_file,source_id\nA,1,2,http://x/a.jpg,a.jpg,7\nB,1,2,,b.jpg,8\n", "hint.csv")
        defer { Self.removeFolder(of: csv) }
        let r = try PoiProcess.run(["check", (csv as NSString).lastPathComponent], currentDirectory: URL(fileURLWithPath: (csv as NSString).deletingLastPathComponent))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let notes = r.stderr.split(separator: "\n").filter { $0.contains("looks like") }
        #expect(notes == [
            "note: hint.csv: column \"image_url\" looks like the image; use --field image=image_url",
            "note: hint.csv: column \"photo_file\" looks like the image; use --field image=photo_file",
            "note: hint.csv: column \"source_id\" looks like the id; use --field id=source_id",
        ])
    }

    @Test func checkSaysWhereColumnsPoiKitWritesItselfGo() throws {
        let csv = try Self.write("name,lat,lon,created_at,_reason,address,placename\nA,1,2,2020,r,Street 1,Town\n", "kept.csv")
        defer { Self.removeFolder(of: csv) }
        let r = try PoiProcess.run(["check", (csv as NSString).lastPathComponent], currentDirectory: URL(fileURLWithPath: (csv as NSString).deletingLastPathComponent))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("note: kept.csv: column \"created_at\" is a name PoiKit writes itself; kept as extra.created_at\n"))
        #expect(r.stderr.contains("note: kept.csv: column \"_reason\" is a name PoiKit writes itself; kept as extra._reason\n"))
        #expect(r.stderr.contains("note: kept.csv: column \"placename\" names the placename, already taken by column \"address\"; kept as extra.placename\n"))
    }
}
