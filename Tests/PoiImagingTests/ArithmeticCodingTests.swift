import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// Arithmetic-coded JPEGs (baseline and progressive), which libjpeg-turbo decodes: each is a
/// lossless transcode of a sample, so the pixels must equal the sample's exactly.
@Suite(.tags(.process)) struct ArithmeticCodingTests {
    static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Fixtures.repoRoot.appendingPathComponent(relative)))
    }

    @Test(arguments: [
        ("Tests/PoiImagingTests/Fixtures/arithmetic/coffee-arithmetic.jpg", "Samples/images/coffee.jpg"),
        ("Tests/PoiImagingTests/Fixtures/arithmetic/chelsea-arithmetic-progressive.jpg", "Samples/images/chelsea-progressive.jpg"),
    ])
    func decodesToTheSamePixelsAsTheHuffmanCodedSource(arithmetic: String, source: String) throws {
        let a = try ImageCodec.decode(try Self.bytes(arithmetic))
        let b = try ImageCodec.decode(try Self.bytes(source))
        #expect(a.width == b.width && a.height == b.height && a.channels == b.channels)
        #expect(a.bytes == b.bytes)
        let thumb = try Thumbnailer.make(from: try Self.bytes(arithmetic), spec: ThumbnailSpec(width: 64, height: 64))
        #expect(max(thumb.width, thumb.height) == 64)
    }
}
