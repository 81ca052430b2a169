import Dispatch
import Synchronization
import PoiFormats
import PoiModel

/// A stretch of `poi convert`'s input made ready off the job's thread: for each place, its
/// feature's bytes and what the key rule needs (`KeyRule.Prepared`). The job's thread then only
/// judges each place and copies the bytes of those kept.
///
/// Why: encoding the features and fingerprinting the records were two thirds of the job's own
/// thread, which the reader's workers waited on (1M rows: 4.5 s wall for 6.2 s of CPU on two
/// cores; prepared here, with the encoder and hash made cheaper, 2.9 s for 5.0 s). Records stay
/// in input order; what is written is byte for byte what `GeoJSONWriter.write(_ place:)` writes.
///
/// Unchecked Sendable: the job's thread fills a batch, hands it to `PreparationLine`, and touches
/// it again only after waiting for that preparation to end.
final class PreparedRecords: @unchecked Sendable {
    /// Records per batch: big enough that handing batches over costs nothing, small enough that
    /// the few in flight hold a megabyte or two.
    static let capacity = 1024
    /// Bytes of places per batch, about (`weight(of:)`): a batch of big records (a GeoJSON
    /// feature may hold 16 MB) ends early. Without it, 60 features of 4 MB went into one batch
    /// and `poi convert` peaked at 419 MB where reading them one by one takes 57.
    static let maxWeight = 1 << 20

    /// What the job's thread needs of each record once it is prepared: a place's fingerprints
    /// and where it came from (for a duplicate's message), or the reject.
    enum Record {
        case place(KeyRule.Prepared, PlaceSource, ImportKeySource)
        case reject(Reject)
    }

    /// The records read, until `prepare` turns them into `records`. Raw storage, not an array,
    /// so `prepare` can move each item out: an array's items are copied on the way out (a
    /// retain and a release for every string of a place, a tenth of the job's CPU).
    private let items = UnsafeMutablePointer<ReadItem>.allocate(capacity: PreparedRecords.capacity)
    private var count = 0
    /// What the places read take, about (`weight(of:)`).
    private(set) var weight = 0
    private(set) var records: [Record] = []
    /// The places' key fingerprints, in order (for `KeyRule.warm`).
    private(set) var keyFingerprints: [UInt64] = []
    /// Each record's feature ends here in `bytes` (a reject's where the previous one ended).
    private var ends: [Int] = []
    private var bytes: [UInt8] = []
    private var encoder: GeoJSONFeatureEncoder

    init(precision: Int?) {
        encoder = GeoJSONFeatureEncoder(precision: precision)
    }

    deinit {
        items.deinitialize(count: count)
        items.deallocate()
    }

    var isFull: Bool { count >= Self.capacity || weight >= Self.maxWeight }
    var isEmpty: Bool { count == 0 }

    func append(_ item: consuming ReadItem) {
        precondition(count < Self.capacity)
        weight += Self.weight(of: item)
        (items + count).initialize(to: item)
        count += 1
    }

    /// About the bytes an item holds: its text and a little for each value. An estimate, to
    /// bound memory, never part of what is written.
    static func weight(of item: borrowing ReadItem) -> Int {
        switch item {
        case .place(let p, _):
            var n = 128 + p.name.utf8.count + p.importKey.utf8.count + (p.placename?.utf8.count ?? 0)
                + (p.details?.utf8.count ?? 0) + (p.image?.utf8.count ?? 0)
            for i in p.categories.indices { n += 16 + p.categories[i].utf8.count }
            if let id = p.id { n += weight(of: id) }
            return n + weight(of: p.extra) + weight(of: p.poiKitProperties)
        case .reject(let r, _):
            return 128 + r.reason.utf8.count
        }
    }

    // By index, not by element: iterating copies each member (a retain and a release each).
    private static func weight(of o: JSONObject) -> Int {
        var n = 16
        for i in o.members.indices { n += 16 + o.members[i].key.utf8.count + weight(of: o.members[i].value) }
        return n
    }

    private static func weight(of v: JSONValue) -> Int {
        switch v {
        case .string(let s), .bigInteger(let s): return 16 + s.utf8.count
        case .array(let a):
            var n = 16
            for i in a.indices { n += weight(of: a[i]) }
            return n
        case .object(let o): return weight(of: o)
        default: return 16
        }
    }

    /// Encodes and fingerprints every place appended (on the preparation thread); the places
    /// themselves are let go of here, on this thread.
    func prepare() {
        for i in 0..<count { prepare((items + i).move()) }
        count = 0
    }

    /// Encodes and fingerprints one item as the next record, and lets the place go.
    func prepare(_ item: consuming ReadItem) {
        switch consume item {
        case .place(let place, _):
            let prepared = KeyRule.Prepared(place)
            records.append(.place(prepared, place.source, place.keySource))
            keyFingerprints.append(prepared.key)
            encoder.append(place, to: &bytes)
        case .reject(let reject, _):
            records.append(.reject(reject))
        }
        ends.append(bytes.count)
    }

    /// Each record in order with its encoded feature (empty for a reject). One access to the
    /// batch's storage for the whole batch: reading `bytes` and `ends` per record paid the
    /// dynamic exclusivity checks of a class's properties three times a record (1 % of convert).
    func forEachRecord<E: Error>(_ body: (Record, UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        let records = self.records, ends = self.ends
        var failure: E?
        bytes.withUnsafeBytes { all in
            var start = 0
            for i in records.indices {
                let end = ends[i]
                do throws(E) { try body(records[i], UnsafeRawBufferPointer(rebasing: all[start..<end])) } catch {
                    failure = error
                    return
                }
                start = end
            }
        }
        if let failure { throw failure }
    }

    /// Empties the batch, keeping its storage for the next one.
    func reset() {
        items.deinitialize(count: count)
        count = 0
        weight = 0
        records.removeAll(keepingCapacity: true)
        keyFingerprints.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// Prepares batches on the other cores while the job's thread reads ahead, then hands them back
/// in input order (an `OrderedWork`). Several batches are in flight: one preparation thread was
/// the slowest stage (the reader's workers waited on it), and the reader converts its next
/// records only when asked for them, so a core sat idle unless other batches were there to prepare.
struct PreparationLine {
    /// Weight in flight at most (`PreparedRecords.weight`): big records are prepared a batch or
    /// two at a time, so memory stays near what reading them one by one takes.
    static let maxWeight = 2 * PreparedRecords.maxWeight
    private var work: OrderedWork<PreparedRecords>

    init(cores: Int) {
        work = OrderedWork(label: "poi.convert.prepare", depth: max(2, min(16, 2 * cores)), maxWeight: Self.maxWeight,
                           concurrent: true)
    }

    var isFull: Bool { work.isFull }
    var isEmpty: Bool { work.isEmpty }

    /// Starts preparing `batch`; it comes back from `next()` once prepared, after the ones
    /// started before it.
    mutating func start(_ batch: PreparedRecords) {
        work.start(weight: batch.weight) {
            batch.prepare()
            return batch
        }
    }

    /// The oldest batch in flight, once prepared; nil when none is.
    mutating func next() -> PreparedRecords? { work.next() }
}

/// `PreparedRecords` made where a CSV reader's workers convert the records
/// (`PlaceReader.nextBatch(preparedBy:)`), so a place never leaves the thread that built it;
/// batches come back through `recycle` for their storage to be reused.
final class RecordPreparer: ReadItemPreparer {
    let precision: Int?
    private let spares = Mutex<[PreparedRecords]>([])

    init(precision: Int?) { self.precision = precision }

    func makeBatch() -> PreparedRecords {
        spares.withLock { $0.popLast() } ?? PreparedRecords(precision: precision)
    }

    func add(_ item: consuming ReadItem, to batch: PreparedRecords) {
        batch.prepare(item)
    }

    /// Takes back a batch the job is done with.
    func recycle(_ batch: PreparedRecords) {
        batch.reset()
        spares.withLock { $0.append(batch) }
    }
}
