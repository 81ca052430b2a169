import Foundation
import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// Dumps as they arrive: gzip'd (file, stdin-like stream, several members, damaged),
/// UTF-16/UTF-32 with a BOM, Windows-1252 named by `encoding`, header-less TSV named by `columns`.
/// Each variant is made at test time from Samples/places.csv with the system's own `gzip` and
/// `iconv` (independent of the code under test) and must read exactly the plain file's places.
@Suite(.tags(.process)) struct DumpVariantsTests {
    static let plain: [UInt8] = Array(try! Data(contentsOf: URL(fileURLWithPath: repoRoot + "/Samples/places.csv")))

    /// `tool args` with `input` on stdin; its stdout (and status, for gzip's partial output).
    static func run(_ tool: String, _ args: [String], input: [UInt8]) throws -> (out: [UInt8], status: Int32) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        let inFile = NSTemporaryDirectory() + "poi-variant-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: inFile) }
        try Data(input).write(to: URL(fileURLWithPath: inFile))
        p.standardInput = FileHandle(forReadingAtPath: inFile)
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (Array(data), p.terminationStatus)
    }

    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] { try run("/usr/bin/gzip", ["-c", "-n"], input: bytes).out }
    static func iconv(_ bytes: [UInt8], to: String) throws -> [UInt8] {
        try run("/usr/bin/iconv", ["-f", "UTF-8", "-t", to], input: bytes).out
    }

    /// Every item, places and rejects, read through chunks of `chunk` bytes.
    static func items(_ bytes: [UInt8], name: String = "places.csv", options: ReadOptions = ReadOptions(),
                      chunk: Int = ByteSource.chunkSize) throws -> (places: [Place], rejects: [Reject]) {
        try drain(PlaceReader(source: ByteSource(bytes: bytes, name: name, chunkSize: chunk), options: options))
    }

    /// Every item a reader gives, places and rejects apart.
    static func drain(_ reader: PlaceReader) throws(FormatError) -> (places: [Place], rejects: [Reject]) {
        var places: [Place] = [], rejects: [Reject] = []
        while let item = try reader.next() {
            switch item {
            case .place(let p, _): places.append(p)
            case .reject(let r, _): rejects.append(r)
            }
        }
        return (places, rejects)
    }

    @Test func plainSampleHasPlaces() throws {
        // 22 records, 3 of them rejected on purpose (an empty name, latitude 95, longitude "abc").
        let plain = try Self.items(Self.plain)
        #expect(plain.places.count == 19)
        #expect(plain.rejects.count == 3)
    }

    @Test func gzipReadsThePlainPlaces() throws {
        let expected = try Self.items(Self.plain)
        let gz = try Self.gzip(Self.plain)
        #expect(Gzip.isGzip(gz[...]))
        // Whole reads, and a pipe's short reads (the compressed stream cut every 7 bytes).
        for chunk in [ByteSource.chunkSize, 7, 1] {
            let got = try Self.items(gz, chunk: chunk)
            #expect(got.places == expected.places, "chunk \(chunk)")
            #expect(got.rejects == expected.rejects, "chunk \(chunk)")
        }
        // validate-only (`poi check`) sees the same verdicts through gzip.
        _ = try readAll(bytes: gz, name: "places.csv")
    }

    @Test func gzipFileOnDiskReadsThePlainPlaces() throws {
        let path = NSTemporaryDirectory() + "poi-variant-\(UUID().uuidString).csv.gz"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(try Self.gzip(Self.plain)).write(to: URL(fileURLWithPath: path))
        let reader = try PlaceReader(path: path)
        #expect(reader.isGzip)
        var places: [Place] = []
        while let item = try reader.next() { if case .place(let p, _) = item { places.append(p) } }
        #expect(places == (try Self.items(Self.plain, name: path)).places)
        // Progress counts the file's own (compressed) bytes, ending at its size.
        #expect(reader.bytesRead == reader.totalBytes)
    }

    @Test func concatenatedGzipMembersReadAsOne() throws {
        let cut = Self.plain.count / 2
        let gz = try Self.gzip(Array(Self.plain[..<cut])) + Self.gzip(Array(Self.plain[cut...]))
        #expect(try Self.items(gz).places == Self.items(Self.plain).places)
        #expect(try Self.items(gz, chunk: 5).places == Self.items(Self.plain).places)
    }

    /// A big synthetic CSV (10k rows) so the damage lands well after the first chunk.
    static let big: [UInt8] = {
        var s = "id,name,lat,lon,note\n"
        for i in 0..<10_000 {
            s += "p\(i),Place \(i),\(Double(i % 180) - 89.5),\(Double(i % 360) - 179.5),some text to make the row longer \(i * 7919)\n"
        }
        return Array(s.utf8)
    }()

    @Test func truncatedGzipReadsEveryRowBeforeTheDamage() throws {
        let gz = try Self.gzip(Self.big)
        let truncated = Array(gz[..<(gz.count / 2)])
        // What zlib itself (through gzip) decodes of the truncated file: the rows wholly in it.
        let partial = try Self.run("/usr/bin/gzip", ["-dc"], input: truncated)
        #expect(partial.status != 0)
        let completeLines = partial.out.filter { $0 == 0x0A }.count
        let all = try Self.items(Self.big, name: "big.csv.gz").places
        for chunk in [ByteSource.chunkSize, 4096] {
            let reader = try PlaceReader(source: ByteSource(bytes: truncated, name: "big.csv.gz", chunkSize: chunk))
            var places: [Place] = []
            var failure: FormatError?
            do {
                while let item = try reader.next() { if case .place(let p, _) = item { places.append(p) } }
            } catch { failure = error }
            let error = try #require(failure, "a truncated gzip must not read as a clean end")
            guard case .damagedCompression(let file, let offset, let reason) = error else {
                Issue.record("unexpected error \(error)"); continue
            }
            #expect(file == "big.csv.gz")
            #expect(offset == truncated.count)
            #expect(reason.contains("truncated"))
            #expect(error.description.hasPrefix("big.csv.gz: damaged gzip data at byte \(truncated.count)"))
            // Every row before the damage, none lost, none made up.
            #expect(places.count == completeLines - 1, "chunk \(chunk)")
            let same = places == Array(all.prefix(places.count))
            #expect(same, "the rows read are the file's first rows")
        }
    }

    /// Damage within the bytes `PlaceReader` peeks at to tell the format (4 KiB decoded): the
    /// records before it still come out, then the error.
    @Test func gzipTruncatedWithinThePeekStillGivesTheRowsBefore() throws {
        let gz = try Self.gzip(Self.plain)
        let truncated = Array(gz[..<(gz.count * 3 / 4)])
        let partial = try Self.run("/usr/bin/gzip", ["-dc"], input: truncated).out
        #expect(partial.count < 4096 && partial.count > 1000)
        let reader = try PlaceReader(source: ByteSource(bytes: truncated, name: "p.csv.gz"))
        var items = 0
        var failure: FormatError?
        do { while try reader.next() != nil { items += 1 } } catch { failure = error }
        guard case .damagedCompression? = failure else { Issue.record("got \(String(describing: failure))"); return }
        #expect(items > 3)
    }

    @Test func corruptGzipNamesTheOffset() throws {
        var gz = try Self.gzip(Self.big)
        let at = gz.count / 3
        for i in at..<(at + 64) { gz[i] ^= 0x5A }
        let reader = try PlaceReader(source: ByteSource(bytes: gz, name: "bad.gz"))
        var places = 0
        var failure: FormatError?
        do { while let item = try reader.next() { if case .place = item { places += 1 } } } catch { failure = error }
        guard case .damagedCompression(let file, let offset, _)? = failure else {
            Issue.record("expected damagedCompression, got \(String(describing: failure))"); return
        }
        #expect(file == "bad.gz")
        #expect(offset >= at && offset <= gz.count)
        #expect(places > 0 && places < 10_000)
    }

    @Test(arguments: [("UTF-16LE", [0xFF, 0xFE] as [UInt8]), ("UTF-16BE", [0xFE, 0xFF]),
                      ("UTF-32LE", [0xFF, 0xFE, 0, 0]), ("UTF-32BE", [0, 0, 0xFE, 0xFF])])
    func byteOrderMarkIsHonouredWithoutBeingAsked(encoding: String, bom: [UInt8]) throws {
        let bytes = bom + (try Self.iconv(Self.plain, to: encoding))
        let expected = try Self.items(Self.plain)
        for chunk in [ByteSource.chunkSize, 3] {
            let got = try Self.items(bytes, chunk: chunk)
            #expect(got.places == expected.places, "\(encoding) chunk \(chunk)")
            #expect(got.rejects == expected.rejects)
        }
        let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: "u.csv"))
        #expect(reader.encoding?.iconvName == encoding)
        // The BOM is kept with the header, so a rejects file can start with it again.
        #expect(reader.csvHasBOM)
    }

    /// The sample's records that Windows-1252 can hold (it has Arabic and Japanese names too).
    static func cp1252Subset() throws -> [UInt8] {
        let reader = try PlaceReader(source: ByteSource(bytes: plain, name: "places.csv"),
                                     options: ReadOptions(keepRawRecords: true))
        var out = reader.csvRawHeader!.bytes
        let encoder = TextEncoding.Encoder(TextEncoding(name: "cp1252")!)
        while let item = try reader.next() {
            guard case .csv(let raw)? = item.raw else { continue }
            let text = String(decoding: raw.bytes, as: UTF8.self)
            if text.unicodeScalars.allSatisfy({ $0.value < 0x100 || "–œ€".unicodeScalars.contains($0) }) {
                #expect(encoder.encode(raw.bytes).count <= raw.bytes.count)
                out += raw.bytes
            }
        }
        return out
    }

    @Test func cp1252NamedByEncodingReadsTheUTF8Places() throws {
        let utf8 = try Self.cp1252Subset()
        let cp1252 = try Self.iconv(utf8, to: "CP1252")
        #expect(cp1252.contains(0xE9) && cp1252.contains(0x96), "the fixture holds é and – as cp1252 bytes")
        let expected = try Self.items(utf8)
        #expect(expected.places.count >= 15)
        var options = ReadOptions()
        options.encoding = TextEncoding(name: "cp1252")
        for chunk in [ByteSource.chunkSize, 2] {
            let got = try Self.items(cp1252, options: options, chunk: chunk)
            #expect(got.places == expected.places)
            #expect(got.rejects == expected.rejects)
        }
        // Unasked, the same bytes are not UTF-8: accented rows are refused, not misread.
        let unasked = try Self.items(cp1252)
        #expect(unasked.places.count < expected.places.count)
    }

    @Test func encodingNames() {
        for name in ["cp1252", "windows-1252", "latin1", "ISO-8859-15", "utf-16le", "UTF-32"] {
            #expect(TextEncoding.isKnown(name: name), "\(name)")
        }
        #expect(TextEncoding.isKnown(name: "utf-8"))
        #expect(TextEncoding(name: "utf-8") == nil)
        #expect(!TextEncoding.isKnown(name: "klingon-1"))
        #expect(!TextEncoding.isKnown(name: ""))
    }

    /// An undecodable byte passes through (its record is refused as not UTF-8) and goes back
    /// out unchanged: cp1252 has no 0x81.
    @Test func undecodableBytesRoundTrip() throws {
        let enc = TextEncoding(name: "cp1252")!
        let input: [UInt8] = Array("name,lat,lon\nCaf".utf8) + [0xE9, 0x81] + Array(",1,2\n".utf8)
        var options = ReadOptions(keepRawRecords: true)
        options.encoding = enc
        let reader = try PlaceReader(source: ByteSource(bytes: input, name: "x.csv"), options: options)
        let item = try #require(try reader.next())
        guard case .reject(let r, .csv(let raw)?) = item else { Issue.record("expected a reject, got \(item)"); return }
        #expect(r.reason.contains("UTF-8"))
        #expect(TextEncoding.Encoder(enc).encode(raw.bytes) == Array(input.suffix(from: 13)))
    }

    /// The sample as a header-less TSV: every field of every record, tab-separated, quoted
    /// where it holds a tab, a quote or a line break.
    static func headerlessTSV() throws -> (tsv: [UInt8], names: [String]) {
        let tokenizer = try CSVTokenizer(source: ByteSource(bytes: plain, name: "p"), delimiter: nil)
        _ = try tokenizer.nextHeader()
        let names = (0..<tokenizer.fieldCount).map { String(decoding: tokenizer.field($0), as: UTF8.self) }
        var out: [UInt8] = []
        while try tokenizer.next() {
            for i in 0..<tokenizer.fieldCount {
                if i > 0 { out.append(0x09) }
                let f = Array(tokenizer.field(i))
                if f.contains(where: { $0 == 0x09 || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) {
                    out.append(0x22)
                    for b in f { if b == 0x22 { out.append(0x22) }; out.append(b) }
                    out.append(0x22)
                } else {
                    out += f
                }
            }
            out.append(0x0A)
        }
        return (out, names)
    }

    @Test func headerlessTSVNamedByColumns() throws {
        let (tsv, names) = try Self.headerlessTSV()
        var options = ReadOptions(delimiter: 0x09)
        options.columns = names
        // The same places, one line earlier each (no header line above them).
        let plain = try Self.items(Self.plain)
        let expected = plain.places.map { p -> Place in
            var p = p
            if case .line(let l) = p.source.position { p.source.position = .line(l - 1) }
            return p
        }
        let expectedRejects = plain.rejects.map { r -> Reject in
            var r = r
            if case .line(let l) = r.source.position { r.source.position = .line(l - 1) }
            return r
        }
        for chunk in [ByteSource.chunkSize, 11] {
            let got = try Self.items(tsv, options: options, chunk: chunk)
            #expect(got.places == expected)
            #expect(got.rejects == expectedRejects)
        }
        // Detected delimiter too (tabs on the first record), and `--field` applies to the names.
        var renamed = ReadOptions(mapping: FieldMapping(overrides: [.name: "col2"]))
        renamed.columns = names.enumerated().map { $0.offset == 1 ? "col2" : $0.element }
        let got = try Self.items(tsv, options: renamed)
        #expect(got.places.map(\.name) == expected.map(\.name))
        _ = try readAll(bytes: tsv, name: "places.csv", options: options)
    }
}
