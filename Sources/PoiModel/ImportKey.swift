import PoiDigest
import Foundation

/// The stable identity of a place, used by PoiStore as the unique upsert key.
///
/// Recipe (also in README.md; changing it re-keys every stored place, so don't):
/// 1. An `importKey` column/property, when present and non-blank, is the key verbatim (trimmed):
///    files exported by `poi export` re-import as updates.
/// 2. Else the `id` column or the Feature `id`: a string trimmed, an integer in decimal.
/// 3. Else `sha256:` + lowercase hex SHA-256 of the UTF-8 bytes of
///    `normalizedName + "\u{1F}" + fixed7(longitude) + "\u{1F}" + fixed7(latitude)`, where
///    `normalizedName` is NFC, trimmed, inner whitespace runs collapsed to one space, lowercased
///    (Unicode default case mapping, locale-independent), and `fixed7` is the coordinate rounded
///    half away from zero to 7 decimals, written with exactly 7 decimals, no exponent, no "-0"
///    (e.g. `-0.0000000` never appears; `2.35` → `2.3500000`).
/// Where a place's key came from.
public enum ImportKeySource: Sendable, Hashable {
    /// An `importKey` column or property (PoiKit's own exports carry one).
    case importKey
    /// The `id` column, or the GeoJSON Feature `id`.
    case id
    /// No id: the hash of name + coordinates (two different places at the same spot with the
    /// same name get the same key, and are reported as duplicates).
    case derived
}

public enum ImportKey {
    /// Column or property names that look like an identifier (compared after
    /// `PlaceField.normalizeColumnName`), for suggesting a mapping when keys had to be derived.
    static let idLikeNames: Set<String> = [
        "id", "sourceid", "ref", "osmid", "osmref", "geonameid", "gid", "fid", "objectid", "uid", "uuid", "guid",
        "key", "code", "identifier", "featureid", "placeid", "poiid", "externalid", "extid", "wikidata",
    ]

    /// True for a column name that looks like an identifier: `id`, `source_id`, `ref`, `osm_id`,
    /// `geonameid`, `placeId`, `uuid`, …
    public static func looksLikeID(_ column: String) -> Bool {
        let n = PlaceField.normalizeColumnName(column)
        if idLikeNames.contains(n) { return true }
        let lower = column.lowercased()
        return lower.count > 3 && (lower.hasSuffix("_id") || lower.hasSuffix("-id") || lower.hasSuffix(" id")
            || column.hasSuffix("Id") || column.hasSuffix("ID"))
    }

    /// The hex writing below is the pinned recipe's own, not a second copy of PoiStore's
    /// `ContentDigest.sha256Hex`: PoiModel cannot depend on PoiStore (ARCHITECTURE.md §3), and the key
    /// must stay byte for byte what it is whatever the store does.
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The hash-derived key for a place without an id.
    public static func derived(name: String, coordinate: Coordinate) -> String {
        withDerived(name: name, coordinate: coordinate) { key in
            String(unsafeUninitializedCapacity: key.count) { out in
                _ = out.initialize(from: key)
                return key.count
            }
        }
    }

    /// The derived key's UTF-8 bytes (`sha256:` + 64 hex digits), lent to `body` without making a
    /// String: what a key's fingerprint needs.
    static func withDerived<R>(name: String, coordinate: Coordinate, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 40)
        appendNormalizedName(name, to: &bytes)
        bytes.append(0x1F)
        FixedDecimal.append(coordinate.longitude, places: 7, trimZeros: false, to: &bytes)
        bytes.append(0x1F)
        FixedDecimal.append(coordinate.latitude, places: 7, trimZeros: false, to: &bytes)
        let digest = SHA256.hash(data: bytes)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 7 + 64) { out in
            var i = 0
            for b in "sha256:".utf8 { out[i] = b; i += 1 }
            digest.withUnsafeBytes { d in
                for b in d {
                    out[i] = hexDigits[Int(b >> 4)]
                    out[i + 1] = hexDigits[Int(b & 0xF)]
                    i += 2
                }
            }
            return body(UnsafeBufferPointer(rebasing: out[0..<i]))
        }
    }

    /// 64 bits of a key, for telling keys apart in bounded memory (a key is never kept as text):
    /// a hash of its UTF-8 bytes, seeded per process (so only compared within one run). Never 0,
    /// which marks an empty slot in the tables that hold them.
    public static func fingerprint(_ key: String) -> UInt64 {
        key.withUTF8InPlace { fingerprint(utf8: $0) }
    }

    public static func fingerprint(utf8 key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(key))
        let h = UInt64(bitPattern: Int64(hasher.finalize()))
        return h == 0 ? 1 : h
    }

    /// `fingerprint(derived(name:coordinate:))`, without the String.
    public static func derivedFingerprint(name: String, coordinate: Coordinate) -> UInt64 {
        withDerived(name: name, coordinate: coordinate) { fingerprint(utf8: $0) }
    }

    /// NFC, trimmed, whitespace collapsed, lowercased.
    public static func normalizeName(_ name: String) -> String {
        var out: [UInt8] = []
        appendNormalizedName(name, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `normalizeName`, appended as UTF-8 to `out` (no intermediate String).
    static func appendNormalizedName(_ name: String, to out: inout [UInt8]) {
        let base = out.count
        // ASCII fast path: NFC is the identity and case mapping is bytewise.
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            var pendingSpace = false
            for b in name.utf8 {
                if b == 0x20 || (b >= 0x09 && b <= 0x0D) {
                    pendingSpace = out.count > base
                    continue
                }
                if pendingSpace { out.append(0x20); pendingSpace = false }
                out.append(b >= 0x41 && b <= 0x5A ? b + 0x20 : b)
            }
            return
        }
        // Foundation's NFC is slow; most names (Latin, CJK, Arabic letters, emoji) are NFC already.
        let nfc = isKnownNFC(name) ? name : name.precomposedStringWithCanonicalMapping
        // One pass: collapse whitespace and apply the default (full) lowercase mapping per scalar,
        // as String.lowercased() does, skipping the lookup for scalars that have no case.
        var pendingSpace = false
        for u in nfc.unicodeScalars {
            let v = u.value
            if v < 0x80 {
                if v == 0x20 || (v >= 0x09 && v <= 0x0D) { pendingSpace = out.count > base; continue }
                if pendingSpace { out.append(0x20); pendingSpace = false }
                out.append(v >= 0x41 && v <= 0x5A ? UInt8(v + 0x20) : UInt8(v))
                continue
            }
            if isNonASCIIWhitespace(v) { pendingSpace = out.count > base; continue }
            if pendingSpace { out.append(0x20); pendingSpace = false }
            if hasNoCase(v) || !u.properties.changesWhenLowercased {
                appendUTF8(u, to: &out)
            } else {
                for l in u.properties.lowercaseMapping.unicodeScalars { appendUTF8(l, to: &out) }
            }
        }
    }

    /// Unicode White_Space scalars above ASCII.
    @inline(__always)
    static func isNonASCIIWhitespace(_ v: UInt32) -> Bool {
        v == 0x85 || v == 0xA0 || v == 0x1680 || (v >= 0x2000 && v <= 0x200A) || v == 0x2028 || v == 0x2029
            || v == 0x202F || v == 0x205F || v == 0x3000
    }

    /// Scripts without case: no lowercase lookup needed.
    @inline(__always)
    static func hasNoCase(_ v: UInt32) -> Bool {
        (v >= 0x0600 && v <= 0x06FF) || (v >= 0x3040 && v <= 0x9FFF) || (v >= 0xAC00 && v <= 0xD7A3)
            || (v >= 0x1F000 && v <= 0x1FAFF)
    }

    @inline(__always)
    static func appendUTF8(_ u: Unicode.Scalar, to out: inout [UInt8]) {
        let v = u.value
        if v < 0x80 { out.append(UInt8(v)) }
        else if v < 0x800 { out.append(UInt8(0xC0 | (v >> 6))); out.append(UInt8(0x80 | (v & 0x3F))) }
        else if v < 0x10000 {
            out.append(UInt8(0xE0 | (v >> 12))); out.append(UInt8(0x80 | ((v >> 6) & 0x3F))); out.append(UInt8(0x80 | (v & 0x3F)))
        } else {
            out.append(UInt8(0xF0 | (v >> 18))); out.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((v >> 6) & 0x3F))); out.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    /// True when every scalar is in a range whose characters are all NFC_Quick_Check=Yes
    /// (so the string is already NFC). Conservative: anything else goes through Foundation.
    static func isKnownNFC(_ s: String) -> Bool {
        for u in s.unicodeScalars {
            let v = u.value
            if v < 0x300 { continue }                         // Latin-1, Latin Extended A/B, IPA
            if v >= 0x0400 && v <= 0x0482 { continue }         // Cyrillic letters
            if v >= 0x048A && v <= 0x052F { continue }
            if v >= 0x0621 && v <= 0x064A { continue }         // Arabic letters (not marks)
            if v >= 0x0660 && v <= 0x066F { continue }
            if v >= 0x1E00 && v <= 0x1EFF { continue }         // Latin Extended Additional
            if v >= 0x2010 && v <= 0x2027 { continue }         // dashes, quotes, bullets
            if v >= 0x3041 && v <= 0x3096 { continue }         // Hiragana (no voiced marks)
            if v >= 0x30A1 && v <= 0x30FA { continue }         // Katakana
            if v >= 0x3400 && v <= 0x4DBF { continue }         // CJK Extension A
            if v >= 0x4E00 && v <= 0x9FFF { continue }         // CJK Unified Ideographs
            if v >= 0xAC00 && v <= 0xD7A3 { continue }         // Hangul syllables
            if v >= 0x1F300 && v <= 0x1FAFF { continue }       // emoji
            return false
        }
        return true
    }
}

/// Fixed-point decimal text without exponent and without "-0": coordinates in keys and GeoJSON.
public enum FixedDecimal {
    /// Appends `value` rounded half away from zero to `places` decimals (0...15). `trimZeros`
    /// drops trailing fractional zeros (and the point when nothing is left), as the writer does.
    /// `value` must be finite with |value| * 10^places < 9.2e18 (coordinates always are).
    public static func append(_ value: Double, places: Int, trimZeros: Bool, to out: inout [UInt8]) {
        let p = max(0, min(15, places))
        let scaled = (value * pow10[p]).rounded(.toNearestOrAwayFromZero)
        var n = Int64(scaled)
        if n == 0 {
            out.append(0x30)
            if !trimZeros && p > 0 {
                out.append(0x2E)
                for _ in 0..<p { out.append(0x30) }
            }
            return
        }
        if n < 0 { out.append(0x2D); n = -n }
        let unit = pow10i[p]
        appendDigits(UInt64(n / unit), to: &out)
        var frac = UInt64(n % unit)
        var width = p
        if trimZeros {
            while width > 0 && frac % 10 == 0 { frac /= 10; width -= 1 }
        }
        guard width > 0 else { return }
        out.append(0x2E)
        // Fractional digits, zero-padded to `width`, written right to left in place.
        let start = out.count
        for _ in 0..<width { out.append(0x30) }
        var i = out.count
        while frac > 0 { i -= 1; out[i] = UInt8(0x30 + frac % 10); frac /= 10 }
        _ = start
    }

    /// Appends the decimal digits of `v` (no sign).
    @inline(__always)
    public static func appendDigits(_ v: UInt64, to out: inout [UInt8]) {
        if v < 10 { out.append(UInt8(0x30 + v)); return }
        let start = out.count
        var x = v
        while x > 0 { out.append(UInt8(0x30 + x % 10)); x /= 10 }
        out[start...].reverse()
    }

    public static func string(_ value: Double, places: Int, trimZeros: Bool = false) -> String {
        var b: [UInt8] = []
        append(value, places: places, trimZeros: trimZeros, to: &b)
        return String(decoding: b, as: UTF8.self)
    }

    static let pow10: [Double] = (0...15).map { p in (0..<p).reduce(1.0) { r, _ in r * 10 } }
    static let pow10i: [Int64] = (0...15).map { p in (0..<p).reduce(Int64(1)) { r, _ in r * 10 } }
}
