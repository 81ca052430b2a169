import Testing
@testable import PoiFormats
import PoiModel

/// Reads every item of an in-memory dump.
func readAll(_ text: String, name: String = "t.csv", options: ReadOptions = ReadOptions()) throws -> (places: [Place], rejects: [Reject]) {
    try readAll(bytes: Array(text.utf8), name: name, options: options)
}

func readAll(bytes: [UInt8], name: String = "t.csv", options: ReadOptions = ReadOptions()) throws -> (places: [Place], rejects: [Reject]) {
    // Every test reading a CSV dump also holds the batches prepared on the reader's workers
    // (`nextBatch(preparedBy:)`, what `poi convert` reads) to the same items, raw records and
    // read error, in the same order.
    let batched = try? readInBatches(bytes: bytes, name: name, options: options)
    let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    var places: [Place] = [], rejects: [Reject] = [], items: [CollectedItem] = []
    do {
        while let item = try reader.next() {
            items.append(CollectedItem(item))
            switch item {
            case .place(let p, _): places.append(p)
            case .reject(let r, _): rejects.append(r)
            }
        }
    } catch {
        if let batched {
            #expect(batched.items == items, "prepared batches: items before the read error")
            #expect(batched.failure == error, "prepared batches: the read error")
        }
        throw error
    }
    if let batched {
        #expect(batched.items == items, "prepared batches: items")
        #expect(batched.failure == nil, "prepared batches: no read error")
    }
    // Every test reading a dump also holds `poi check`'s validate-only path to the same verdicts.
    let checker = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    var valid = 0, checked: [Reject] = [], keys: [UInt64] = []
    try checker.validateRemaining(valid: &valid, onReject: { r, _ in checked.append(r) }, onKey: { keys.append($0) })
    #expect(valid == places.count, "validate-only path: valid count")
    #expect(checked == rejects, "validate-only path: rejects")
    #expect(keys == places.map { ImportKey.fingerprint($0.importKey) }, "validate-only path: import keys")
    // And with key candidates (what `poi check`'s first pass hands out): those of the places.
    let candidates = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    var candidateValid = 0, candidateKeys: [UInt64] = []
    try candidates.validateRemaining(valid: &candidateValid, onReject: { _, _ in }, onKey: { candidateKeys.append($0) },
                                     keys: .candidates)
    #expect(candidateKeys == places.map(KeyCandidate.of), "validate-only path: key candidates")
    return (places, rejects)
}

/// The repository root, found from this file's path (Tests/PoiFormatsTests/Support.swift).
let repoRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// A `ReadItem`, comparable (what the batched read is held to).
enum CollectedItem: Hashable {
    case place(Place, RawRecord?)
    case reject(Reject, RawRecord?)

    init(_ item: borrowing ReadItem) {
        switch item {
        case .place(let p, let raw): self = .place(p, raw)
        case .reject(let r, let raw): self = .reject(r, raw)
        }
    }
}

/// A `ReadItemPreparer` that keeps each item as it is, in its batch.
struct CollectingPreparer: ReadItemPreparer {
    final class Batch: @unchecked Sendable {
        var items: [CollectedItem] = []
    }
    func makeBatch() -> Batch { Batch() }
    func add(_ item: consuming ReadItem, to batch: Batch) { batch.items.append(CollectedItem(item)) }
}

/// Every item of a CSV dump through `nextBatch(preparedBy:)`, and the read error that ended it;
/// nil for input that is not CSV.
func readInBatches(bytes: [UInt8], name: String, options: ReadOptions) throws -> (items: [CollectedItem], failure: FormatError?)? {
    let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
    guard reader.preparesBatches else { return nil }
    var items: [CollectedItem] = []
    do {
        while let batch = try reader.nextBatch(preparedBy: CollectingPreparer()) { items += batch.items }
    } catch {
        return (items, error)
    }
    return (items, nil)
}
