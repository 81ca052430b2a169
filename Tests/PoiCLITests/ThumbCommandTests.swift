import Foundation
import PoiTestSupport
import Testing

/// `poi thumb` end to end on Samples/images (no database): outputs, per-file errors, exit codes.
@Suite(.tags(.process)) struct ThumbCommandTests {
    static let images = PoiProcess.repoRoot.appendingPathComponent("Samples/images")
    static func image(_ name: String) -> String { images.appendingPathComponent(name).path }

    static func tempDir(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-thumb-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        return dir
    }

    /// Width and height from a JPEG SOF or PNG IHDR, read without PoiImaging (an independent check).
    static func dimensions(_ url: URL) throws -> (Int, Int) {
        let b = [UInt8](try Data(contentsOf: url))
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            return (Int(b[16]) << 24 | Int(b[17]) << 16 | Int(b[18]) << 8 | Int(b[19]),
                    Int(b[20]) << 24 | Int(b[21]) << 16 | Int(b[22]) << 8 | Int(b[23]))
        }
        var i = 2
        while i + 9 < b.count {
            let marker = b[i + 1], length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xC2).contains(marker) {
                return (Int(b[i + 7]) << 8 | Int(b[i + 8]), Int(b[i + 5]) << 8 | Int(b[i + 6]))
            }
            i += 2 + length
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    @Test func writesUprightThumbnailsAndReportsTheBadFileExit1() throws {
        let out = try Self.tempDir("mixed")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try PoiProcess.run(["thumb", Self.image("astronaut-exif6.jpg"), Self.image("chelsea-cutout.png"),
                                    Self.image("truncated.jpg"), Self.image("coffee.jpg"), "-o", out.path,
                                    "--size", "128x128"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr == "\(Self.image("truncated.jpg")): damaged JPEG: Premature end of JPEG file\n")
        #expect(r.stdout.hasPrefix("3 thumbnails written to \(out.path), 1 failed ("))
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(files == ["astronaut-exif6.jpeg", "chelsea-cutout.png", "coffee.jpeg"])
        // 512x512 stays square; the 451x300 cat with alpha stays PNG; 600x400 coffee -> 128x85.
        #expect(try Self.dimensions(out.appendingPathComponent("astronaut-exif6.jpeg")) == (128, 128))
        #expect(try Self.dimensions(out.appendingPathComponent("chelsea-cutout.png")) == (128, 85))
        #expect(try Self.dimensions(out.appendingPathComponent("coffee.jpeg")) == (128, 85))
    }

    @Test func coverFitJSONAndFormat() throws {
        let out = try Self.tempDir("cover")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), Self.image("coins.png"), "-o", out.path,
                                    "--size", "64x48", "--fit", "cover", "--format", "png", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["spec"] as? String == "64x48 cover png q85")
        #expect(o["written"] as? Int == 2)
        #expect(o["failed"] as? Int == 0)
        let entries = try #require(o["files"] as? [[String: Any]])
        #expect(entries.compactMap { $0["width"] as? Int } == [64, 64])
        #expect(entries.compactMap { $0["height"] as? Int } == [48, 48])
        #expect(entries.compactMap { $0["contentType"] as? String } == ["image/png", "image/png"])
        #expect(try Self.dimensions(out.appendingPathComponent("coins.png")) == (64, 48))
    }

    /// `--format webp`: `.webp` files, lossy WebP at --quality, the cutout's alpha kept
    /// (a VP8X header with its alpha flag), and the recipe in the JSON summary says webp.
    @Test func webpFormatWritesWebPFiles() throws {
        let out = try Self.tempDir("webp")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), Self.image("chelsea-cutout.png"),
                                    Self.image("astronaut-exif6.jpg"), "-o", out.path, "--size", "128x128",
                                    "--format", "webp", "--quality", "80", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["spec"] as? String == "128x128 inside webp q80")
        let entries = try #require(o["files"] as? [[String: Any]])
        #expect(entries.compactMap { $0["contentType"] as? String } == ["image/webp", "image/webp", "image/webp"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
                == ["astronaut-exif6.webp", "chelsea-cutout.webp", "coffee.webp"])
        for (name, size, alpha) in [("coffee", (128, 85), false), ("chelsea-cutout", (128, 85), true),
                                    ("astronaut-exif6", (128, 128), false)] {
            let b = [UInt8](try Data(contentsOf: out.appendingPathComponent("\(name).webp")))
            #expect(b.starts(with: Array("RIFF".utf8)) && Array(b[8..<12]) == Array("WEBP".utf8), "\(name)")
            let chunk = String(decoding: b[12..<16], as: UTF8.self)
            if alpha {
                // VP8X: flags byte (alpha = 0x10), then canvas width-1 and height-1 in 24 bits.
                #expect(chunk == "VP8X" && b[20] & 0x10 != 0, "\(name): \(chunk)")
                #expect((Int(b[24]) | Int(b[25]) << 8) + 1 == size.0 && (Int(b[27]) | Int(b[28]) << 8) + 1 == size.1)
            } else {
                // VP8 key frame: 3-byte tag, start code 9D 01 2A, then 14-bit width and height.
                #expect(chunk == "VP8 " && Array(b[23..<26]) == [0x9D, 0x01, 0x2A], "\(name): \(chunk)")
                #expect((Int(b[26]) | Int(b[27]) << 8) & 0x3FFF == size.0, "\(name)")
                #expect((Int(b[28]) | Int(b[29]) << 8) & 0x3FFF == size.1, "\(name)")
            }
        }
        // The issue's spelling is the same option.
        let again = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), "-o", out.path + "/again",
                                        "--thumbnail-format", "webp", "--quiet"])
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.path + "/again/coffee.webp"))
    }

    @Test func usageErrorsExit2() throws {
        let out = try Self.tempDir("usage")
        defer { try? FileManager.default.removeItem(at: out) }
        for args in [["--size", "0x10"], ["--fit", "stretch"], ["--format", "gif"], ["--quality", "0"],
                     ["--format", "webp", "--size", "16384x100"], ["--jobs", "0"],
                     ["--memory", "0"], ["--memory", "lots"]] {
            let r = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), "-o", out.path] + args)
            #expect(r.status == 2, "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// Two files with one base name: the second is a clash, never an overwrite.
    @Test func sameBaseNameTwiceIsAnErrorNotAnOverwrite() throws {
        let out = try Self.tempDir("dup")
        defer { try? FileManager.default.removeItem(at: out) }
        let other = try Self.tempDir("dup-other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: other) }
        let copy = other.appendingPathComponent("coffee.jpg").path
        try FileManager.default.copyItem(atPath: Self.image("coffee.jpg"), toPath: copy)
        let r = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), copy, "-o", out.path])
        #expect(r.status == 1)
        #expect(r.stderr == "\(copy): output name 'coffee' is already used by \(Self.image("coffee.jpg"))\n")
    }

    /// The same file given twice (a repeated name, a link to it) is thumbnailed once, exit 0,
    /// with a note; it was reported as a clash with itself (exit 1).
    @Test func theSameFileGivenTwiceIsThumbnailedOnce() throws {
        let out = try Self.tempDir("same")
        defer { try? FileManager.default.removeItem(at: out) }
        let link = try Self.tempDir("same-link")
        try FileManager.default.createDirectory(at: link, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: link) }
        let alias = link.appendingPathComponent("coffee.jpg").path
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: Self.image("coffee.jpg"))
        let r = try PoiProcess.run(["thumb", Self.image("coffee.jpg"), Self.image("coffee.jpg"), alias, "-o", out.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "\(Self.image("coffee.jpg")): note: the same file as \(Self.image("coffee.jpg")); thumbnailed once\n"
                + "\(alias): note: the same file as \(Self.image("coffee.jpg")); thumbnailed once\n")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["written"] as? Int == 1)
        #expect(json["failed"] as? Int == 0)
        let files = try #require(json["files"] as? [[String: Any]])
        #expect(files.map { $0["sameAs"] as? String } == [nil, Self.image("coffee.jpg"), Self.image("coffee.jpg")])
        #expect(Set(files.compactMap { $0["output"] as? String }) == [out.appendingPathComponent("coffee.jpeg").path])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["coffee.jpeg"])
    }

    @Test func neverOverwritesItsInput() throws {
        let dir = try Self.tempDir("inplace")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("chelsea-cutout.png")
        try FileManager.default.copyItem(atPath: Self.image("chelsea-cutout.png"), toPath: input.path)
        let before = try Data(contentsOf: input)
        let r = try PoiProcess.run(["thumb", input.path, "-o", dir.path])
        #expect(r.status == 1)
        #expect(r.stderr == "\(input.path): the thumbnail would replace an input; choose another output folder\n")
        #expect(try Data(contentsOf: input) == before)
    }
}

/// Found trying `poi` as a user: `poi thumb a/empty.jpg a/empty.png -o out` reported the second as a name
/// collision, not as the empty file it is. Content is checked first; a collision is reported only
/// for a file that would have made a thumbnail.
@Suite(.tags(.process)) struct ThumbNameCollisionTests: ScratchFolderRuns {
    @Test func anEmptyFileIsReportedAsEmptyNotAsACollision() throws {
        let dir = try ThumbCommandTests.tempDir("collide")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let jpg = dir.appendingPathComponent("a/empty.jpg").path, png = dir.appendingPathComponent("a/empty.png").path
        FileManager.default.createFile(atPath: jpg, contents: Data())
        FileManager.default.createFile(atPath: png, contents: Data())
        let r = try PoiProcess.run(["thumb", jpg, png, "-o", dir.appendingPathComponent("out").path])
        #expect(r.status == 1)
        #expect(r.stderr == "\(jpg): empty file (0 bytes)\n\(png): empty file (0 bytes)\n")
    }

    @Test func theNameGoesToTheFirstInputThatMakesAThumbnail() throws {
        let dir = try ThumbCommandTests.tempDir("collide2")
        for sub in ["b", "c"] { try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("b/coffee.png").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        let good = ThumbCommandTests.image("coffee.jpg")
        let again = dir.appendingPathComponent("c/coffee.jpg").path
        try FileManager.default.copyItem(atPath: good, toPath: again)
        let out = dir.appendingPathComponent("out")
        // The empty file comes first but makes nothing: the name goes to the first good one, and
        // each line says what is true of its own file, whatever order the workers finish in.
        let r = try PoiProcess.run(["thumb", empty, good, again, "-o", out.path, "--jobs", "3"])
        #expect(r.status == 1)
        #expect(r.stderr == "\(empty): empty file (0 bytes)\n\(again): output name 'coffee' is already used by \(good)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["coffee.jpeg"])
    }

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
