import PoiFormats
import PoiModel

/// A key appears once per run (ARCHITECTURE.md §4): the one rule `poi import`, `poi check` and
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
        try judge(Prepared(place), source: place.source, keySource: place.keySource, fileIndex: fileIndex)
    }

    /// What `judge` computes of a place before it looks anything up: the key's fingerprint and
    /// the record's content fingerprint. Computed on any thread (`poi convert` does it where it
    /// encodes the features), so the job's own thread only looks up.
    struct Prepared {
        var key: UInt64
        var content: UInt32

        init(_ place: Place) {
            key = SeenKeys.fingerprint(place.importKey)
            content = KeyRule.contentFingerprint(place)
        }
    }

    /// Brings the table entries the next lookups of these key fingerprints read into cache
    /// (`SeenKeys.warm`): `poi convert` calls it before judging each few dozen places.
    mutating func warm(_ fingerprints: ArraySlice<UInt64>) {
        if lastRecords != nil { lastRecords!.warm(fingerprints) } else { seen.warm(fingerprints) }
    }

    /// `judge` of a place known by what was prepared of it, where it came from and what its key
    /// was made of. Throws as `judge(_:fileIndex:)` does.
    mutating func judge(_ prepared: Prepared, source: PlaceSource, keySource: ImportKeySource,
                        fileIndex: Int) throws(JobError) -> Verdict {
        let here = Self.entry(for: source, fileIndex: fileIndex, content: prepared.content)
        if let lastRecords {
            // Last wins, and only the last is kept: an earlier record is an exact copy of it
            // (unchanged) or a duplicate that it replaces.
            guard let last = lastRecords.entry(prepared.key) else {
                throw .inputChanged(file: files[fileIndex].name)
            }
            guard last.file == here.file && last.position == here.position else {
                return last.content == here.content ? .unchanged : .duplicate
            }
            guard last.content == here.content else { throw .inputChanged(file: files[fileIndex].name) }
            lastRecordsKept += 1
            return .keep
        }
        return judgeAgainstEarlier(source: source, keySource: keySource, here: here, key: prepared.key, fileIndex: fileIndex)
    }

    /// The rule without `lastRecords` (`poi check` counts `last` as import does without needing
    /// to know which record is kept): the first record of a key is kept.
    mutating func judgeAgainstEarlier(_ place: Place, fileIndex: Int) -> Verdict {
        judgeAgainstEarlier(source: place.source, keySource: place.keySource, here: Self.entry(for: place, fileIndex: fileIndex),
                            key: SeenKeys.fingerprint(place.importKey), fileIndex: fileIndex)
    }

    private mutating func judgeAgainstEarlier(source: PlaceSource, keySource: ImportKeySource, here: SeenKeys.Entry,
                                              key: UInt64, fileIndex: Int) -> Verdict {
        guard let earlier = seen.insert(key, here) else { return .keep }
        if earlier.content == here.content { return .unchanged }
        guard policy == .reject else { return .duplicate }
        let field: String? = switch keySource {
        case .importKey: "importKey"
        case .id: "id"
        case .derived: nil
        }
        var reason = "duplicate key of " + describe(earlier, from: fileIndex)
        if keySource == .derived { reason += " (same name and coordinates, no id)" }
        return .reject(Reject(source: source, field: field, reason: reason))
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
        entry(for: place.source, fileIndex: fileIndex, content: contentFingerprint(place))
    }

    static func entry(for source: PlaceSource, fileIndex: Int, content: UInt32) -> SeenKeys.Entry {
        SeenKeys.Entry(content: content,
                       position: UInt32(clamping: source.line ?? source.feature ?? 0),
                       file: UInt16(clamping: fileIndex))
    }

    /// `--on-duplicate last`: where each key's last record is, by a first read of every input
    /// (why two reads: `ImportRun.findLastRecords`). `admits` filters places (the import's `--shard`).
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
    ///
    /// The extras are hashed value by value, each with its type, rather than as their JSON text:
    /// encoding them was a fifth of this function. Only values equal as JSON text and
    /// of different types now differ (a `date` cell and a string holding its ISO text), and those
    /// are stored differently, so they are different content.
    static func contentFingerprint(_ p: Place) -> UInt32 {
        var h = ContentHasher()
        h.combine(text: p.importKey); h.combine(text: p.name); h.combine(text: p.placename)
        h.combine(text: p.details); h.combine(text: p.image)
        h.combine(p.coordinate.longitude.bitPattern)
        h.combine(p.coordinate.latitude.bitPattern)
        h.combine(p.altitude?.bitPattern ?? 0x7FF8_DEAD_0000_0001)  // kept and exported: part of the content
        h.combine(UInt64(p.categories.count))
        for i in p.categories.indices { h.combine(text: p.categories[i]) }
        h.combine(p.hasImageField)
        h.combine(p.extra)
        h.combine(p.poiKitProperties)
        let v = h.finalize()
        return UInt32(truncatingIfNeeded: v ^ (v >> 32))
    }
}
