import Foundation
import PoiTestSupport

/// A scratch folder with a copy of Samples/, a database name of its own and an uploads folder,
/// so end-to-end tests never write into the repository or share state.
struct Workspace {
    let root: URL
    let database: String
    let uri: String

    /// Throws without a URI: a test that needs the server carries `.liveServer`, so reaching
    /// this without one is a missing trait, reported as a failure rather than a silent pass.
    init(_ label: String, uri: String? = LiveDatabase.uri) throws {
        guard let uri else { throw WorkspaceError("MONGODB_URI is not set, and the test lacks the .liveServer trait") }
        self.uri = uri
        root = FileManager.default.temporaryDirectory.appendingPathComponent("poi-e2e-\(label)-\(UUID().uuidString.prefix(8))")
        database = "poikit_e2e_\(label)_\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        do {
            try FileManager.default.copyItem(at: PoiProcess.repoRoot.appendingPathComponent("Samples"),
                                             to: root.appendingPathComponent("Samples"))
            // Rejects files a developer's own runs left in Samples/ (ignored by git) are not samples.
            let samples = root.appendingPathComponent("Samples")
            for name in try FileManager.default.contentsOfDirectory(atPath: samples.path) where name.contains(".rejects.") {
                try FileManager.default.removeItem(at: samples.appendingPathComponent(name))
            }
        } catch {
            try? FileManager.default.removeItem(at: root)  // no workspace, so no cleanUp() to do it
            throw error
        }
    }

    func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// Runs `poi` in the workspace against this database.
    func poi(_ arguments: [String], uploads: String = "uploads", stdin: Data? = nil) throws -> PoiProcess.Result {
        var args = arguments
        if let command = args.first, ["import", "export", "thumbnails"].contains(command) {
            args += ["--db", database, "--uploads", path(uploads)]
        }
        return try PoiProcess.run(args, environment: ["MONGODB_URI": uri], currentDirectory: root, stdin: stdin)
    }

    /// `--json` output parsed (the summary object on stdout).
    func json(_ result: PoiProcess.Result) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw WorkspaceError("stdout is not a JSON object: \(result.stdout) / stderr: \(result.stderr)")
        }
        return object
    }

    func files(in relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(relative))) ?? []).sorted()
    }

    func features(_ relative: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: root.appendingPathComponent(relative))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["features"] as? [[String: Any]] ?? []
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: root)
        dropDatabase()
    }

    private func dropDatabase() {
        _ = try? python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])")
    }

    /// Runs a Python snippet with pymongo (argv[1] = URI, argv[2] = database): an independent
    /// driver reading what PoiKit wrote, the way the Node.js backend would.
    func python(_ script: String) throws -> String {
        try PoiProcess.python(script, [uri, database])
    }
}

struct WorkspaceError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

func int(_ object: [String: Any], _ key: String) -> Int? { object[key] as? Int }

/// Python for the tests that read stored values with pymongo: `t(v)` names a value's BSON type
/// with it (`int:5`, `double:5.0`, `date:…`, `decimal128:…`), into lists and objects, so a
/// test tells 5 from 5.0 and "5" in one string comparison.
enum PythonTypedValues {
    static let function = """
    import datetime, bson
    def t(v):
        if v is None: return 'null'
        if isinstance(v, bool): return 'bool:' + str(v)
        if isinstance(v, int): return 'int:' + str(v)
        if isinstance(v, float): return 'double:' + repr(v)
        if isinstance(v, datetime.datetime): return 'date:' + v.isoformat()
        if isinstance(v, bson.decimal128.Decimal128): return 'decimal128:' + str(v)
        if isinstance(v, dict): return {k: t(x) for k, x in v.items()}
        if isinstance(v, list): return [t(x) for x in v]
        return type(v).__name__ + ':' + str(v)
    """
}
