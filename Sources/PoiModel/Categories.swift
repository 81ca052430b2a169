/// Category lists: the app filters with `{"categories": {"$in": [...]}}`, so they must be clean
/// strings — split, trimmed, de-duplicated (first occurrence wins, order kept), empties dropped.
public enum Categories {
    /// What a categories text is split on unless the user says otherwise: `;` and `|`. Not `,`:
    /// names such as "Restaurants, cafés" are single categories in real dumps.
    public static let defaultSeparators: [UInt8] = [0x3B, 0x7C]

    /// Splits a text field such as "cafe; bakery|cafe" on `separators` (ASCII bytes; default
    /// `;` and `|`).
    public static func parse(_ text: String, separators: [UInt8] = defaultSeparators) -> [String] {
        if text.isEmpty { return [] }
        // Byte-level split: ';' and '|' are ASCII, so they never occur inside a multi-byte scalar.
        var out: [String] = []
        var t = text
        t.withUTF8 { p in
            var start = 0
            let isDefault = separators == defaultSeparators
            for i in 0...p.count where i == p.count || (isDefault ? p[i] == 0x3B || p[i] == 0x7C : separators.contains(p[i])) {
                if i > start {
                    let item = UnicodeWhitespace.trimmedString(UnsafeBufferPointer(rebasing: p[start..<i]))
                    if !item.isEmpty && !out.contains(item) { out.append(item) }
                }
                start = i + 1
            }
        }
        return out
    }

    /// Whether `text` holds one of `separators` (the default pair compared directly: this runs
    /// for every category of every feature).
    @inline(__always)
    public static func containsSeparator(_ text: String, _ separators: [UInt8]) -> Bool {
        if separators == defaultSeparators { return text.utf8.contains { $0 == 0x3B || $0 == 0x7C } }
        return text.utf8.contains { separators.contains($0) }
    }

    /// Trims, drops empties and duplicates.
    public static func normalize(_ items: [String]) -> [String] {
        var out: [String] = []
        out.reserveCapacity(items.count)
        for item in items {
            let t = trimWhitespace(item)
            // Lists are short: a linear scan beats hashing.
            if t.isEmpty || out.contains(t) { continue }
            out.append(t)
        }
        return out
    }
}

/// Trims Unicode whitespace (incl. NBSP, ideographic space) on both ends.
@inlinable
public func trimWhitespace(_ s: String) -> String {
    // Fast path: most values have no surrounding whitespace at all. By index: `utf8.first` and
    // `utf8.last` were calls into the generic collection code, not inlined (1 % of convert).
    let u = s.utf8
    guard !u.isEmpty else { return s }
    let first = u[u.startIndex], last = u[u.index(before: u.endIndex)]
    if first > 0x20 && first < 0x80 && last > 0x20 && last < 0x80 { return s }
    return UnicodeWhitespace.trimmed(s)
}
