// libFuzzer harness over the PoiFormats readers (make fuzz-formats; scripts/fuzz-formats.sh).
//
// Built by SwiftPM, not by swiftc by hand: PoiModel needs swift-crypto's `Crypto` (SHA-256 import
// keys), and only SwiftPM builds that module and its BoringSSL C code reliably from a fresh clone.
// scripts/fuzz-formats.sh builds this product with
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -DPOI_LIBFUZZER  (scratch path .build-fuzz)
// so `main` hands over to libFuzzer, which calls `LLVMFuzzerTestOneInput`. A plain `swift build`
// (no POI_LIBFUZZER) makes an ordinary executable that replays the files named on its command
// line once each: `poi-fuzz-formats csv|geojson FILE...` (how a crash input is rerun under a
// debugger; `swift test` replays the committed ones in Tests/PoiFormatsTests/FuzzRegressions/).
//
// One binary, two targets, chosen by POI_FUZZ_FORMAT=csv|geojson (libFuzzer owns argv):
//   csv      the input is read as CSV ('x' is put in front when it would sniff as GeoJSON);
//   geojson  the input is read as GeoJSON ('{' is put in front when it would sniff as CSV).
// Each input is read twice and both reads must agree item for item:
//   1. PlaceReader over an in-memory ByteSource (the production path: sniffing, replay, batches
//      converted on worker threads);
//   2. the format's own reader directly, over a ByteSource that returns 1-16 bytes per read (as a
//      pipe's short reads can), with one worker: every chunk boundary falls somewhere new.
// Limits are small so the fuzzer reaches the over-limit paths without big inputs.
@_spi(Fuzzing) import PoiFormats
import PoiModel
#if canImport(Glibc)
import Glibc
#endif

enum FuzzFormat: String {
    case csv, geojson
    var input: InputFormat { self == .csv ? .csv : .geojson }
}

/// Runs one input through both reads (`ReadConsistency`, shared with the regression tests);
/// traps — a libFuzzer crash — when they disagree or a reader stops advancing.
func fuzzOne(_ input: [UInt8], as format: FuzzFormat) {
    // The chunk size comes from the input itself (FNV-1a), so a find replays identically.
    var hash: UInt32 = 2166136261
    for b in input { hash = (hash ^ UInt32(b)) &* 16777619 }
    let reads = ReadConsistency.read(input, as: format.input, chunkSize: 1 + Int(hash % 16))
    if reads.stalled { fatalError("more than \(ReadConsistency.maxItems) items: the reader is not advancing") }
    if !reads.agree { fatalError(reads.difference) }
}

#if POI_LIBFUZZER
let fuzzTarget: FuzzFormat = {
    guard let v = getenv("POI_FUZZ_FORMAT"), let f = FuzzFormat(rawValue: String(cString: v)) else {
        fatalError("set POI_FUZZ_FORMAT=csv or geojson")
    }
    return f
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)), as: fuzzTarget)
    return 0
}

/// libFuzzer's entry point when the program has its own `main` (LLVM >= 11).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

// `main` is ours in both builds: SwiftPM links debug executables on Linux through a renamed entry
// point (`--defsym main=poi_fuzz_formats_main`, for testable executables), so libFuzzer's own
// `main` cannot be used; under POI_LIBFUZZER ours hands over to libFuzzer's driver instead.
@main struct FuzzMain {
    static func main() {
        #if POI_LIBFUZZER
        _ = fuzzTarget
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzz))
        #else
        replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    static func fail(_ message: String) -> Never {
        var line = Array((message + "\n").utf8)
        _ = write(2, &line, line.count)
        exit(2)
    }

    /// `poi-fuzz-formats csv|geojson FILE...`: each file through `fuzzOne` once.
    static func replay(_ args: [String]) {
        guard let first = args.first, let format = FuzzFormat(rawValue: first), args.count > 1 else {
            fail("usage: poi-fuzz-formats csv|geojson FILE...")
        }
        for path in args.dropFirst() {
            guard let f = fopen(path, "rb") else { fail("\(path): cannot open") }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = fread(&chunk, 1, chunk.count, f)
                if n <= 0 { break }
                bytes.append(contentsOf: chunk[0..<n])
            }
            fclose(f)
            fuzzOne(bytes, as: format)
            print("\(path): ok")
        }
    }
}
