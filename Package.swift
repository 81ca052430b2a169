// swift-tools-version:6.1
// PoiKit: batch tools (import, export, thumbnails) for a TourMyTown-style POI backend.
// Module layout and the rules of who may depend on whom: ARCHITECTURE.md §3.
import PackageDescription

let package = Package(
    name: "PoiKit",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "poi", targets: ["poi"]),
        .library(name: "PoiKit", targets: ["PoiModel", "PoiFiles", "PoiFormats", "PoiImaging", "PoiStore", "PoiJobs"]),
        // One layer each, for packages that need only that layer (Fuzz/ reads formats, Benchmarks/
        // drives the store) and should not build libmongoc or libjpeg code they never call.
        .library(name: "PoiFormats", targets: ["PoiModel", "PoiFormats"]),
        .library(name: "PoiStore", targets: ["PoiFiles", "PoiStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `poi serve` only (PoiServer). Hummingbird without its ConfigurationSupport trait, which
        // would build swift-configuration for nothing; never HummingbirdTesting (AsyncHTTPClient
        // and BoringSSL cost minutes of cold build: the tests use loopback HTTP with curl instead).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Already built for Hummingbird: its HTTP part types, for `poi serve`'s 100-continue handler.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        // System libraries: module maps only, no code.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2",
                       providers: [.apt(["liblcms2-dev"])]),
        // libwebp: thumbnails written as lossy WebP (`--format webp`); never decoded.
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp",
                       providers: [.apt(["libwebp-dev"])]),
        // libdeflate: a PNG's image data inflated in one call, 2-3x zlib's speed, when the
        // whole buffer fits the image's memory reservation (CCodecs/png_codec.c).
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate",
                       providers: [.apt(["libdeflate-dev"])]),
        // zlib: gzip'd dumps read and written streaming by PoiFormats. On every machine
        // already, as libpng's dependency.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMongoC", pkgConfig: "libmongoc-1.0",
                       providers: [.apt(["libmongoc-dev", "libbson-dev"])]),

        // The only hand-written C: setjmp-guarded libjpeg/libpng calls, the libwebp encoder, Little CMS
        // colour and the pixel kernels (why they are C: Sources/CCodecs/README.md). No flags: SwiftPM
        // builds C -O2 in release.
        .target(name: "CCodecs", dependencies: ["CJPEG", "CPNG", "CLCMS2", "CWebP", "CDeflate"], exclude: ["README.md"]),
        // Typed wrappers for the C library calls Swift's Glibc module leaves out (mallopt,
        // sync_file_range), so no Swift code looks them up with dlsym (Sources/CSystemShims/README.md).
        .target(name: "CSystemShims", exclude: ["README.md"]),

        // Local files: whole-file reads, atomic writes, paths (FilePath), temporary-file cleanup.
        .target(name: "PoiFiles",
                dependencies: [.product(name: "SystemPackage", package: "swift-system")],
                exclude: ["README.md"]),
        // OpenSSL's libcrypto, which libmongoc links already: SHA-256 and SHA-1 for PoiDigest.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // SHA-256 and SHA-1 over COpenSSL: one crypto library in the process, none compiled here.
        .target(name: "PoiDigest", dependencies: ["COpenSSL"], exclude: ["README.md"]),
        .target(name: "PoiModel", dependencies: ["PoiDigest"], exclude: ["README.md"]),
        .target(name: "PoiFormats", dependencies: ["PoiModel", "CZlib", "CSystemShims"], exclude: ["README.md"]),
        .target(name: "PoiImaging", dependencies: ["CCodecs"], exclude: ["README.md"]),
        .target(name: "PoiStore", dependencies: ["CMongoC", "PoiFiles", "PoiDigest"], exclude: ["README.md"]),
        .target(name: "PoiJobs", dependencies: ["PoiModel", "PoiFormats", "PoiImaging", "PoiStore", "PoiFiles"],
                exclude: ["README.md"]),
        // HTTP routes of `poi serve`: request parsing, limits and response mapping over PoiStore,
        // PoiImaging and PoiFormats (ARCHITECTURE.md §3, §7).
        .target(name: "PoiServer", dependencies: [
            "PoiStore", "PoiImaging", "PoiFormats", "PoiModel", "PoiFiles", "PoiJobs",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            // Large downloads are written as HTTP/1 file regions (sendfile) below the router.
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "MultipartKit", package: "multipart-kit"),
            "PoiDigest",
        ], exclude: ["README.md"],
        // The map page's own script and style and the OpenAPI document, compiled into the binary
        // as byte arrays (`PackageResources.map_js`): `poi serve` stays one file, with no bundle
        // to install.
        resources: [.embedInCode("Resources/map.js"), .embedInCode("Resources/map.css"), .embedInCode("Resources/openapi.json")]),
        .executableTarget(name: "poi", dependencies: [
            "PoiModel", "PoiFormats", "PoiImaging", "PoiStore", "PoiJobs", "PoiFiles", "PoiServer", "CSystemShims",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Benchmark drivers and fuzz harnesses are packages of their own (Benchmarks/, Fuzz/),
        // depending on this one by path, so this package ships no executables but `poi`.

        // What several test targets share (the live-server trait, free ports, scratch folders
        // removed at exit, the test tags): one copy, so the test targets cannot drift apart.
        // A plain target under Tests/: no product ships it.
        .target(name: "PoiTestSupport", path: "Tests/PoiTestSupport"),

        .testTarget(name: "PoiModelTests", dependencies: ["PoiModel", "PoiDigest", "PoiTestSupport"]),
        .testTarget(name: "PoiFilesTests", dependencies: ["PoiFiles", "PoiTestSupport"]),
        .testTarget(name: "PoiFormatsTests", dependencies: ["PoiFormats", "PoiModel", "PoiTestSupport"], exclude: ["FuzzRegressions"]),
        // CLCMS2: ColorManagementTests builds a Display P3 profile from its primaries. CWebP:
        // WebPThumbnailTests decodes what the encoder wrote with libwebp's own decoder.
        .testTarget(name: "PoiImagingTests", dependencies: ["PoiImaging", "CCodecs", "CLCMS2", "CWebP", "PoiTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "PoiStoreTests", dependencies: ["PoiStore", "CMongoC", "PoiTestSupport"]),
        .testTarget(name: "PoiJobsTests", dependencies: ["PoiJobs", "PoiStore", "PoiModel", "PoiTestSupport"]),
        // Runs the built `poi` binary end to end (exit codes, messages, --json).
        .testTarget(name: "PoiCLITests", dependencies: ["poi", "PoiTestSupport"]),
        // `poi serve` over real loopback HTTP (curl) against a live database.
        .testTarget(name: "PoiServerTests", dependencies: [
            "PoiServer", "PoiStore", "poi", "PoiTestSupport",
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            "PoiDigest",
        ], exclude: ["Fixtures"]),
    ]
)
