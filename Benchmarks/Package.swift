// swift-tools-version:6.0
// PoiKit's benchmark drivers, a package of their own (as swift-nio keeps its benchmarks), so the
// PoiKit package ships no benchmark executables. scripts/bench-*.sh build and run them beside
// their peers; see README.md (Make targets).
//
//   poi-bench-store      PoiStore bulk upserts and cursor reads vs pymongo (make bench-store)
//   poi-bench-nio-floor  a bare SwiftNIO HTTP/1 server answering one file from memory: the
//                        stack's own floor beside poi serve and nginx (make bench-serve)
import PackageDescription

let package = Package(
    name: "PoiKitBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "PoiKit", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(name: "poi-bench-store",
                          dependencies: [.product(name: "PoiStore", package: "PoiKit")],
                          path: "StoreBench"),
        .executableTarget(name: "poi-bench-nio-floor",
                          dependencies: [.product(name: "NIOCore", package: "swift-nio"),
                                         .product(name: "NIOPosix", package: "swift-nio"),
                                         .product(name: "NIOHTTP1", package: "swift-nio")],
                          path: "NIOFloor"),
    ]
)
