import CMongoC

/// Who a connection is and how it talks, from its URI: what an authentication, authorization or
/// TLS failure must name for the operator to know what to fix (the user, where it is defined,
/// the mechanism, whether TLS is asked for). Never the password.
public struct ConnectionIdentity: Sendable, Equatable {
    /// The user name, nil for a URI without one.
    public var user: String?
    /// The database the user is defined in (`authSource`; libmongoc's default: the URI's
    /// database, else `admin`).
    public var authSource: String
    /// The mechanism the URI names (`authMechanism`); nil: negotiated (SCRAM-SHA-256 when the
    /// server offers it, else SCRAM-SHA-1).
    public var mechanism: String?
    /// The URI asks for TLS (`tls=true`, `ssl=true`, or a `mongodb+srv://` URI).
    public var tls: Bool
    /// TLS without verifying the server (`tlsAllowInvalidCertificates` or `tlsAllowInvalidHostnames`,
    /// or `tlsInsecure`): what `poi doctor` must not call plain "TLS on".
    public var tlsUnverified = false

    public init(user: String?, authSource: String, mechanism: String?, tls: Bool) {
        self.user = user
        self.authSource = authSource
        self.mechanism = mechanism
        self.tls = tls
    }

    init(uri: OpaquePointer) {
        user = mongoc_uri_get_username(uri).map { String(cString: $0) }
        authSource = mongoc_uri_get_auth_source(uri).map { String(cString: $0) } ?? "admin"
        mechanism = mongoc_uri_get_auth_mechanism(uri).map { String(cString: $0) }
        tls = mongoc_uri_get_tls(uri)
        tlsUnverified = tls && (mongoc_uri_get_option_as_bool(uri, "tlsallowinvalidcertificates", false)
            || mongoc_uri_get_option_as_bool(uri, "tlsallowinvalidhostnames", false)
            || mongoc_uri_get_option_as_bool(uri, "tlsinsecure", false))
    }

    /// "user 'app' (authSource admin, mechanism negotiated)".
    public var userDescription: String {
        guard let user else { return "no user" }
        return "user '\(user)' (authSource \(authSource), mechanism \(mechanism ?? "negotiated: SCRAM-SHA-256 or SCRAM-SHA-1"))"
    }
}
