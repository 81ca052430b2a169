import PoiTestSupport
import Testing
@testable import PoiServer

/// A refused duplicate names the field the client sent twice, never the database, the
/// collection or the index (the server's own message names all three).
@Suite("duplicate key messages", .tags(.unit))
struct DuplicateKeyMessageTests {
    @Test(arguments: [
        ("E11000 duplicate key error collection: db.locations index: importKey_1 dup key: { importKey: \"k1\" }", "importKey"),
        ("E11000 duplicate key error collection: db.things index: _id_ dup key: { _id: \"abc\" }", "_id"),
        ("E11000 duplicate key error collection: db.things index: _id_", "_id"),
        ("E11000 duplicate key error collection: db.things index: email_1", "email"),
        ("E11000 duplicate key error collection: db.things index: a_1_b_-1", nil),
        ("E11000 duplicate key error", nil),
    ] as [(String, String?)])
    func theFieldSentTwiceIsNamed(message: String, field: String?) {
        #expect(APIError.duplicateKeyField(message) == field)
    }

    @Test func theAnswerNamesNoIndex() {
        let error = APIError.store(.server(code: 11000, codeName: "DuplicateKey", message:
            "E11000 duplicate key error collection: MyDatabase.locations index: importKey_1 dup key: { importKey: \"k1\" }", labels: []))
        #expect(error.message == "a document with the same importKey already exists")
        let id = APIError.store(.server(code: 11000, codeName: "DuplicateKey", message:
            "E11000 duplicate key error collection: MyDatabase.things index: _id_ dup key: { _id: \"abc\" }", labels: []))
        #expect(id.message == "a document with this _id already exists")
    }
}
