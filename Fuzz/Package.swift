// swift-tools-version:6.0
// PoiKit's fuzz harnesses, a package of their own (as swift-nio keeps its benchmarks) so the
// PoiKit package ships no fuzzers and needs no sanitizer or unsafe flags.
//
//   poi-fuzz-formats  libFuzzer over the PoiFormats readers (make fuzz-formats;
//                     scripts/fuzz-formats.sh builds it with -sanitize=fuzzer,address and
//                     -DPOI_LIBFUZZER on the command line, so PoiFormats itself is instrumented
//                     too). A plain `swift build --package-path Fuzz` makes a replayer of saved inputs.
//   fuzz_decode.c     libFuzzer over the CCodecs decoders (make fuzz-images): plain C, built by
//                     scripts/fuzz-images.sh with clang, not by SwiftPM.
import PackageDescription

let package = Package(
    name: "PoiKitFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "PoiKit", path: ".."),
    ],
    targets: [
        .executableTarget(name: "poi-fuzz-formats",
                          dependencies: [.product(name: "PoiFormats", package: "PoiKit")],
                          path: "FormatsFuzz"),
    ]
)
