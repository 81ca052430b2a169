import Foundation
import PoiTestSupport
import Testing

/// `poi convert` of a dump damaged midway (a truncated gzip, a zip member with a bad CRC): every
/// place before the damage on standard output, nothing written over a file, exit 2.
@Suite(.tags(.process))
struct DamagedDumpConvertTests: DumpFixtures {
    static let makeTruncatedGzip = """
        import gzip, sys
        rows = b'id,name,lat,lon\\n' + b''.join(b'g%06d,Place %d,10.0,20.0\\n' % (i, i) for i in range(20000))
        g = gzip.compress(rows, mtime=0)
        open(sys.argv[1] + '/t.csv.gz', 'wb').write(g[:len(g) // 2])
        """

    /// On standard output every place read before the damage is written, in a closed
    /// collection; exit 2 and a message that says so.
    @Test func convertToStdoutOfATruncatedGzipKeepsEveryGoodRow() throws {
        let dir = try Self.scratch("trunc")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(Self.makeTruncatedGzip, [dir.path])
        let check = try PoiProcess.run(["check", "t.csv.gz", "--json"], currentDirectory: dir)
        #expect(check.status == 2)
        let valid = try #require(try Self.json(check.stdout)["valid"] as? Int)
        #expect(valid > 1000 && valid < 20000)
        let conv = try PoiProcess.run(["convert", "t.csv.gz", "-o", "-", "-q"], currentDirectory: dir)
        #expect(conv.status == 2, "stderr: \(conv.stderr)")
        let features = try #require(try Self.json(conv.stdout)["features"] as? [[String: Any]], "a closed collection")
        #expect(features.count == valid, "every row check counted valid is converted")
        // The id is the import key: the places in input order, none missing, none made up.
        let keys = features.compactMap { ($0["properties"] as? [String: Any])?["importKey"] as? String }
        let expected = (0..<valid).map { String(format: "g%06d", $0) }
        #expect(keys == expected, "\(keys.count) keys, first difference at \(Array(zip(keys, expected)).firstIndex { $0 != $1 } ?? min(keys.count, expected.count))")
        #expect(conv.stderr.contains("t.csv.gz: damaged gzip data at byte "), "\(conv.stderr)")
        #expect(conv.stderr.contains("; the \(valid) places read before it were written to standard output"), "\(conv.stderr)")
    }

    /// To a file nothing is written, and an earlier file stays as it was (a damaged download
    /// never replaces a good conversion); the message says so.
    @Test func convertToAFileOfATruncatedGzipLeavesTheFileAlone() throws {
        let dir = try Self.scratch("trunc-file")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(Self.makeTruncatedGzip, [dir.path])
        let out = dir.appendingPathComponent("t.geojson")
        let fresh = try PoiProcess.run(["convert", "t.csv.gz", "-o", "t.geojson", "-q"], currentDirectory: dir)
        #expect(fresh.status == 2)
        #expect(fresh.stderr.contains("; t.geojson was not written (left as it was)"), "\(fresh.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        try Data("earlier".utf8).write(to: out)
        let again = try PoiProcess.run(["convert", "t.csv.gz", "-o", "t.geojson", "-q"], currentDirectory: dir)
        #expect(again.status == 2)
        #expect(try Data(contentsOf: out) == Data("earlier".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["t.csv.gz", "t.geojson"],
                "no temporary file left")
    }

    /// A zip whose second member is corrupt: the first member's places and the second's before
    /// the damage all reach standard output.
    @Test func convertOfAZipWithACorruptMemberKeepsTheRowsBefore() throws {
        let dir = try Self.scratch("corrupt-member")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try PoiProcess.python(#"""
            import sys, zipfile
            p = sys.argv[1] + '/d.zip'
            rows = lambda tag, n: ('id,name,lat,lon\n' + ''.join('%s%05d,P,1.0,2.0\n' % (tag, i) for i in range(n))).encode()
            with zipfile.ZipFile(p, 'w', zipfile.ZIP_STORED) as z:
                z.writestr('a.csv', rows('a', 100))
                z.writestr('b.csv', rows('b', 5000))
            b = bytearray(open(p, 'rb').read())
            i = b.rindex(b'b04999')
            b[i + 1] = ord('9')   # the CRC of b.csv no longer matches: found at its end
            open(p, 'wb').write(b)
            """#, [dir.path])
        let conv = try PoiProcess.run(["convert", "d.zip", "-o", "-", "-q"], currentDirectory: dir)
        #expect(conv.status == 2, "\(conv.stderr)")
        #expect(conv.stderr.contains("d.zip:b.csv: damaged zip data: CRC-32 mismatch"), "\(conv.stderr)")
        let features = try #require(try Self.json(conv.stdout)["features"] as? [Any])
        #expect(features.count == 5100)
    }
}
