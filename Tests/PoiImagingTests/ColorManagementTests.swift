import CLCMS2
import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// Pixels tagged with an ICC profile come out in sRGB. Fixtures are made at test
/// time (Fixtures/make_color_fixtures.py) from a sample photo with Pillow's ImageCms, which also
/// gives the independent colour-managed reference: mean channel difference ≤ 1.5, max ≤ 8.
@Suite(.tags(.process)) struct ColorManagementTests {
    struct Made: Sendable {
        let dir: URL
        func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: dir.appendingPathComponent(name))) }
    }

    static let fixtures: Result<Made, FixtureError> = {
        let dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory
            .appendingPathComponent("poicolor-fixtures-\(getpid())"))
        try? FileManager.default.removeItem(at: dir)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let p3 = dir.appendingPathComponent("display-p3.icc")
        guard let profile = displayP3Profile(), (try? Data(profile).write(to: p3)) != nil else {
            return .failure(FixtureError(description: "could not build the Display P3 profile with Little CMS"))
        }
        let process = Process()
        process.executableURL = Fixtures.repoRoot.appendingPathComponent(".venv/bin/python")
        process.arguments = [Fixtures.repoRoot.appendingPathComponent("Tests/PoiImagingTests/Fixtures/make_color_fixtures.py").path,
                             dir.path, p3.path]
        let err = Pipe()
        process.standardError = err
        do { try process.run() } catch { return .failure(FixtureError(description: "cannot run the fixture script: \(error)")) }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(FixtureError(description: "make_color_fixtures.py failed (run `make setup`: it needs icc-profiles-free, libgs-common and imagemagick-6.q16): \(text)"))
        }
        return .success(Made(dir: dir))
    }()

    /// Display P3 (what recent iPhones tag their photos with) from its definition: DCI-P3
    /// primaries, D65 white, the sRGB tone curve. Pillow cannot make one; Little CMS can.
    static func displayP3Profile() -> [UInt8]? {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1.0)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: 0.680, y: 0.320, Y: 1.0),
                                        Green: cmsCIExyY(x: 0.265, y: 0.690, Y: 1.0),
                                        Blue: cmsCIExyY(x: 0.150, y: 0.060, Y: 1.0))
        var params: [cmsFloat64Number] = [2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, &params) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&white, &primaries, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        let mlu = cmsMLUalloc(nil, 1)
        defer { cmsMLUfree(mlu) }
        cmsMLUsetASCII(mlu, "en", "US", "Display P3")
        cmsWriteTag(profile, cmsSigProfileDescriptionTag, UnsafeRawPointer(mlu))
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }

    static func differences(_ a: [UInt8], _ b: [UInt8]) -> (mean: Double, max: Int) {
        precondition(a.count == b.count, "\(a.count) vs \(b.count) samples")
        var sum = 0, worst = 0
        for i in 0..<a.count {
            let d = abs(Int(a[i]) - Int(b[i]))
            sum += d
            worst = max(worst, d)
        }
        return (Double(sum) / Double(a.count), worst)
    }

    @Test(arguments: [("rocket.jpg", "Adobe RGB (1998)"), ("p3.jpg", "Display P3"), ("adobe.jpg", "Adobe RGB"), ("adobe.png", "Adobe RGB"), ("adobe-alpha.png", "Adobe RGB"),
                      ("gray.jpg", "Gray"), ("gray.png", "Gray"),
                      // CMYK JPEGs with a press profile: Adobe YCCK (ImageMagick), Adobe CMYK
                      // (Pillow), both inverted, and plain CMYK (no APP14).
                      ("cmyk-ycck.jpg", "Artifex CMYK SWOP Profile"), ("cmyk-adobe.jpg", "Artifex CMYK SWOP Profile"),
                      ("cmyk-plain.jpg", "Artifex CMYK SWOP Profile")])
    func taggedPixelsMatchAColourManagedReference(name: String, profile: String) throws {
        let made = try Self.fixtures.get()
        let bytes = try made.bytes(name)
        let info = try ImageCodec.probe(bytes)
        #expect(info.iccProfile?.contains(profile) == true, "\(name): \(String(describing: info.iccProfile))")
        #expect(info.colorWarning == nil, "\(name): \(info.colorWarning ?? "")")
        let managed = try ImageCodec.decode(bytes)
        let reference = try made.bytes(name + ".srgb")
        let d = Self.differences(managed.bytes, reference)
        #expect(d.mean <= 1.5 && d.max <= 8, "\(name): mean \(d.mean), max \(d.max)")
        // Without colour management the same pixels are far off: the test measures the conversion.
        let unmanaged = try ImageCodec.decode(bytes, options: DecodeOptions(colorManaged: false))
        let off = Self.differences(unmanaged.bytes, reference)
        #expect(off.mean > 3 * max(d.mean, 1), "\(name): unmanaged mean \(off.mean) vs managed \(d.mean)")
    }

    @Test func untaggedImagesAreBitIdenticalToTheUnmanagedDecode() throws {
        let made = try Self.fixtures.get()
        for name in ["untagged.jpg"] {
            let bytes = try made.bytes(name)
            #expect(try ImageCodec.probe(bytes).iccProfile == nil)
            #expect(try ImageCodec.decode(bytes) == (try ImageCodec.decode(bytes, options: DecodeOptions(colorManaged: false))))
        }
        let photo = [UInt8](try Data(contentsOf: Fixtures.repoRoot.appendingPathComponent("Samples/images/coffee.jpg")))
        let spec = try ThumbnailSpec(width: 256, height: 256)
        #expect(try Thumbnailer.make(from: photo, spec: spec) == (try Thumbnailer.make(from: photo, spec: spec,
                                                                                       options: DecodeOptions(colorManaged: false))))
    }

    /// Hostile and damaged profiles: ignored with a reason, the image decodes as if untagged
    /// (the pixels are those of `sameAs`, a file with the same image data, decoded unmanaged).
    @Test(arguments: [("missing-chunk.jpg", "ICC profile has 1 of its 2 chunks", "untagged.jpg"),
                      ("corrupt-profile.jpg", "ICC profile ignored: ", "untagged.jpg"),
                      ("gray-with-rgb-profile.jpg", "ICC profile ignored: a gray image with a colour profile", "gray-with-rgb-profile.jpg"),
                      // Cut to its first half, the tags a CMYK → sRGB conversion reads are still
                      // whole: only the size in the header tells. Today's CMYK conversion instead.
                      ("cmyk-truncated-profile.jpg", "ICC profile ignored: truncated to 93742 of its 187484 bytes", "cmyk-adobe.jpg"),
                      ("truncated-profile.png", "ICC profile ignored: iCCP: ", "adobe.png")])
    func unusableProfilesAreIgnoredWithAWarning(name: String, warning: String, sameAs: String) throws {
        let made = try Self.fixtures.get()
        let bytes = try made.bytes(name)
        // The thumbnail's source carries the warning: from the header for a damaged profile, from
        // the decode for one that cannot serve these pixels (a colour profile on a gray image).
        let thumbnail = try Thumbnailer.make(from: bytes, spec: try ThumbnailSpec(width: 128, height: 128))
        #expect(thumbnail.source.colorWarning?.hasPrefix(warning) == true, "\(name): \(String(describing: thumbnail.source.colorWarning))")
        let untagged = try ImageCodec.decode(try made.bytes(sameAs), options: DecodeOptions(colorManaged: false))
        #expect(try ImageCodec.decode(bytes) == untagged, "\(name): pixels changed by a profile that was not used")
    }

    @Test func chunksOutOfOrderAndRepeatedAreReassembledBySequence() throws {
        let made = try Self.fixtures.get()
        let bytes = try made.bytes("reordered.jpg")
        let info = try ImageCodec.probe(bytes)
        #expect(info.iccProfile?.contains("Adobe RGB") == true, "\(String(describing: info.iccProfile)) \(info.colorWarning ?? "")")
        #expect(try ImageCodec.decode(bytes) != (try ImageCodec.decode(bytes, options: DecodeOptions(colorManaged: false))))
    }
}
