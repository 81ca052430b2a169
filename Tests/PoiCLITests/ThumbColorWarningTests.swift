import Foundation
import PoiTestSupport
import Testing

/// Found trying colour management as a new user: "A profile lcms2 refuses, or one larger than a cap, is ignored with
/// a warning in the summary". `poi thumb` made the thumbnail as if untagged (right) but said
/// nothing: exit 0, empty stderr, no warning in --json.
@Suite(.tags(.live, .process)) struct ThumbColorWarningTests {
    /// A copy of a sample JPEG with an APP2 ICC_PROFILE segment carrying `profile` (one chunk).
    static func jpeg(withProfile profile: [UInt8]) throws -> [UInt8] {
        let jpg = [UInt8](try Data(contentsOf: ThumbCommandTests.images.appendingPathComponent("coffee.jpg")))
        let body: [UInt8] = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile
        let length = body.count + 2
        return Array(jpg[0..<2]) + [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + body + Array(jpg[2...])
    }

    static let adobe = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"))) ?? Data())

    static var cases: [(String, [UInt8])] {
        var corrupt = adobe
        if corrupt.count > 200 { for i in 128..<200 { corrupt[i] = 0xFF } }   // tag table destroyed
        return [("truncated", Array(adobe.prefix(adobe.count / 2))),
                ("corrupt", corrupt),
                ("garbage", Array(repeating: 0x41, count: 600))]
    }

    /// `poi thumbnails` (stored originals, a new recipe) said nothing either, where `poi import`
    /// and `poi thumb` warn: now each original gets an `image:` line and `colorUnmanaged` counts them.
    @Test(.liveServer) func storedOriginalsWithAnUnusableProfileAreReportedToo() throws {
        try #require(!Self.adobe.isEmpty, "needs icc-profiles-free")
        let ws = try Workspace("thumbscolor")
        defer { ws.cleanUp() }
        try Data(try Self.jpeg(withProfile: Self.cases[0].1)).write(to: URL(fileURLWithPath: ws.path("t.jpg")))
        try "name,lat,lon,image\nTagged,1,2,t.jpg\n".write(toFile: ws.path("p.csv"), atomically: true, encoding: .utf8)
        let imported = try ws.poi(["import", "p.csv", "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try ws.json(imported)["imagesColorUnmanaged"] as? Int == 1)
        let original = try ws.python("""
            import pymongo, sys
            print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].files.find_one({'role': 'original'})['_id'])
            """)
        let r = try ws.poi(["thumbnails", "--size", "64x64", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try ws.json(r)
        #expect(summary["thumbnailsMade"] as? Int == 1)
        #expect(summary["colorUnmanaged"] as? Int == 1)
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("image: original \(original)") }
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.hasSuffix(" (thumbnail made as if untagged)") == true, "\(r.stderr)")
        // Up to date the next time: nothing made, nothing said.
        let again = try ws.poi(["thumbnails", "--size", "64x64", "--json"])
        #expect(try ws.json(again)["colorUnmanaged"] as? Int == 0)
        #expect(!again.stderr.contains("untagged"))
    }

    @Test(arguments: cases.map(\.0))
    func anUnusableProfileIsNamedOnStderrAndInTheJSON(kind: String) throws {
        try #require(!Self.adobe.isEmpty, "needs icc-profiles-free")
        let dir = try ThumbCommandTests.tempDir("colorwarn-\(kind)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("\(kind).jpg")
        let profile = Self.cases.first { $0.0 == kind }!.1
        try Data(try Self.jpeg(withProfile: profile)).write(to: input)
        let out = dir.appendingPathComponent("out")

        let r = try PoiProcess.run(["thumb", input.path, "-o", out.path])
        // The thumbnail is still made (as if untagged): not a failure...
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("\(kind).jpeg").path))
        // ...but the user is told, on a line that names the file.
        #expect(r.stderr.hasPrefix("\(input.path): warning: "), "no warning: \(r.stderr)")
        #expect(r.stderr.contains("profile") && r.stderr.hasSuffix(" (thumbnail made as if untagged)\n"), "\(r.stderr)")

        let j = try PoiProcess.run(["thumb", input.path, "-o", dir.appendingPathComponent("out2").path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        let file = (object?["files"] as? [[String: Any]])?.first
        #expect((file?["warning"] as? String)?.hasSuffix(" (thumbnail made as if untagged)") == true, "no warning in --json: \(j.stdout)")
        #expect(object?["warnings"] as? Int == 1)
        #expect(j.status == 0)
    }

    /// A valid Adobe RGB profile padded to 10 MB (over the 4 MB cap): ignored by design, but the
    /// thumbnail is then ~5 levels off (max 33) the colour-managed one with no word about it.
    @Test func aProfileOverTheCapIsReported() throws {
        try #require(!Self.adobe.isEmpty, "needs icc-profiles-free")
        let dir = try ThumbCommandTests.tempDir("colorwarn-huge")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var big = Self.adobe + [UInt8](repeating: 0, count: 10 << 20)
        let n = big.count
        big[0] = UInt8(n >> 24); big[1] = UInt8(n >> 16 & 0xFF); big[2] = UInt8(n >> 8 & 0xFF); big[3] = UInt8(n & 0xFF)
        // APP2 segments hold at most 65519 profile bytes: split it as encoders do.
        let jpg = [UInt8](try Data(contentsOf: ThumbCommandTests.images.appendingPathComponent("coffee.jpg")))
        let chunkSize = 65519, count = (n + chunkSize - 1) / chunkSize
        var segments: [UInt8] = []
        for k in 0..<count {
            let part = big[(k * chunkSize)..<min(n, (k + 1) * chunkSize)]
            let body: [UInt8] = Array("ICC_PROFILE".utf8) + [0, UInt8(k + 1), UInt8(count)] + part
            segments += [0xFF, 0xE2, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        let input = dir.appendingPathComponent("huge-profile.jpg")
        try Data(Array(jpg[0..<2]) + segments + Array(jpg[2...])).write(to: input)
        let r = try PoiProcess.run(["thumb", input.path, "-o", dir.appendingPathComponent("out").path])
        #expect(r.status == 0)
        #expect(r.stderr.hasPrefix("\(input.path): warning: ") && r.stderr.contains("profile"), "no warning: \(r.stderr)")
    }
}
