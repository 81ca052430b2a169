/// A bounding box in degrees, west/south/east/north (the `--bbox W,S,E,N` order). West greater
/// than east means the box crosses the antimeridian.
public struct BoundingBox: Sendable, Equatable {
    public var west: Double, south: Double, east: Double, north: Double

    public init(west: Double, south: Double, east: Double, north: Double) throws(StoreError) {
        for (name, v, limit) in [("west", west, 180.0), ("east", east, 180.0), ("south", south, 90.0), ("north", north, 90.0)] {
            guard v.isFinite, abs(v) <= limit else {
                throw .refusedQuery(reason: "bbox \(name) \(v) is outside [-\(Int(limit)), \(Int(limit))]")
            }
        }
        guard south <= north else { throw .refusedQuery(reason: "bbox south \(south) is north of north \(north)") }
        self.west = west; self.south = south; self.east = east; self.north = north
    }

    public var crossesAntimeridian: Bool { west > east }
}

/// The filters `poi export` (and the backend's own `GET /locations?query=`) use on `locations`,
/// built as the backend builds them, combined with `$and`.
public struct PlaceFilter: Sendable, Equatable {
    public var bbox: BoundingBox?
    /// Places having any of these categories.
    public var categories: [String] = []
    /// Places whose `updated_at` is at or after this time.
    public var since: BSONDate?
    /// A user query, already checked by `QueryGuard` (build with `PlaceFilter.userQuery(json:)`).
    public var userQuery: BSONDocument?

    public init(bbox: BoundingBox? = nil, categories: [String] = [], since: BSONDate? = nil,
                userQuery: BSONDocument? = nil) {
        self.bbox = bbox
        self.categories = categories
        self.since = since
        self.userQuery = userQuery
    }

    /// Parses and checks a user's extended-JSON query (refusing server-side JavaScript).
    public static func userQuery(json: String) throws(StoreError) -> BSONDocument {
        try QueryGuard.parse(json)
    }

    /// The filter document. An empty filter matches everything.
    public func document() throws(StoreError) -> BSONDocument {
        var clauses: [BSONDocument] = []
        if let bbox {
            if bbox.crossesAntimeridian {
                clauses.append(["$or": [
                    .document(Self.box(west: bbox.west, south: bbox.south, east: 180, north: bbox.north)),
                    .document(Self.box(west: -180, south: bbox.south, east: bbox.east, north: bbox.north)),
                ]])
            } else {
                clauses.append(Self.box(west: bbox.west, south: bbox.south, east: bbox.east, north: bbox.north))
            }
        }
        if !categories.isEmpty {
            clauses.append(["categories": .document(["$in": .array(categories.map(BSONValue.string))])])
        }
        if let since {
            clauses.append(["updated_at": .document(["$gte": .date(since)])])
        }
        if let userQuery, !userQuery.isEmpty {
            try QueryGuard.check(userQuery)  // also when set directly, not through userQuery(json:)
            clauses.append(userQuery)
        }
        switch clauses.count {
        case 0: return BSONDocument()
        case 1: return clauses[0]
        default: return ["$and": .array(clauses.map(BSONValue.document))]
        }
    }

    /// `{"location":{"$geoWithin":{"$box":[[W,S],[E,N]]}}}`: the backend's own bbox query.
    static func box(west: Double, south: Double, east: Double, north: Double) -> BSONDocument {
        ["location": .document(["$geoWithin": .document(["$box": [[.double(west), .double(south)], [.double(east), .double(north)]]])])]
    }
}

/// Checks queries that come from users: they are data, so they must not run code on the server.
public enum QueryGuard {
    /// Operators that execute JavaScript on the server.
    public static let forbiddenOperators: Set<String> = ["$where", "$function", "$accumulator"]

    /// Parses extended JSON with libbson, then refuses server-side JavaScript at any depth.
    public static func parse(_ json: String) throws(StoreError) -> BSONDocument {
        // libbson reads a top-level array as a document keyed "0", "1"…: `[]` would match
        // everything and `[1,2]` nothing. A filter is an object.
        let first = json.utf8.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if let first, first != UInt8(ascii: "{") {
            let kind = first == UInt8(ascii: "[") ? "an array" : "not an object"
            throw .refusedQuery(reason: "the query must be a JSON object such as {\"categories\": \"museum\"}, and this is \(kind)")
        }
        let doc: BSONDocument
        do {
            doc = try LibBSON.parseExtendedJSON(json)
        } catch {
            throw .refusedQuery(reason: "the query is not valid JSON: \(error.message)")
        }
        try check(doc)
        return doc
    }

    /// Refuses `$where`, `$function` and `$accumulator` anywhere in `document` (nested documents
    /// and arrays included), and JavaScript code values, before anything reaches the server.
    public static func check(_ document: BSONDocument) throws(StoreError) {
        try check(document, path: "")
    }

    private static func check(_ document: BSONDocument, path: String) throws(StoreError) {
        for (key, value) in document {
            let here = path.isEmpty ? key : path + "." + key
            if forbiddenOperators.contains(key) {
                throw .refusedQuery(reason: "\(key) (at \(here)) runs JavaScript on the database server, "
                    + "which PoiKit never sends on a user's behalf; express the condition with query operators instead")
            }
            try check(value, path: here)
        }
    }

    private static func check(_ value: BSONValue, path: String) throws(StoreError) {
        switch value {
        case .document(let d): try check(d, path: path)
        case .array(let items):
            for (i, item) in items.enumerated() { try check(item, path: path + "." + String(i)) }
        case .unsupported(let code, _) where code == 0x0D || code == 0x0F:
            throw .refusedQuery(reason: "JavaScript code (at \(path)) runs on the database server, which PoiKit never sends on a user's behalf")
        default: break
        }
    }
}
