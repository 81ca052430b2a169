/// Masks the secrets of a MongoDB URI, and scrubs them from any text (libmongoc messages, logs).
///
/// Done textually on the URI as the user typed it, because that is what could leak. It errs on
/// the side of masking: the user-info part ends at the *last* `@` of the whole string (a password
/// may contain `/`, `?` or `@` when the user did not percent-encode it, and libmongoc accepts some
/// of those), and option values that can carry credentials (`tlsCertificateKeyFilePassword`,
/// `authMechanismProperties` with AWS session tokens, …) are masked too. Both the raw and the
/// percent-decoded form of every secret are scrubbed, since libmongoc's messages use the latter.
public struct Redactor: Sendable {
    public let redactedURI: String
    private let secrets: [String]

    /// Option names whose values are secrets (compared lowercased, by substring).
    static let sensitiveOptionFragments = ["password", "secret", "token", "authmechanismproperties"]

    /// `parsedByDriver`: libmongoc accepted the URI, so its user-info is where libmongoc looks for
    /// one — before the first `/` after the scheme (libmongoc refuses an unescaped `/` in a
    /// password) — and an `@` later on (`?appname=team@night`) is an option value, not the end of
    /// a password. A URI libmongoc refused is masked up to its last `@`, erring on the safe side.
    public init(uri: String, decodedPassword: String? = nil, parsedByDriver: Bool = false) {
        var secrets: [String] = []
        func addSecret(_ s: Substring) {
            guard !s.isEmpty else { return }
            secrets.append(String(s))
            if let decoded = String(s).removingPercentEncoding, decoded != String(s) { secrets.append(decoded) }
        }
        var redacted = uri
        if let schemeEnd = uri.range(of: "://") {
            var rest = uri[schemeEnd.upperBound...]
            var prefix = String(uri[..<schemeEnd.upperBound])
            let userInfoArea = parsedByDriver ? rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)] : rest
            if let at = userInfoArea.lastIndex(of: "@") {
                let userinfo = rest[..<at]
                if let colon = userinfo.firstIndex(of: ":") {
                    addSecret(userinfo[userinfo.index(after: colon)...])
                    prefix += userinfo[...colon] + "****"
                } else {
                    prefix += userinfo
                }
                rest = rest[at...]
            }
            // Options: after the first `?` of what follows the user info.
            if let question = rest.firstIndex(of: "?") {
                var options: [String] = []
                for pair in rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
                    guard let eq = pair.firstIndex(of: "=") else { options.append(String(pair)); continue }
                    let key = pair[..<eq].lowercased()
                    if Self.sensitiveOptionFragments.contains(where: { key.contains($0) }) {
                        addSecret(pair[pair.index(after: eq)...])
                        options.append(pair[...eq] + "****")
                    } else {
                        options.append(String(pair))
                    }
                }
                rest = rest[...question] + options.joined(separator: "&")
            }
            redacted = prefix + rest
        }
        if let decodedPassword, !decodedPassword.isEmpty { secrets.append(decodedPassword) }
        // Longest first, so a secret that contains another is masked whole.
        let ordered = Array(Set(secrets)).sorted { $0.count > $1.count }
        self.secrets = ordered
        // Belt and braces: whatever the parsing above missed is still scrubbed.
        var scrubbed = redacted
        for secret in ordered { scrubbed = scrubbed.replacingOccurrences(of: secret, with: "****") }
        self.redactedURI = scrubbed
    }

    public func scrub(_ text: String) -> String {
        var out = text
        for secret in secrets { out = out.replacingOccurrences(of: secret, with: "****") }
        return out
    }
}

import Foundation
