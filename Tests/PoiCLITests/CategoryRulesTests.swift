import Foundation
import PoiTestSupport
import Testing

/// The category and coordinate rules are in `--help`, and `--category-separator` changes the split.
@Suite(.tags(.process))
struct CategoryRulesTests: OwnFolderFiles {
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
}
