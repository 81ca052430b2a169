// swift-tools-version:6.0
// Baseline for `make bench-formats`: the same CSV read with CSV.swift (yaslab/CSV.swift), the
// library the issue suggested, to show what the hand-written tokenizer in PoiFormats buys.
import PackageDescription

let package = Package(
    name: "csvswift-count",
    dependencies: [.package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2")],
    targets: [
        .executableTarget(name: "csvswift-count", dependencies: [.product(name: "CSV", package: "CSV.swift")]),
    ]
)
