import Foundation
import PoiFormats
import PoiModel
import PoiStore

/// The mapping between a `Place` and the backend's `locations` document (DESIGN.md §1).
///
/// The backend reads `name`, `placename`, `location` (GeoJSON Point, `[lon, lat]`), `details`,
/// `categories` and `imageId` (hex string); PoiKit adds `thumbnailId`, `importKey`, `extra`,
/// `source`, `created_at` and `updated_at`, which the app ignores.
public enum PlaceDocument {
    /// Properties PoiKit itself writes into exports. On import they describe another database's
    /// records (ids, timestamps), so they are not kept under `extra`; the import recomputes them.
    public static let generatedProperties: Set<String> = ["imageId", "thumbnailId", "created_at", "updated_at"]

    /// Columns a rejects file adds (`_line`, `_feature`, `_field`, `_reason`): dropped when the
    /// fixed file is imported again, so they never end up under `extra`.
    public static let rejectsAnnotations: Set<String> = ["_line", "_feature", "_field", "_reason"]

    /// The image links a place gets once its photo is stored.
    public struct ImageLinks: Sendable, Hashable {
        public var imageId: ObjectId
        public var thumbnailId: ObjectId?
        public init(imageId: ObjectId, thumbnailId: ObjectId?) {
            self.imageId = imageId
            self.thumbnailId = thumbnailId
        }
    }

    /// Fields to `$set` on the place (everything but `created_at`/`updated_at`, which the store
    /// sets on insert and on change), the optional fields to `$unset` because this import no
    /// longer has them, and `thumbnailId` apart: thumbnail regeneration relinks it in place, so it
    /// is written with the place but does not count as a change of the place.
    public static func fields(for place: Place, links: ImageLinks?) -> (set: BSONDocument, unset: [String], untracked: BSONDocument) {
        var set = BSONDocument()
        var unset: [String] = []
        var untracked = BSONDocument()
        set.append("importKey", .string(place.importKey))
        set.append("name", .string(place.name))
        set.append("placename", .string(place.placename ?? ""))
        set.append("location", .document([
            "type": "Point",
            "coordinates": [.double(place.coordinate.longitude), .double(place.coordinate.latitude)],
        ]))
        set.append("details", .string(place.details ?? ""))
        set.append("categories", .array(place.categories.map(BSONValue.string)))
        if let links {
            set.append("imageId", .string(links.imageId.hex))
            if let thumb = links.thumbnailId { untracked.append("thumbnailId", .string(thumb.hex)) } else { unset.append("thumbnailId") }
        } else {
            unset.append(contentsOf: ["imageId", "thumbnailId"])
        }
        let extra = place.extra.members.filter {
            !generatedProperties.contains($0.key) && !rejectsAnnotations.contains($0.key)
        }
        set.append("extra", .document(BSONDocument(extra.map { ($0.key, bson($0.value)) })))
        var source: BSONDocument = ["file": .string((place.source.file as NSString).lastPathComponent)]
        switch place.source.position {
        case .line(let line): source.append("line", .int64(Int64(line)))
        case .feature(let index): source.append("feature", .int64(Int64(index)))
        }
        set.append("source", .document(source))
        return (set, unset, untracked)
    }

    public static func bson(_ value: JSONValue) -> BSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return Int32(exactly: i).map(BSONValue.int32) ?? .int64(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(bson))
        case .object(let object): return .document(BSONDocument(object.members.map { ($0.key, bson($0.value)) }))
        }
    }

    public static func json(_ value: BSONValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int32(let i): return .integer(Int64(i))
        case .int64(let i): return .integer(i)
        case .double(let d): return d.isFinite ? .double(d) : .null
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(json))
        case .document(let d): return .object(JSONObject(d.map { JSONMember($0.key, json($0.value)) }))
        case .objectId(let id): return .string(id.hex)
        case .date(let d): return .string(iso8601(d))
        case .binary(_, let data): return .string(Data(data).base64EncodedString())
        case .unsupported: return .null
        }
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-22T07:00:00.123Z` (BSON dates are ms).
    public static func iso8601(_ date: BSONDate) -> String {
        let ms = date.millisecondsSinceEpoch
        let seconds = Int64((Double(ms) / 1000).rounded(.down))
        let millis = Int(ms - seconds * 1000)
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// A stored `locations` document as a GeoJSON feature; nil when it has no usable Point
    /// (documents the app created by hand can lack one).
    public static func feature(from doc: BSONDocument, imagePath: String? = nil) -> GeoJSONFeature? {
        guard let location = doc["location"]?.documentValue,
              let coords = location["coordinates"]?.arrayValue, coords.count >= 2,
              let lon = coords[0].doubleValue, let lat = coords[1].doubleValue,
              let coordinate = try? Coordinate.validated(longitude: lon, latitude: lat)
        else { return nil }
        var props: [JSONMember] = []
        func add(_ key: String) { if let v = doc[key] { props.append(JSONMember(key, json(v))) } }
        for key in ["name", "placename", "details", "categories", "importKey", "imageId", "thumbnailId"] { add(key) }
        if let imagePath { props.append(JSONMember("image", .string(imagePath))) }
        add("created_at")
        add("updated_at")
        let taken = Set(props.map(\.key))
        if let extra = doc["extra"]?.documentValue {
            for (key, value) in extra where !taken.contains(key) { props.append(JSONMember(key, json(value))) }
        }
        let id: JSONValue? = doc["_id"].map { value in
            if case .objectId(let oid) = value { return .string(oid.hex) }
            return json(value)
        }
        return GeoJSONFeature(id: id, coordinate: coordinate, properties: JSONObject(props))
    }
}
