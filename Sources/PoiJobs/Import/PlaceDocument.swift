import Foundation
import PoiFiles
import PoiFormats
import PoiModel
import PoiStore

/// The mapping between a `Place` and the backend's `locations` document (ARCHITECTURE.md §1).
///
/// The backend reads `name`, `placename`, `location` (GeoJSON Point, `[lon, lat]`), `details`,
/// `categories` and `imageId` (hex string); PoiKit adds `thumbnailId`, `importKey`, `extra`,
/// `source`, `created_at` and `updated_at`, which the app ignores.
public enum PlaceDocument {
    /// A failed image reference and its reason, as stored and exported: an export imported back
    /// restores them (the reference is not tried again from the export's folder, where it would
    /// fail differently), so a round trip changes nothing.
    public static let imageTrace: [String] = PoiKitProperties.imageTrace

    /// The image links a place gets once its photo is stored.
    public struct ImageLinks: Sendable, Hashable {
        public var imageId: ObjectId
        public var thumbnailId: ObjectId?
        public init(imageId: ObjectId, thumbnailId: ObjectId?) {
            self.imageId = imageId
            self.thumbnailId = thumbnailId
        }
    }

    /// What the import writes for one place (see `fields(for:links:)`).
    public struct Write: Sendable {
        /// Tracked fields, in a fixed order; `imageId` last when the place sets it.
        public var set: BSONDocument
        /// Tracked removals (`imageId` when the input's image column is there but empty).
        public var unset: [String]
        /// Written with the place, never a change: `thumbnailId` (relinked in place by
        /// `poi thumbnails`) and `source` (provenance, ARCHITECTURE.md §4).
        public var untracked: BSONDocument
        /// Removed with the place, never a change: `thumbnailId` when the place has no thumbnail.
        public var untrackedUnset: [String]
        /// Left as stored: `imageId` (and, untouched, `thumbnailId`) when the input has no image
        /// column or property at all, so a file that names no image keeps the place's link. The
        /// digest counts the stored `imageId` as if the item had set it.
        public var keep: [String]

        public func item(key: String) -> UpsertItem {
            UpsertItem(key: .string(key), fields: set, unset: unset, untracked: untracked,
                       untrackedUnset: untrackedUnset, keep: keep)
        }
    }

    /// The property exports carry a place's provenance in (`PoiKitProperties.source`).
    public static let sourceProperty = PoiKitProperties.source

    /// The input's name as provenance keeps it: its last component (`places.csv`), and for a
    /// zip member the archive's last component with the member's path (`dump.zip:dump/a.csv`:
    /// the member alone would not say where it came from).
    static func storedFileName(_ file: String) -> String {
        if let r = file.range(of: ".zip:", options: .caseInsensitive) {
            return FilePaths.lastComponent(of: String(file[..<r.upperBound].dropLast())) + ":" + file[r.upperBound...]
        }
        return FilePaths.lastComponent(of: file)
    }

    /// `_source` as PoiKit's exports write it: `{file, line}` or `{file, feature}`, where the
    /// stored place came from. Kept as the place's `source` when the export is imported, so a
    /// round trip through a file gives the same document (the reader keeps any other `_source`
    /// in `extra`).
    static func exportedSource(_ place: Place) -> BSONDocument? {
        guard let value = place.poiKitProperties[sourceProperty],
              let (file, position) = PoiKitProperties.exportedSource(value) else { return nil }
        switch position {
        case .line(let n): return ["file": .string(file), "line": .int64(Int64(n))]
        case .feature(let n): return ["file": .string(file), "feature": .int64(Int64(n))]
        }
    }

    /// The place as the import writes it. Tracked (digested: a change moves `updated_at`):
    /// importKey, name, placename, location, details, categories, extra, and the image link
    /// (`imageId`). Not tracked: `thumbnailId` and `source`. Image links: a stored image sets
    /// `imageId` (and `thumbnailId`); an image column or property present but empty, or an image
    /// that failed, removes them; no image column or property at all keeps what is stored.
    ///
    /// `imageError` is why the place's image reference failed (missing file, URL, refused path,
    /// damaged image): the reference and the reason go on the document as `imageSource` and
    /// `imageError`, so the place can be found, fixed and imported again; both are unset otherwise.
    public static func fields(for place: Place, links: ImageLinks?, imageError: String? = nil) -> Write {
        var set = BSONDocument()
        var unset: [String] = []
        var untracked = BSONDocument()
        var untrackedUnset: [String] = []
        var keep: [String] = []
        set.append("importKey", .string(place.importKey))
        set.append("name", .string(place.name))
        set.append("placename", .string(place.placename ?? ""))
        set.append("location", .document([
            "type": "Point",
            "coordinates": .array([.double(place.coordinate.longitude), .double(place.coordinate.latitude)]
                + (place.altitude.map { [BSONValue.double($0)] } ?? [])),
        ]))
        set.append("details", .string(place.details ?? ""))
        set.append("categories", .array(place.categories.map(BSONValue.string)))
        // Every column the user gave is kept (ARCHITECTURE.md §4): a CSV column named like a field PoiKit
        // writes (`created_at`, `_reason`…) stays under `extra` with its name. The ids, timestamps,
        // provenance and rejects annotations PoiKit's own GeoJSON exports and rejects files carry
        // describe the exporting database or run: the readers keep them apart
        // (`Place.poiKitProperties`), and only the provenance and image trace are used.
        let carriedSource = exportedSource(place)
        set.append("extra", .document(BSONDocument(place.extra.members.map { ($0.key, bson($0.value)) })))
        if let imageError, links == nil, let reference = place.image ?? exportedImageId(place) {
            set.append("imageSource", .string(reference))
            set.append("imageError", .string(imageError))
        } else if links == nil, place.image == nil, case .string(let reference)? = place.poiKitProperties["imageSource"],
                  case .string(let reason)? = place.poiKitProperties["imageError"] {
            set.append("imageSource", .string(reference))
            set.append("imageError", .string(reason))
        } else {
            unset.append(contentsOf: imageTrace)
        }
        if let links {
            set.append("imageId", .string(links.imageId.hex))
            if let thumb = links.thumbnailId { untracked.append("thumbnailId", .string(thumb.hex)) } else { untrackedUnset.append("thumbnailId") }
        } else if imageError == nil && (place.hasImageField || place.image != nil) {
            // The image column is there and empty: the place no longer has an image.
            unset.append("imageId")
            untrackedUnset.append("thumbnailId")
        } else {
            // No image column, or an image that failed tonight (a folder not mounted, a file
            // being replaced): the stored link stays, so neither the app nor `gc --delete` loses
            // the photo; the failure is on the place as imageSource/imageError.
            keep = ["imageId"]
        }
        if let carriedSource {
            untracked.append("source", .document(carriedSource))
        } else {
            var source: BSONDocument = ["file": .string(Self.storedFileName(place.source.file))]
            switch place.source.position {
            case .line(let line): source.append("line", .int64(Int64(line)))
            case .feature(let index): source.append("feature", .int64(Int64(index)))
            }
            untracked.append("source", .document(source))
        }
        return Write(set: set, unset: unset, untracked: untracked, untrackedUnset: untrackedUnset, keep: keep)
    }

    /// The `imageId` (hex) a feature of a PoiKit export names without an image of its own
    /// (exported without `--with-images`, or its photo could not be copied): the image of the
    /// database the file comes from, which the import can only keep where that image is stored.
    public static func exportedImageId(_ place: Place) -> String? {
        guard !place.hasImageField, case .string(let hex)? = place.poiKitProperties["imageId"], ObjectId(hex: hex) != nil else { return nil }
        return hex
    }

    public static func bson(_ value: JSONValue) -> BSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return Int32(exactly: i).map(BSONValue.int32) ?? .int64(i)
        // Readers give at most 34 digits, which Decimal128 holds exactly.
        case .bigInteger(let text): return BSONDecimal128(exactly: text).map(BSONValue.decimal128) ?? .string(text)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .date(let ms): return .date(BSONDate(millisecondsSinceEpoch: ms))
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
        // An integer comes back as the same digits (Int64 where it fits: a Decimal128 someone
        // else stored as 5 exports as 5); other decimals as the nearest double.
        case .decimal128(let d):
            if let text = d.integerText {
                return Int64(text).map(JSONValue.integer) ?? .bigInteger(text)  // exponent 0: ≤ 34 digits
            }
            return Double(d.description).flatMap { $0.isFinite ? JSONValue.double($0) : nil } ?? .null
        case .double(let d): return d.isFinite ? .double(d) : .null
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(json))
        case .document(let d): return .object(JSONObject(d.map { JSONMember($0.key, json($0.value)) }))
        case .objectId(let id): return .string(id.hex)
        // A date stays a date (JSONEncoding writes it in ISO 8601, as before): a CSV export types
        // its column DateTime, so it comes back a date.
        case .date(let d): return .date(millisecondsSince1970: d.millisecondsSinceEpoch)
        case .binary(_, let data): return .string(Data(data).base64EncodedString())
        case .unsupported: return .null
        }
    }

    /// A stored `locations` document as a GeoJSON feature; nil when it has no usable Point
    /// (documents the app created by hand can lack one).
    /// `image`: where `--with-images` copied the photo, and the name it was first stored
    /// under, written beside it as `imageOriginalName` (the copy itself is named by id).
    public static func feature(from doc: BSONDocument, image: (path: String, name: String?)? = nil) -> GeoJSONFeature? {
        guard let location = doc["location"]?.documentValue,
              let coords = location["coordinates"]?.arrayValue, coords.count >= 2,
              let lon = coords[0].doubleValue, let lat = coords[1].doubleValue,
              let coordinate = try? Coordinate.validated(longitude: lon, latitude: lat)
        else { return nil }
        var props: [JSONMember] = []
        func add(_ key: String) { if let v = doc[key] { props.append(JSONMember(key, json(v))) } }
        for key in ["name", "placename", "details", "categories", "importKey", "imageId", "thumbnailId"] {
            // The import stores a missing placename or details as "" (the app reads both as
            // strings); the export leaves them out again, as the dump had them, and an import
            // of the export stores "" once more: the round trip is unchanged.
            if key == "placename" || key == "details", doc[key] == .string("") { continue }
            add(key)
        }
        if let image {
            props.append(JSONMember("image", .string(image.path)))
            if let name = image.name, !name.isEmpty {
                props.append(JSONMember(PoiKitProperties.imageOriginalName, .string(name)))
            }
        }
        add("created_at")
        add("updated_at")
        if let v = doc["source"] { props.append(JSONMember(sourceProperty, json(v))) }
        for key in imageTrace { add(key) }
        // One rule for extras (PoiKitProperties): an extra named like a field or like any of
        // PoiKit's own properties comes out as "name (extra)", whether or not this place has that
        // property, and the readers take it back as extra "name": nothing stored is left out of
        // an export, and nothing comes back renamed.
        if let extra = doc["extra"]?.documentValue {
            for (key, value) in extra {
                props.append(JSONMember(PoiKitProperties.propertyName(forExtra: key), json(value)))
            }
        }
        let id: JSONValue? = doc["_id"].map { value in
            if case .objectId(let oid) = value { return .string(oid.hex) }
            return json(value)
        }
        let altitude = coords.count >= 3 ? coords[2].doubleValue : nil
        return GeoJSONFeature(id: id, coordinate: coordinate, altitude: altitude, properties: JSONObject(props))
    }
}
