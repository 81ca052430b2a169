import Testing
@testable import PoiFormats
import PoiModel

/// Reads every item of an in-memory dump.
func readAll(_ text: String, name: String = "t.csv", options: ReadOptions = ReadOptions()) throws -> (places: [Place], rejects: [Reject]) {
    try readAll(bytes: Array(text.utf8), name: name, options: options)
}

func readAll(bytes: [UInt8], name: String = "t.csv", options: ReadOptions = ReadOptions()) throws -> (places: [Place], rejects: [Reject]) {
    let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    var places: [Place] = [], rejects: [Reject] = []
    while let item = try reader.next() {
        switch item {
        case .place(let p, _): places.append(p)
        case .reject(let r, _): rejects.append(r)
        }
    }
    // Every test reading a dump also holds `poi check`'s validate-only path to the same verdicts.
    let checker = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    var valid = 0, checked: [Reject] = [], keys: [UInt64] = []
    try checker.validateRemaining(valid: &valid, onReject: { r, _ in checked.append(r) }, onKey: { keys.append($0) })
    #expect(valid == places.count, "validate-only path: valid count")
    #expect(checked == rejects, "validate-only path: rejects")
    #expect(keys == places.map { ImportKey.fingerprint($0.importKey) }, "validate-only path: import keys")
    return (places, rejects)
}

/// The repository root, found from this file's path (Tests/PoiFormatsTests/Support.swift).
let repoRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()
