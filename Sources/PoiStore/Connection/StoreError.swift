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
    /// The server answered with an error (`code`/`codeName` as the server sent them).
    case server(code: Int, codeName: String, message: String, labels: [String])
    /// A network or protocol failure after the server had been selected.
    case network(reason: String)
    /// A user-supplied query or document was refused before it reached the server.
    case refusedQuery(reason: String)
    /// Reading or writing stored bytes failed.
    case io(path: String, reason: String)
    /// Anything libmongoc reports that fits none of the above (domain/code kept for diagnosis).
    case driver(domain: UInt32, code: UInt32, message: String)

    public var description: String {
        switch self {
        case .invalidURI(let uri, let reason):
            return "invalid MongoDB URI \(uri): \(reason)"
        case .unreachable(let hosts, let reason):
            return "cannot reach MongoDB at \(hosts): \(reason). Check that the server is running and that "
                + "--uri or MONGODB_URI points at it (for the embedded test server: make db-start)."
        case .authentication(let hosts, let reason):
            return "authentication to MongoDB at \(hosts) failed: \(reason). Check the user name and password in the URI."
        case .server(let code, let codeName, let message, _):
            return "MongoDB error \(code)\(codeName.isEmpty ? "" : " (\(codeName))"): \(message)"
        case .network(let reason):
            return "lost the connection to MongoDB: \(reason)"
        case .refusedQuery(let reason):
            return "query refused: \(reason)"
        case .io(let path, let reason):
            return "\(path): \(reason)"
        case .driver(_, _, let message):
            return "MongoDB driver error: \(message)"
        }
    }

    /// Errors worth retrying with backoff: the network blipped or the primary stepped down.
    public var isTransient: Bool {
        switch self {
        case .network, .unreachable: return true
        case .server(let code, _, _, let labels):
            return labels.contains("RetryableWriteError") || labels.contains("TransientTransactionError")
                || Self.retryableCodes.contains(code)
        default: return false
        }
    }

    /// Server codes the MongoDB retryable-writes spec lists as retryable.
    static let retryableCodes: Set<Int> = [6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]
}

/// Turns libmongoc's `bson_error_t` (+ optional server reply) into a `StoreError`.
enum MongoErrorText {
    static func message(of error: bson_error_t) -> String {
        withUnsafeBytes(of: error.message) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
    }

    static func storeError(_ error: bson_error_t, reply: BSONDocument?, hosts: String, redactor: Redactor) -> StoreError {
        let text = redactor.scrub(message(of: error))
        let domain = error.domain
        let code = error.code
        let labels = reply?["errorLabels"]?.arrayValue?.compactMap(\.stringValue) ?? []
        switch domain {
        case UInt32(MONGOC_ERROR_SERVER_SELECTION.rawValue):
            return .unreachable(hosts: hosts, reason: unwrapSelectionMessage(text))
        case UInt32(MONGOC_ERROR_STREAM.rawValue), UInt32(MONGOC_ERROR_PROTOCOL.rawValue):
            return .network(reason: text)
        case UInt32(MONGOC_ERROR_CLIENT.rawValue) where code == UInt32(MONGOC_ERROR_CLIENT_AUTHENTICATE.rawValue):
            return .authentication(hosts: hosts, reason: text)
        case UInt32(MONGOC_ERROR_SERVER.rawValue), UInt32(MONGOC_ERROR_WRITE_CONCERN.rawValue),
             UInt32(MONGOC_ERROR_QUERY.rawValue), UInt32(MONGOC_ERROR_COLLECTION.rawValue):
            let codeName = reply?["codeName"]?.stringValue ?? ""
            if code == 18 { return .authentication(hosts: hosts, reason: text) }
            return .server(code: Int(code), codeName: codeName, message: text, labels: labels)
        default:
            return .driver(domain: domain, code: code, message: text)
        }
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
