import PoiModel

/// How `validateRemaining` fingerprints the keys it hands out (`onKey`) and selects places by
/// (`placesWithKeys`).
public enum KeyFingerprinting: Sendable, Equatable {
    /// `ImportKey.fingerprint` of exactly the `importKey` the place would have.
    case exact
    /// `KeyCandidate`: a key derived from name and coordinates is fingerprinted from the
    /// normalised name and the rounded coordinates it is made of, without making the key
    /// (its SHA-256, its hex text, the coordinates' text were most of `poi check` on a dump
    /// without ids). For finding keys that may repeat; a caller confirms with the exact key.
    case candidates
}

/// 64 bits of a record's key for finding the keys that may repeat (`KeyFingerprinting.candidates`).
///
/// Equal keys have equal candidates, with one exception the caller must watch for: an explicit
/// key (`importKey`, `id`) whose text is itself a derived key (`sha256:…`, as PoiKit's exports
/// carry) cannot be matched to the derived key of another record, so it is marked
/// (`isDerivedLooking`), and so are derived keys (`isDerived`): a run that has both must use
/// `.exact`. Different keys have different candidates but for hash collisions (62 bits), which
/// only make the caller look closer.
///
/// The top two bits say what the candidate is of: 0b1x a derived key (normalised name and the
/// coordinates rounded to 7 decimals, what the derived key is made of, see `ImportKey`), 0b01 an
/// explicit key starting with `sha256:`, 0b00 any other explicit key. Never 0.
public enum KeyCandidate {
    static let derivedTag: UInt64 = 1 << 63
    static let derivedLookingTag: UInt64 = 1 << 62
    static let payload: UInt64 = (1 << 62) - 1

    public static func isDerived(_ candidate: UInt64) -> Bool { candidate & derivedTag != 0 }
    public static func isDerivedLooking(_ candidate: UInt64) -> Bool { candidate >> 62 == 1 }

    /// The candidate of a place's key.
    public static func of(_ place: Place) -> UInt64 {
        place.keySource == .derived ? derived(name: place.name, coordinate: place.coordinate) : explicit(place.importKey)
    }

    /// The candidate of an explicit key (trimmed `importKey` or `id` text).
    public static func explicit(_ key: String) -> UInt64 {
        let h = ImportKey.fingerprint(key) & payload
        if key.utf8.starts(with: "sha256:".utf8) { return h | derivedLookingTag }
        return h == 0 ? 1 : h
    }

    /// The candidate of the key derived from `name` (as the place has it: trimmed) and
    /// `coordinate` (validated).
    public static func derived(name: String, coordinate: Coordinate) -> UInt64 {
        if let h = name.withUTF8InPlace({ derived(utf8Name: $0, coordinate: coordinate) }) { return h }
        return ImportKey.normalizeName(name).withUTF8InPlace { hash(normalizedName: $0, coordinate) }
    }

    /// `derived(name:coordinate:)` of a name given as valid UTF-8, normalised on the stack (no
    /// String made) when every character is one whose normalisation needs no tables: nil
    /// otherwise, and the caller normalises with `ImportKey.normalizeName`. Leading and trailing
    /// whitespace may be given: normalising trims it as trimming would.
    ///
    /// The bytes written are `ImportKey.normalizeName`'s, by its own rules: a name whose
    /// characters all lie in ranges `isKnownNFC` vouches for is NFC already; then whitespace
    /// (ASCII, U+0085, U+00A0) is trimmed and collapsed to one space, A–Z and À–Þ (but ×) are
    /// lowercased, and the rest — ASCII, Latin-1 without case change, and the caseless scripts
    /// (Arabic letters, kana, CJK, Hangul, emoji) — is kept. Anything else (Latin Extended, Greek,
    /// Cyrillic, combining marks, other spaces…) returns nil.
    public static func derived(utf8Name name: UnsafeBufferPointer<UInt8>, coordinate: Coordinate) -> UInt64? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(name.count, 1)) { out -> UInt64? in
            var n = 0, i = 0
            var pendingSpace = false
            while i < name.count {
                let b = name[i]
                if b < 0x80 {
                    i += 1
                    if b == 0x20 || (b >= 0x09 && b <= 0x0D) { pendingSpace = n > 0; continue }
                    if pendingSpace { out[n] = 0x20; n += 1; pendingSpace = false }
                    out[n] = b >= 0x41 && b <= 0x5A ? b + 0x20 : b
                    n += 1
                    continue
                }
                let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
                guard i + length <= name.count else { return nil }
                if b == 0xC2 || b == 0xC3 {
                    // U+0080–U+00FF.
                    let b1 = name[i + 1]
                    if b == 0xC2 && (b1 == 0x85 || b1 == 0xA0) { i += 2; pendingSpace = n > 0; continue }
                    if pendingSpace { out[n] = 0x20; n += 1; pendingSpace = false }
                    out[n] = b
                    // À–Þ but × (U+00D7) lowercase to U+00E0–U+00FE: the same lead, 0x20 more.
                    out[n + 1] = b == 0xC3 && b1 >= 0x80 && b1 <= 0x9E && b1 != 0x97 ? b1 + 0x20 : b1
                    n += 2
                    i += 2
                    continue
                }
                var v = UInt32(b) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
                for k in 1..<length { v = v << 6 | UInt32(name[i + k] & 0x3F) }
                let caseless = (v >= 0x0621 && v <= 0x064A) || (v >= 0x0660 && v <= 0x066F)
                    || (v >= 0x3041 && v <= 0x3096) || (v >= 0x30A1 && v <= 0x30FA)
                    || (v >= 0x3400 && v <= 0x4DBF) || (v >= 0x4E00 && v <= 0x9FFF)
                    || (v >= 0xAC00 && v <= 0xD7A3) || (v >= 0x1F300 && v <= 0x1FAFF)
                guard caseless else { return nil }
                if pendingSpace { out[n] = 0x20; n += 1; pendingSpace = false }
                for k in 0..<length { out[n + k] = name[i + k] }
                n += length
                i += length
            }
            return hash(normalizedName: UnsafeBufferPointer(rebasing: out[0..<n]), coordinate)
        }
    }

    /// The normalised name's bytes, then each coordinate as the integer the key's 7-decimal text
    /// writes (`FixedDecimal.append`: rounded half away from zero; its text is a function of that
    /// integer alone, and the key splits unambiguously at its last two separators).
    private static func hash(normalizedName: UnsafeBufferPointer<UInt8>, _ coordinate: Coordinate) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(normalizedName))
        hasher.combine(fixed7(coordinate.longitude))
        hasher.combine(fixed7(coordinate.latitude))
        return UInt64(bitPattern: Int64(hasher.finalize())) | derivedTag
    }

    @inline(__always)
    static func fixed7(_ value: Double) -> Int64 {
        let scaled = (value * 10_000_000.0).rounded(.toNearestOrAwayFromZero)
        // Validated coordinates always fit; anything else gets one value rather than a trap.
        return abs(scaled) < 9.2e18 ? Int64(scaled) : .min
    }
}
