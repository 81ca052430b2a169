import Foundation
import PoiTestSupport
import Testing
@testable @_spi(Fuzzing) import PoiFormats
import PoiModel

/// Zip archives: members in name order, stored and deflate, ZIP64, damage and the
/// decompression caps. Archives are made at test time by Python's `zipfile` (independent of the
/// code under test) from Samples/places.csv.
@Suite(.tags(.process)) struct ZipArchiveTests {
    /// A zip Python writes with `script` (which writes to the ZipFile `z`; `plain` holds the
    /// sample's bytes).
    static func zip(_ script: String) throws -> [UInt8] {
        let program = """
            import sys, io, zipfile
            plain = sys.stdin.buffer.read()
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                \(script.split(separator: "\n").joined(separator: "\n    "))
            sys.stdout.buffer.write(buf.getvalue())
            """
        return try DumpVariantsTests.run("/usr/bin/env", ["python3", "-c", program], input: DumpVariantsTests.plain).out
    }

    /// Every item of one member.
    static func items(_ archive: ZipArchive, _ member: ZipMember, limits: ReadLimits = ReadLimits())
        throws(FormatError) -> (places: [Place], rejects: [Reject]) {
        var options = ReadOptions()
        options.limits = limits
        return try DumpVariantsTests.drain(PlaceReader(source: archive.source(for: member, limits: limits), options: options))
    }

    /// The plain file's places as a member named `name` gives them (provenance names the member).
    static func plainPlaces(as name: String) throws -> [Place] {
        try DumpVariantsTests.items(DumpVariantsTests.plain, name: name).places
    }

    @Test func membersInNameOrderStoredAndDeflateReadThePlainPlaces() throws {
        let bytes = try Self.zip("""
            z.writestr("b/", b"")
            z.writestr(zipfile.ZipInfo("b/stored.csv"), plain)
            z.writestr("README.md", b"# dump")
            z.writestr("a/deflated.csv", plain, compress_type=zipfile.ZIP_DEFLATED)
            z.writestr("__MACOSX/a/._deflated.csv", b"junk")
            z.writestr("photo.jpg", b"\\xff\\xd8")
            """)
        #expect(ZipArchive.isZip(bytes[...]))
        let archive = try ZipArchive(bytes: bytes, name: "d.zip")
        #expect(archive.members.map(\.name) == ["README.md", "__MACOSX/a/._deflated.csv", "a/deflated.csv", "b/stored.csv", "photo.jpg"])
        #expect(archive.members.map(\.skipReason) == ["documentation", "macOS metadata", nil, nil, "not a CSV or GeoJSON file by its name"])
        for member in archive.members where member.skipReason == nil {
            let name = "d.zip:" + member.name
            // Each chunk of the member is a new read: small-chunk handling is the readers' own.
            let got = try Self.items(archive, member)
            #expect(got.places == (try Self.plainPlaces(as: name)), "\(member.name)")
            #expect(got.rejects.map(\.source.file) == Array(repeating: name, count: 3))
        }
    }

    /// Yesterday's rejects zipped with the dumps are skipped, as among several files given; a
    /// rejects file alone in an archive is read (found by a new-user trial).
    @Test func aRejectsFileAmongMembersIsSkipped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("zip-rejects-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let both = try Self.zip("z.writestr('d.csv', plain)\nz.writestr('d.rejects.csv', b'name,lat,lon,_line,_field,_reason\\nA,1,2,3,name,x\\n')")
        FileManager.default.createFile(atPath: dir + "/both.zip", contents: Data(both))
        let (inputs, skipped) = try DumpInput.expand(dir + "/both.zip")
        #expect(inputs.map(\.memberName) == ["d.csv"])
        #expect(skipped == [SkippedMember(name: dir + "/both.zip:d.rejects.csv", reason: "a PoiKit rejects file; import it on its own to retry its rows")])
        let alone = try Self.zip("z.writestr('d.rejects.csv.gz', b'')")
        FileManager.default.createFile(atPath: dir + "/alone.zip", contents: Data(alone))
        #expect(try DumpInput.expand(dir + "/alone.zip").inputs.map(\.memberName) == ["d.rejects.csv.gz"])
    }

    @Test func zip64AndBigMembersStream() throws {
        // 10k rows (≈ 1 MB, several 256 KiB chunks), written with ZIP64 records.
        let big = String(decoding: DumpVariantsTests.big, as: UTF8.self)
        let path = NSTemporaryDirectory() + "poi-zip64-\(UUID().uuidString).zip"
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try DumpVariantsTests.run("/usr/bin/env", ["python3", "-c", """
            import sys, zipfile
            data = sys.stdin.buffer.read()
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                with z.open("big.csv", "w", force_zip64=True) as f: f.write(data)
            """, path], input: Array(big.utf8))
        #expect(ZipArchive.isZip(path: path))
        let (inputs, skipped) = try DumpInput.expand(path)
        #expect(skipped.isEmpty)
        #expect(inputs.map(\.name) == [path + ":big.csv"])
        let reader = try inputs[0].reader(options: ReadOptions())
        var places: [Place] = []
        while let item = try reader.next() { if case .place(let p, _) = item { places.append(p) } }
        #expect(places == (try DumpVariantsTests.items(DumpVariantsTests.big, name: path + ":big.csv")).places)
        #expect(places.count == 10_000)
    }

    @Test func notAZipAndTruncatedArchivesSaySo() throws {
        let bytes = try Self.zip(#"z.writestr("p.csv", plain, compress_type=zipfile.ZIP_DEFLATED)"#)
        // Cut before the central directory: the archive has no directory to read.
        let cut = Array(bytes[..<(bytes.count / 2)])
        #expect(throws: FormatError.damagedArchive(file: "t.zip", reason: "no central directory at its end (not a zip archive, or a truncated one)")) {
            try ZipArchive(bytes: cut, name: "t.zip")
        }
        // A zip handed to the readers directly (standard input, a pipe) is refused, not parsed as CSV.
        #expect(throws: FormatError.zipNeedsFile(file: "-")) {
            try PlaceReader(source: ByteSource(bytes: bytes, name: "-"))
        }
    }

    @Test func capsRefuseDeclaredAndActualBombs() throws {
        let bytes = try Self.zip("""
            z.writestr("a.csv", plain + b" " * (4 << 20), compress_type=zipfile.ZIP_DEFLATED)
            """)
        let archive = try ZipArchive(bytes: bytes, name: "b.zip")
        let member = archive.members[0]
        // Declared over the cap: refused before a byte is inflated.
        var limits = ReadLimits()
        limits.maxInflatedBytes = 1 << 20
        #expect(throws: FormatError.decompressionLimit(file: "b.zip:a.csv", reason: "it declares \(member.uncompressedSize) bytes, over the cap of 1048576 decompressed bytes; refused unread")) {
            try Self.items(archive, member, limits: limits)
        }
        // Declared ratio over the cap (4 MiB of blanks deflate ≈ 1000:1; cap it at 100:1).
        limits = ReadLimits()
        limits.maxInflateRatio = 100
        do throws(FormatError) {
            _ = try Self.items(archive, member, limits: limits)
            Issue.record("no error")
        } catch {
            #expect(error.description.hasPrefix("b.zip:a.csv: decompression refused (a decompression bomb?): it declares"), "\(error)")
        }
        // Lying about its size (the directory says 1000 bytes): caught by the inflated count.
        var lying = bytes
        let cd = lastIndex(of: [0x50, 0x4B, 0x01, 0x02], in: lying)!
        withUnsafeBytes(of: UInt32(1000).littleEndian) { lying.replaceSubrange((cd + 24)..<(cd + 28), with: $0) }
        let liar = try ZipArchive(bytes: lying, name: "b.zip")
        limits = ReadLimits()
        limits.maxInflatedBytes = 2 << 20
        var places = 0
        do throws(FormatError) {
            let reader = try PlaceReader(source: liar.source(for: liar.members[0], limits: limits))
            while let item = try reader.next() { if case .place = item { places += 1 } }
            Issue.record("no error")
        } catch {
            #expect(error == .decompressionLimit(file: "b.zip:a.csv", reason: InflateCaps.overBytes(2 << 20)))
        }
        #expect(places == 19, "the rows before the cap are read")
    }

    @Test func gzipStopsAtTheCapAfterTheRowsBefore() throws {
        let gz = try DumpVariantsTests.gzip(DumpVariantsTests.big + Array(repeating: 0x20, count: 3 << 20))
        var options = ReadOptions()
        options.limits.maxInflatedBytes = 2 << 20
        let reader = try PlaceReader(source: ByteSource(bytes: gz, name: "g.csv.gz"), options: options)
        var places = 0
        do throws(FormatError) {
            while let item = try reader.next() { if case .place = item { places += 1 } }
            Issue.record("no error")
        } catch {
            #expect(error == .decompressionLimit(file: "g.csv.gz", reason: InflateCaps.overBytes(2 << 20)))
        }
        #expect(places == 10_000)
    }

    @Test func corruptMemberIsNamedAfterItsRows() throws {
        // Stored, one byte of a row changed: the rows come out, then the CRC-32 mismatch.
        var bytes = try Self.zip(#"z.writestr(zipfile.ZipInfo("s.csv"), plain)"#)
        let row = Array("Big Ben".utf8)
        if let at = firstIndex(of: row, in: bytes) { bytes[at] = UInt8(ascii: "P") }
        let archive = try ZipArchive(bytes: bytes, name: "c.zip")
        var places = 0
        do throws(FormatError) {
            let reader = try PlaceReader(source: archive.source(for: archive.members[0]))
            while let item = try reader.next() { if case .place = item { places += 1 } }
            Issue.record("no error")
        } catch {
            #expect(error == .damagedArchive(file: "c.zip:s.csv", reason: "CRC-32 mismatch (the member's bytes are not the ones archived)"))
        }
        #expect(places == 19)
    }

    /// The fuzzers' oracle reads each member of a zip input both ways (the zipped seed of
    /// `make fuzz-formats`), and a member cut short or over the cap ends with its error.
    @Test func fuzzOracleReadsEachMemberTheSameWholeAndInPieces() throws {
        let bytes = try Self.zip("""
            z.writestr("dump/README.txt", b"two parts")
            z.writestr(zipfile.ZipInfo("dump/part-a.csv"), plain[:600])
            z.writestr("dump/part-b.csv", plain, compress_type=zipfile.ZIP_DEFLATED)
            z.writestr("dump/zeros.csv", b"name,lat,lon\\n" + b" " * (3 << 20), compress_type=zipfile.ZIP_DEFLATED)
            """)
        for chunk in [1, 7, 4096] {
            let reads = ReadConsistency.read(bytes, as: .csv, chunkSize: chunk)
            #expect(reads.agree && !reads.stalled, "\(reads.difference)")
        }
        // Cut inside the last member's data, with the directory put back after it.
        let archive = try ZipArchive(bytes: bytes, name: "z.zip")
        #expect(archive.members.count == 4)
        let reads = ReadConsistency.read(Array(bytes[..<(bytes.count - 40)]), as: .geojson, chunkSize: 5)
        #expect(reads.agree)
    }

    func firstIndex(of needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }

    func lastIndex(of needle: [UInt8], in hay: [UInt8]) -> Int? {
        for i in stride(from: hay.count - needle.count, through: 0, by: -1) where hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }
}
