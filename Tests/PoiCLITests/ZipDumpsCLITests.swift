import Foundation
import PoiTestSupport
import Testing

/// Zip archives and decompression caps, end to end: fixtures are made at test time
/// from Samples/places.csv with Python's own `zipfile`/`gzip` (independent of the code under
/// test), imported with `poi`, and compared with the plain file's import field by field.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct ZipDumpsCLITests {
    /// `Samples/dump.zip`: `dump/part-a.csv` (the header and the first 12 rows), `dump/part-b.csv`
    /// (the header and the rest), `dump/README.txt`, and a folder entry; members written
    /// b-first so name order is the archive's job. Prints the line where part-b's rows start.
    static let makeZip = #"""
    import sys, os, zipfile
    s = os.path.join(sys.argv[1], "Samples")
    lines = open(os.path.join(s, "places.csv"), "rb").read().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    a, b = header + b"".join(rows[:12]), header + b"".join(rows[12:])
    with zipfile.ZipFile(os.path.join(s, "dump.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("dump/", b"")
        z.writestr("dump/part-b.csv", b)
        z.writestr("dump/README.txt", b"These are places.\n")
        z.writestr("dump/part-a.csv", a)
    """#

    static func count(_ ws: Workspace) throws -> Int {
        Int(try ws.python("""
            import pymongo, sys
            print(pymongo.MongoClient(sys.argv[1])[sys.argv[2]].locations.count_documents({}))
            """)) ?? -1
    }

    @Test func zipWithTwoMembersStoresThePlainPlaces() throws {
        let (_, plainWithoutSource) = try DumpVariantsCLITests.plainDocuments()
        let ws = try Workspace("zip-two-members")
        defer { ws.cleanUp() }
        _ = try PoiProcess.python(Self.makeZip, [ws.root.path])
        let r = try ws.poi(["import", "Samples/dump.zip"])
        #expect(r.status == 1, "three rows are rejected on purpose; stderr: \(r.stderr)")
        // Every field of every place but the provenance, which names the member and its line.
        #expect(try DumpVariantsCLITests.documents(ws, dropSource: true) == plainWithoutSource)
        let sources = try ws.python("""
            import pymongo, sys
            db = pymongo.MongoClient(sys.argv[1])[sys.argv[2]]
            print(sorted(set(d['source']['file'] for d in db.locations.find())))
            """)
        #expect(sources == "['dump.zip:dump/part-a.csv', 'dump.zip:dump/part-b.csv']")
        #expect(r.stderr.contains("poi: skipped Samples/dump.zip:dump/README.txt (documentation)"), "\(r.stderr)")
        // The rejects name the member and the line within it.
        let rejectLines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("reject: ") }
        #expect(rejectLines.count == 3, "\(r.stderr)")
        for line in r.stderr.split(separator: "\n") where line.contains(": record ") {
            #expect(line.hasPrefix("reject: Samples/dump.zip:dump/part-") || line.hasPrefix("image: Samples/dump.zip:dump/part-"), "\(line)")
        }
        // One rejects file per member with rejects, beside the archive, recognised as such.
        let json = try ws.json(try ws.poi(["import", "Samples/dump.zip", "--json", "--quiet"]))
        let rejectsFiles = (json["rejectsFiles"] as? [String] ?? []).map { ws.root.appendingPathComponent($0).lastPathComponent }
        #expect(!rejectsFiles.isEmpty)
        for file in rejectsFiles { #expect(file.hasPrefix("dump.part-") && file.hasSuffix(".rejects.csv"), "\(file)") }
        let skipped = json["skippedMembers"] as? [[String: String]] ?? []
        #expect(skipped == [["name": "Samples/dump.zip:dump/README.txt", "reason": "documentation"]])
        #expect(int(json, "files") == 2)
        // check and convert read it the same way.
        let check = try ws.poi(["check", "Samples/dump.zip", "--quiet"])
        #expect(check.stdout.contains("Samples/dump.zip:dump/part-a.csv: "), "\(check.stdout)")
        let plainConvert = try ws.poi(["convert", "Samples/places.csv", "-o", "plain.geojson", "--quiet", "--json"])
        let zipConvert = try ws.poi(["convert", "Samples/dump.zip", "-o", "zip.geojson", "--quiet", "--json"])
        #expect(int(try ws.json(zipConvert), "features") == int(try ws.json(plainConvert), "features"))
    }

    @Test func zipOnStandardInputIsRefusedClearly() throws {
        let ws = try Workspace("zip-stdin")
        defer { ws.cleanUp() }
        _ = try PoiProcess.python(Self.makeZip, [ws.root.path])
        let zip = try Data(contentsOf: URL(fileURLWithPath: ws.path("Samples/dump.zip")))
        let r = try ws.poi(["check", "-"], stdin: zip)
        #expect(r.status == 2)
        #expect(r.stderr.contains("standard input: is a zip archive, which is read from a file only"), "\(r.stderr)")
        #expect(r.stderr.contains("unzip -p"))
    }

    /// A member whose bytes were altered after archiving (CRC-32 mismatch, found at its end) and a
    /// member whose deflate data is broken midway: each named, the good rows before kept.
    @Test func corruptMemberNamesItAndKeepsTheRowsBefore() throws {
        let ws = try Workspace("zip-corrupt")
        defer { ws.cleanUp() }
        let out = try PoiProcess.python(#"""
            import sys, os, zipfile, zlib, struct
            root = sys.argv[1]
            rows = ["id,name,lat,lon"] + ["c%d,Place %d,%.4f,%.4f" % (i, i, (i % 170) - 85, (i % 350) - 175) for i in range(3000)]
            data = ("\n".join(rows) + "\n").encode()
            # Stored, then one digit of the last row changed in place: the CRC no longer matches.
            p = os.path.join(root, "crc.zip")
            with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z: z.writestr("crc.csv", data)
            b = bytearray(open(p, "rb").read())
            i = b.rindex(b"c2999,Place 2999")
            b[i + 1] = ord("9")   # c9999: still a valid row, other bytes
            open(p, "wb").write(b)
            # Deflated, then the second half of the compressed bytes overwritten.
            p = os.path.join(root, "broken.zip")
            with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z: z.writestr("broken.csv", data)
            b = bytearray(open(p, "rb").read())
            info = zipfile.ZipFile(p).infolist()[0]
            start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
            mid = start + info.compress_size // 2
            for k in range(mid, start + info.compress_size): b[k] = 0xFF
            open(p, "wb").write(b)
            # What zlib itself decodes of it (garbage after the damage, which may or may not
            # stop zlib): the genuine rows before the first line that is not one, and all of them.
            d = zlib.decompressobj(-15)
            got = b""
            try:
                for k in range(start, start + info.compress_size): got += d.decompress(bytes(b[k:k + 1]))
            except zlib.error:
                pass
            genuine = set(r.encode() for r in rows[1:])
            lines = got.split(b"\n")[1:-1]
            prefix = 0
            while prefix < len(lines) and lines[prefix] in genuine: prefix += 1
            print(prefix, len(set(lines) & genuine))
            """#, [ws.root.path])
        let counts = out.split(separator: " ").compactMap { Int($0) }
        let (goodBeforeBreak, genuine) = (counts.first ?? -1, counts.last ?? -1)
        #expect(goodBeforeBreak > 100 && goodBeforeBreak < 3000, "\(out)")

        let crc = try ws.poi(["import", "crc.zip", "--quiet"])
        #expect(crc.status == 2, "\(crc.stderr)")
        #expect(crc.stderr.contains("crc.zip:crc.csv: damaged zip data: CRC-32 mismatch"), "\(crc.stderr)")
        #expect(try Self.count(ws) == 3000, "every row read before the check at the member's end is stored")

        let ws2 = try Workspace("zip-broken")
        defer { ws2.cleanUp() }
        try FileManager.default.copyItem(atPath: ws.path("broken.zip"), toPath: ws2.path("broken.zip"))
        let broken = try ws2.poi(["import", "broken.zip", "--quiet"])
        #expect(broken.status == 2, "\(broken.stderr)")
        #expect(broken.stderr.contains("broken.zip:broken.csv: damaged zip data: "), "\(broken.stderr)")
        // Every row before the damage is stored; after it, only rows the garbage happens to repeat.
        let stored = try Self.count(ws2)
        #expect(stored >= goodBeforeBreak && stored <= genuine, "\(stored) stored, \(goodBeforeBreak)...\(genuine)")
    }

    /// A zip bomb, declared (the directory says 20 GB) and actual (a member of zeros at over
    /// 1000:1, or over --max-bytes): refused with a reason, the rows before it kept, quickly.
    @Test func zipBombsAreRefusedWithAReason() throws {
        let ws = try Workspace("zip-bomb")
        defer { ws.cleanUp() }
        _ = try PoiProcess.python(#"""
            import sys, os, zipfile, struct
            root = sys.argv[1]
            head = b"id,name,lat,lon\n" + b"".join(b"b%d,Place %d,1.5,2.5\n" % (i, i) for i in range(50))
            # 50 good rows, then 128 MiB of spaces, deflated 1028:1: honest (the directory says
            # so, refused unread) and lying (it says 100000 bytes: stopped once inflating shows it).
            for name in ("ratio.zip", "lying.zip"):
                with zipfile.ZipFile(os.path.join(root, name), "w", zipfile.ZIP_DEFLATED) as z:
                    with z.open("bomb.csv", "w", force_zip64=True) as f:
                        f.write(head)
                        for _ in range(128): f.write(b" " * (1 << 20))
            p = os.path.join(root, "lying.zip")
            b = bytearray(open(p, "rb").read())
            cd = b.rindex(b"PK\x01\x02")
            b[cd + 24:cd + 28] = struct.pack("<I", 100000)   # its uncompressed size
            open(p, "wb").write(b)
            # Declared: a small member whose directory entries claim 20 GB.
            p = os.path.join(root, "declared.zip")
            with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z: z.writestr("big.csv", head)
            b = bytearray(open(p, "rb").read())
            cd = b.rindex(b"PK\x01\x02")
            b[cd + 24:cd + 28] = struct.pack("<I", 0xFFFFFFF0)
            open(p, "wb").write(b)
            """#, [ws.root.path])
        let honest = try ws.poi(["check", "ratio.zip"])
        #expect(honest.status == 2, "\(honest.stderr)")
        #expect(honest.stderr.contains("ratio.zip:bomb.csv: decompression refused (a decompression bomb?): it declares 134218774 bytes from "),
                "\(honest.stderr)")
        #expect(honest.stderr.contains(", over 1000:1; refused unread"), "\(honest.stderr)")

        let started = Date()
        let ratio = try ws.poi(["import", "lying.zip", "--quiet"])
        #expect(ratio.status == 2, "\(ratio.stderr)")
        #expect(ratio.stderr.contains("lying.zip:bomb.csv: decompression refused (a decompression bomb?): it inflates to over 1000 times its compressed size"),
                "\(ratio.stderr)")
        #expect(try Self.count(ws) == 50)
        #expect(Date().timeIntervalSince(started) < 30)

        let capped = try ws.poi(["check", "lying.zip", "--max-bytes", "2M"])
        #expect(capped.status == 2)
        #expect(capped.stderr.contains("it inflates to more than 2097152 bytes, the cap on decompressed bytes"), "\(capped.stderr)")
        #expect(capped.stderr.contains("--max-bytes"), "the hint names the option")

        let declared = try ws.poi(["check", "declared.zip", "--max-bytes", "1G"])
        #expect(declared.status == 2)
        #expect(declared.stderr.contains("declared.zip:big.csv: decompression refused (a decompression bomb?): it declares 4294967280 bytes, over the cap of 1073741824 decompressed bytes; refused unread"),
                "\(declared.stderr)")
    }

    /// gzip has the same cap: a gzip bomb stops at --max-bytes with the rows before it kept.
    @Test func gzipBombStopsAtTheCap() throws {
        let ws = try Workspace("gzip-bomb")
        defer { ws.cleanUp() }
        _ = try PoiProcess.python(#"""
            import sys, os, gzip
            head = b"id,name,lat,lon\n" + b"".join(b"g%d,Place %d,1.5,2.5\n" % (i, i) for i in range(50))
            with gzip.GzipFile(os.path.join(sys.argv[1], "bomb.csv.gz"), "wb", mtime=0) as f:
                f.write(head)
                for _ in range(64): f.write(b" " * (1 << 20))
            """#, [ws.root.path])
        let r = try ws.poi(["import", "bomb.csv.gz", "--quiet", "--max-bytes", "8M"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("bomb.csv.gz: decompression refused (a decompression bomb?): it inflates to more than 8388608 bytes"),
                "\(r.stderr)")
        #expect(try Self.count(ws) == 50)
        // Under the cap it is read to its end: the 50 rows, and the blank tail, one record over the
        // record size limit, rejected.
        let under = try ws.poi(["check", "bomb.csv.gz", "--quiet", "--max-bytes", "80M"])
        #expect(under.status == 1, "\(under.stderr)")
        #expect(under.stdout == "bomb.csv.gz: 50 valid, 1 rejected\n")
    }

    /// `poi export --gzip` on standard output gunzips to the plain export.
    @Test func exportGzipOnStdoutGunzipsToThePlainExport() throws {
        let ws = try Workspace("gzip-stdout")
        defer { ws.cleanUp() }
        #expect(try ws.poi(["import", "Samples/places.csv", "--quiet"]).status == 1)
        let plain = try ws.poi(["export"])
        #expect(plain.status == 0)
        #expect(plain.stdout.count > 1000)
        let gz = try PoiProcess.execute(URL(fileURLWithPath: "/bin/sh"),
                                        ["-c", "\"$0\" export --db \"$1\" --gzip | gzip -dc", PoiProcess.binary.path, ws.database],
                                        environment: ["MONGODB_URI": ws.uri])
        #expect(gz.status == 0, "\(gz.stderr)")
        #expect(gz.stdout == plain.stdout)
    }
}
