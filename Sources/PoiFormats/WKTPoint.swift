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

    /// (x, y) text of a point and its z when it has one, or why the value is not one. PostGIS's
    /// EWKT prefix `SRID=4326;` is read; another SRID is refused, named.
    static func parse(_ value: String) -> Result<(x: String, y: String, z: Double?), Problem> {
        var t = Substring(trimWhitespace(value))
        if t.isEmpty { return .failure(.empty) }
        if t.uppercased().hasPrefix("SRID="), let semicolon = t.firstIndex(of: ";") {
            let srid = t[t.index(t.startIndex, offsetBy: 5)..<semicolon].trimmingPrefix(" ")
            guard srid == "4326" else { return .failure(.foreignSRID(String(srid.prefix(12)))) }
            t = t[t.index(after: semicolon)...].drop { $0 == " " }
        }
        let upper = t.uppercased()
        guard upper.hasPrefix("POINT") else {
            let kind = upper.prefix { $0.isLetter }
            return .failure(kind.isEmpty ? .notWKT(String(t.prefix(40))) : .notAPoint(String(kind)))
        }
        var rest = Substring(upper.dropFirst(5)).drop { $0 == " " }
        var dimensions = ""
        for dims in ["ZM", "Z", "M"] where rest.hasPrefix(dims) {
            rest = rest.dropFirst(dims.count).drop { $0 == " " }
            dimensions = dims
            break
        }
        if rest == "EMPTY" { return .failure(.emptyPoint) }
        guard rest.first == "(", rest.last == ")" else { return .failure(.notWKT(String(t.prefix(40)))) }
        let numbers = rest.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard numbers.count >= 2 && numbers.count <= 4 else { return .failure(.notWKT(String(t.prefix(40)))) }
        // The third number is z unless the point says M only (x y m); kept as the altitude,
        // as a GeoJSON position's third value is.
        let z = numbers.count >= 3 && dimensions != "M" ? DecimalText.parse(String(numbers[2])) : nil
        return .success((String(numbers[0]), String(numbers[1]), z))
    }

    enum Problem: Error, Equatable {
        case empty, emptyPoint
        case notAPoint(String)
        case notWKT(String)
        case foreignSRID(String)

        var message: String {
            switch self {
            case .empty: return "geometry is empty"
            case .emptyPoint: return "POINT EMPTY has no coordinates"
            case .notAPoint(let kind): return "WKT geometry \(kind) not supported, POINT required"
            case .notWKT(let text): return "\"\(text)\" is not a WKT POINT (x y)"
            case .foreignSRID(let srid):
                return "coordinates are in SRID \(srid), not WGS 84 longitude/latitude (4326); reproject first, e.g. "
                    + "ogr2ogr -t_srs EPSG:4326"
            }
        }
    }
}
