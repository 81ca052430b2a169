import CWebP
import Foundation
import PoiTestSupport
import Testing
@testable import CCodecs
@testable import PoiImaging

/// WebP thumbnails: what `cc_encode_webp` writes is read back with libwebp's own
/// decoder (an independent reader of the bytes, not PoiKit's), on the real photos in Samples/.
@Suite(.tags(.process)) struct WebPThumbnailTests {
    static func sample(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Fixtures.repoRoot.appendingPathComponent("Samples/images/\(name)")))
    }

    /// The RIFF chunk names after "WEBP" (`VP8 ` alone for a simple lossy file; `VP8X`, `ALPH`,
    /// `VP8 ` for one with alpha), checking the container's sizes on the way.
    static func chunks(_ b: [UInt8]) -> [String]? {
        guard b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) else { return nil }
        func le32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
        guard le32(4) + 8 == b.count else { return nil }
        var names: [String] = [], i = 12
        while i + 8 <= b.count {
            names.append(String(decoding: b[i..<i + 4], as: UTF8.self))
            i += 8 + le32(i + 4) + (le32(i + 4) & 1)
        }
        return i == b.count ? names : nil
    }

    /// libwebp's decode of `bytes`: size, whether the bitstream says alpha, RGBA pixels.
    static func decode(_ bytes: [UInt8]) throws -> (width: Int, height: Int, hasAlpha: Bool, rgba: [UInt8]) {
        var features = WebPBitstreamFeatures()
        let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw FixtureError(description: "WebPGetFeatures: status \(status)") }
        var w: Int32 = 0, h: Int32 = 0
        guard let pixels = bytes.withUnsafeBufferPointer({ WebPDecodeRGBA($0.baseAddress, $0.count, &w, &h) }) else {
            throw FixtureError(description: "WebPDecodeRGBA refused the thumbnail")
        }
        defer { WebPFree(pixels) }
        return (Int(w), Int(h), features.has_alpha != 0, Array(UnsafeBufferPointer(start: pixels, count: Int(w * h * 4))))
    }

    @Test func photoBecomesALossyWebPOfTheThumbnailSize() throws {
        let bytes = try Self.sample("coffee.jpg")
        let thumb = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(format: .webp))
        #expect(thumb.format == .webp && thumb.contentType == "image/webp")
        #expect(thumb.format.fileExtension == ".webp")
        #expect(Self.chunks(thumb.data) == ["VP8 "], "an opaque photo is a simple lossy file")
        #expect((thumb.width, thumb.height) == (256, 171))
        let decoded = try Self.decode(thumb.data)
        #expect((decoded.width, decoded.height) == (thumb.width, thumb.height))
        #expect(!decoded.hasAlpha)

        // The same pixels as the lossless PNG thumbnail of the same recipe, within lossy error.
        let png = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(format: .png))
        let reference = try ImageCodec.decode(png.data)
        #expect(reference.channels == 3)
        var rgb: [UInt8] = []
        rgb.reserveCapacity(decoded.width * decoded.height * 3)
        for i in stride(from: 0, to: decoded.rgba.count, by: 4) { rgb += decoded.rgba[i..<i + 3] }
        let db = psnr(rgb, reference.bytes)
        #expect(db >= 30, "PSNR \(db) dB against the PNG thumbnail")
    }

    /// An RGBA source keeps its alpha: a VP8X file with an ALPH chunk, and (alpha being coded
    /// losslessly) the very alpha values of the PNG thumbnail.
    @Test func alphaIsKept() throws {
        let bytes = try Self.sample("chelsea-cutout.png")
        #expect(try ImageCodec.probe(bytes).hasAlpha)
        let thumb = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(format: .webp))
        #expect(thumb.format == .webp)
        #expect(Self.chunks(thumb.data) == ["VP8X", "ALPH", "VP8 "])
        let decoded = try Self.decode(thumb.data)
        #expect(decoded.hasAlpha)
        let png = try ImageCodec.decode(try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(format: .png)).data)
        #expect(png.channels == 4 && (png.width, png.height) == (decoded.width, decoded.height))
        let webpAlpha = stride(from: 3, to: decoded.rgba.count, by: 4).map { decoded.rgba[$0] }
        let pngAlpha = stride(from: 3, to: png.bytes.count, by: 4).map { png.bytes[$0] }
        #expect(webpAlpha == pngAlpha)
        #expect(webpAlpha.contains(0) && webpAlpha.contains(255), "the cutout has clear corners and an opaque cat")
    }

    @Test func higherQualityNeverGivesASmallerFile() throws {
        let bytes = try Self.sample("rocket.jpg")
        let sizes = try [10, 30, 50, 70, 85, 95, 100].map { q in
            try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(format: .webp, quality: q)).data.count
        }
        #expect(sizes == sizes.sorted() && Set(sizes).count == sizes.count, "bytes by quality: \(sizes)")
    }

    /// `cc_encode_webp` of 8-bit pixels held by Swift: the status, and the bytes when it succeeded.
    static func encode(_ pixels: [UInt8], width: Int, height: Int, channels: Int,
                       quality: Int32 = 90) -> (cc_result, [UInt8]) {
        var copy = pixels
        return copy.withUnsafeMutableBufferPointer { buffer in
            var image = cc_image(pixels: buffer.baseAddress, width: UInt32(width), height: UInt32(height),
                                 channels: Int32(channels), bytes_per_sample: 1, stride: width * channels)
            var out: UnsafeMutablePointer<UInt8>? = nil
            var length = 0
            let result = cc_encode_webp(&image, quality, &out, &length)
            defer { cc_free(out) }
            return (result, out.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? [])
        }
    }

    /// Gray and gray+alpha go in as RGB(A): the decode is gray, alpha as given.
    @Test func grayWithAlphaIsWrittenAsGray() throws {
        let (w, h) = (33, 17)
        var pixels = [UInt8](repeating: 0, count: w * h * 2)
        for y in 0..<h {
            for x in 0..<w {
                pixels[(y * w + x) * 2] = UInt8(x * 7)
                pixels[(y * w + x) * 2 + 1] = UInt8(y * 15)
            }
        }
        let (result, bytes) = Self.encode(pixels, width: w, height: h, channels: 2)
        #expect(result.status == CC_OK)
        let decoded = try Self.decode(bytes)
        #expect((decoded.width, decoded.height) == (w, h) && decoded.hasAlpha)
        var worst = 0
        for i in stride(from: 0, to: decoded.rgba.count, by: 4) {
            let (r, g, b) = (Int(decoded.rgba[i]), Int(decoded.rgba[i + 1]), Int(decoded.rgba[i + 2]))
            worst = max(worst, abs(r - g), abs(g - b))
            #expect(decoded.rgba[i + 3] == UInt8((i / 4 / w) * 15))
        }
        #expect(worst <= 2, "chroma of a gray image: \(worst) levels")
    }

    /// Refusals come back as the other encoders' do: a status and a message, mapped to ImageError.
    @Test func impossibleRequestsAreTypedErrors() throws {
        let row = [UInt8](repeating: 128, count: 16384 * 3)
        let (tooWide, none) = Self.encode(row, width: 16384, height: 1, channels: 3)
        #expect(tooWide.status == CC_ERR_ARGUMENT && none.isEmpty)
        #expect(throws: ImageError.invalidSpec("WebP images are at most 16383x16383 pixels, this one is 16384x1")) {
            _ = try ImageCodec.check(tooWide, cc_image(), format: .webp)
        }
        #expect(Self.encode(row, width: 16383, height: 1, channels: 3).0.status == CC_OK)
        #expect(Self.encode(row, width: 64, height: 1, channels: 3, quality: 0).0.status == CC_ERR_ARGUMENT)
        #expect(throws: ImageError.invalidSpec("WebP thumbnails are at most 16383x16383, got 16384x256")) {
            try ThumbnailSpec(width: 16384, height: 256, format: .webp)
        }
        #expect(try ThumbnailSpec(width: 16384, height: 256, format: .jpeg).width == 16384)
    }

    /// WebP is written, never read: a WebP given as a source is still "not a JPEG or PNG file".
    @Test func aWebPSourceIsStillUnsupported() throws {
        let webp = try Thumbnailer.make(from: try Self.sample("coffee.jpg"), spec: ThumbnailSpec(format: .webp)).data
        #expect(ImageFormat.detect(webp) == nil)
        let magic = webp.prefix(8).map { String(format: "%02X", $0) }.joined()
        #expect(throws: ImageError.unrecognizedFormat(magic: magic)) { try ImageCodec.probe(webp) }
        #expect(throws: ImageError.unrecognizedFormat(magic: magic)) {
            try Thumbnailer.make(from: webp, spec: ThumbnailSpec(format: .webp))
        }
        #expect(ImageError.unrecognizedFormat(magic: magic).description.hasPrefix("not a JPEG or PNG file: starts with 0x52494646"))
    }

    @Test func libwebpIsLinked() {
        // Debian bookworm ships 1.2.4; the point is that the encoder is there and answers.
        #expect(ImagingLibraries.libwebp.hasPrefix("1."))
    }
}
