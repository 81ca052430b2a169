import CMongoC

/// Everything that can go wrong talking to MongoDB or the byte store, with a message a user can act
/// on. Messages never contain the URI's password: they are built from `RedactedURI` and scrubbed.
public enum StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The URI could not be parsed (libmongoc's reason, with the password masked).
    case invalidURI(uri: String, reason: String)
    /// No server answered within the server-selection timeout.
    case unreachable(hosts: String, reason: String)
    /// Authentication failed.
    case authentication(hosts: String, reason: String)
    /// The TLS handshake failed: the server's certificate is not trusted or does not name the
    /// host, the client's certificate is refused, or one side does not speak TLS.
    case tls(hosts: String, reason: String)
    /// A transient error that outlasted its retries (`MongoConnection.retrying`): `last` is the
    /// final attempt's error.
    indirect case retried(attempts: Int, seconds: Int, last: StoreError)
    /// The server answered with an error (`code`/`codeName` as the server sent them; see
    /// `ServerErrorCode`).
    case server(code: Int, codeName: String, message: String, labels: [String])
    /// A network or protocol failure after the server had been selected.
    case network(reason: String)
    /// A user-supplied query or document was refused before it reached the server.
    case refusedQuery(reason: String)
    /// Reading, writing or listing stored bytes failed (`path`: a file or folder of the uploads
    /// store, or the GridFS bucket's name).
    case io(path: String, reason: String)
    /// The uploads folder named is not there, for a command that only reads what is stored, or
    /// for any command when the `files` collection lists files (`filesListed`): their bytes are
    /// elsewhere, and a folder made on the spot would hide that.
    case uploadsFolderMissing(path: String, filesListed: Bool)
    /// A content type no file name can be derived from (the backend names files `<id>.<subtype>`).
    case unsupportedContentType(String)
    /// A `files` document whose bytes are gone (deleted by hand, or a store from elsewhere).
    case bytesMissing(id: ObjectId, fileName: String)
    /// A `files` document whose bytes are there but damaged: fewer or more bytes than its
    /// `length`, GridFS chunks missing or corrupt, or content that does not match its `sha256`.
    case bytesDamaged(id: ObjectId, fileName: String, reason: String)
    /// Anything libmongoc reports that fits none of the above (domain/code kept for diagnosis).
    case driver(domain: UInt32, code: UInt32, message: String)

    /// Says what failed, never how to fix it with a command or flag: each program that shows it
    /// knows its own options (the `poi` CLI adds those hints when it prints).
    public var description: String {
        switch self {
        case .invalidURI(let uri, let reason):
            return "invalid MongoDB URI \(uri): \(reason)"
        case .unreachable(let hosts, let reason):
            return "cannot reach MongoDB at \(hosts): \(reason)"
        case .authentication(let hosts, let reason):
            return "authentication to MongoDB at \(hosts) failed: \(reason). Check the user name, password and authSource in the URI."
        case .tls(let hosts, let reason):
            return "TLS connection to MongoDB at \(hosts) failed: \(reason)"
        case .retried(let attempts, let seconds, let last):
            return "\(last.description) (still failing after \(attempts) attempts over \(seconds) s of retries)"
        case .server(let code, let codeName, let message, _) where ServerErrorCode.writeConcern.contains(code):
            // The write was sent and may be applied or not: say so, and what makes it whole.
            return "MongoDB write concern error \(code)\(codeName.isEmpty ? "" : " (\(codeName))"): \(message); "
                + "the primary applied the write but its replication is not confirmed, so it may or may not be durable; "
                + "run it again once the replica set is healthy (an import reruns exactly: places by importKey, files by content)"
        case .server(let code, let codeName, let message, _) where ServerErrorCode.notPrimary.contains(code):
            // Not "cannot reach": the server answered, and what it said is that it is not (or no
            // longer) the primary, as during an election or a failover.
            let name = codeName.isEmpty ? ServerErrorCode.notPrimaryNames[code] ?? "" : codeName
            return "MongoDB error \(code)\(name.isEmpty ? "" : " (\(name))"): \(message); the replica set has no writable "
                + "primary now (an election or a failover)"
        case .server(let code, let codeName, let message, _):
            return "MongoDB error \(code)\(codeName.isEmpty ? "" : " (\(codeName))"): \(message)"
        case .network(let reason):
            return "lost the connection to MongoDB: \(reason)"
        case .refusedQuery(let reason):
            return "query refused: \(reason)"
        case .io(let path, let reason):
            return "\(path): \(reason)"
        case .uploadsFolderMissing(let path, let filesListed):
            return "\(path): the uploads folder does not exist" + (filesListed
                ? ", and the files collection lists files, whose bytes must be in another folder; not created" : "")
        case .unsupportedContentType(let contentType):
            return "content type '\(contentType)': PoiKit cannot name a file after it (want type/subtype)"
        case .bytesMissing(let id, let fileName):
            return "file \(id.hex): the files document exists but its bytes (\(fileName)) are missing"
        case .bytesDamaged(let id, let fileName, let reason):
            return "file \(id.hex): its bytes (\(fileName)) are damaged: \(reason)"
        case .driver(_, _, let message):
            return "MongoDB driver error: \(message)"
        }
    }

    /// The write reached the primary and was applied there; whether it is durable on the
    /// replica set is not known (`ServerErrorCode.writeConcern`).
    public var isWriteConcernError: Bool {
        if case .server(let code, _, _, _) = self { return ServerErrorCode.writeConcern.contains(code) }
        if case .retried(_, _, let last) = self { return last.isWriteConcernError }
        return false
    }

    /// The error itself, or the last attempt's for one that outlasted its retries.
    public var underlying: StoreError {
        if case .retried(_, _, let last) = self { return last.underlying }
        return self
    }

    /// The connection broke before the command went out (libmongoc's "Failed to send …": a
    /// pooled connection the server had closed meanwhile). Nothing reached the server, so the
    /// command can be sent again at once without being applied twice; libmongoc has dropped that
    /// connection, so the next attempt gets a fresh one.
    public var wasNeverSent: Bool {
        if case .network(let reason) = self { return reason.hasPrefix("Failed to send ") }
        return false
    }

    /// Errors worth retrying with backoff: the network blipped or the primary stepped down.
    public var isTransient: Bool {
        switch self {
        case .network, .unreachable: return true
        case .server(let code, _, _, let labels):
            return labels.contains("RetryableWriteError") || labels.contains("TransientTransactionError")
                || ServerErrorCode.retryable.contains(code)
        default: return false
        }
    }
}

/// Turns libmongoc's `bson_error_t` (+ optional server reply) into a `StoreError`, on its
/// `(domain, code)` pair as the archived mongo-swift-driver's `parseMongocError` does (the pool
/// uses error API version 2, so every error the server sent arrives in `MONGOC_ERROR_SERVER`
/// or `MONGOC_ERROR_WRITE_CONCERN` with the server's own code).
enum MongoErrorText {
    static func message(of error: bson_error_t) -> String {
        withUnsafeBytes(of: error.message) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
    }

    static func storeError(_ error: bson_error_t, reply: BSONDocument?, hosts: String, redactor: Redactor,
                           identity: ConnectionIdentity? = nil) -> StoreError {
        let text = redactor.scrub(message(of: error))
        let domain = mongoc_error_domain_t(rawValue: error.domain)
        let code = mongoc_error_code_t(rawValue: error.code)
        let labels = reply?["errorLabels"]?.arrayValue?.compactMap(\.stringValue) ?? []
        switch (domain, code) {
        case (MONGOC_ERROR_SERVER_SELECTION, _):
            let reason = unwrapSelectionMessage(text)
            if isTLSFailure(reason) { return .tls(hosts: hosts, reason: reason) }
            // A server that closes the connection before answering `hello` is very often one
            // that requires TLS, asked without it: say so, since "check it is running" misleads.
            if identity?.tls == false, reason.contains("Failed to read 4 bytes") || reason.contains("socket error or timeout") {
                return .unreachable(hosts: hosts, reason: reason + " (the server closed the connection before answering; "
                                    + "if it requires TLS, add tls=true to the URI)")
            }
            return .unreachable(hosts: hosts, reason: reason)
        case (MONGOC_ERROR_STREAM, _) where isTLSFailure(text):
            return .tls(hosts: hosts, reason: text)
        case (MONGOC_ERROR_STREAM, _), (MONGOC_ERROR_PROTOCOL, _):
            return .network(reason: text)
        case (MONGOC_ERROR_CLIENT, MONGOC_ERROR_CLIENT_AUTHENTICATE), (MONGOC_ERROR_SASL, _), (MONGOC_ERROR_SCRAM, _):
            return .authentication(hosts: hosts, reason: withUser(text, identity))
        case (MONGOC_ERROR_SERVER, _) where Int(error.code) == ServerErrorCode.authenticationFailed,
             (MONGOC_ERROR_QUERY, _) where Int(error.code) == ServerErrorCode.authenticationFailed:
            return .authentication(hosts: hosts, reason: withUser(text, identity))
        case (MONGOC_ERROR_SERVER, _), (MONGOC_ERROR_WRITE_CONCERN, _), (MONGOC_ERROR_QUERY, _), (MONGOC_ERROR_COLLECTION, _):
            let codeName = reply?["codeName"]?.stringValue ?? ""
            var message = text
            // Not allowed: say who asked, the usual cause being a URI without a user or a
            // user without a role on this database.
            if Int(error.code) == ServerErrorCode.unauthorized, let identity {
                message += identity.user == nil
                    ? " (the URI names no user, and this server requires authentication: mongodb://USER:PASSWORD@host/...)"
                    : " (as \(identity.userDescription); grant it a role on this database, e.g. readWrite)"
            }
            return .server(code: Int(error.code), codeName: codeName, message: message, labels: labels)
        default:
            return .driver(domain: error.domain, code: error.code, message: text)
        }
    }

    /// libmongoc's words for a failed TLS handshake (OpenSSL's reasons included).
    static func isTLSFailure(_ text: String) -> Bool {
        let t = text.lowercased()
        return t.contains("tls handshake") || t.contains("ssl handshake") || t.contains("certificate verify failed")
            || t.contains("tls error") || t.contains("hostname verification") || t.contains("initialize tls")
    }

    /// An authentication failure's text with the user, authSource and mechanism tried.
    static func withUser(_ text: String, _ identity: ConnectionIdentity?) -> String {
        guard let identity, identity.user != nil else { return text }
        return text + " (" + identity.userDescription + ")"
    }

    /// libmongoc says "No suitable servers found (`serverSelectionTryOnce` set): [connection refused
    /// calling hello on '127.0.0.1:1']"; the bracketed part is the useful reason.
    static func unwrapSelectionMessage(_ text: String) -> String {
        if let open = text.firstIndex(of: "["), let close = text.lastIndex(of: "]"), open < close {
            let inner = text[text.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            if !inner.isEmpty { return inner }
        }
        return text
    }
}

import Foundation
