// swift-tools-version:6.0
// PoiKit: batch tools (import, export, thumbnails) for a TourMyTown-style POI backend.
// Module layout and the rules of who may depend on whom: ../shared/DESIGN.md §3.
import PackageDescription

let package = Package(
    name: "PoiKit",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "poi", targets: ["poi"]),
        .library(name: "PoiKit", targets: ["PoiModel", "PoiFormats", "PoiImaging", "PoiStore", "PoiJobs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // System libraries: module maps only, no code.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CMongoC", pkgConfig: "libmongoc-1.0",
                       providers: [.apt(["libmongoc-dev", "libbson-dev"])]),

        // The only hand-written C: setjmp-guarded libjpeg/libpng calls.
        .target(name: "CCodecs", dependencies: ["CJPEG", "CPNG"],
                cSettings: [.unsafeFlags(["-O2"])]),

        .target(name: "PoiModel",
                dependencies: [.product(name: "Crypto", package: "swift-crypto")],
                exclude: ["README.md"]),
        // Parsers' hot loops live in final classes; dynamic exclusivity checks on their stored
        // properties cost ~10% of `poi check` (make bench-formats), and the classes are never
        // shared across threads, so checking is left to the compiler's static analysis.
        .target(name: "PoiFormats", dependencies: ["PoiModel"], exclude: ["README.md"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),
        .target(name: "PoiImaging", dependencies: ["CCodecs"], exclude: ["README.md"]),
        .target(name: "PoiStore", dependencies: ["CMongoC",
                                                 .product(name: "Crypto", package: "swift-crypto")],
                exclude: ["README.md"]),
        .target(name: "PoiJobs", dependencies: ["PoiModel", "PoiFormats", "PoiImaging", "PoiStore",
                                               .product(name: "Crypto", package: "swift-crypto")],
                exclude: ["README.md"]),
        .executableTarget(name: "poi", dependencies: [
            "PoiModel", "PoiFormats", "PoiImaging", "PoiStore", "PoiJobs",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Benchmark driver for `make bench-store` (not a user-facing command).
        .executableTarget(name: "poi-bench-store", dependencies: ["PoiStore"], path: "Benchmarks/StoreBench"),
        // libFuzzer harness for `make fuzz-formats` (built with -sanitize=fuzzer by
        // scripts/fuzz-formats.sh); a plain build makes a replayer of saved inputs.
        .executableTarget(name: "poi-fuzz-formats", dependencies: ["PoiFormats", "PoiModel"],
                          path: "Fuzz/FormatsFuzz"),

        .testTarget(name: "PoiModelTests", dependencies: ["PoiModel"]),
        .testTarget(name: "PoiFormatsTests", dependencies: ["PoiFormats", "PoiModel"], exclude: ["FuzzRegressions"]),
        .testTarget(name: "PoiImagingTests", dependencies: ["PoiImaging", "CCodecs"], exclude: ["Fixtures"]),
        .testTarget(name: "PoiStoreTests", dependencies: ["PoiStore", "CMongoC"]),
        .testTarget(name: "PoiJobsTests", dependencies: ["PoiJobs", "PoiStore", "PoiModel"]),
        // Runs the built `poi` binary end to end (exit codes, messages, --json).
        .testTarget(name: "PoiCLITests", dependencies: ["poi"]),
    ]
)
