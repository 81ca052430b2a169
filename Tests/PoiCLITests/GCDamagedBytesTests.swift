import Foundation
import PoiTestSupport
import Testing

/// `poi gc` finds damaged bytes (short files, GridFS chunks missing or short, with --verify a
/// sha256 that does not match), names the places using them, never deletes them, exits 1.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct GCDamagedBytesTests: MaintenanceRuns {
    /// Sizes are compared always, sha256 with --verify, GridFS chunks always; damaged bytes
    /// are their own class, named with the places using them, never deleted, exit 1.
    @Test func gcReportsDamagedBytesWithThePlacesUsingThem() throws {
        let ws = try Workspace("gcdamaged")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let uploads = ws.path("uploads")
        let setup = try ws.python("""
        import pymongo, sys, os
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        up = '\(uploads)'
        def keys(field, i): return ','.join(sorted(p['importKey'] for p in db.locations.find({field: str(i)})))
        o = db.files.find_one({'originalName': 'hubble-deep-field.jpg', 'role': 'original'})
        with open(os.path.join(up, str(o['_id']) + o['ext']), 'r+b') as f: f.truncate(5000)
        c = db.files.find_one({'originalName': 'coffee.jpg', 'role': 'original'})
        t = db.files.find_one({'thumbnailOf': c['_id']})
        open(os.path.join(up, str(t['_id']) + t['ext']), 'wb').write(b'junk')
        r = db.files.find_one({'originalName': 'rocket.jpg', 'role': 'original'})
        p = os.path.join(up, str(r['_id']) + r['ext'])
        b = bytearray(open(p, 'rb').read()); b[1000] ^= 0xFF; open(p, 'wb').write(bytes(b))
        print(o['_id'], o['length'], keys('imageId', o['_id']), t['_id'], t['length'], keys('thumbnailId', t['_id']),
              r['_id'], keys('imageId', r['_id']))
        """).split(separator: " ").map(String.init)
        try #require(setup.count == 8, "setup: \(setup)")
        let truncated: [String: String] = ["id": setup[0], "file": setup[0] + ".jpeg", "role": "original",
                                           "problem": "5000 of \(setup[1]) bytes", "places": setup[2]]
        let junk: [String: String] = ["id": setup[3], "file": setup[3] + ".jpeg", "role": "thumbnail",
                                      "problem": "4 of \(setup[4]) bytes", "places": setup[5]]
        let flipped: [String: String] = ["id": setup[6], "file": setup[6] + ".jpeg", "role": "original",
                                         "problem": "content does not match its sha256", "places": setup[7]]
        func sorted(_ list: [[String: String]]) -> [[String: String]] { list.sorted { $0["id"]! < $1["id"]! } }

        let cheap = try gc(ws, ["--json"])
        #expect(cheap.status == 1, "\(cheap.all)")
        #expect(Self.damaged(try ws.json(cheap)) == sorted([truncated, junk]))
        let verified = try gc(ws, ["--json", "--verify"])
        #expect(verified.status == 1)
        #expect(Self.damaged(try ws.json(verified)) == sorted([truncated, junk, flipped]))
        let text = try gc(ws, [])
        #expect(text.status == 1)
        #expect(text.stdout.contains("damaged bytes (never deleted): 2\n"))
        #expect(text.stdout.hasSuffix("2 found; nothing deleted (gc deletes neither damaged bytes nor dangling references)\n"))
        #expect(text.stdout.contains("\n  \(setup[0]).jpeg (original): 5000 of \(setup[1]) bytes; used by \(setup[2].replacingOccurrences(of: ",", with: ", "))\n"))
        // Never deleted, and still an inconsistency after --delete.
        let deleted = try gc(ws, ["--json", "--delete", "--min-age", "0"])
        #expect(deleted.status == 1)
        #expect(int(try ws.json(deleted), "deleted") == 0)
        #expect(ws.files(in: "uploads").count == 20)
    }

    @Test func gcFindsAGridFSFileWithoutChunks() throws {
        let ws = try Workspace("gcnochunks")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--quiet"]).status == 1)
        let setup = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        f = db.files.find_one({'originalName': 'retina.jpg', 'role': 'original'})
        n = db['fs.chunks'].delete_many({'files_id': f['_id']}).deleted_count
        print(f['_id'], n, ','.join(sorted(p['importKey'] for p in db.locations.find({'imageId': str(f['_id'])}))))
        """).split(separator: " ").map(String.init)
        try #require(setup.count == 3, "setup: \(setup)")
        let r = try gc(ws, ["--gridfs", "--json"])
        #expect(r.status == 1, "\(r.all)")
        #expect(Self.damaged(try ws.json(r)) == [["id": setup[0], "file": setup[0] + ".jpeg", "role": "original",
                                                  "problem": "0 of \(setup[1]) chunks", "places": setup[2]]])
    }

    /// `poi gc --gridfs` without `--verify` says "consistent" (exit 0) when an original's first
    /// GridFS chunk holds 5,000 bytes instead of 261,120: the stored size is not the document's
    /// `length`, which README says is compared always (as uploads mode does: "5000 of 269564
    /// bytes"). Only `--verify` sees it.
    @Test(.liveServer) func gcWithoutVerifyFindsATruncatedGridFSChunk() throws {
        let ws = try Workspace("t2gcchunk")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import"] + ImportCommandTests.sampleFiles + ["--gridfs", "--quiet"]).status == 1)
        let id = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        f = db.files.find_one({'originalName': 'retina.jpg', 'role': 'original'})
        c = db['fs.chunks'].find_one({'files_id': f['_id'], 'n': 0})
        db['fs.chunks'].update_one({'_id': c['_id']}, {'$set': {'data': c['data'][:5000]}})
        print(f['_id'])
        """)
        let r = try PoiProcess.run(["gc", "--db", ws.database, "--gridfs", "--json"], environment: ["MONGODB_URI": ws.uri],
                                   currentDirectory: ws.root)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stdout.contains(id), "the truncated original is not named: \(r.stdout)")
    }

    @Test func helpSaysWhatChanged() throws {
        let gcHelp = try PoiProcess.run(["gc", "--help"]).stdout
        #expect(gcHelp.contains("--verify"))
        #expect(gcHelp.contains("damaged bytes"))
        let thumbHelp = try PoiProcess.run(["thumbnails", "--help"]).stdout
        #expect(thumbHelp.contains("updated_at"))
    }
}
