import Foundation
import PoiFormats
import PoiModel

/// Rebuilds the input record of a place that was valid on reading but refused later (by the
/// server, or for its image with `--require-images`), so it can go to the rejects file in the
/// input's format. Readers hand out the raw form only for records they reject themselves.
struct RawRecordRebuilder {
    let format: InputFormat
    let header: [String]?
    let roles: [ColumnRole]

    init(format: InputFormat, header: [String]?, mapping: FieldMapping) {
        self.format = format
        self.header = header
        self.roles = header.map { mapping.plan(header: $0) } ?? []
    }

    func raw(for place: Place) -> RawRecord {
        switch format {
        case .geojson:
            let feature = GeoJSONFeature(place: place, id: .string(place.importKey))
            var props = feature.properties
            if let image = place.image { props.members.append(JSONMember("image", .string(image))) }
            return .feature(.object(JSONObject([
                JSONMember("type", .string("Feature")),
                JSONMember("id", .string(place.importKey)),
                JSONMember("geometry", .object(JSONObject([
                    JSONMember("type", .string("Point")),
                    JSONMember("coordinates", .array([.double(place.coordinate.longitude), .double(place.coordinate.latitude)])),
                ]))),
                JSONMember("properties", .object(props)),
            ])))
        case .csv:
            return .csv(roles.map { role in
                switch role {
                case .field(let field): return value(of: field, in: place)
                case .extra(let key):
                    guard let v = place.extra.members.first(where: { $0.key == key })?.value else { return "" }
                    if case .string(let s) = v { return s }
                    var out: [UInt8] = []
                    JSONEncoding.append(v, to: &out)
                    return String(decoding: out, as: UTF8.self)
                }
            })
        }
    }

    private func value(of field: PlaceField, in place: Place) -> String {
        switch field {
        case .name: return place.name
        case .placename: return place.placename ?? ""
        case .latitude: return String(place.coordinate.latitude)
        case .longitude: return String(place.coordinate.longitude)
        case .details: return place.details ?? ""
        case .categories: return place.categories.joined(separator: ";")
        case .image: return place.image ?? ""
        case .id, .importKey: return place.importKey
        }
    }
}
