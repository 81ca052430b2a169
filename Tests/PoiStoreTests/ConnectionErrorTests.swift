import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

@Suite(.tags(.unit)) struct ConnectionErrorTests {
    @Test func passwordIsMaskedInTheURIAndScrubbedFromText() {
        let r = Redactor(uri: "mongodb://alice:p%40ss:w0rd@db1.example.com:27017,db2:27018/MyDatabase?authSource=admin",
                         decodedPassword: "p@ss:w0rd")
        #expect(r.redactedURI == "mongodb://alice:****@db1.example.com:27017,db2:27018/MyDatabase?authSource=admin")
        #expect(r.scrub("auth failed for p@ss:w0rd and p%40ss:w0rd") == "auth failed for **** and ****")
        #expect(Redactor(uri: "mongodb://127.0.0.1:27017/x").redactedURI == "mongodb://127.0.0.1:27017/x")
        #expect(Redactor(uri: "mongodb://bob@h/x").redactedURI == "mongodb://bob@h/x")
    }

    @Test(arguments: [
        // Unencoded `?`, `/` and `@` in the password: the user info ends at the last `@`.
        ("mongodb://user:se?cret@127.0.0.1:1/", "se?cret", "mongodb://user:****@127.0.0.1:1/"),
        ("mongodb://user:se/cret@127.0.0.1:1/", "se/cret", "mongodb://user:****@127.0.0.1:1/"),
        ("mongodb://user:p@ss@h:1/db?w=1", "p@ss", "mongodb://user:****@h:1/db?w=1"),
        // Credentials carried by options.
        ("mongodb://h/?tls=true&tlsCertificateKeyFilePassword=hunter2", "hunter2",
         "mongodb://h/?tls=true&tlsCertificateKeyFilePassword=****"),
        ("mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok3n", "AWS_SESSION_TOKEN:tok3n",
         "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=****"),
    ])
    func everyFormOfSecretIsMasked(uri: String, secret: String, expected: String) {
        let r = Redactor(uri: uri)
        #expect(r.redactedURI == expected)
        #expect(!r.redactedURI.contains(secret))
        #expect(r.scrub("failed with \(secret) in it") == "failed with **** in it")
    }

    /// An `@` in an option value is not the end of a user-info (doctor showed
    /// `mongodb://127.0.0.1:****@night` for `?appname=team@night`), once libmongoc has parsed
    /// the URI and so says where its user-info is.
    @Test func anAtSignInAnOptionIsNotTakenForTheUserInfo() throws {
        #expect(Redactor(uri: "mongodb://127.0.0.1:1/db?appname=team@night", parsedByDriver: true).redactedURI
                == "mongodb://127.0.0.1:1/db?appname=team@night")
        let r = Redactor(uri: "mongodb://bob:pw@h:1/db?appname=a@b", decodedPassword: "pw", parsedByDriver: true)
        #expect(r.redactedURI == "mongodb://bob:****@h:1/db?appname=a@b")
        let connection = try MongoConnection(uri: "mongodb://127.0.0.1:1/db?appname=team@night")
        #expect(connection.redactedURI == "mongodb://127.0.0.1:1/db?appname=team@night")
    }

    @Test func unreachableServerNamesHostAndPortWithoutThePassword() throws {
        let port = Loopback.freePort()
        var options = ConnectionOptions()
        options.serverSelectionTimeoutMS = 500
        let connection = try MongoConnection(uri: "mongodb://carol:hunter2@127.0.0.1:\(port)/", options: options)
        #expect(connection.redactedURI == "mongodb://carol:****@127.0.0.1:\(port)/")
        do {
            try connection.ping()
            Issue.record("ping succeeded against a port where nothing listens")
        } catch {
            guard case .unreachable(let hosts, _) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(hosts == "127.0.0.1:\(port)")
            #expect(error.description.hasPrefix("cannot reach MongoDB at 127.0.0.1:\(port): "))
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func malformedURIIsRejectedWithoutThePassword() {
        #expect {
            _ = try MongoConnection(uri: "mongodb://dave:topsecret@/nohost")
        } throws: { error in
            guard let e = error as? StoreError, case .invalidURI(let uri, _) = e else { return false }
            return uri == "mongodb://dave:****@/nohost" && !e.description.contains("topsecret")
        }
    }
}
