import Foundation
import Testing
@testable import PoiImaging

/// Every file in Fixtures/regressions/ (fuzzer finds) goes through probe, decode and thumbnail:
/// a typed error or a result are both fine; a crash fails the whole test run.
@Suite struct RegressionTests {
    @Test func regressionInputsNeverCrash() throws {
        let dir = Fixtures.repoRoot.appendingPathComponent("Tests/PoiImagingTests/Fixtures/regressions")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") }
        let spec = try ThumbnailSpec(width: 64, height: 64)
        let small = DecodeOptions(maxPixels: 1 << 22)
        for file in files.sorted() {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(file)))
            _ = try? ImageCodec.probe(bytes)
            _ = try? ImageCodec.decode(bytes, options: small)
            _ = try? ImageCodec.decode(bytes, options: DecodeOptions(maxPixels: 1 << 22, lenient: true))
            _ = try? Thumbnailer.make(from: bytes, spec: spec, options: small)
        }
    }
}
