/// Category lists: the app filters with `{"categories": {"$in": [...]}}`, so they must be clean
/// strings — split, trimmed, de-duplicated (first occurrence wins, order kept), empties dropped.
public enum Categories {
    /// Splits a text field such as "cafe; bakery|cafe" on `;` and `|`.
    public static func parse(_ text: String) -> [String] {
        normalize(text.split(whereSeparator: { $0 == ";" || $0 == "|" }).map(String.init))
    }

    /// Trims, drops empties and duplicates.
    public static func normalize(_ items: [String]) -> [String] {
        var out: [String] = []
        var seen = Set<String>()
        for item in items {
            let t = trimWhitespace(item)
            if t.isEmpty || seen.contains(t) { continue }
            seen.insert(t)
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
    return String(scalars[start...end])
}
