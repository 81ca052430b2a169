// swift-tools-version:6.0
// PoiKit's benchmark drivers, a package of their own (as swift-nio keeps its benchmarks), so the
// PoiKit package ships no benchmark executables. scripts/bench-*.sh build and run them beside
// their peers; see README.md (Make targets).
//
//   poi-bench-store  PoiStore bulk upserts and cursor reads vs pymongo (make bench-store)
import PackageDescription

let package = Package(
    name: "PoiKitBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "PoiKit", path: ".."),
    ],
    targets: [
        .executableTarget(name: "poi-bench-store",
                          dependencies: [.product(name: "PoiStore", package: "PoiKit")],
                          path: "StoreBench"),
    ]
)
