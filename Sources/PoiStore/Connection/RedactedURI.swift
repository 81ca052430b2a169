/// Masks the password of a MongoDB URI, and scrubs it from any text (libmongoc messages, logs).
///
/// Done textually on the URI as the user typed it, because that is what could leak: the password
/// may be percent-encoded there and decoded in libmongoc's own messages, so both forms are scrubbed.
public struct Redactor: Sendable {
    public let redactedURI: String
    private let secrets: [String]

    public init(uri: String, decodedPassword: String? = nil) {
        var secrets: [String] = []
        var redacted = uri
        if let schemeEnd = uri.range(of: "://") {
            let afterScheme = uri[schemeEnd.upperBound...]
            let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
            let authority = afterScheme[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                let userinfo = authority[..<at]
                if let colon = userinfo.firstIndex(of: ":") {
                    let password = String(userinfo[userinfo.index(after: colon)...])
                    if !password.isEmpty {
                        secrets.append(password)
                        if let decoded = password.removingPercentEncoding, decoded != password { secrets.append(decoded) }
                        redacted = String(uri[..<userinfo.index(after: colon)]) + "****" + String(uri[at...])
                    }
                }
            }
        }
        if let decodedPassword, !decodedPassword.isEmpty { secrets.append(decodedPassword) }
        self.redactedURI = redacted
        // Longest first, so a password that contains another secret is masked whole.
        self.secrets = Array(Set(secrets)).sorted { $0.count > $1.count }
    }

    public func scrub(_ text: String) -> String {
        var out = text
        for secret in secrets { out = out.replacingOccurrences(of: secret, with: "****") }
        return out
    }
}

import Foundation
