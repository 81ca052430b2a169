/// A WGS 84 position, longitude first as in GeoJSON and MongoDB's 2dsphere index.
public struct Coordinate: Sendable, Hashable {
    public var longitude: Double
    public var latitude: Double

    /// Unchecked; use `Coordinate.validated(longitude:latitude:)` on untrusted values.
    public init(longitude: Double, latitude: Double) {
        self.longitude = longitude
        self.latitude = latitude
    }

    /// Why a coordinate is refused; the message is user-facing.
    public enum Problem: Error, Sendable, Equatable {
        case notFinite(field: PlaceField, Double)
        case outOfRange(field: PlaceField, Double)

        public var field: PlaceField {
            switch self { case .notFinite(let f, _), .outOfRange(let f, _): return f }
        }

        public var message: String {
            switch self {
            case .notFinite(let f, let v): return "\(f.rawValue) \(v) is not a finite number"
            case .outOfRange(.longitude, let v): return "longitude \(v) out of range [-180, 180]"
            case .outOfRange(let f, let v): return "\(f.rawValue) \(v) out of range [-90, 90]"
            }
        }
    }

    /// Longitude in [-180, 180], latitude in [-90, 90], both finite (ARCHITECTURE.md §4).
    public static func validated(longitude: Double, latitude: Double) throws(Problem) -> Coordinate {
        guard longitude.isFinite else { throw .notFinite(field: .longitude, longitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .outOfRange(field: .longitude, longitude) }
        guard latitude.isFinite else { throw .notFinite(field: .latitude, latitude) }
        guard (-90.0...90.0).contains(latitude) else { throw .outOfRange(field: .latitude, latitude) }
        // -0.0 is a valid position but prints as "-0"; normalise so keys and output are stable.
        return Coordinate(longitude: longitude == 0 ? 0 : longitude, latitude: latitude == 0 ? 0 : latitude)
    }
}
