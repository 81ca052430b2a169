/// The fields a place has; also the left-hand side of `--field FIELD=COLUMN`.
public enum PlaceField: String, Sendable, CaseIterable, Hashable {
    case name, placename, latitude, longitude, details, categories, image, id, importKey

    /// Column/property names recognised without a `--field` override, already normalised with
    /// `PlaceField.normalizeColumnName` (lowercased, spaces, `_` and `-` removed).
    public var aliases: [String] {
        switch self {
        case .name: return ["name", "title"]
        case .placename: return ["placename", "place", "address"]
        case .latitude: return ["latitude", "lat", "y", "lat.", "latitudedeg", "decimallatitude", "geolat"]
        case .longitude: return ["longitude", "lon", "lng", "long", "x", "lon.", "lng.", "long.", "longitudedeg",
                                 "decimallongitude", "geolon", "geolng", "geolong"]
        case .details: return ["details", "description", "desc"]
        case .categories: return ["categories", "category", "tags"]
        case .image: return ["image", "photo", "picture", "imagepath", "img"]
        case .id: return ["id"]
        case .importKey: return ["importkey"]
        }
    }

    /// Parses the FIELD side of `--field FIELD=COLUMN`; accepts field names and their aliases.
    public init?(argument: String) {
        let n = PlaceField.normalizeColumnName(argument)
        guard let f = PlaceField.allCases.first(where: { $0.aliases.contains(n) }) else { return nil }
        self = f
    }

    /// The field an unmapped column/property name looks like (`image_url`, `photo_file`,
    /// `source_id`, `geo_latitude`…), for a note saying how to map it; nil when it looks like
    /// none. Word parts decide (`lat` starts or ends the name, `_id`/`Id` ends it), so
    /// `platform` or `valid` look like nothing.
    public static func lookalike(column: String) -> PlaceField? {
        let n = normalizeColumnName(column)
        if n.isEmpty { return nil }
        for part in ["image", "photo", "picture", "img"] where n.contains(part) { return .image }
        if n.contains("latitude") || n.hasPrefix("lat") || n.hasSuffix("lat") { return .latitude }
        if n.contains("longitude") || n.hasPrefix("lon") || n.hasSuffix("lon") || n.hasSuffix("long")
            || n.hasPrefix("lng") || n.hasSuffix("lng") { return .longitude }
        let raw = trimWhitespace(column)
        if ["_id", "-id", " id", " ID", "_ID", "-ID"].contains(where: { raw.hasSuffix($0) })
            || (raw.hasSuffix("Id") && raw.dropLast(2).last.map { $0.isLowercase } == true)
            || ["osmid", "geonameid", "ref", "uuid", "gid", "fid", "objectid", "identifier"].contains(n) { return .id }
        if n.contains("address") || n.hasPrefix("addr") { return .placename }
        if n.contains("description") { return .details }
        if n.contains("categor") || n.hasSuffix("tags") { return .categories }
        return nil
    }

    /// Case- and space-insensitive column name key: lowercased with whitespace, `_` and `-` removed,
    /// so "Image Path", "image_path" and "IMAGEPATH" all match.
    public static func normalizeColumnName(_ s: String) -> String {
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
            var out: [UInt8] = []
            out.reserveCapacity(s.utf8.count)
            for b in s.utf8 where !(b == 0x20 || (b >= 0x09 && b <= 0x0D) || b == 0x5F || b == 0x2D) {
                out.append(b >= 0x41 && b <= 0x5A ? b + 0x20 : b)
            }
            return String(decoding: out, as: UTF8.self)
        }
        return String(String.UnicodeScalarView(s.lowercased().unicodeScalars.filter {
            !($0.properties.isWhitespace || $0 == "_" || $0 == "-")
        }))
    }
}

/// Where a record came from: file, 1-based record number and either the physical line where a CSV
/// record starts or the 0-based index of a GeoJSON feature (as in `.features[i]`).
public struct PlaceSource: Sendable, Hashable {
    public enum Position: Sendable, Hashable {
        case line(Int)
        case feature(Int)
    }
    public var file: String
    public var record: Int
    public var position: Position

    public init(file: String, record: Int, position: Position) {
        self.file = file
        self.record = record
        self.position = position
    }

    public var line: Int? { if case .line(let l) = position { return l } else { return nil } }
    public var feature: Int? { if case .feature(let f) = position { return f } else { return nil } }

    /// "file:12" for CSV, "file#feature 3" for GeoJSON: for messages.
    public var description: String {
        switch position {
        case .line(let l): return "\(file):\(l) (record \(record))"
        case .feature(let f): return "\(file): feature \(f) (record \(record))"
        }
    }
}

/// A validated point of interest, the shape PoiStore writes into `locations` (ARCHITECTURE.md §1).
/// Optional strings are nil when absent or blank; all mapped strings are trimmed.
/// More than ten stored properties: one per field of a `locations` document (ARCHITECTURE.md §1) and of PoiKit's own.
public struct Place: Sendable, Hashable {
    public var name: String
    public var placename: String?
    public var coordinate: Coordinate
    /// A GeoJSON position's third value (metres above the WGS 84 ellipsoid, RFC 7946 §3.1.1),
    /// kept as given; nil when the input has none (CSV, two-value positions).
    public var altitude: Double?
    public var details: String?
    public var categories: [String]
    /// The image reference as given by the input (usually a relative path); resolved by PoiJobs.
    public var image: String?
    /// Stable identity for upserts; see `ImportKey`.
    public var importKey: String
    /// The record's id as the input gave it (a GeoJSON Feature `id`, else an `id` property or
    /// column), its JSON type kept (`42` is not `"42"`); nil when there is none, it is blank, or
    /// it went under `extra` (a CSV `id` beside an `importKey`). The import key is made from it
    /// and the database does not store it; `poi convert` writes it back as the Feature `id`.
    public var id: JSONValue?
    /// Input columns/properties that map to no field, in input order (CSV values are strings,
    /// GeoJSON values keep their JSON types).
    public var extra: JSONObject
    /// PoiKit's own properties a GeoJSON feature carried (its exports' `imageId`, `thumbnailId`,
    /// timestamps, `_source`, `imageSource`/`imageError`; a rejects file's `_feature`, `_reason`…):
    /// what the file says about the database or run it came from, never the user's data, so
    /// kept apart from `extra`. Empty for CSV, whose columns are all the user's.
    public var poiKitProperties: JSONObject
    public var source: PlaceSource
    /// What `importKey` was made from (see `ImportKey`).
    public var keySource: ImportKeySource
    /// The record has an image column or property, even an empty one: an import then sets or
    /// removes the place's image link; without one it leaves the stored link as it is.
    public var hasImageField: Bool

    /// `keySource` defaults to `.derived` for `sha256:` keys, else `.id`; `hasImageField` to
    /// whether `image` is given.
    // Not inlined: inlined into `PlaceValidator.validate`, the place was built twice on the stack
    // and copied from one to the other (a retain and a release per field, 1.5 % of `poi convert`).
    @inline(never)
    public init(name: String, placename: String? = nil, coordinate: Coordinate, details: String? = nil,
                categories: [String] = [], image: String? = nil, importKey: String,
                extra: JSONObject = JSONObject(), source: PlaceSource,
                keySource: ImportKeySource? = nil, hasImageField: Bool? = nil, altitude: Double? = nil,
                poiKitProperties: JSONObject = JSONObject(), id: JSONValue? = nil) {
        self.id = id
        self.keySource = keySource ?? (importKey.hasPrefix("sha256:") ? .derived : .id)
        self.hasImageField = hasImageField ?? (image != nil)
        self.name = name
        self.altitude = altitude
        self.placename = placename
        self.coordinate = coordinate
        self.details = details
        self.categories = categories
        self.image = image
        self.importKey = importKey
        self.extra = extra
        self.poiKitProperties = poiKitProperties
        self.source = source
    }
}

/// A record that failed mapping or validation. Good records keep flowing past it.
public struct Reject: Sendable, Hashable, Error {
    public var source: PlaceSource
    /// The field (or column/property) at fault, nil when the whole record is bad.
    public var field: String?
    public var reason: String

    public init(source: PlaceSource, field: String?, reason: String) {
        self.source = source
        self.field = field
        self.reason = reason
    }

    /// One line for terminals: "file:12 (record 11): latitude: latitude 95.0 out of range [-90, 90]".
    public var message: String {
        "\(source.description): \(field.map { "\($0): " } ?? "")\(reason)"
    }
}
