import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// The real photos in Samples/images/ (public domain / CC0): PoiKit's decode equals Pillow's
/// (PNG exactly, JPEG within the 45 dB floor), orientation agrees, thumbnails are upright, and a
/// file Pillow refuses (the truncated one) is refused here too.
@Suite(.tags(.process)) struct SamplePhotoTests {
    @Test func samplesDecodeLikePillow() throws {
        let fx = try Fixtures.load()
        #expect(fx.manifest.samples.count >= 5, "Samples/images/ should hold the demo photos")
        for s in fx.manifest.samples {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: s.file)))
            let name = URL(fileURLWithPath: s.file).lastPathComponent
            if let pillowError = s.pillowError {
                #expect(throws: ImageError.self, "\(name): Pillow refused it (\(pillowError))") {
                    try ImageCodec.decode(bytes)
                }
                continue
            }
            // The codec against Pillow's decode: pixels as stored, before colour management
            // (rocket.jpg is tagged Adobe RGB; ColorManagementTests checks the conversion).
            let pixels = try ImageCodec.decode(bytes, options: DecodeOptions(colorManaged: false))
            #expect(pixels.width == s.width && pixels.height == s.height, "\(name)")
            #expect(pixels.channels == s.channels && pixels.bitDepth == s.bitDepth, "\(name)")
            let ref = try fx.bytes(s.ref ?? "")
            guard pixels.bytes.count == ref.count else {
                Issue.record("\(name): \(pixels.bytes.count) bytes decoded, reference has \(ref.count)")
                continue
            }
            if s.format == "png" {
                #expect(maxDifference(pixels.bytes, ref, bitDepth: pixels.bitDepth) == 0, "\(name)")
            } else {
                let db = psnr(pixels.bytes, ref)
                #expect(db >= 45, "\(name): PSNR \(db) dB")
            }
            let info = try ImageCodec.probe(bytes)
            #expect(info.orientation == s.orientation, "\(name)")

            let thumb = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 128, height: 128))
            let longSide = max(info.orientedWidth, info.orientedHeight)
            let expectedLong = min(128, longSide)
            #expect(max(thumb.width, thumb.height) == expectedLong, "\(name)")
            #expect((thumb.width >= thumb.height) == (info.orientedWidth >= info.orientedHeight), "\(name)")
            #expect(thumb.format == (info.hasAlpha ? .png : .jpeg), "\(name)")
        }
    }
}
