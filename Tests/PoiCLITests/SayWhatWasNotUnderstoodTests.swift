import Foundation
import PoiTestSupport
import Testing

/// At the command line: what the readers did not map is said once per file, with
/// the flag that maps it; the rules are in `--help`.
@Suite struct SayWhatWasNotUnderstoodTests {
    /// `text` as `name` in a folder of its own; remove it with `removeFolder(of:)`.
    static func write(_ text: String, _ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-cli-i18b-\(getpid())-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        do { try text.write(toFile: path, atomically: true, encoding: .utf8) } catch {
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
        return path
    }

    /// Removes the folder `write` made for `path`.
    static func removeFolder(of path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

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

    @Test func helpStatesTheCategoryAndCoordinateRules() throws {
        for command in ["import", "check"] {
            let r = try PoiProcess.run([command, "--help"])
            let help = r.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            #expect(help.contains("--category-separator"), "\(command) --help")
            #expect(help.contains("Categories are split on ';' and '|'"), "\(command) --help")
            #expect(help.contains("a JSON array"), "\(command) --help")
            #expect(help.contains("A lone decimal comma (1,234) is a decimal point"), "\(command) --help")
            #expect(help.contains("kept under extra"), "\(command) --help")
        }
    }

    @Test func categorySeparatorOptionSplitsOnComma() throws {
        let csv = try Self.write("name,lat,lon,tags\nA,1,2,\"a, b;c\"\n", "cats.csv")
        defer { Self.removeFolder(of: csv) }
        let dir = (csv as NSString).deletingLastPathComponent
        let out = dir + "/cats.geojson"
        let r = try PoiProcess.run(["convert", csv, "-o", out, "--category-separator", ","])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains(#""categories":["a","b;c"]"#), "\(text)")
    }

    /// A failed image leaves its reference and reason on the place, and the run exits 1.
    @Test(.liveServer) func failedImageIsKeptOnThePlaceAndExits1() throws {
        let ws = try Workspace("imgfail")
        defer { ws.cleanUp() }
        try "name,lat,lon,image\nA,1,2,missing.jpg\nB,1,3,\n".write(toFile: ws.path("f.csv"), atomically: true, encoding: .utf8)
        let r = try ws.poi(["import", ws.path("f.csv"), "--json"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(int(try ws.json(r), "imagesFailed") == 1)
        let out = try ws.python("""
            import pymongo, sys
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            a = db.locations.find_one({"name": "A"}); b = db.locations.find_one({"name": "B"})
            print(a.get("imageSource"), a.get("imageError"), "imageError" in b)
            """)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "missing.jpg no such file False")
    }
}
