import PoiModel

/// The properties PoiKit's own GeoJSON carries beside a place's fields — what its exports say
/// about the database they come from, and what its rejects files add — and the one rule for an
/// extra named like any of them or like a field.
///
/// **The rule.** A writer (`poi export`, `poi convert`) gives an extra the property name
/// `"NAME (extra)"` when a reader would take `NAME` for something else: a field (any name the
/// default mapping recognises: `name`, `title`, `address`, `lat`, `image`, `id`, `importKey`…),
/// one of PoiKit's own properties (`imageId`, `thumbnailId`, `created_at`, `updated_at`,
/// `_source`, `imageSource`, `imageError`, `imageOriginalName`, `_line`, `_feature`, `_field`, `_reason`), or a name
/// that itself ends in `" (extra)"`. Every other extra keeps its name. Readers take one
/// `" (extra)"` off and store the rest under `extra` as it is, so an export imports back with
/// `extra` unchanged, and the file stays plain GeoJSON (flat properties, readable anywhere).
public enum PoiKitProperties {
    /// Ids and timestamps of the database an export comes from: an import recomputes them.
    public static let generated: [String] = ["imageId", "thumbnailId", "created_at", "updated_at"]
    /// A place's stored provenance, as exports write it: `{file, line}` or `{file, feature}`
    /// (a plain `source` is a common column name of its own).
    public static let source = "_source"
    /// A failed image reference and its reason, as stored and exported.
    public static let imageTrace: [String] = ["imageSource", "imageError"]
    /// The name a photo had when it was first stored (`files.originalName`), written beside
    /// `image` by `poi export --with-images`, whose copies are named by id: an import stores
    /// the photo under this name again, so the name survives a round trip.
    public static let imageOriginalName = "imageOriginalName"
    /// What a rejects file adds to each record.
    public static let rejectsAnnotations: [String] = ["_line", "_feature", "_field", "_reason"]

    /// The names a CSV export writes as columns of their own (every one but the rejects
    /// annotations, which only rejects files carry).
    public static let exportColumns: Set<String> = Set(generated + [source] + imageTrace + [imageOriginalName])

    /// The CSV export's column for a position's third value (the altitude), read back as such
    /// only in an export's header; an extra of that name is written `"alt (extra)"` there.
    public static let altitudeColumn = "alt"

    /// Every name above.
    public static let names: Set<String> = Set(generated + [source] + imageTrace + [imageOriginalName] + rejectsAnnotations)

    /// Whether a GeoJSON property is one of PoiKit's own rather than the user's: any of `names`,
    /// except a `_source` that is not of the shape exports write (someone else's, kept in `extra`).
    static func isOwn(_ key: String, _ value: JSONValue) -> Bool {
        guard mayBeAName(key), names.contains(key) else { return false }
        return key != source || exportedSource(value) != nil
    }

    /// A length and first byte some name has: asked of every unmapped property a reader sees,
    /// so most are answered without hashing them.
    private static func mayBeAName(_ key: String) -> Bool {
        let n = key.utf8.count
        guard n >= nameLengths.lowerBound, n <= nameLengths.upperBound, let first = key.utf8.first else { return false }
        return nameFirstBytes.contains(first)
    }
    private static let nameLengths: ClosedRange<Int> = names.map(\.utf8.count).min()!...names.map(\.utf8.count).max()!
    private static let nameFirstBytes: [UInt8] = Array(Set(names.compactMap(\.utf8.first))).sorted()

    /// `_source` as exports write it: the file and the line or feature it names.
    public static func exportedSource(_ value: JSONValue) -> (file: String, position: PlaceSource.Position)? {
        guard case .object(let o) = value, o.count == 2, case .string(let file)? = o["file"] else { return nil }
        switch (o["line"], o["feature"]) {
        case (.integer(let n)?, nil) where Int(exactly: n) != nil: return (file, .line(Int(n)))
        case (nil, .integer(let n)?) where Int(exactly: n) != nil: return (file, .feature(Int(n)))
        default: return nil
        }
    }

    /// The property name a writer gives the extra `key` (the rule above).
    public static func propertyName(forExtra key: String) -> String {
        isTaken(key) ? key + FieldMapping.extraSuffix : key
    }

    /// Whether a reader would take a property named `key` for anything but the extra `key`.
    static func isTaken(_ key: String) -> Bool {
        (mayBeAName(key) && names.contains(key)) || FieldMapping.extraName(key) != nil
            || FieldMapping.defaultField(forColumn: key) != nil
    }
}
