import CMongoC
import Testing
@testable import PoiStore

/// libmongoc's `(domain, code)` → `StoreError`, without a server: the pairs libmongoc documents
/// in mongoc-error.h, and the server codes it passes through.
@Suite struct StoreErrorMappingTests {
    static func bsonError(_ domain: mongoc_error_domain_t, _ code: UInt32, _ message: String) -> bson_error_t {
        var error = bson_error_t()
        error.domain = domain.rawValue
        error.code = code
        withUnsafeMutableBytes(of: &error.message) { raw in
            let bytes = Array(message.utf8.prefix(raw.count - 1)) + [0]
            raw.copyBytes(from: bytes)
        }
        return error
    }

    static func map(_ domain: mongoc_error_domain_t, _ code: UInt32, _ message: String = "boom",
                    reply: BSONDocument? = nil) -> StoreError {
        MongoErrorText.storeError(bsonError(domain, code, message), reply: reply, hosts: "db1:27017",
                                  redactor: Redactor(uri: "mongodb://u:hunter2@db1:27017/"))
    }

    @Test func eachDomainMapsToItsCase() {
        #expect(Self.map(MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE.rawValue,
                         "No suitable servers found: [connection refused calling hello on 'db1:27017']")
                == .unreachable(hosts: "db1:27017", reason: "connection refused calling hello on 'db1:27017'"))
        #expect(Self.map(MONGOC_ERROR_STREAM, MONGOC_ERROR_STREAM_SOCKET.rawValue) == .network(reason: "boom"))
        #expect(Self.map(MONGOC_ERROR_PROTOCOL, MONGOC_ERROR_PROTOCOL_INVALID_REPLY.rawValue) == .network(reason: "boom"))
        #expect(Self.map(MONGOC_ERROR_CLIENT, MONGOC_ERROR_CLIENT_AUTHENTICATE.rawValue)
                == .authentication(hosts: "db1:27017", reason: "boom"))
        #expect(Self.map(MONGOC_ERROR_SERVER, UInt32(ServerErrorCode.authenticationFailed))
                == .authentication(hosts: "db1:27017", reason: "boom"))
        #expect(Self.map(MONGOC_ERROR_SERVER, UInt32(ServerErrorCode.duplicateKey), "E11000",
                         reply: ["codeName": "DuplicateKey", "errorLabels": ["X"]])
                == .server(code: 11000, codeName: "DuplicateKey", message: "E11000", labels: ["X"]))
        #expect(Self.map(MONGOC_ERROR_BSON, MONGOC_ERROR_BSON_INVALID.rawValue)
                == .driver(domain: MONGOC_ERROR_BSON.rawValue, code: MONGOC_ERROR_BSON_INVALID.rawValue, message: "boom"))
    }

    @Test func messagesAreScrubbedAndNameNoFlag() {
        let error = Self.map(MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE.rawValue,
                             "auth with hunter2 failed")
        #expect(error.description == "cannot reach MongoDB at db1:27017: auth with **** failed")
        #expect(!error.description.contains("--"))
        #expect(!error.description.contains("make "))
    }

    @Test func retryableCodesAreTransient() {
        #expect(StoreError.server(code: 189, codeName: "PrimarySteppedDown", message: "", labels: []).isTransient)
        #expect(!StoreError.server(code: ServerErrorCode.duplicateKey, codeName: "", message: "", labels: []).isTransient)
        #expect(!StoreError.bytesMissing(id: ObjectId(), fileName: "x.png").isTransient)
    }
}
