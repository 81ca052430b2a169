import PoiTestSupport
import Testing
@testable import PoiStore

@Suite(.tags(.live)) struct PlaceFilterTests {
    @Test func bboxIsTheBackendsBoxQuery() throws {
        let f = PlaceFilter(bbox: try BoundingBox(west: -1, south: 50, east: 1, north: 52))
        #expect(try f.document().description
            == #"{ "location" : { "$geoWithin" : { "$box" : [ [ -1.0, 50.0 ], [ 1.0, 52.0 ] ] } } }"#)
    }

    @Test func antimeridianBoxBecomesTwoBoxesUnderOr() throws {
        let f = PlaceFilter(bbox: try BoundingBox(west: 170, south: -10, east: -170, north: 10))
        #expect(try f.document().description == #"{ "$or" : [ "#
            + #"{ "location" : { "$geoWithin" : { "$box" : [ [ 170.0, -10.0 ], [ 180.0, 10.0 ] ] } } }, "#
            + #"{ "location" : { "$geoWithin" : { "$box" : [ [ -180.0, -10.0 ], [ -170.0, 10.0 ] ] } } } ] }"#)
    }

    @Test func filtersCombineWithAnd() throws {
        let f = PlaceFilter(categories: ["museum", "park"], since: BSONDate(millisecondsSinceEpoch: 0),
                            userQuery: try PlaceFilter.userQuery(json: #"{"name": "Big Ben"}"#))
        #expect(try f.document().description == #"{ "$and" : [ { "categories" : { "$in" : [ "museum", "park" ] } }, "#
            + #"{ "updated_at" : { "$gte" : { "$date" : "1970-01-01T00:00:00Z" } } }, { "name" : "Big Ben" } ] }"#)
        #expect(try PlaceFilter().document().isEmpty)
    }

    @Test func invalidBoxesAreRefused() {
        #expect(throws: StoreError.self) { try BoundingBox(west: -181, south: 0, east: 0, north: 1) }
        #expect(throws: StoreError.self) { try BoundingBox(west: 0, south: 5, east: 1, north: 4) }
        #expect(throws: StoreError.self) { try BoundingBox(west: .nan, south: 0, east: 1, north: 1) }
    }

    @Test(arguments: [
        #"{"$where": "this.name == 'x'"}"#,
        #"{"name": {"$exists": true}, "$and": [{"a": 1}, {"$where": "sleep(1000)"}]}"#,
        #"{"$expr": {"$function": {"body": "function() { return true }", "args": [], "lang": "js"}}}"#,
        #"{"a": {"$in": [1, {"b": {"$accumulator": {}}}]}}"#,
        #"{"$or": [[{"$where": "1"}]]}"#,
    ])
    func serverSideJavaScriptIsRefusedWithoutARoundTrip(json: String) throws {
        // A connection to a port where nothing listens: reaching the server would fail with
        // `.unreachable`, so `.refusedQuery` proves nothing was sent.
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = 300
        let nowhere = try MongoConnection(uri: "mongodb://127.0.0.1:\(Loopback.freePort())", options: options)
        let collection = MongoDatabase(connection: nowhere, name: "x").locations
        do {
            let filter = try PlaceFilter(userQuery: try PlaceFilter.userQuery(json: json)).document()
            _ = try collection.find(filter).next()
            Issue.record("query was not refused: \(json)")
        } catch {
            guard case .refusedQuery(let reason) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(reason.contains("runs JavaScript on the database server"))
        }
    }

    @Test func userQueryThatIsNotJSONIsRefused() {
        #expect {
            _ = try PlaceFilter.userQuery(json: "{name: ")
        } throws: { error in
            guard let e = error as? StoreError, case .refusedQuery(let reason) = e else { return false }
            return reason.hasPrefix("the query is not valid JSON")
        }
    }

    // MARK: Against the live server

    static let t1 = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)
    static let t2 = BSONDate(millisecondsSinceEpoch: 1_710_000_000_000)

    /// Places at known spots, in two runs (t1, t2).
    static func seed(_ db: MongoDatabase) throws {
        func item(_ key: String, _ lon: Double, _ lat: Double, _ cats: [String]) -> UpsertItem {
            var b = BSONDocumentBuilder()
            b.append("name", string: key)
            b.openDocument("location"); b.append("type", string: "Point")
            b.openArray("coordinates"); b.append("0", double: lon); b.append("1", double: lat); b.close(); b.close()
            b.append("categories", strings: cats)
            return UpsertItem(key: .string(key), fields: b.finish())
        }
        var options = UpsertOptions()
        options.now = t1
        _ = try db.locations.upsert([
            item("london", -0.12, 51.5, ["museum", "park"]),
            item("paris", 2.35, 48.86, ["museum"]),
            item("fiji", 178.4, -18.1, ["beach"]),
            item("samoa", -171.8, -13.8, ["beach", "park"]),
        ], options: options)
        options.now = t2
        _ = try db.locations.upsert([
            item("greenwich", 0.0, 51.48, ["park"]),
            item("tokyo", 139.7, 35.7, ["temple"]),
        ], options: options)
    }

    static func names(_ db: MongoDatabase, _ filter: PlaceFilter) throws -> [String] {
        try db.locations.find(try filter.document(), sort: ["name": 1]).collect().compactMap { $0["name"]?.stringValue }
    }

    @Test(.liveServer) func geoFiltersReturnExactlyTheExpectedPlaces() throws {
        let db = try LiveServer.database("geo")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        try Self.seed(db)
        try LiveServer.require(db.connection.probeGeoWithin(database: db.name), "$geoWithin with $box")
        #expect(try Self.names(db, PlaceFilter(bbox: try BoundingBox(west: -1, south: 51, east: 1, north: 52))) == ["greenwich", "london"])
        #expect(try Self.names(db, PlaceFilter(bbox: try BoundingBox(west: 170, south: -20, east: -170, north: -10))) == ["fiji", "samoa"])
        #expect(try Self.names(db, PlaceFilter(bbox: try BoundingBox(west: 175, south: -20, east: 179, north: -10))) == ["fiji"])
        #expect(try Self.names(db, PlaceFilter(bbox: try BoundingBox(west: -5, south: 40, east: 5, north: 60), categories: ["museum"])) == ["london", "paris"])
    }

    @Test(.liveServer) func categorySinceAndUserQueryFiltersReturnExactlyTheExpectedPlaces() throws {
        let db = try LiveServer.database("filters")
        defer { LiveServer.drop(db) }
        try Self.seed(db)
        #expect(try Self.names(db, PlaceFilter(categories: ["park"])) == ["greenwich", "london", "samoa"])
        #expect(try Self.names(db, PlaceFilter(categories: ["beach", "temple"])) == ["fiji", "samoa", "tokyo"])
        #expect(try Self.names(db, PlaceFilter(since: Self.t2)) == ["greenwich", "tokyo"])
        #expect(try Self.names(db, PlaceFilter(since: Self.t1)).count == 6)
        #expect(try Self.names(db, PlaceFilter(categories: ["park"], since: Self.t2)) == ["greenwich"])
        let q = try PlaceFilter.userQuery(json: #"{"name": {"$in": ["paris", "tokyo", "nowhere"]}}"#)
        #expect(try Self.names(db, PlaceFilter(categories: ["museum"], userQuery: q)) == ["paris"])
        #expect(try Self.names(db, PlaceFilter()).count == 6)
    }
}
