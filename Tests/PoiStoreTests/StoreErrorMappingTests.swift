import CMongoC
import PoiTestSupport
import Testing
@testable import PoiStore

/// libmongoc's `(domain, code)` → `StoreError`, without a server: the pairs libmongoc documents
/// in mongoc-error.h, and the server codes it passes through.
@Suite(.tags(.unit)) struct StoreErrorMappingTests {
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

    /// Each production failure names what to fix (the `poi` CLI adds the flag or URI
    /// option); the messages are libmongoc 1.23's own, seen against SecantusDB over TLS.
    @Test func tlsAuthenticationAndAuthorizationAreNamed() {
        let app = ConnectionIdentity(user: "app", authSource: "admin", mechanism: nil, tls: true)
        func map(_ domain: mongoc_error_domain_t, _ code: UInt32, _ message: String, identity: ConnectionIdentity,
                 reply: BSONDocument? = nil) -> StoreError {
            MongoErrorText.storeError(Self.bsonError(domain, code, message), reply: reply, hosts: "db1:27017",
                                      redactor: Redactor(uri: "mongodb://app:hunter2@db1:27017/"), identity: identity)
        }
        let untrusted = map(MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE.rawValue,
                            "No suitable servers found: `serverSelectionTimeoutMS` expired: [TLS handshake failed: certificate verify "
                            + "failed (20): unable to get local issuer certificate calling hello on '127.0.0.1:27017']", identity: app)
        #expect(untrusted == .tls(hosts: "db1:27017", reason: "TLS handshake failed: certificate verify failed (20): unable to get "
                                  + "local issuer certificate calling hello on '127.0.0.1:27017'"))
        #expect(!untrusted.isTransient)
        #expect(map(MONGOC_ERROR_CLIENT, MONGOC_ERROR_CLIENT_AUTHENTICATE.rawValue, "authentication failed", identity: app).description
                == "authentication to MongoDB at db1:27017 failed: authentication failed (user 'app' (authSource admin, mechanism "
                + "negotiated: SCRAM-SHA-256 or SCRAM-SHA-1)). Check the user name, password and authSource in the URI.")
        let anonymous = ConnectionIdentity(user: nil, authSource: "admin", mechanism: nil, tls: true)
        #expect(map(MONGOC_ERROR_SERVER, 13, "command listCollections requires authentication", identity: anonymous,
                    reply: ["codeName": "Unauthorized"]).description
                == "MongoDB error 13 (Unauthorized): command listCollections requires authentication (the URI names no user, and "
                + "this server requires authentication: mongodb://USER:PASSWORD@host/...)")
        #expect(map(MONGOC_ERROR_SERVER, 13, "not authorized on prod", identity: app, reply: ["codeName": "Unauthorized"]).description
                == "MongoDB error 13 (Unauthorized): not authorized on prod (as user 'app' (authSource admin, mechanism negotiated: "
                + "SCRAM-SHA-256 or SCRAM-SHA-1); grant it a role on this database, e.g. readWrite)")
        let plain = ConnectionIdentity(user: "app", authSource: "admin", mechanism: "SCRAM-SHA-256", tls: false)
        #expect(map(MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE.rawValue,
                    "No suitable servers found: [Failed to read 4 bytes: socket error or timeout calling hello on 'db1:27017']",
                    identity: plain)
                == .unreachable(hosts: "db1:27017", reason: "Failed to read 4 bytes: socket error or timeout calling hello on "
                                + "'db1:27017' (the server closed the connection before answering; if it requires TLS, add tls=true to the URI)"))
    }

    @Test func retryableCodesAreTransient() {
        #expect(StoreError.server(code: 189, codeName: "PrimarySteppedDown", message: "", labels: []).isTransient)
        #expect(!StoreError.server(code: ServerErrorCode.duplicateKey, codeName: "", message: "", labels: []).isTransient)
        #expect(!StoreError.bytesMissing(id: ObjectId(), fileName: "x.png").isTransient)
    }

    /// Only a command libmongoc could not send at all may be sent again at once: one whose
    /// connection broke after it went out may have been applied.
    @Test func aCommandThatNeverWentOutIsToldApart() {
        let unsent = Self.map(MONGOC_ERROR_STREAM, MONGOC_ERROR_STREAM_SOCKET.rawValue, "Failed to send \"insert\" command with "
                         + "database \"db\": Failure during socket delivery: Broken pipe (32)")
        #expect(unsent.wasNeverSent)
        let lost = Self.map(MONGOC_ERROR_STREAM, MONGOC_ERROR_STREAM_SOCKET.rawValue, "Failed to read 4 bytes: socket error or timeout")
        #expect(!lost.wasNeverSent)
        #expect(!StoreError.server(code: 91, codeName: "ShutdownInProgress", message: "Failed to send", labels: []).wasNeverSent)
    }
}
