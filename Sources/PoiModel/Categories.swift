/// Category lists: the app filters with `{"categories": {"$in": [...]}}`, so they must be clean
/// strings — split, trimmed, de-duplicated (first occurrence wins, order kept), empties dropped.
public enum Categories {
    /// Splits a text field such as "cafe; bakery|cafe" on `;` and `|`.
    public static func parse(_ text: String) -> [String] {
        if text.isEmpty { return [] }
        // Byte-level split: ';' and '|' are ASCII, so they never occur inside a multi-byte scalar.
        var out: [String] = []
        var t = text
        t.withUTF8 { p in
            var start = 0
            for i in 0...p.count where i == p.count || p[i] == 0x3B || p[i] == 0x7C {
                if i > start {
                    let item = trimWhitespace(String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self))
                    if !item.isEmpty && !out.contains(item) { out.append(item) }
                }
                start = i + 1
            }
        }
        return out
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
    // Fast path: most values have no surrounding whitespace at all.
    guard let first = s.utf8.first, let last = s.utf8.last else { return s }
    if first > 0x20 && first < 0x80 && last > 0x20 && last < 0x80 { return s }
    let scalars = s.unicodeScalars
    guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
    let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
    if start == scalars.startIndex && scalars.index(after: end) == scalars.endIndex { return s }
    return String(scalars[start...end])
}
