import Foundation
import PoiTestSupport
import Testing

@Suite(.tags(.live, .process)) struct DoctorCommandTests {
    @Test func unreachableServerExits3NamingHostAndPortWithoutThePassword() throws {
        let port = Loopback.freePort()
        let r = try PoiProcess.run(["doctor", "--uri", "mongodb://erin:Tr0ub4dor@127.0.0.1:\(port)/", "--server-timeout", "1"])
        #expect(r.status == 3)
        #expect(r.stderr.contains("poi: cannot reach MongoDB at 127.0.0.1:\(port): "))
        #expect(r.stderr.contains("Check that the server is running and that --uri or MONGODB_URI points at it"))
        #expect(r.stdout.contains("server mongodb://erin:****@127.0.0.1:\(port)/ (database MyDatabase)"))
        #expect(!r.all.contains("Tr0ub4dor"))
    }

    @Test(.liveServer) func reportsTheLiveServerAndItsCapabilities() throws {
        let uri = try #require(LiveDatabase.uri)
        let uploads = FileManager.default.temporaryDirectory.appendingPathComponent("poi-doctor-\(getpid())")
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: uploads) }

        let r = try PoiProcess.run(["doctor", "--json", "--uploads", uploads.path, "--db", "poikit_test_doctor"],
                                   environment: ["MONGODB_URI": uri])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let server = object?["server"] as? [String: Any]
        #expect((server?["version"] as? String)?.isEmpty == false)
        #expect((server?["wireVersion"] as? Int ?? 0) >= 13)  // MongoDB 5.0+
        #expect(server?["geoWithin"] as? String == "yes")
        #expect(server?["gridFS"] as? String == "yes")
        #expect((object?["uploads"] as? [String: Any])?["status"] as? String == "writable")
        #expect((object?["libraries"] as? [String: String])?["libmongoc"]?.hasPrefix("1.") == true)
        // The probe file is removed again.
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path).isEmpty)
        // And the GridFS probe leaves no collection behind (new-user trial).
        #expect(try PoiProcess.python("""
        import pymongo, sys
        print(sorted(n for n in pymongo.MongoClient(sys.argv[1])[sys.argv[2]].list_collection_names() if 'probe' in n))
        """, [uri, "poikit_test_doctor"]) == "[]")
    }

    @Test(.liveServer) func readOnlyUploadsFolderExits3() throws {
        let uri = try #require(LiveDatabase.uri)
        // A regular file where a parent folder should be: fails even for root, unlike chmod.
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("poi-doctor-blocker-\(getpid())")
        try Data("x".utf8).write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let target = blocker.appendingPathComponent("uploads").path
        let r = try PoiProcess.run(["doctor", "--uploads", target], environment: ["MONGODB_URI": uri])
        #expect(r.status == 3)
        #expect(r.stdout.contains("uploads \(target): NOT writable (cannot be created: \(blocker.path) is not a folder)"))
    }

    @Test func versionHelpAndUsageErrors() throws {
        let version = try PoiProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "0.1.0\n")

        let help = try PoiProcess.run(["doctor", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples:"))

        let bad = try PoiProcess.run(["doctor", "--server-timeout", "-1"])
        #expect(bad.status == 2)
        let badURI = try PoiProcess.run(["doctor", "--uri", "mongodb://frank:sekrit@/"])
        #expect(badURI.status == 2)
        #expect(badURI.stderr.contains("invalid MongoDB URI mongodb://frank:****@/"))
        #expect(!badURI.all.contains("sekrit"))
    }

    /// An `@` in the URI's options (`?appname=team@night`, legal unescaped there) is taken for the
    /// end of the user-info: `poi doctor` shows the server as `mongodb://127.0.0.1:****@night`
    /// (host masked as a user, the port as a password), so the one line meant to say which server
    /// was checked names none. Only the user-info, before the first `/` after the hosts, is masked.
    @Test func anAtSignInTheOptionsIsNotTakenForCredentials() throws {
        let r = try PoiProcess.run(["doctor", "--json", "--server-timeout", "0.5", "--uri", "mongodb://127.0.0.1:1/db?appname=team@night"])
        #expect(r.stdout.contains(#""uri":"mongodb://127.0.0.1:1/db"#), "\(r.stdout)")
        #expect(!r.stdout.contains("****"), "\(r.stdout)")
    }
}
