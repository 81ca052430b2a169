import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// Hostile inputs: each gets its exact error, from probe, decode and thumbnail alike.
@Suite(.tags(.process, .budget)) struct HostileFileTests {
    static let spec = try! ThumbnailSpec(width: 64, height: 64)

    func allPaths(_ bytes: [UInt8]) -> [ImageError?] {
        var errors: [ImageError?] = []
        do { _ = try ImageCodec.decode(bytes); errors.append(nil) } catch { errors.append(error) }
        do { _ = try Thumbnailer.make(from: bytes, spec: Self.spec); errors.append(nil) } catch { errors.append(error) }
        return errors
    }

    @Test func zeroBytes() throws {
        let bytes = try Fixtures.load().bytes("empty.jpg")
        #expect(allPaths(bytes) == [.empty, .empty])
        #expect(throws: ImageError.empty) { try ImageCodec.probe(bytes) }
        #expect(ImageError.empty.description == "empty file (0 bytes)")
    }

    @Test func randomBytesAndWrongMagic() throws {
        let fx = try Fixtures.load()
        for file in ["random.bin", "wrong_magic.png"] {
            let bytes = try fx.bytes(file)
            let magic = bytes.prefix(8).map { String(format: "%02X", $0) }.joined()
            let expected = ImageError.unrecognizedFormat(magic: magic)
            #expect(allPaths(bytes) == [expected, expected])
            #expect(throws: expected) { try ImageCodec.probe(bytes) }
        }
        let gif = try fx.bytes("wrong_magic.png")
        #expect(ImageFormat.detect(gif) == nil)
        #expect(ImageError.unrecognizedFormat(magic: "4749463839610102").description
            == "not a JPEG or PNG file: starts with 0x4749463839610102")
    }

    @Test func truncatedJPEGIsRejectedUnlessLenient() throws {
        let bytes = try Fixtures.load().bytes("truncated.jpg")
        let expected = ImageError.corruptData(format: .jpeg, reason: "Premature end of JPEG file")
        #expect(allPaths(bytes) == [expected, expected])
        #expect(expected.description == "damaged JPEG: Premature end of JPEG file")
        let partial = try ImageCodec.decode(bytes, options: DecodeOptions(lenient: true))
        #expect(partial.width == 67 && partial.height == 45)
    }

    @Test func truncatedPNG() throws {
        let bytes = try Fixtures.load().bytes("truncated.png")
        let expected = ImageError.decodeFailed(format: .png, reason: "unexpected end of file (truncated PNG)")
        #expect(allPaths(bytes) == [expected, expected])
        #expect(expected.description == "invalid PNG: unexpected end of file (truncated PNG)")
    }

    @Test func damagedIDATChecksum() throws {
        let bytes = try Fixtures.load().bytes("bad_crc.png")
        let expected = ImageError.decodeFailed(format: .png, reason: "IDAT: CRC error")
        #expect(allPaths(bytes) == [expected, expected])
    }

    @Test func damagedIDATData() throws {
        // zlib notices the damage before the chunk's CRC is reached; its message comes through.
        let bytes = try Fixtures.load().bytes("corrupt_idat.png")
        let expected = ImageError.decodeFailed(format: .png, reason: "IDAT: invalid stored block lengths")
        #expect(allPaths(bytes) == [expected, expected])
    }

    @Test func jpegFrameHeaderWithZeroHeight() throws {
        let bytes = try Fixtures.load().bytes("jpeg_bad_sof.jpg")
        let expected = ImageError.decodeFailed(format: .jpeg, reason: "Empty JPEG image (DNL not supported)")
        #expect(allPaths(bytes) == [expected, expected])
        #expect(throws: expected) { try ImageCodec.probe(bytes) }
        #expect(expected.description == "invalid JPEG: Empty JPEG image (DNL not supported)")
    }

    @Test func jpegSignatureFollowedByZeros() throws {
        let bytes = try Fixtures.load().bytes("jpeg_garbage_header.jpg")
        let expected = ImageError.corruptData(format: .jpeg, reason: "Premature end of JPEG file")
        #expect(allPaths(bytes) == [expected, expected])
        #expect(throws: expected) { try ImageCodec.probe(bytes) }
    }

    @Test func pngBombIsRejectedFromItsHeader() throws {
        let bytes = try Fixtures.load().bytes("bomb_30000.png")
        #expect(bytes.count < 4096)
        let before = peakRSS()
        let start = ContinuousClock.now
        let expected = ImageError.tooLarge(width: 30000, height: 30000, maxPixels: 100_000_000)
        #expect(allPaths(bytes) == [expected, expected])
        #expect(ContinuousClock.now - start < .seconds(1))
        // Peak RSS may not grow by anything like the 900 MB the pixels would need.
        #expect(peakRSS() - before < 64 << 20)
        #expect(expected.description == "image is 30000x30000 (900.0 MP), over the limit of 100.0 MP")
        // The header itself is fine: probing reports it without decoding.
        let info = try ImageCodec.probe(bytes)
        #expect(info.width == 30000 && info.height == 30000 && info.bitDepth == 8 && info.channels == 1)
    }

    @Test(arguments: ["bomb_64250.jpg", "bomb_64250_progressive.jpg"])
    func jpegBombIsRejectedFromItsHeader(file: String) throws {
        let bytes = try Fixtures.load().bytes(file)
        let before = peakRSS()
        let expected = ImageError.tooLarge(width: 64250, height: 64250, maxPixels: 100_000_000)
        #expect(allPaths(bytes) == [expected, expected])
        #expect(peakRSS() - before < 64 << 20)
        #expect(expected.description == "image is 64250x64250 (4128.1 MP), over the limit of 100.0 MP")
    }

    @Test func pixelLimitIsInclusive() throws {
        let bytes = try Fixtures.load().bytes("png_rgb8.png") // 67x45 = 3015 pixels
        #expect(try ImageCodec.decode(bytes, options: DecodeOptions(maxPixels: 3015)).width == 67)
        #expect(throws: ImageError.tooLarge(width: 67, height: 45, maxPixels: 3014)) {
            try ImageCodec.decode(bytes, options: DecodeOptions(maxPixels: 3014))
        }
    }
}
