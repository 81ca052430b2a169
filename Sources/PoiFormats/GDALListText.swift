import PoiModel

/// GDAL's text for a list field: `(3:aerodrome,medium airport,scheduled service)`, the count,
/// a colon, then the items joined by commas with nothing escaped.
///
/// Why it reaches PoiKit: a format without list fields (GeoPackage, FlatGeobuf, Shapefile…)
/// made by `ogr2ogr -mapFieldType StringList=String` from a GeoJSON array stores this text, and
/// reading it back through `ogr2ogr -f GeoJSONSeq` gives it as a plain string. Taken as a
/// category it was one category holding the whole text; it is meant as its items.
///
/// An item holding a comma cannot be told from two items, so the text is read only when the
/// pieces between commas are exactly as many as the count says; otherwise it is `ambiguous`,
/// and the reader refuses the feature rather than guess.
enum GDALListText {
    enum Reading: Equatable {
        /// Not GDAL's list text: the value is what it is.
        case notAList
        /// The items, as text (GDAL writes every list kind so; which kind it was is not said).
        case items([String])
        /// GDAL's list text whose pieces are not as many as its count: an item holds a comma.
        case ambiguous(count: Int, pieces: Int)
    }

    static func read(_ text: String) -> Reading {
        let utf8 = text.utf8
        // Cheap refusal first: asked of every string property of every feature.
        guard utf8.count >= 4, utf8.first == 0x28, utf8.last == 0x29 else { return .notAList }
        let inner = utf8.dropFirst().dropLast()
        guard let colon = inner.firstIndex(of: 0x3A) else { return .notAList }
        let digits = inner[..<colon]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .notAList }
        let count = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        let body = inner[inner.index(after: colon)...]
        if count == 0 { return body.isEmpty ? .items([]) : .ambiguous(count: 0, pieces: body.split(separator: 0x2C, omittingEmptySubsequences: false).count) }
        let pieces = body.split(separator: 0x2C, omittingEmptySubsequences: false)
        guard pieces.count == count else { return .ambiguous(count: count, pieces: pieces.count) }
        return .items(pieces.map { String(decoding: $0, as: UTF8.self) })
    }

    /// Why an ambiguous text is refused, for the reject naming the property.
    static func refusal(_ text: String, count: Int, pieces: Int) -> String {
        let shown = text.count > 60 ? text.prefix(57) + "…" : Substring(text)
        return "\"\(shown)\" is GDAL's text for a list of \(count) item\(count == 1 ? "" : "s"), but it holds \(pieces) "
            + "comma-separated pieces (an item holds a comma), so the items cannot be told apart; "
            + "make the file with ogr2ogr's -oo ARRAY_AS_STRING=YES so the list arrives as JSON"
    }
}
