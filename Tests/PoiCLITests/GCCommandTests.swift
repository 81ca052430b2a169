import Foundation
import PoiTestSupport
import Testing

/// `poi gc` end to end: orphans of every kind are made deliberately next to an imported sample
/// database, then the exact report, the exact deletions and what must survive are checked.
@Suite(.tags(.live, .process), .serialized) struct GCCommandTests {
    func gc(_ ws: Workspace, _ args: [String]) throws -> PoiProcess.Result {
        try PoiProcess.run(["gc", "--db", ws.database, "--uploads", ws.path("uploads")] + args,
                           environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
    }

    func report(_ ws: Workspace, _ args: [String] = []) throws -> (status: Int32, json: [String: Any]) {
        let r = try gc(ws, ["--json"] + args)
        return (r.status, try ws.json(r))
    }

    static func list(_ json: [String: Any], _ key: String) -> [String] { json[key] as? [String] ?? [] }

    @Test(.liveServer) func nothingToCollectAfterImportAndThumbnails() throws {
        let ws = try Workspace("gcclean")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        var r = try gc(ws, [])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout == "consistent: nothing to collect\n")
        // A new recipe replaces every thumbnail; still nothing to collect, and --delete deletes nothing.
        #expect(try ws.poi(["thumbnails", "--size", "64x64", "--quiet"]).status == 0)
        r = try gc(ws, ["--delete"])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout == "consistent: nothing to collect\n")
        #expect(ws.files(in: "uploads").count == 20)
    }

    @Test(.liveServer) func reportsAndDeletesExactlyTheOrphans() throws {
        let ws = try Workspace("gcorphans")
        defer { ws.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(ws)
        let uploads = ws.path("uploads")

        // Old ids (timestamp 1970) for everything except `young`, made now, to exercise --min-age.
        let unrefOriginal = "000000010000000000000001", itsThumb = "000000010000000000000002"
        let orphanThumb = "000000010000000000000003", noBytes = "000000010000000000000004"
        let strayBytes = "000000010000000000000005", dangling = "000000010000000000000006"
        let tempFile = ".000000010000000000000007.jpeg.tmp-1a2b"
        let setup = try ws.python("""
        import pymongo, sys, os, datetime, bson
        from bson import ObjectId
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        up = '\(uploads)'
        now = datetime.datetime.now(datetime.timezone.utc)
        def doc(i, role, **kw):
            d = {'_id': ObjectId(i), 'content-type': 'image/jpeg', 'ext': '.jpeg', 'created_at': now,
                 'length': 3, 'sha256': 'x' + i, 'role': role}
            d.update(kw); db.files.insert_one(d)
        def write(name): open(os.path.join(up, name), 'wb').write(b'abc')
        # An original no place shows, with its thumbnail.
        doc('\(unrefOriginal)', 'original'); write('\(unrefOriginal).jpeg')
        doc('\(itsThumb)', 'thumbnail', thumbnailOf=ObjectId('\(unrefOriginal)')); write('\(itsThumb).jpeg')
        # A thumbnail whose original has no document.
        doc('\(orphanThumb)', 'thumbnail', thumbnailOf=ObjectId('aaaaaaaaaaaaaaaaaaaaaaaa')); write('\(orphanThumb).jpeg')
        # A document without bytes, no place uses it.
        doc('\(noBytes)', 'original')
        # Bytes without a document; a young one; a file that is not PoiKit's; a temporary file.
        write('\(strayBytes).jpeg')
        young = str(ObjectId()); write(young + '.png')
        write('notes.txt')
        write('\(tempFile)')
        # A place's image whose bytes are deleted: reported, never deleted (a place references it).
        p = db.locations.find_one({'importKey': 'ldn-001'})
        f = db.files.find_one({'_id': ObjectId(p['imageId'])})
        os.remove(os.path.join(up, p['imageId'] + f['ext']))
        # A place pointing at a file id that has no document.
        db.locations.update_one({'importKey': 'ber-002'}, {'$set': {'imageId': '\(dangling)'}, '$unset': {'thumbnailId': ''}})
        print(p['imageId'], young)
        """)
        let parts = setup.split(separator: " ").map(String.init)
        try #require(parts.count == 2, "setup: \(setup)")
        let (referencedMissing, young) = (parts[0], parts[1])
        // ber-002's previous image may now be unused by any place: compute what the report must say.
        let freed = try ws.python("""
        import pymongo, sys
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        used = set(db.locations.distinct('imageId'))
        print(' '.join(sorted(str(f['_id']) for f in db.files.find({'role': 'original'}) if str(f['_id']) not in used
                              and len(f['sha256']) == 64)))
        """).split(separator: " ").map(String.init)
        let freedThumbs = try ws.python("""
        import pymongo, sys
        from bson import ObjectId
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        ids = [ObjectId(i) for i in sys.argv[3:]]
        print(' '.join(sorted(str(f['_id']) for f in db.files.find({'thumbnailOf': {'$in': ids}}))))
        """.replacingOccurrences(of: "sys.argv[3:]", with: "\(freed)")).split(separator: " ").map(String.init)

        let dry = try report(ws)
        #expect(dry.status == 1)
        #expect(Self.list(dry.json, "bytesWithoutDocument") == ["\(strayBytes).jpeg", "\(young).png", "notes.txt"].sorted())
        #expect(Self.list(dry.json, "documentsWithoutBytes") == [noBytes, referencedMissing].sorted())
        #expect(Self.list(dry.json, "thumbnailsWithoutOriginal") == [orphanThumb])
        #expect(Self.list(dry.json, "unreferencedFiles") == ([unrefOriginal, itsThumb] + freed + freedThumbs).sorted())
        #expect(Self.list(dry.json, "staleTemporaryFiles") == [tempFile])
        #expect(Self.list(dry.json, "danglingReferences") == [dangling])
        #expect(int(dry.json, "deleted") == 0)
        #expect(ws.files(in: "uploads").contains("\(unrefOriginal).jpeg"))  // a dry run deletes nothing

        let text = try gc(ws, [])
        #expect(text.status == 1)
        #expect(text.stdout.contains("files no place uses: \(2 + freed.count + freedThumbs.count)\n  \(unrefOriginal)\n"))
        #expect(text.stdout.contains("nothing deleted (dry run: rerun with --delete to remove them)"))

        // --min-age keeps the young stray bytes; everything else that no place uses goes.
        let aged = try report(ws, ["--delete", "--min-age", "3600"])
        #expect(aged.status == 1)
        let expectedDeleted = 2 + freed.count + freedThumbs.count + 4  // + orphanThumb, noBytes, strayBytes, temp
        #expect(int(aged.json, "deleted") == expectedDeleted)
        #expect(Self.list(aged.json, "kept") == [
            "\(referencedMissing): a place references it",
            "\(young).png: younger than the minimum age",
            "notes.txt: not a file name PoiKit writes",
        ])
        // The default minimum age is an hour too: an import or thumbnail run may be going on.
        let byDefault = try report(ws, ["--delete"])
        #expect(int(byDefault.json, "deleted") == 0)
        #expect(Self.list(byDefault.json, "kept").contains("\(young).png: younger than the minimum age"))
        let all = try report(ws, ["--delete", "--min-age", "0"])
        #expect(all.status == 1)  // what gc may not fix remains
        #expect(int(all.json, "deleted") == 1)

        let after = try report(ws)
        #expect(after.status == 1)
        #expect(Self.list(after.json, "bytesWithoutDocument") == ["notes.txt"])
        #expect(Self.list(after.json, "documentsWithoutBytes") == [referencedMissing])
        #expect(Self.list(after.json, "danglingReferences") == [dangling])
        #expect(Self.list(after.json, "unreferencedFiles").isEmpty)
        #expect(Self.list(after.json, "thumbnailsWithoutOriginal").isEmpty)
        #expect(Self.list(after.json, "staleTemporaryFiles").isEmpty)
        let files = ws.files(in: "uploads")
        for gone in [unrefOriginal, itsThumb, orphanThumb, strayBytes] + freed + freedThumbs {
            #expect(!files.contains { $0.hasPrefix(gone) }, "\(gone) still in uploads")
        }
        #expect(!files.contains(tempFile))
        // Documents went too, and the referenced document without bytes is still there.
        let docs = try ws.python("""
        import pymongo, sys
        from bson import ObjectId
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(db.files.count_documents({'_id': {'$in': [ObjectId(i) for i in \(([unrefOriginal, itsThumb, orphanThumb, noBytes] + freed + freedThumbs).description)]}}),
              db.files.count_documents({'_id': ObjectId('\(referencedMissing)')}))
        """)
        #expect(docs == "0 1")
    }

    /// Two databases sharing one uploads folder. To each, the other's files are
    /// "bytes without a files document". When the other database is on the same server, gc sees
    /// that it describes them and never deletes them, however few. When it cannot see it (another
    /// server, no right to list databases), a `--delete` that would remove that many is refused
    /// (nothing deleted, exit 2, one line saying why) until `--max-delete` allows it.
    @Test(.liveServer) func deleteRefusesToRemoveAnotherDatabasesFilesInASharedFolder() throws {
        let ws = try Workspace("gcshared")
        let other = ws.database + "_other"
        defer { ws.cleanUp(); _ = try? PoiProcess.python("import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])", [ws.uri, other]) }
        try ExportAndThumbnailsTests.importSamples(ws)  // 20 files: 10 originals, 10 thumbnails
        let imported = try PoiProcess.run(["import", "Samples/landmarks.geojson", "--db", other, "--uploads", ws.path("uploads"), "--quiet"],
                                          environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
        #expect(imported.status == 1, "\(imported.all)")  // 1: the samples have rejects
        #expect(ws.files(in: "uploads").count == 40)  // 20 of each database

        // Same server: the other database's files are named as such and kept.
        let sameServer = try report(ws, ["--delete", "--min-age", "0"])
        #expect(sameServer.status == 1)
        #expect(int(sameServer.json, "deleted") == 0)
        let kept = Self.list(sameServer.json, "kept")
        #expect(kept.count == 20)
        #expect(kept.allSatisfy { $0.hasSuffix(": a file of database \(other) (is the uploads folder shared?)") }, "\(kept)")
        #expect(ws.files(in: "uploads").count == 40)

        // As if the other database were on another server: its `files` are out of sight.
        _ = try ws.python("""
        import pymongo, sys
        pymongo.MongoClient(sys.argv[1])['\(other)'].files.drop()
        """)
        let refusal = "poi: refusing to delete 20 of 40 stored files (50 %): more than --max-delete allows "
            + "(by default 10 % of what is stored, at least 10); is --uploads the folder of this database? "
            + "Use --max-delete 20 to confirm\n"
        let refused = try gc(ws, ["--delete", "--min-age", "0", "--json"])
        #expect(refused.status == 2, "\(refused.all)")
        #expect(refused.stderr == refusal)
        let json = try ws.json(refused)
        #expect(Self.list(json, "bytesWithoutDocument").count == 20)
        #expect(int(json, "deleted") == 0)
        #expect(json["refused"] as? [String: Int] == ["wouldDelete": 20, "stored": 40, "allowed": 10, "bytesWithoutDocument": 20])
        #expect(ws.files(in: "uploads").count == 40)

        // Text output: the findings, then the refusal; an explicit limit below the need is refused too.
        let text = try gc(ws, ["--delete", "--min-age", "0"])
        #expect(text.status == 2)
        #expect(text.stdout.hasPrefix("bytes without a files document: 20\n"))
        #expect(text.stdout.hasSuffix("20 found; nothing deleted (refused)\n"))
        #expect(text.stderr == refusal)
        let tooFew = try gc(ws, ["--delete", "--min-age", "0", "--max-delete", "19"])
        #expect(tooFew.status == 2)
        #expect(tooFew.stderr == "poi: refusing to delete 20 of 40 stored files (50 %): more than --max-delete allows (19); "
            + "is --uploads the folder of this database? Use --max-delete 20 to confirm\n")
        #expect(ws.files(in: "uploads").count == 40)

        // Confirmed: it proceeds, and takes exactly what it counted.
        let confirmed = try report(ws, ["--delete", "--min-age", "0", "--max-delete", "20"])
        #expect(confirmed.status == 0)
        #expect(int(confirmed.json, "deleted") == 20)
        #expect(confirmed.json["refused"] == nil)
        #expect(ws.files(in: "uploads").count == 20)
        #expect(try gc(ws, []).stdout == "consistent: nothing to collect\n")
        // `all` lifts the limit; a value that is neither a count nor `all` is a usage error.
        #expect(try report(ws, ["--delete", "--max-delete", "all"]).status == 0)
        #expect(try PoiProcess.run(["gc", "--delete", "--max-delete", "lots"]).status == 2)
        // A negative count is named as the invalid value, not taken for a missing one.
        let negative = try PoiProcess.run(["gc", "--delete", "--max-delete", "-1"])
        #expect(negative.status == 2)
        #expect(negative.stderr.contains("The value '-1' is invalid for '--max-delete <count|all>'"), "\(negative.stderr)")
    }

    @Test func unreachableServerAndBadArguments() throws {
        let port = Loopback.freePort()
        let uploads = FileManager.default.temporaryDirectory.appendingPathComponent("gc-none-\(port)").path
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: uploads) }
        let r = try PoiProcess.run(["gc", "--uri", "mongodb://gcuser:s3cr3t-pw@127.0.0.1:\(port)/x", "--server-timeout", "1",
                                    "--uploads", uploads])
        #expect(r.status == 3, "\(r.all)")
        #expect(r.stderr.contains("127.0.0.1:\(port)"))
        #expect(!r.all.contains("s3cr3t-pw"))
        #expect(try PoiProcess.run(["gc", "--min-age", "-1"]).status == 2)
        let help = try PoiProcess.run(["gc", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("poi gc --delete --min-age 0"))
        #expect(help.stdout.contains("Exit status: 0 nothing inconsistent"))
        #expect(help.stdout.contains("--max-delete <count|all>"))
    }

    @Test(.liveServer) func gridFSChunksOfAnInterruptedUploadAreFoundAndDeleted() throws {
        let ws = try Workspace("gcchunks")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/landmarks.geojson", "--gridfs", "--quiet"]).status == 1)
        // What a kill between GridFS's chunk writes and its files document leaves behind.
        let orphan = "000000010000000000000009"
        #expect(try ws.python("""
        import pymongo, sys, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        db['fs.chunks'].insert_many([{'files_id': bson.ObjectId('\(orphan)'), 'n': n, 'data': b'x' * 10} for n in range(2)])
        print(db['fs.chunks'].count_documents({'files_id': bson.ObjectId('\(orphan)')}))
        """) == "2")
        let found = try report(ws, ["--gridfs"])
        #expect(found.status == 1)
        #expect(Self.list(found.json, "bytesWithoutDocument") == ["\(orphan) (chunks only)"])
        let deleted = try report(ws, ["--gridfs", "--delete", "--min-age", "0"])
        #expect(deleted.json["deleted"] as? Int == 1)
        #expect(try ws.python("""
        import pymongo, sys, bson
        db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
        print(db['fs.chunks'].count_documents({'files_id': bson.ObjectId('\(orphan)')}), db.files.count_documents({}))
        """) == "0 20")
        #expect(try report(ws, ["--gridfs"]).status == 0)
    }

    @Test(.liveServer) func gcDeleteLeavesTheFilesOfASmallerDatabaseSharingTheFolder() throws {
        let big = try Workspace("trialgcbig")
        defer { big.cleanUp() }
        try ExportAndThumbnailsTests.importSamples(big)

        // A second database, one photo, the same uploads folder.
        let small = try Workspace("trialgcsmall")
        defer { small.cleanUp() }
        try FileManager.default.copyItem(atPath: small.path("Samples/images/coffee.jpg"), toPath: small.path("coffee.jpg"))
        try "id,name,lat,lon,photo\nb1,Corner shop,1,2,coffee.jpg\n".write(toFile: small.path("b.csv"), atomically: true, encoding: .utf8)
        let shared = try PoiProcess.run(["import", small.path("b.csv"), "--db", small.database, "--uploads", big.path("uploads"), "--quiet"],
                                        environment: ["MONGODB_URI": small.uri], currentDirectory: small.root)
        #expect(shared.status == 0, "\(shared.all)")
        let before = big.files(in: "uploads")
        #expect(before.count == 22, "\(before)")

        // Nothing else is writing: --min-age 0, as the help allows.
        let gc = try PoiProcess.run(["gc", "--db", big.database, "--uploads", big.path("uploads"), "--delete", "--min-age", "0", "--json"],
                                    environment: ["MONGODB_URI": big.uri], currentDirectory: big.root)
        #expect(big.files(in: "uploads").count == 22, "gc --delete removed the other database's files: \(gc.all) (status \(gc.status))")
        let check = try PoiProcess.run(["gc", "--db", small.database, "--uploads", big.path("uploads"), "--json"],
                                       environment: ["MONGODB_URI": small.uri], currentDirectory: small.root)
        let report = try small.json(check)
        #expect((report["documentsWithoutBytes"] as? [String] ?? []).isEmpty, "the small database lost its bytes: \(check.stdout)")
    }
}
