import CCodecs
import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// Progressive JPEGs shrunk by 8 stop reading once the coefficients the 1/8 IDCT reads are
/// complete (luma DC, and 4:2:0 chroma whole): the 256 px thumbnail against the one
/// from a decode of every scan, on photos from Samples/ enlarged past 4096 px (so 256 px takes
/// the 1/8 path), saved by Pillow (libjpeg's standard script: DC refinement in scan 7 of 10),
/// gray and 4:4:4, and by cjpeg with DC sent whole first and with the DC refinement last.
@Suite(.tags(.process)) struct ProgressiveDCTests {
    struct Photo: Sendable { var name: String; var bytes: [UInt8] }

    static let photos: Result<[Photo], any Error> = Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-progressive-dc-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }  // the photos are read into memory
        let script = """
            import os, subprocess, sys
            from PIL import Image
            samples, out = sys.argv[1], sys.argv[2]
            scripts = {
                # DC at full precision first (mozjpeg-like): one scan is enough.
                "dcfirst": "0,1,2: 0-0, 0, 0;\\n0: 1-5, 0, 2;\\n1: 1-63, 0, 1;\\n2: 1-63, 0, 1;\\n0: 6-63, 0, 2;\\n0: 1-63, 2, 1;\\n1: 1-63, 1, 0;\\n2: 1-63, 1, 0;\\n0: 1-63, 1, 0;\\n",
                # DC refinement after every AC scan: the whole file is read.
                "dclast": "0,1,2: 0-0, 0, 1;\\n0: 1-63, 0, 0;\\n1: 1-63, 0, 0;\\n2: 1-63, 0, 0;\\n0,1,2: 0-0, 1, 0;\\n",
            }
            for name in ["hubble-deep-field", "retina", "rocket", "coffee", "astronaut-exif6"]:
                im = Image.open(f"{samples}/{name}.jpg")
                exif = im.info.get("exif", b"")
                rgb = im.convert("RGB")
                big = rgb.resize((4608, 4608 * rgb.height // rgb.width), Image.LANCZOS)
                big.save(f"{out}/{name}-pillow.jpg", quality=90, progressive=True, exif=exif)
                if name == "retina":
                    big.convert("L").save(f"{out}/{name}-gray.jpg", quality=90, progressive=True)
                    big.save(f"{out}/{name}-444.jpg", quality=90, progressive=True, subsampling=0)
                if name in ("hubble-deep-field", "coffee"):
                    big.save(f"{out}/{name}.ppm")
                    for key, text in scripts.items():
                        with open(f"{out}/{key}.txt", "w") as f: f.write(text)
                        subprocess.run(["cjpeg", "-quality", "90", "-scans", f"{out}/{key}.txt", "-outfile",
                                        f"{out}/{name}-{key}.jpg", f"{out}/{name}.ppm"], check=True)
                        os.remove(f"{out}/{key}.txt")
                    os.remove(f"{out}/{name}.ppm")
            print("ok")
            """
        let python = Fixtures.repoRoot.appendingPathComponent(".venv/bin/python")
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", script, Fixtures.repoRoot.appendingPathComponent("Samples/images").path, dir.path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError(description: "making progressive photos failed (cjpeg: `make setup`): "
                + String(decoding: stderr, as: UTF8.self))
        }
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { Photo(name: $0, bytes: [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    static var fullDecode: DecodeOptions {
        var o = DecodeOptions()
        o.everyScan = true
        return o
    }

    @Test func earlyStopGivesTheFullDecodesThumbnail() throws {
        let photos = try Self.photos.get()
        #expect(photos.count == 11)
        for photo in photos {
            let info = try ImageCodec.probe(photo.bytes)
            #expect(info.isProgressive, "\(photo.name)")
            #expect(ThumbnailPlan(source: info, spec: .default).jpegScaleDenominator == 8, "\(photo.name)")
            let fast = try Thumbnailer.make(from: photo.bytes, spec: .default)
            let full = try Thumbnailer.make(from: photo.bytes, spec: .default, options: Self.fullDecode)
            #expect((fast.width, fast.height) == (full.width, full.height), "\(photo.name)")
            let a = try ImageCodec.decode(fast.data), b = try ImageCodec.decode(full.data)
            let db = psnr(a.bytes, b.bytes)
            #expect(db >= 40, "\(photo.name): PSNR \(db) dB")
            // Every coefficient the scaled IDCTs read is complete and block smoothing is off, so
            // libjpeg sees the same coefficients either way: the thumbnails are the same bytes.
            // (Stopping at luma and chroma DC gave 41.7-46.3 dB here: the 2x2 chroma IDCT of
            // 4:2:0 files reads AC coefficients.)
            let same = fast.data == full.data
            #expect(same, "\(photo.name): PSNR \(db) dB")
        }
    }

    /// A scan as its SOS header states it: where the marker is, the header's length, the
    /// components, the spectral band and the successive-approximation bits.
    struct Scan {
        var offset: Int, headerLength: Int, components: [UInt8], ss: UInt8, se: UInt8, ahAl: UInt8
        /// Where its entropy-coded data starts.
        var dataStart: Int { offset + 2 + headerLength }
        /// Where it ends: the first marker after it (FF neither stuffed nor a restart).
        func dataEnd(in b: [UInt8]) -> Int {
            var i = dataStart
            while i + 1 < b.count, !(b[i] == 0xFF && b[i + 1] != 0x00 && b[i + 1] != 0xFF && !(0xD0...0xD7).contains(b[i + 1])) { i += 1 }
            return i
        }
    }

    /// Every scan, found by walking the marker segments and scanning entropy-coded data for the
    /// next marker.
    static func scans(_ b: [UInt8]) -> [Scan] {
        var i = 2, found: [Scan] = []
        while i + 3 < b.count {
            guard b[i] == 0xFF else { i += 1; continue }
            let m = b[i + 1]
            if m == 0xD9 { break }
            if m == 0x00 || m == 0xFF || (0xD0...0xD7).contains(m) { i += 1; continue }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if m == 0xDA {
                let n = Int(b[i + 4])
                found.append(Scan(offset: i, headerLength: length, components: (0..<n).map { b[i + 5 + 2 * $0] },
                                  ss: b[i + 5 + 2 * n], se: b[i + 6 + 2 * n], ahAl: b[i + 7 + 2 * n]))
            }
            i += 2 + length
        }
        return found
    }

    static func lastScanOffset(_ b: [UInt8]) -> Int { scans(b).last?.offset ?? 0 }

    /// The luma AC refinement at the end of the file is never read: damage there does not stop a
    /// 1/8 thumbnail, which does not depend on it, but still stops a decode that needs it. A file
    /// cut short there is still reported as truncated, as before.
    @Test func scansAfterTheNeededOnesAreNotRead() throws {
        let photo = try #require(try Self.photos.get().first { $0.name == "coffee-pillow.jpg" })
        let sos = Self.lastScanOffset(photo.bytes)
        #expect(sos > 0 && sos < photo.bytes.count - 1000)
        let cut = (sos + photo.bytes.count) / 2
        // The last scan ends early at an EOI marker: corrupt data for whoever reads that scan.
        let damaged = Array(photo.bytes[..<cut]) + [0xFF, 0xD9]
        let thumb = try Thumbnailer.make(from: damaged, spec: .default)
        let intact = try Thumbnailer.make(from: photo.bytes, spec: .default)
        #expect(thumb.data == intact.data)
        #expect(throws: ImageError.corruptData(format: .jpeg, reason: "Corrupt JPEG data: premature end of data segment")) {
            try Thumbnailer.make(from: damaged, spec: .default, options: Self.fullDecode)
        }
        #expect(throws: ImageError.corruptData(format: .jpeg, reason: "Corrupt JPEG data: premature end of data segment")) {
            try Thumbnailer.make(from: damaged, spec: ThumbnailSpec(width: 1024, height: 1024))  // 1/2: every scan
        }
        // Cut without an EOI: truncated, whichever path.
        let truncated = Array(photo.bytes[..<cut])
        #expect(throws: ImageError.corruptData(format: .jpeg, reason: "Premature end of JPEG file")) {
            try Thumbnailer.make(from: truncated, spec: .default)
        }
        var lenient = DecodeOptions()
        lenient.lenient = true
        let kept = try Thumbnailer.make(from: truncated, spec: .default, options: lenient)
        #expect(kept.data == thumb.data)
    }

    /// The photo saved by Pillow with libjpeg's standard script, and that script's second scan:
    /// luma AC 1-5, one of the four luma AC scans a 1/8 decode leaves out.
    static func standardScript() throws -> (photo: Photo, scans: [Scan]) {
        let photo = try #require(try Self.photos.get().first { $0.name == "coffee-pillow.jpg" })
        let scans = Self.scans(photo.bytes)
        #expect(scans.count == 10)
        #expect((scans[1].components, scans[1].ss, scans[1].se, scans[1].ahAl) == ([1], 1, 5, 0x02))
        return (photo, scans)
    }

    /// Luma AC scans before the last needed one are not read either: damage in one no longer
    /// stops the 1/8 decode, whose pixels do not depend on it, but stops the way that read every
    /// scan up to the last needed one, and any decode that needs luma AC.
    @Test func lumaACScansBeforeTheLastNeededOneAreNotRead() throws {
        let (photo, scans) = try Self.standardScript()
        // The second half of scan 2's data cut out: the scan ends early, at the marker after it.
        let end = scans[1].dataEnd(in: photo.bytes)
        let damaged = Array(photo.bytes[..<((scans[1].dataStart + end) / 2)]) + Array(photo.bytes[end...])
        let intact = DecodeMemoryTests.decode(photo.bytes, scale: 8)
        #expect(intact.status == CC_OK.rawValue && intact.width == 576)
        #expect(DecodeMemoryTests.decode(damaged, scale: 8) == intact)
        let readEveryScan = DecodeMemoryTests.decode(damaged, scale: 8, scans: CC_SCANS_UP_TO_NEEDED)
        #expect(readEveryScan.status == CC_ERR_CORRUPT_DATA.rawValue)
        #expect(readEveryScan.message == "Corrupt JPEG data: premature end of data segment")
        #expect(try Thumbnailer.make(from: damaged, spec: .default).data == Thumbnailer.make(from: photo.bytes, spec: .default).data)
        #expect(throws: ImageError.corruptData(format: .jpeg, reason: "Corrupt JPEG data: premature end of data segment")) {
            try Thumbnailer.make(from: damaged, spec: ThumbnailSpec(width: 1024, height: 1024))  // 1/2: every scan
        }
    }

    /// What libjpeg checks when a scan starts is checked for a scan left out too: a file it would
    /// refuse, or warn about, has no scan left out, and gets libjpeg's own verdict and message,
    /// strict and lenient.
    @Test func aScanLeftOutIsCheckedAsLibjpegChecksIt() throws {
        let (photo, scans) = try Self.standardScript()
        let sos = scans[1].offset, b = photo.bytes
        func with(_ offset: Int, _ value: UInt8) -> [UInt8] { var c = b; c[offset] = value; return c }
        func inserted(_ bytes: [UInt8], at offset: Int) -> [UInt8] { Array(b[..<offset]) + bytes + Array(b[offset...]) }
        let acTable = b[sos + 6] & 15
        let cases: [(String, [UInt8], String)] = [
            ("an undefined Huffman table", with(sos + 6, (b[sos + 6] & 0xF0) | 3), "Huffman table 0x03 was not defined"),
            ("an out-of-order refinement", with(sos + 9, 0x10),
             "Inconsistent progression sequence for component 0 coefficient 1"),
            ("a band past 63", with(sos + 8, 64), "Invalid progressive parameters Ss=1 Se=64 Ah=0 Al=2"),
            ("a component not in the frame", with(sos + 5, 9), "Invalid component ID 9 in SOS"),
            ("a Huffman table with an all-ones code", inserted([0xFF, 0xC4, 0x00, 0x16, 0x10 | acTable, 3]
                + [UInt8](repeating: 0, count: 15) + [0, 1, 2], at: sos), "Bogus Huffman table definition"),
            ("an unknown marker", inserted([0xFF, 0xF7, 0x00, 0x04, 0x00, 0x00], at: sos), "Unsupported marker type 0xf7"),
            ("a file cut short in scan 5", Array(b[..<((scans[4].dataStart + scans[4].dataEnd(in: b)) / 2)]),
             "Premature end of JPEG file"),
        ]
        for (name, bytes, message) in cases {
            let strict = DecodeMemoryTests.decode(bytes, scale: 8)
            #expect(strict == DecodeMemoryTests.decode(bytes, scale: 8, scans: CC_SCANS_UP_TO_NEEDED), "\(name)")
            #expect(strict.status != CC_OK.rawValue && strict.message == message, "\(name): \(strict.status) '\(strict.message)'")
            let lenient = DecodeMemoryTests.decode(bytes, scale: 8, lenient: true)
            #expect(lenient == DecodeMemoryTests.decode(bytes, scale: 8, lenient: true, scans: CC_SCANS_UP_TO_NEEDED), "\(name), lenient")
        }
    }

    /// FF D9 inside the data of a scan left out is not taken for the file's end: the needed scans
    /// after it would go unread and libjpeg would output what it had without a word (a helper's
    /// find: exit 0 and a thumbnail up to 17 levels off). The scans walked must complete what the
    /// image needs, else nothing is left out and libjpeg says what it said before. 4:2:0 and 4:4:4.
    @Test func anEOIInsideAScanLeftOutIsNotTheEndOfTheFile() throws {
        for name in ["coffee-pillow.jpg", "retina-444.jpg"] {
            let photo = try #require(try Self.photos.get().first { $0.name == name })
            let b = photo.bytes, scans = Self.scans(b)
            #expect(scans.count == 10 && scans[1].ss == 1 && scans[1].components == [1], "\(name)")
            let middle = (scans[1].dataStart + scans[1].dataEnd(in: b)) / 2
            let cases = [("FF D9 in scan 2", Array(b[..<middle]) + [0xFF, 0xD9] + Array(b[middle...])),
                         ("cut in scan 2, FF D9 added", Array(b[..<middle]) + [0xFF, 0xD9])]
            for (what, bytes) in cases {
                let strict = DecodeMemoryTests.decode(bytes, scale: 8)
                #expect(strict == DecodeMemoryTests.decode(bytes, scale: 8, scans: CC_SCANS_UP_TO_NEEDED), "\(name), \(what)")
                #expect(strict.status == CC_ERR_CORRUPT_DATA.rawValue && strict.message == "Corrupt JPEG data: premature end of data segment",
                        "\(name), \(what): \(strict)")
                let lenient = DecodeMemoryTests.decode(bytes, scale: 8, lenient: true)
                #expect(lenient == DecodeMemoryTests.decode(bytes, scale: 8, lenient: true, scans: CC_SCANS_UP_TO_NEEDED),
                        "\(name), \(what), lenient")
                #expect(lenient.status == CC_OK.rawValue && lenient != DecodeMemoryTests.decode(b, scale: 8, lenient: true),
                        "\(name), \(what): the lenient decode lacks the scans after the EOI")
            }
        }
    }

    /// Every test photo and JPEG fixture at 1/8: wherever reading every scan up to the last
    /// needed one decodes, leaving scans out decodes to the same pixels (the fuzzer's rule).
    @Test func leavingScansOutChangesNoDecode() throws {
        var files = try Self.photos.get().map { ($0.name, $0.bytes) }
        files += try DecodeMemoryTests.allFixtureFiles().filter { !$0.name.hasSuffix(".png") }
        var decoded = 0
        for (name, bytes) in files {
            for lenient in [false, true] {
                let before = DecodeMemoryTests.decode(bytes, scale: 8, lenient: lenient, scans: CC_SCANS_UP_TO_NEEDED)
                guard before.status == CC_OK.rawValue else { continue }
                #expect(DecodeMemoryTests.decode(bytes, scale: 8, lenient: lenient) == before, "\(name), lenient \(lenient)")
                decoded += 1
            }
        }
        #expect(decoded > 40)
    }

    /// A progressive file's coefficient arrays (one per component) are reserved as one arena
    /// block, so the second decode of a like image writes to pages the first faulted in. Before,
    /// each array was a block, and the reset grew one of them into the total: two thirds of the
    /// coefficient memory faulted in afresh for the second image. Page faults of this
    /// thread only (a test's body runs on one thread; others run beside it).
    @Test func aSecondProgressiveDecodeFaultsInNoNewCoefficientMemory() throws {
        let photo = try #require(try Self.photos.get().first { $0.name == "retina-444.jpg" })
        let arena = try #require(DecodeArena())
        let info = try ImageCodec.probe(photo.bytes)
        let coefficientPages = info.jpegCoefficientBytes / 4096
        #expect(coefficientPages > 15_000)
        #expect(DecodeMemoryTests.decode(photo.bytes, scale: 8, arena: arena).status == CC_OK.rawValue)
        let before = DecodeMemoryTests.threadFaults()
        for _ in 0..<2 {
            #expect(DecodeMemoryTests.decode(photo.bytes, scale: 8, arena: arena).status == CC_OK.rawValue)
        }
        let faults = DecodeMemoryTests.threadFaults() - before
        #expect(faults < coefficientPages / 10, "\(faults) page faults in two decodes, \(coefficientPages) pages of coefficients")
        #expect(arena.retainedBytes >= info.jpegCoefficientBytes)
    }
}
