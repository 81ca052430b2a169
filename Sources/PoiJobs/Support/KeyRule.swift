import PoiFormats
import PoiModel

/// A key appears once per run (DESIGN.md §4): the one rule `poi import`, `poi check` and
/// `poi convert` apply, so check says and convert writes what the import would.
///
/// A record whose key was seen earlier in the run is an exact copy of the record kept (unchanged:
/// not written again, no reject), or a duplicate settled by the policy: rejected naming the first
/// record, or dropped (`first`; with `last`, the caller writes only each key's last record,
/// found by `lastRecords`). Bounded memory whatever the input (`SeenKeys`).
struct KeyRule {
    enum Verdict: Equatable {
        /// The first record of its key: it goes on.
        case keep
        /// An exact copy of a record of its key kept earlier in the run.
        case unchanged
        /// Another record of a key seen earlier, settled by `--on-duplicate first` or `last`.
        case duplicate
        /// Another record of a key seen earlier, refused (`--on-duplicate reject`).
        case reject(Reject)
    }

    let policy: DuplicatePolicy
    private var seen = SeenKeys()
    /// The run's files so far, which positions in messages refer to.
    private(set) var files: [(name: String, format: InputFormat)] = []
    /// With `--on-duplicate last`: where each key's last record is (`lastRecords(of:options:)`),
    /// so that only that record is kept; nil otherwise.
    var lastRecords: SeenKeys?
    /// Records kept as the last of their key, to hold against `lastRecords` at the end.
    private(set) var lastRecordsKept = 0

    init(policy: DuplicatePolicy) { self.policy = policy }

    /// Registers the next file of the run; its index is what `judge` takes.
    mutating func beginFile(_ name: String, format: InputFormat) -> Int {
        files.append((name, format))
        return files.count - 1
    }

    /// Throws `inputChanged` when, with `lastRecords`, the input is not what the first read saw.
    mutating func judge(_ place: Place, fileIndex: Int) throws(JobError) -> Verdict {
        let here = Self.entry(for: place, fileIndex: fileIndex)
        if let lastRecords {
            // Last wins, and only the last is kept: an earlier record is an exact copy of it
            // (unchanged) or a duplicate that it replaces.
            guard let last = lastRecords.entry(SeenKeys.fingerprint(place.importKey)) else {
                throw .inputChanged(file: files[fileIndex].name)
            }
            guard last.file == here.file && last.position == here.position else {
                return last.content == here.content ? .unchanged : .duplicate
            }
            guard last.content == here.content else { throw .inputChanged(file: files[fileIndex].name) }
            lastRecordsKept += 1
            return .keep
        }
        return judgeAgainstEarlier(place, here: here, fileIndex: fileIndex)
    }

    /// The rule without `lastRecords` (`poi check` counts `last` as import does without needing
    /// to know which record is kept): the first record of a key is kept.
    mutating func judgeAgainstEarlier(_ place: Place, fileIndex: Int) -> Verdict {
        judgeAgainstEarlier(place, here: Self.entry(for: place, fileIndex: fileIndex), fileIndex: fileIndex)
    }

    private mutating func judgeAgainstEarlier(_ place: Place, here: SeenKeys.Entry, fileIndex: Int) -> Verdict {
        guard let earlier = seen.insert(SeenKeys.fingerprint(place.importKey), here) else { return .keep }
        if earlier.content == here.content { return .unchanged }
        guard policy == .reject else { return .duplicate }
        let field: String? = switch place.keySource {
        case .importKey: "importKey"
        case .id: "id"
        case .derived: nil
        }
        var reason = "duplicate key of " + describe(earlier, from: fileIndex)
        if place.keySource == .derived { reason += " (same name and coordinates, no id)" }
        return .reject(Reject(source: place.source, field: field, reason: reason))
    }

    /// With `lastRecords`, every key's last record was kept, or the input changed after the
    /// first read (`files` names it).
    func checkLastRecordsKept(files names: String) throws(JobError) {
        if let lastRecords, lastRecordsKept != lastRecords.count { throw .inputChanged(file: names) }
    }

    /// "line 2", "feature 0", or "other.csv line 2" for a record of another file of the run.
    func describe(_ entry: SeenKeys.Entry, from fileIndex: Int) -> String {
        let file = files[min(Int(entry.file), files.count - 1)]
        let position = (file.format == .csv ? "line " : "feature ") + String(entry.position)
        return Int(entry.file) == fileIndex ? position : PlaceDocument.storedFileName(file.name) + " " + position
    }

    static func entry(for place: Place, fileIndex: Int) -> SeenKeys.Entry {
        SeenKeys.Entry(content: contentFingerprint(place),
                       position: UInt32(clamping: place.source.line ?? place.source.feature ?? 0),
                       file: UInt16(clamping: fileIndex))
    }

    /// `--on-duplicate last`: where each key's last record is, by a first read of every input
    /// (why two reads: `ImportJob.run`). `admits` filters places (the import's `--shard`).
    static func lastRecords(of dumps: [DumpInput], options: ReadOptions,
                            admits: (Place) -> Bool = { _ in true }) throws(JobError) -> SeenKeys {
        var last = SeenKeys()
        for (fileIndex, dump) in dumps.enumerated() {
            var readOptions = RejectsLocation.readOptions(options, for: dump)
            readOptions.keepRawRecords = false
            let reader: PlaceReader
            do { reader = try dump.reader(options: readOptions) } catch { throw .input(error) }
            while true {
                let item: ReadItem?
                do { item = try reader.next() } catch { throw .input(error) }
                guard let item else { break }
                guard case .place(let place, _) = item, admits(place) else { continue }
                last.replace(SeenKeys.fingerprint(place.importKey), entry(for: place, fileIndex: fileIndex))
            }
        }
        return last
    }

    /// 32 bits of the record's content (every field but its position): tells an exact duplicate
    /// row from a conflicting one.
    static func contentFingerprint(_ p: Place) -> UInt32 {
        var h = Hasher()
        func text(_ x: String?) {
            guard var x else { h.combine(UInt8(0xFE)); return }
            x.withUTF8 { h.combine(bytes: UnsafeRawBufferPointer($0)) }
            h.combine(UInt8(0xFF))  // never inside UTF-8: "ab"+"c" and "a"+"bc" differ
        }
        text(p.importKey); text(p.name); text(p.placename); text(p.details); text(p.image)
        h.combine(p.coordinate.longitude.bitPattern)
        h.combine(p.coordinate.latitude.bitPattern)
        h.combine(p.altitude?.bitPattern ?? 0x7FF8_DEAD_0000_0001)  // kept and exported: part of the content
        h.combine(p.categories.count)
        for c in p.categories { text(c) }
        h.combine(p.hasImageField)
        var extra: [UInt8] = []
        JSONEncoding.append(.object(p.extra), to: &extra)
        JSONEncoding.append(.object(p.poiKitProperties), to: &extra)
        extra.withUnsafeBytes { h.combine(bytes: $0) }
        let v = UInt64(bitPattern: Int64(h.finalize()))
        return UInt32(truncatingIfNeeded: v ^ (v >> 32))
    }
}
