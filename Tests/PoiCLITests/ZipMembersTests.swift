import Foundation
import PoiTestSupport
import Testing

/// Zip archives with nothing to read, or members that cannot be read here (encrypted, bzip2): said
/// as such, exit 2, never called damaged; a skipped member is said once. No database.
@Suite(.tags(.process))
struct ZipMembersTests: DumpFixtures {
    @Test(arguments: ["empty", "readme-only"]) func zipWithoutDumpsIsUnreadable(_ kind: String) throws {
        let dir = try Self.scratch(kind)
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("""
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w') as z:
                if sys.argv[2] == 'readme-only':
                    z.writestr('dump/README.txt', 'read me')
            """, [dir.path, kind])
        let why = kind == "empty" ? "it is empty" : "only dump/README.txt (documentation)"
        let message = "d.zip: no CSV or GeoJSON member in this zip archive (\(why))"
        let check = try PoiProcess.run(["check", "d.zip"], currentDirectory: dir)
        #expect(check.status == 2)
        #expect(check.stderr.contains(message), "\(check.stderr)")
        let json = try PoiProcess.run(["check", "d.zip", "--json"], currentDirectory: dir)
        #expect(json.status == 2)
        #expect(try Self.json(json.stdout)["unreadable"] as? Int == 1, "\(json.stdout)")
        let convert = try PoiProcess.run(["convert", "d.zip", "-o", "out.geojson"], currentDirectory: dir)
        #expect(convert.status == 2)
        #expect(convert.stderr.contains(message), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.geojson").path))
    }

    /// A skipped member is said once, prefixed once (convert said `poi: poi: skipped`).
    @Test func convertSaysASkippedMemberOnce() throws {
        let dir = try Self.scratch("convert-skipped")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("""
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w') as z:
                z.writestr('README.txt', 'read me')
                z.writestr('p.csv', 'name,lat,lon\\na,1,2\\n')
            """, [dir.path])
        let r = try PoiProcess.run(["convert", "d.zip", "-o", "out.geojson"], currentDirectory: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "poi: skipped d.zip:README.txt (documentation)\npoi: 1 places written to out.geojson, 0 rejected\n")
    }

    /// The import refuses it before it connects or writes anything (so no server is needed to
    /// see it: the URI points at a closed port).
    @Test func importOfAZipWithoutDumpsIsUnreadable() throws {
        let dir = try Self.scratch("import-empty-zip")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python("import zipfile, sys; zipfile.ZipFile(sys.argv[1] + '/d.zip', 'w').close()", [dir.path])
        let r = try PoiProcess.run(["import", "d.zip", "--uri", "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300",
                                    "--uploads", dir.appendingPathComponent("uploads").path], currentDirectory: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("d.zip: no CSV or GeoJSON member in this zip archive (it is empty)"), "\(r.stderr)")
    }

    @Test(arguments: ["encrypted", "bzip2"]) func unreadableMemberIsNotCalledDamaged(_ kind: String) throws {
        let dir = try Self.scratch(kind)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Python's zipfile writes bzip2 members; an encrypted one is a stored member with the
        // encryption flag set in both headers (its bytes are never looked at).
        _ = try PoiProcess.python(#"""
            import sys, zipfile, struct
            p = sys.argv[1] + '/d.zip'
            method = zipfile.ZIP_BZIP2 if sys.argv[2] == 'bzip2' else zipfile.ZIP_STORED
            with zipfile.ZipFile(p, 'w', method) as z: z.writestr('p.csv', 'name,lat,lon\na,1,2\n')
            if sys.argv[2] == 'encrypted':
                b = bytearray(open(p, 'rb').read())
                for sig, at in ((b'PK\x03\x04', 6), (b'PK\x01\x02', 8)):
                    i = b.index(sig) + at
                    b[i] |= 1
                open(p, 'wb').write(b)
            """#, [dir.path, kind])
        let r = try PoiProcess.run(["check", "d.zip"], currentDirectory: dir)
        #expect(r.status == 2)
        let what = kind == "bzip2" ? "the member is compressed with method 12 (bzip2); only stored and deflate members are read"
            : "the member is encrypted (password-protected)"
        #expect(r.stderr.contains("d.zip:p.csv: not read: \(what). Unzip it"), "\(r.stderr)")
        #expect(!r.stderr.contains("damaged"))
    }
}
