import Foundation
import Testing

/// The live database server the tests run against: `make test` (scripts/db.sh) starts one and
/// exports MONGODB_URI; a developer can point MONGODB_URI at a real mongod instead. One definition
/// for every test target, so "is there a server" and the skip's reason cannot drift apart.
public enum LiveDatabase {
    /// MONGODB_URI, or nil when it is unset or empty.
    public static var uri: String? {
        let value = ProcessInfo.processInfo.environment["MONGODB_URI"] ?? ""
        return value.isEmpty ? nil : value
    }

    public static var isConfigured: Bool { uri != nil }

    /// Why a test that needs the server did not run without one.
    public static let notConfigured: Comment = "MONGODB_URI is not set (run `make test`, which starts a server)"
}

extension Trait where Self == ConditionTrait {
    /// The test (or suite) needs the live server: without MONGODB_URI it is reported as skipped,
    /// with the reason, instead of passing without having run.
    public static var liveServer: Self { .enabled(if: LiveDatabase.isConfigured, LiveDatabase.notConfigured) }
}
