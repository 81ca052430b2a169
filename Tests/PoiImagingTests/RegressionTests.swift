import Foundation
import PoiTestSupport
import Testing
@testable import PoiImaging

/// Every file in Fixtures/regressions/ (fuzzer finds, each a damaged file) goes through probe,
/// decode and thumbnail: each path refuses it with a typed `ImageError` (a crash fails the whole
/// test run; an input that came back as an image would be a damaged file shown as one).
@Suite(.tags(.process)) struct RegressionTests {
    @Test func regressionInputsAreRefusedWithATypedError() throws {
        let dir = Fixtures.repoRoot.appendingPathComponent("Tests/PoiImagingTests/Fixtures/regressions")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") }
        try #require(!files.isEmpty)
        let spec = try ThumbnailSpec(width: 64, height: 64)
        let small = DecodeOptions(maxPixels: 1 << 22)
        for file in files.sorted() {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(file)))
            #expect(throws: ImageError.self, "probe of \(file)") { try ImageCodec.probe(bytes) }
            #expect(throws: ImageError.self, "decode of \(file)") { try ImageCodec.decode(bytes, options: small) }
            #expect(throws: ImageError.self, "lenient decode of \(file)") {
                try ImageCodec.decode(bytes, options: DecodeOptions(maxPixels: 1 << 22, lenient: true))
            }
            #expect(throws: ImageError.self, "thumbnail of \(file)") { try Thumbnailer.make(from: bytes, spec: spec, options: small) }
        }
    }

    /// fuzz_png: a 200-byte PNG whose eXIf chunk declares 1,560,281,114 bytes made libpng 1.6.39
    /// allocate that much before reading (chunk_malloc_max does not cover eXIf there).
    @Test func aChunkLongerThanTheFileIsRefusedBeforeLibpngAllocatesIt() throws {
        let url = Fixtures.repoRoot.appendingPathComponent(
            "Tests/PoiImagingTests/Fixtures/regressions/png-exif-1.5GB-chunk-2026-11-22.png")
        let bytes = [UInt8](try Data(contentsOf: url))
        #expect(throws: ImageError.decodeFailed(format: .png, reason: "eXIf: chunk length 1560281114 exceeds the \(bytes.count - 41) bytes left in the file")) {
            try ImageCodec.probe(bytes)
        }
    }
}
