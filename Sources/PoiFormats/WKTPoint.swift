import PoiModel

/// A WKT `POINT` (OGC Simple Features: `POINT (x y)`, `POINT Z (x y z)`, any case, any spacing):
/// how `ogr2ogr -lco GEOMETRY=AS_WKT` and GeoPandas write a CSV's geometry, in a column named
/// `WKT` or `geometry`. Hand-written: no package on these machines reads WKT, and a point is
/// a few tokens. The numbers are handed on as text, so the validator reads them exactly as it
/// reads a latitude or longitude column.
enum WKTPoint {
    /// Column names read as a WKT point when a file has no latitude or longitude column
    /// (normalised by `PlaceField.normalizeColumnName`).
    static let columnNames: Set<String> = ["wkt", "geometry", "geom", "thegeom", "wktgeometry", "geometrywkt"]

    /// (x, y) text of a point, or why the value is not one.
    static func parse(_ value: String) -> Result<(x: String, y: String), Problem> {
        let t = trimWhitespace(value)
        if t.isEmpty { return .failure(.empty) }
        let upper = t.uppercased()
        guard upper.hasPrefix("POINT") else {
            let kind = upper.prefix { $0.isLetter }
            return .failure(kind.isEmpty ? .notWKT(String(t.prefix(40))) : .notAPoint(String(kind)))
        }
        var rest = Substring(upper.dropFirst(5)).drop { $0 == " " }
        for dims in ["ZM", "Z", "M"] where rest.hasPrefix(dims) {
            rest = rest.dropFirst(dims.count).drop { $0 == " " }
            break
        }
        if rest == "EMPTY" { return .failure(.emptyPoint) }
        guard rest.first == "(", rest.last == ")" else { return .failure(.notWKT(String(t.prefix(40)))) }
        let numbers = rest.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard numbers.count >= 2 && numbers.count <= 4 else { return .failure(.notWKT(String(t.prefix(40)))) }
        return .success((String(numbers[0]), String(numbers[1])))
    }

    enum Problem: Error, Equatable {
        case empty, emptyPoint
        case notAPoint(String)
        case notWKT(String)

        var message: String {
            switch self {
            case .empty: return "geometry is empty"
            case .emptyPoint: return "POINT EMPTY has no coordinates"
            case .notAPoint(let kind): return "WKT geometry \(kind) not supported, POINT required"
            case .notWKT(let text): return "\"\(text)\" is not a WKT POINT (x y)"
            }
        }
    }
}
