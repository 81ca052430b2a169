import PoiModel

/// The keys an import run has seen, for duplicate detection (ARCHITECTURE.md §4: a key appears once
/// per run). Bounded and compact whatever the input size: an open-addressing table of 64-bit key
/// fingerprints (SipHash of the key's UTF-8 bytes, seeded per process), each with a 32-bit
/// fingerprint of the record's content (to tell an exact duplicate from a conflicting one) and
/// where the key was first seen (file index, line or feature index). No key text is kept.
///
/// Cost: 18 bytes per slot in four flat arrays; the table doubles at 3/4 full, so 24–48 bytes per
/// key: 1,000,000 keys take 2^21 slots = 36 MiB, 500,000 keys 18 MiB (1.5× that for a moment
/// while the table doubles). Two distinct keys share a fingerprint with
/// probability about n²/2^65 (3·10⁻⁸ for a million keys); such a pair would be reported as a
/// duplicate.
struct SeenKeys {
    struct Entry: Equatable {
        var content: UInt32
        var position: UInt32
        var file: UInt16
    }

    private var keys: [UInt64]
    private var contents: [UInt32]
    private var positions: [UInt32]
    private var files: [UInt16]
    private(set) var count = 0
    private var mask: Int

    init(capacity: Int = 1 << 12) {
        var n = 16
        while n < capacity { n <<= 1 }
        keys = Array(repeating: 0, count: n)
        contents = Array(repeating: 0, count: n)
        positions = Array(repeating: 0, count: n)
        files = Array(repeating: 0, count: n)
        mask = n - 1
    }

    /// Slots allocated (for the memory figure: `slots * 18` bytes).
    var slots: Int { keys.count }

    static func fingerprint(_ key: String) -> UInt64 { ImportKey.fingerprint(key) }

    private func slot(of fp: UInt64) -> (index: Int, found: Bool) {
        var i = Int(truncatingIfNeeded: fp ^ (fp >> 29)) & mask
        while true {
            let k = keys[i]
            if k == fp { return (i, true) }
            if k == 0 { return (i, false) }
            i = (i + 1) & mask
        }
    }

    /// Loads the slots where `fingerprints` start their search, so that looking them up right
    /// after finds them in cache. Why: past a few thousand keys the table outgrows the caches,
    /// and a lookup is a cache and TLB miss that stalls the job's thread (with 100k keys, a tenth
    /// of `poi convert`'s own thread stood on the first load of `insert`). Loaded here, a few
    /// dozen at a time, the misses are independent and the CPU overlaps them; loaded one at a
    /// time between other work, each stalled as before. No effect on what is found.
    mutating func warm(_ fingerprints: ArraySlice<UInt64>) {
        var sum: UInt64 = 0
        keys.withUnsafeBufferPointer { keys in
            for fp in fingerprints { sum &+= keys[Int(truncatingIfNeeded: fp ^ (fp >> 29)) & mask] }
        }
        // Kept, so the loads are not optimised away.
        warmth = sum
    }
    private var warmth: UInt64 = 0

    /// The entry of an earlier record with this key fingerprint, or nil after recording this one.
    mutating func insert(_ fp: UInt64, _ entry: Entry) -> Entry? {
        let (i, found) = slot(of: fp)
        if found { return Entry(content: contents[i], position: positions[i], file: files[i]) }
        keys[i] = fp
        contents[i] = entry.content
        positions[i] = entry.position
        files[i] = entry.file
        count += 1
        if count * 4 >= keys.count * 3 { grow() }
        return nil
    }

    /// The entry remembered for `fp`, if any.
    func entry(_ fp: UInt64) -> Entry? {
        let (i, found) = slot(of: fp)
        return found ? Entry(content: contents[i], position: positions[i], file: files[i]) : nil
    }

    /// Makes `entry` the record remembered for `fp` (the one kept by "last wins").
    mutating func replace(_ fp: UInt64, _ entry: Entry) {
        let (i, found) = slot(of: fp)
        guard found else { _ = insert(fp, entry); return }
        contents[i] = entry.content
        positions[i] = entry.position
        files[i] = entry.file
    }

    private mutating func grow() {
        let old = (keys, contents, positions, files)
        let n = keys.count * 2
        keys = Array(repeating: 0, count: n)
        contents = Array(repeating: 0, count: n)
        positions = Array(repeating: 0, count: n)
        files = Array(repeating: 0, count: n)
        mask = n - 1
        for j in 0..<old.0.count where old.0[j] != 0 {
            let (i, _) = slot(of: old.0[j])
            keys[i] = old.0[j]
            contents[i] = old.1[j]
            positions[i] = old.2[j]
            files[i] = old.3[j]
        }
    }
}

/// Key fingerprints only (8 bytes a slot, no entries): what `poi check`'s first pass needs to
/// learn whether any key repeats. Open addressing, doubled at 3/4 full.
struct KeyFingerprints {
    private var slots = [UInt64](repeating: 0, count: 1 << 12)
    private var count = 0

    /// Adds `fp` (never 0: `ImportKey.fingerprint`); false when it was there already.
    mutating func insert(_ fp: UInt64) -> Bool {
        var mask = slots.count - 1
        var i = Int(truncatingIfNeeded: fp ^ (fp >> 29)) & mask
        while slots[i] != 0 {
            if slots[i] == fp { return false }
            i = (i + 1) & mask
        }
        slots[i] = fp
        count += 1
        if count * 4 >= slots.count * 3 {
            let old = slots
            slots = [UInt64](repeating: 0, count: old.count * 2)
            mask = slots.count - 1
            for k in old where k != 0 {
                var j = Int(truncatingIfNeeded: k ^ (k >> 29)) & mask
                while slots[j] != 0 { j = (j + 1) & mask }
                slots[j] = k
            }
        }
        return true
    }
}
