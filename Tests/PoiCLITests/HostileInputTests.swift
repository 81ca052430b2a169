import Foundation
import PoiTestSupport
import Testing

/// Hostile inputs through the CLI, table-driven: each case names its input, the exact exit
/// status, substrings its output must (and must not) contain, and a peak-memory bound. Fixtures
/// are generated at test time in a temp folder (nothing large is committed). `make hostile-test`
/// runs only this suite; `make test` runs it with the rest.
@Suite(.tags(.live, .process), .serialized) struct HostileInputTests {
    struct Case: CustomStringConvertible {
        var name: String
        var args: [String]
        var status: Int32
        var contains: [String]
        var excludes: [String] = []
        /// Peak RSS bound in MB: flat memory whatever the input size.
        var maxMB = 200
        /// Needs the live server (MONGODB_URI).
        var live = false
        var description: String { name }
    }

    static let password = "hunter2-Secret"

    /// Builds every fixture once per run: dumps as bytes, images with the .venv's Pillow.
    final class Fixtures: @unchecked Sendable {
        let dir: URL
        init() throws {
            // Held by a `static let` for the whole run (so never deinitialised): removed at exit.
            dir = ProcessScratch.removedAtExit(FileManager.default.temporaryDirectory
                .appendingPathComponent("poi-hostile-\(UUID().uuidString.prefix(8))"))
            let fm = FileManager.default
            try fm.createDirectory(at: dir.appendingPathComponent("imgs"), withIntermediateDirectories: true)
            try fm.createDirectory(at: dir.appendingPathComponent("outside"), withIntermediateDirectories: true)
            func write(_ name: String, _ bytes: [UInt8]) throws { try Data(bytes).write(to: dir.appendingPathComponent(name)) }
            func write(_ name: String, _ text: String) throws { try write(name, Array(text.utf8)) }
            let tenMB = String(repeating: "x", count: 10 * 1024 * 1024)
            try write("bigfield.csv", "name,lat,lon,details\nBig,1,2,\(tenMB)\nSmall,3,4,ok\n")
            try write("manycols.csv", (0..<1_000_000).map { "c\($0)" }.joined(separator: ",") + "\n")
            try write("manycols-row.csv", "name,lat,lon\n" + String(repeating: ",", count: 1_000_000) + "\nB,3,4\n")
            try write("nul.csv", Array("name,lat,lon\nA".utf8) + [0] + Array("B,1,2\nC,3,4\n".utf8))
            try write("badutf8.csv", Array("name,lat,lon\nA".utf8) + [0xFF, 0xFE] + Array("B,1,2\nC,3,4\n".utf8))
            try write("unterminated.csv", "name,lat,lon\nC,3,4\n\"A,1,2\n")

            func feature(_ props: String, geometry: String = #"{"type":"Point","coordinates":[1,2]}"#) -> String {
                #"{"type":"Feature","geometry":\#(geometry),"properties":{\#(props)}}"#
            }
            func collection(_ features: [String]) -> String { #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}" }
            let ok = feature(#""name":"ok","id":"ok-1""#)
            let deep = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
            try write("deep.geojson", collection([feature(#""name":"deep","x":\#(deep)"#), ok]))
            try write("deep-arrays.geojson", #"{"type":"FeatureCollection","features":["# + String(repeating: "[", count: 100_000))
            let twentyMB = String(repeating: "y", count: 20 * 1024 * 1024)
            try write("longstring.geojson", collection([feature(#""name":"\#(twentyMB)""#), ok]))
            try write("unterminated-string.geojson",
                      #"{"type":"FeatureCollection","features":["# + ok + #",{"type":"Feature","properties":{"name":""# + twentyMB)
            try write("dupkeys.geojson", collection([feature(#""name":"first","name":"second""#), ok]))
            try write("bignumber.geojson", collection([
                feature(#""name":"far""#, geometry: #"{"type":"Point","coordinates":[1e400,2]}"#),
                feature(#""name":"n","n":-1e400"#), ok]))

            // A document over 16 MB once stored: details just under the reader's 16 MiB feature
            // limit, plus the fields the importer adds, between two good features.
            let skeleton = feature(#""name":"big","id":"big-2","details":"""#)
            let details = String(repeating: "d", count: 16_777_216 - skeleton.utf8.count - 10)
            try write("oversized.geojson", collection([
                feature(#""name":"before","id":"big-1""#), feature(#""name":"big","id":"big-2","details":"\#(details)""#),
                feature(#""name":"after","id":"big-3""#)]))

            try Self.python("""
            import os, random, struct, zlib, sys
            from PIL import Image
            d = sys.argv[1]; imgs = os.path.join(d, 'imgs')
            open(os.path.join(imgs, 'zero.jpg'), 'wb').close()
            r = random.Random(7); open(os.path.join(imgs, 'random.jpg'), 'wb').write(bytes(r.randrange(256) for _ in range(5000)))
            Image.new('RGB', (64, 48), (200, 10, 10)).save(os.path.join(imgs, 'good.jpg'))
            Image.new('RGB', (64, 48), (10, 200, 10)).save(os.path.join(d, 'outside', 'real.jpg'))
            good = open(os.path.join(imgs, 'good.jpg'), 'rb').read()
            open(os.path.join(imgs, 'truncated.jpg'), 'wb').write(good[:len(good) // 2])
            # PNG bomb: 30000x30000 RGB declared, a few rows of a zlib stream of zeros.
            def chunk(t, b): return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b) & 0xffffffff)
            co = zlib.compressobj(9); row = b'\\0' * (30000 * 3 + 1)
            data = b''.join(co.compress(row) for _ in range(64)) + co.flush()
            open(os.path.join(imgs, 'bomb.png'), 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 30000, 30000, 8, 2, 0, 0, 0))
                                                            + chunk(b'IDAT', data) + chunk(b'IEND', b''))
            # A real JPEG whose SOF0 says 64250x64250.
            b = bytearray(good); i = b.find(b'\\xff\\xc0'); struct.pack_into('>HH', b, i + 5, 64250, 64250)
            open(os.path.join(imgs, 'huge.jpg'), 'wb').write(bytes(b))
            os.symlink(os.path.join(d, 'outside', 'real.jpg'), os.path.join(imgs, 'link.jpg'))
            rows = [('zero', 'zero.jpg'), ('random', 'random.jpg'), ('trunc', 'truncated.jpg'), ('bomb', 'bomb.png'),
                    ('huge', 'huge.jpg'), ('dotdot', '../outside/real.jpg'), ('abs', os.path.join(d, 'outside', 'real.jpg')),
                    ('link', 'link.jpg'), ('good', 'good.jpg')]
            with open(os.path.join(d, 'images.csv'), 'w') as f:
                f.write('id,name,lat,lon,photo\\n')
                for i, (n, p) in enumerate(rows): f.write(f'{n},{n},1,{i},{p}\\n')
            """, dir.path)
        }

        static func python(_ script: String, _ args: String...) throws {
            let p = Process()
            p.executableURL = PoiProcess.repoRoot.appendingPathComponent(".venv/bin/python")
            p.arguments = ["-c", script] + args
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw WorkspaceError("fixture script failed (\(p.terminationStatus))") }
        }

        deinit { try? FileManager.default.removeItem(at: dir) }
    }

    static let js = "runs JavaScript on the database server"
    static let unreachable = "mongodb://alice:\(password)@127.0.0.1:1/db"

    static var cases: [Case] {
        let images = ["import", "--dry-run", "images.csv", "--images-dir", "imgs"]
        return [
            // CSV
            Case(name: "CSV field of 10 MB", args: ["check", "bigfield.csv"], status: 1,
                 contains: ["bigfield.csv:2: record 1: record exceeds the limit of 1048576 bytes or 4096 fields", "1 valid, 1 rejected"]),
            Case(name: "CSV header of 1 million columns", args: ["check", "manycols.csv"], status: 2,
                 contains: ["manycols.csv: invalid header: the header has more than 4096 columns"]),
            Case(name: "CSV row of 1 million fields", args: ["check", "manycols-row.csv"], status: 1,
                 contains: ["manycols-row.csv:2: record 1: record exceeds the limit", "1 valid, 1 rejected"]),
            Case(name: "CSV with a NUL byte", args: ["check", "nul.csv"], status: 1,
                 contains: ["nul.csv:2: record 1: name: contains a NUL byte", "1 valid, 1 rejected"]),
            Case(name: "CSV with invalid UTF-8", args: ["check", "badutf8.csv"], status: 1,
                 contains: ["badutf8.csv:2: record 1: name: not valid UTF-8", "1 valid, 1 rejected"]),
            Case(name: "CSV with an unterminated quote at EOF", args: ["import", "--dry-run", "unterminated.csv"], status: 1,
                 contains: ["unterminated.csv:3: record 2: unterminated quoted field (the file ends inside quotes opened in this record, so every line after it was read into it; if \" is plain text in this file, read it with --quote none)",
                            "dry run: 1 file(s), 2 records: 1 valid"]),
            // GeoJSON
            Case(name: "GeoJSON nested 100k deep in a property", args: ["check", "deep.geojson"], status: 1,
                 contains: ["deep.geojson: feature 0 (record 1): invalid JSON: nesting deeper than 64 levels", "1 valid, 1 rejected"]),
            Case(name: "GeoJSON nested 100k deep, never closed", args: ["check", "deep-arrays.geojson"], status: 1,
                 contains: ["deep-arrays.geojson: feature 0 (record 1): malformed JSON", "the rest of the file is not read"]),
            Case(name: "GeoJSON with a 20 MB string", args: ["check", "longstring.geojson"], status: 1,
                 contains: ["feature 0 (record 1): feature is", "over the limit of 16777216", "1 valid, 1 rejected"]),
            Case(name: "GeoJSON string that never ends (declared, not there)", args: ["check", "unterminated-string.geojson"], status: 1,
                 contains: ["feature 1 (record 2): malformed JSON", "unexpected end of file inside a value", "1 valid, 1 rejected"]),
            Case(name: "GeoJSON duplicate keys", args: ["check", "dupkeys.geojson"], status: 1,
                 contains: [#"feature 0 (record 1): invalid JSON: duplicate key "name""#, "1 valid, 1 rejected"]),
            Case(name: "GeoJSON numbers like 1e400", args: ["check", "bignumber.geojson"], status: 1,
                 contains: ["feature 0 (record 1): invalid JSON: number 1e400 is out of range",
                            "feature 1 (record 2): invalid JSON: number -1e400 is out of range", "1 valid, 2 rejected"]),
            // Images (dry run decodes every image; a bad image leaves the place without one)
            // Exit 1: a failed image is a failed file, the place is still imported.
            Case(name: "hostile images, imported without them", args: images, status: 1,
                 contains: ["images.csv:2: record 1: zero.jpg: empty file (0 bytes)",
                            "images.csv:3: record 2: random.jpg: not a JPEG or PNG file",
                            "images.csv:4: record 3: truncated.jpg: damaged JPEG: Premature end of JPEG file",
                            "images.csv:5: record 4: bomb.png: image is 30000x30000 (900.0 MP), over the limit of 100.0 MP",
                            "images.csv:6: record 5: huge.jpg: image is 64250x64250 (4128.1 MP), over the limit of 100.0 MP",
                            "images.csv:7: record 6: ../outside/real.jpg: refused, the path leads outside the images folder",
                            "absolute image paths are refused; give a path relative to the images folder",
                            "images.csv:9: record 8: link.jpg: refused, the path leads outside the images folder",
                            "9 records: 9 valid", "images: 1 stored, 0 reused, 8 failed"]),
            Case(name: "hostile images with --require-images", args: images + ["--require-images", "--json", "--quiet"], status: 1,
                 contains: [#""rejected":8"#, #""imagesStored":1"#]),
            // Queries: server-side JavaScript at depth, refused before connecting.
            Case(name: "$where at depth", args: ["export", "--uri", unreachable, "--query", #"{"a":{"$elemMatch":{"$or":[{"b":1},{"$where":"sleep(1)"}]}}}"#],
                 status: 2, contains: ["$where (at a.$elemMatch.$or.1.$where) " + js], excludes: [password]),
            Case(name: "$function at depth", args: ["export", "--uri", unreachable, "--query",
                                                    #"{"$and":[{"x":{"$expr":{"$function":{"body":"function(){}","args":[],"lang":"js"}}}}]}"#],
                 status: 2, contains: ["$function (at $and.0.x.$expr.$function) " + js]),
            Case(name: "$accumulator in thumbnails --query", args: ["thumbnails", "--uri", unreachable, "--query", #"{"$expr":{"$gt":[{"$accumulator":{}},1]}}"#],
                 status: 2, contains: ["$accumulator (at $expr.$gt.0.$accumulator) " + js]),
            Case(name: "JavaScript code value", args: ["export", "--uri", unreachable, "--query", #"{"a":{"$code":"function(){}"}}"#],
                 status: 2, contains: ["JavaScript code (at a) runs on the database server"]),
            // Passwords in URIs: never printed, whatever fails.
            Case(name: "password: import, server unreachable", args: ["import", "images.csv", "--uri", unreachable, "--server-timeout", "1"],
                 status: 3, contains: ["cannot reach MongoDB at 127.0.0.1:1"], excludes: [password]),
            Case(name: "password: export --json", args: ["export", "-o", "x.geojson", "--json", "--uri", unreachable, "--server-timeout", "1"],
                 status: 3, contains: ["127.0.0.1:1"], excludes: [password]),
            // The folder is there (the test is about the URI): an import no longer makes one before
            // it reaches the server, which this case relied on.
            Case(name: "password: gc", args: ["gc", "--json", "--uploads", ".", "--uri", unreachable, "--server-timeout", "1"],
                 status: 3, contains: ["127.0.0.1:1"], excludes: [password]),
            Case(name: "password: doctor --json", args: ["doctor", "--json", "--uri", unreachable, "--server-timeout", "1"],
                 status: 3, contains: ["mongodb://alice:****@127.0.0.1:1/db"], excludes: [password]),
            Case(name: "password: malformed URI", args: ["export", "--uri", unreachable + "?ssl=maybe"],
                 status: 2, contains: ["invalid MongoDB URI mongodb://alice:****@127.0.0.1:1/db"], excludes: [password]),
            // Live: one oversized document is refused alone; the rest of its batch lands.
            Case(name: "document over 16 MB (live)", args: ["import", "oversized.geojson"], status: 1,
                 contains: ["oversized.geojson: feature 1 (record 2): refused by the server: document is",
                            "the server accepts at most 16777216 (maxBsonObjectSize)", "3 records: 2 inserted, 0 updated, 0 unchanged, 1 rejected"],
                 maxMB: 300, live: true),
        ]
    }

    static let fixtures = Result { try Fixtures() }

    @Test(arguments: cases.filter { !$0.live }) func hostileInput(_ c: Case) throws {
        try run(c)
    }

    /// The cases that need the server, apart so that without one they are reported as skipped.
    @Test(.liveServer, arguments: cases.filter(\.live)) func hostileInputLive(_ c: Case) throws {
        try run(c)
    }

    func run(_ c: Case) throws {
        let fx = try Self.fixtures.get()
        // --progress: these runs have no terminal, and the cases check the closing summary too.
        var args = c.args + (["import", "export", "thumbnails"].contains(c.args.first ?? "") ? ["--progress"] : [])
        var database: String?
        if c.live {
            let uri = try #require(LiveDatabase.uri)
            database = "poikit_hostile_\(UUID().uuidString.prefix(8).lowercased())"
            args += ["--uri", uri, "--db", database!, "--uploads", fx.dir.appendingPathComponent("uploads").path]
        }
        defer { if let database { Self.drop(database) } }
        let (result, peakMB) = try Self.runMeasured(args, in: fx.dir)
        #expect(result.status == c.status, "\(c.name): exit \(result.status); \(result.all.prefix(2000))")
        for s in c.contains { #expect(result.all.contains(s), "\(c.name): missing \"\(s)\" in: \(result.all.prefix(2000))") }
        for s in c.excludes + [Self.password] { #expect(!result.all.contains(s), "\(c.name): output contains \"\(s)\"") }
        if let peakMB { #expect(peakMB <= c.maxMB, "\(c.name): peak RSS \(peakMB) MB over \(c.maxMB) MB") }
        if let database {
            // Exactly the two good features landed.
            let count = try Self.pythonOutput("""
            import pymongo, sys
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            print(sorted(p['importKey'] for p in db.locations.find()))
            """, LiveDatabase.uri!, database)
            #expect(count.contains("big-1") && count.contains("big-3") && !count.contains("big-2"), "stored: \(count)")
        }
    }

    /// Runs poi under /usr/bin/time to read its peak RSS (nil, with a note, when time is missing).
    static func runMeasured(_ args: [String], in dir: URL) throws -> (PoiProcess.Result, Int?) {
        let timeTool = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: timeTool) else {
            print("NOTE peak RSS not measured: \(timeTool) is missing (apt-get install time)")
            return (try PoiProcess.run(args, currentDirectory: dir), nil)
        }
        let rssFile = dir.appendingPathComponent("rss-\(UUID().uuidString.prefix(8))").path
        let result = try PoiProcess.execute(URL(fileURLWithPath: timeTool),
                                            ["-f", "%M", "-o", rssFile, PoiProcess.binary.path] + args,
                                            currentDirectory: dir)
        // time writes "Command exited with non-zero status N" before the number: take the last line.
        let kb = (try? String(contentsOfFile: rssFile, encoding: .utf8))?
            .split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        try? FileManager.default.removeItem(atPath: rssFile)
        return (result, kb.map { $0 / 1024 })
    }

    static func pythonOutput(_ script: String, _ args: String...) throws -> String {
        try PoiProcess.python(script, args)
    }

    static func drop(_ database: String) {
        guard let uri = LiveDatabase.uri else { return }
        _ = try? pythonOutput("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])", uri, database)
    }
}
