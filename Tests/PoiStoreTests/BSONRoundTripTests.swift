import PoiTestSupport
import Testing
@testable import PoiStore

@Suite(.tags(.live)) struct BSONRoundTripTests {
    /// One document holding every BSON type PoiKit writes.
    static func everyType(id: ObjectId) -> BSONDocument {
        [
            "_id": .objectId(id),
            "string": "Café ✓ 東京 🗺",
            "double": 51.5007292,
            "negativeZeroSafe": -0.5,
            "int32": .int32(-2_147_483_648),
            "int64": .int64(9_007_199_254_740_993),
            "true": true,
            "false": false,
            "null": nil,
            "categories": ["museum", "park"],
            "location": .document(["type": "Point", "coordinates": [-0.1246254, 51.5007292]]),
            "imageRef": .objectId(ObjectId(hex: "5f1d7a0c9b1e8a0012345678")!),
            "created_at": .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_123)),
            "binary": .binary(subtype: 0, data: [0, 1, 2, 254, 255]),
            "decimal128": .decimal128(BSONDecimal128(exactly: "-9223372036854775809")!),
        ]
    }

    @Test func encodingMatchesLibbson() throws {
        // libbson parses our bytes and prints them back: proves the framing and every type code.
        let doc: BSONDocument = ["a": 1, "b": "x", "c": [true, nil], "d": .int64(5)]
        #expect(doc.description == #"{ "a" : 1, "b" : "x", "c" : [ true, null ], "d" : 5 }"#)
    }

    @Test(.liveServer) func everyTypeRoundTripsThroughTheLiveServer() throws {
        let connection = try LiveServer.connect()
        let db = LiveServer.uniqueDatabase("bson")
        defer { _ = try? connection.runCommand(["dropDatabase": 1], database: db) }

        let id = ObjectId()
        let original = Self.everyType(id: id)
        let insert = try connection.runCommand(
            ["insert": "roundtrip", "documents": [.document(original)]], database: db)
        #expect(insert["n"]?.int64Value == 1)

        let reply = try connection.runCommand(
            ["find": "roundtrip", "filter": .document(["_id": .objectId(id)])], database: db)
        let batch = reply["cursor"]?.documentValue?["firstBatch"]?.arrayValue ?? []
        #expect(batch.count == 1)
        let back = try #require(batch.first?.documentValue)

        #expect(back.keys == original.keys)
        #expect(back["_id"] == .objectId(id))
        #expect(back["string"] == .string("Café ✓ 東京 🗺"))
        #expect(back["double"] == .double(51.5007292))
        #expect(back["negativeZeroSafe"] == .double(-0.5))
        #expect(back["int32"] == .int32(-2_147_483_648))
        #expect(back["int64"] == .int64(9_007_199_254_740_993))
        #expect(back["true"] == .bool(true))
        #expect(back["false"] == .bool(false))
        #expect(back["null"] == .null)
        #expect(back["categories"] == .array([.string("museum"), .string("park")]))
        #expect(back["location"] == .document(["type": "Point", "coordinates": [-0.1246254, 51.5007292]]))
        #expect(back["imageRef"]?.objectIdValue?.hex == "5f1d7a0c9b1e8a0012345678")
        #expect(back["created_at"] == .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_123)))
        #expect(back["binary"] == .binary(subtype: 0, data: [0, 1, 2, 254, 255]))
        #expect(back["decimal128"] == .decimal128(BSONDecimal128(exactly: "-9223372036854775809")!))
        #expect(back == original)
    }

    /// Integers beyond Int64 are stored as Decimal128 with libbson's own encoding: libbson
    /// prints our bytes back as the same digits.
    @Test func decimal128KeepsIntegerDigits() throws {
        let big = try #require(BSONDecimal128(exactly: "12345678901234567890"))
        #expect(big.description == "12345678901234567890" && big.integerText == "12345678901234567890")
        let doc: BSONDocument = ["big": .decimal128(big), "neg": .decimal128(BSONDecimal128(exactly: "-9223372036854775809")!)]
        #expect(doc.description == #"{ "big" : { "$numberDecimal" : "12345678901234567890" }, "neg" : { "$numberDecimal" : "-9223372036854775809" } }"#)
        #expect(BSONDocument(bytes: doc.bytes)?["big"] == .decimal128(big))
        #expect(BSONDecimal128(exactly: "1234567890123456789012345678901234")?.integerText == "1234567890123456789012345678901234")
        // More than 34 significant digits cannot be stored exactly: refused, never rounded.
        #expect(BSONDecimal128(exactly: "12345678901234567890123456789012345") == nil)
        #expect(BSONDecimal128(exactly: "twelve") == nil)
        #expect(BSONDecimal128(exactly: "-1.5")?.integerText == nil)
        #expect(BSONValue.decimal128(big).int64Value == nil)
        #expect(BSONValue.decimal128(BSONDecimal128(exactly: "-42")!).int64Value == -42)
    }

    @Test func objectIdHexRoundTrips() {
        let id = ObjectId(hex: "5F1D7A0C9B1E8A0012345678")
        #expect(id?.hex == "5f1d7a0c9b1e8a0012345678")
        #expect(ObjectId(hex: "5f1d7a0c9b1e8a001234567") == nil)
        #expect(ObjectId(hex: "5f1d7a0c9b1e8a001234567g") == nil)
        #expect(ObjectId() != ObjectId())
    }

    @Test func extendedJSONIsParsedByLibbson() throws {
        let doc = try LibBSON.parseExtendedJSON(#"{"a": {"$oid": "5f1d7a0c9b1e8a0012345678"}, "n": 2}"#)
        #expect(doc["a"]?.objectIdValue?.hex == "5f1d7a0c9b1e8a0012345678")
        #expect(doc["n"] == .int32(2))
        #expect(throws: ExtendedJSONError.self) { try LibBSON.parseExtendedJSON("{nope") }
    }

    /// The subscript skips the values before a key undecoded (decoding each one was most of a wide
    /// CSV export's CPU): it
    /// finds what decoding every element finds, after elements of every BSON type, a non-ASCII
    /// key included, and nothing past a damaged element.
    @Test func aKeyIsFoundAfterElementsOfEveryType() throws {
        let doc = try LibBSON.parseExtendedJSON(#"""
        {"d": 1.5, "s": "text", "o": {"x": [1, {"y": null}]}, "a": [1, "2", 3.0], "b": {"$binary": {"base64": "AAEC", "subType": "00"}},
         "u": {"$undefined": true}, "id": {"$oid": "5f1d7a0c9b1e8a0012345678"}, "t": true, "dt": {"$date": {"$numberLong": "1700000000000"}},
         "n": null, "re": {"$regularExpression": {"pattern": "^a.*", "options": "i"}},
         "dbp": {"$dbPointer": {"$ref": "c", "$id": {"$oid": "5f1d7a0c9b1e8a0012345678"}}},
         "js": {"$code": "f()"}, "sym": {"$symbol": "s"}, "jsws": {"$code": "g()", "$scope": {"v": 1}},
         "i": 7, "ts": {"$timestamp": {"t": 1, "i": 2}}, "l": {"$numberLong": "9000000000"},
         "dec": {"$numberDecimal": "12.5"}, "min": {"$minKey": 1}, "max": {"$maxKey": 1}, "ünï": "last", "": "empty"}
        """#)
        let decoded = Array(doc)
        #expect(decoded.count == 23)
        for (key, value) in decoded { #expect(doc[key] == value, "\(key)") }
        #expect(doc["missing"] == nil)
        // A string whose length runs past the end: nothing after it is found, as by iteration.
        var bytes = try LibBSON.parseExtendedJSON(#"{"s": "abc", "k": 1}"#).bytes
        bytes[4 + 3] = 0x7F  // the length of "abc"
        let damaged = BSONDocument(bytes: bytes)
        #expect(damaged?["k"] == nil)
        #expect(damaged.map { Array($0).count } == 0)
    }
}
