import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// `poi check` validates without building places (`PlaceReader.validateRemaining`). Its byte-level
/// fast path may only say "valid" when the full read builds a place; everything else is decided
/// by the full validator. `readAll` (Support.swift) compares both paths in every reader test;
/// these tests aim at the cases where the fast path must hand over.
@Suite(.tags(.unit)) struct ValidateOnlyTests {
    /// What `String(validating:)` plus the readers' NUL rule accept.
    static func reference(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
    }

    static func scan(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { UTF8Scan.isValidWithoutNUL($0) }
    }

    @Test func utf8ScanEdgeCases() {
        let cases: [([UInt8], Bool)] = [
            ([], true),
            (Array("plain ascii, longer than eight bytes".utf8), true),
            (Array("Église 故宫 المسجد 🗽".utf8), true),
            ([0x41, 0x00, 0x42], false),                          // NUL
            (Array("abcdefgh".utf8) + [0] + Array("ijklmnop".utf8), false),  // NUL inside a word
            ([0xC0, 0x80], false), ([0xC1, 0xBF], false),        // overlong 2-byte
            ([0xC2, 0x80], true), ([0xDF, 0xBF], true),
            ([0xE0, 0x9F, 0xBF], false), ([0xE0, 0xA0, 0x80], true),  // overlong 3-byte edge
            ([0xED, 0x9F, 0xBF], true), ([0xED, 0xA0, 0x80], false),  // surrogates
            ([0xF0, 0x8F, 0xBF, 0xBF], false), ([0xF0, 0x90, 0x80, 0x80], true),
            ([0xF4, 0x8F, 0xBF, 0xBF], true), ([0xF4, 0x90, 0x80, 0x80], false),  // > U+10FFFF
            ([0xF5, 0x80, 0x80, 0x80], false), ([0xFF], false), ([0x80], false),
            ([0xE2, 0x82], false), (Array("abcdefg".utf8) + [0xF0, 0x9F, 0x97], false),  // truncated
            ([0xE2, 0x28, 0xA1], false),                          // bad continuation
        ]
        for (bytes, expected) in cases {
            #expect(Self.reference(bytes) == expected, "reference \(bytes)")
            #expect(Self.scan(bytes) == expected, "scan \(bytes)")
        }
    }

    @Test func utf8ScanAgreesWithTheStandardLibraryOnRandomBytes() {
        var rng = SeededRandom(state: 20261122)
        // Mostly valid text with damage, so both the ASCII words and every branch are reached.
        let pieces: [[UInt8]] = [Array("abcdefgh".utf8), Array("é".utf8), Array("故".utf8), Array("🗽".utf8),
                                 [0x00], [0x80], [0xC0], [0xED, 0xA0], [0xF4, 0x90], [0xE0], [0xFF], [0x20]]
        var disagreements: [[UInt8]] = []
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 12) {
                if rng.next() % 4 == 0 {
                    bytes.append(UInt8(truncatingIfNeeded: rng.next()))
                } else {
                    bytes += pieces[Int(rng.next() % UInt64(pieces.count))]
                }
            }
            if Self.scan(bytes) != Self.reference(bytes) { disagreements.append(bytes) }
        }
        #expect(disagreements.isEmpty, "first: \(disagreements.first ?? [])")
    }

    /// The full read makes a field's String with `String._tryFromUTF8` (after refusing NUL),
    /// the fast path checks with `UTF8Scan`: both must accept exactly the same bytes, or check
    /// and import would disagree. Every sequence of up to three bytes, a 4-byte sweep, and the
    /// edge cases above.
    @Test func theFullReadsDecoderAcceptsWhatUTF8ScanAccepts() {
        func decoder(_ bytes: [UInt8]) -> Bool {
            !bytes.contains(0) && bytes.withUnsafeBufferPointer { String._tryFromUTF8($0) } != nil
        }
        var disagreements: [[UInt8]] = []
        var checked = 0
        var bytes: [UInt8] = [0, 0, 0]
        for a in 0...255 {
            for b in 0...255 {
                let two = [UInt8(a), UInt8(b)]
                if decoder(two) != Self.scan(two) { disagreements.append(two) }
                // Three bytes: only leads that start a multi-byte character need the third.
                guard a >= 0xE0 else { continue }
                bytes[0] = UInt8(a); bytes[1] = UInt8(b)
                for c in 0...255 {
                    bytes[2] = UInt8(c)
                    if decoder(bytes) != Self.scan(bytes) { disagreements.append(bytes) }
                    checked += 1
                }
            }
        }
        for lead: UInt8 in 0xF0...0xFF {
            for b in stride(from: 0, through: 255, by: 7) {
                for c: UInt8 in [0x7F, 0x80, 0xBF, 0xC0] {
                    let four = [lead, UInt8(b), c, 0x80]
                    if decoder(four) != Self.scan(four) { disagreements.append(four) }
                }
            }
        }
        #expect(checked == 32 * 256 * 256)
        #expect(disagreements.isEmpty, "first: \(disagreements.prefix(5))")
    }

    @Test func recordsTheFastPathHandsOver() throws {
        var bytes = Array("name,lat,lon,x,y\n".utf8)
        bytes += Array("plain,1,2,a,b\n".utf8)                       // fast: valid
        bytes += Array("\u{3000},1,2,a,b\n".utf8)                    // ideographic space only: empty name
        bytes += Array("  é ,1,2,a,b\n".utf8)                       // no visible ASCII, still a name
        bytes += Array("nbsp,\u{A0}45\u{A0},2,a,b\n".utf8)         // NBSP is trimmed: valid
        bytes += Array("fullwidth,４５,2,a,b\n".utf8)                // not ASCII digits
        bytes += Array("A,1,2,".utf8) + [0xC3] + Array(",".utf8) + [0xA9] + Array("\n".utf8)  // é split over two fields
        bytes += Array("trailing,1,2,a,b,,\n".utf8)                  // stray empty fields: valid
        bytes += Array("tabs,\t1\t, 2 ,a,b\n".utf8)                  // ASCII whitespace trimmed: valid
        bytes += Array("range,1,180.0000001,a,b\n".utf8)
        bytes += Array("exp,1e1,2,a,b\n".utf8)                       // exponent: valid
        bytes += Array("comma,\"1,5\",2,a,b\n".utf8)                 // decimal comma: valid
        bytes += Array("\"\",1,2,a,b\n".utf8)                         // quoted empty name
        let (places, rejects) = try readAll(bytes: bytes)
        #expect(places.map(\.name) == ["plain", "é", "nbsp", "trailing", "tabs", "exp", "comma"])
        #expect(places.map(\.coordinate.latitude) == [1, 1, 45, 1, 1, 10, 1.5])
        #expect(rejects.map(\.reason) == ["name is empty", "latitude \"４５\" is not a number", "not valid UTF-8",
                                          "longitude 180.0000001 out of range [-180, 180]", "name is empty"])
        #expect(rejects.map(\.field) == ["name", "latitude", "x", "longitude", "name"])
        #expect(rejects.map { $0.source.line! } == [3, 6, 7, 10, 13])
    }

    @Test func countsAndRejectsOfTheSamplesMatchTheFullRead() throws {
        for file in ["places.csv", "landmarks.geojson"] {
            let path = repoRoot + "/Samples/" + file
            var fullValid = 0, fullRejects: [Reject] = []
            let reader = try PlaceReader(path: path)
            while let item = try reader.next() {
                if let r = item.reject { fullRejects.append(r) } else { fullValid += 1 }
            }
            var valid = 0, rejects: [Reject] = []
            try PlaceReader(path: path).validateRemaining(valid: &valid) { r, _ in rejects.append(r) }
            #expect(valid == fullValid, "\(file)")
            #expect(rejects == fullRejects, "\(file)")
            #expect(valid > 0 && !rejects.isEmpty, "\(file): the sample has both kinds")
        }
    }

    @Test func recordsReadBeforeAReadErrorStillCount() throws {
        // /proc/self/mem fails to read at offset 0 (EIO): a disk error right after 20000 rows.
        var csv = "name,lat,lon\n"
        for i in 0..<20_000 { csv += "n\(i),1.25,2.5\n" }
        func source() throws -> ByteSource {
            ByteSource(prefix: Array(csv.utf8), then: try ByteSource(path: "/proc/self/mem"))
        }
        var valid = 0
        #expect(throws: FormatError.self) {
            try CSVPlaceReader(source: try source(), parallelism: 2).validateRemaining(valid: &valid) { _, _ in }
        }
        #expect(valid == 20_000)
        let reader = try CSVPlaceReader(source: try source(), parallelism: 2)
        var places = 0
        #expect(throws: FormatError.self) {
            while let item = try reader.next() { if item.place != nil { places += 1 } }
        }
        #expect(places == 20_000)
    }

    @Test func manyBatchesOnSeveralCoresKeepInputOrder() throws {
        // Over several batches of 2048 records, with a reject every 1000 records.
        var csv = "name,lat,lon\n"
        for i in 0..<20_000 { csv += i % 1000 == 7 ? "bad \(i),95,1\n" : "n\(i),1.25,2.5\n" }
        let reader = try CSVPlaceReader(source: ByteSource(bytes: Array(csv.utf8), name: "t.csv"), parallelism: 4)
        var valid = 0, lines: [Int] = []
        try reader.validateRemaining(valid: &valid) { r, _ in lines.append(r.source.line!) }
        #expect(valid == 19_980)
        #expect(lines == (0..<20).map { $0 * 1000 + 7 + 2 })
    }

    /// `poi check`'s second pass asks for the places of some keys only: it gets exactly the places
    /// `next()` builds for those keys, in input order, whether the fast path or the full validator
    /// vouched for the record (a quoted name, a name with no ASCII letter, keys by id and derived).
    @Test func placesWithKeysAreExactlyThoseOfTheFullRead() throws {
        var csv = "id,name,lat,lon,address\n"
        for i in 0..<3_000 {
            let id = i % 3 == 0 ? "" : "p\(i % 700)"
            let name = i % 5 == 0 ? "\"Quoted, \(i % 40)\"" : (i % 7 == 0 ? "故宫 \(i % 40)" : "Place \(i % 40)")
            csv += "\(id),\(name),\(Double(i % 40) / 8),\(Double(i % 40) / 4),\(i) Main Street\n"
        }
        let bytes = Array(csv.utf8)
        let all = try readAll(bytes: bytes, name: "k.csv").places
        let keys = all.map { ImportKey.fingerprint($0.importKey) }
        // Every third distinct key: some by id, some derived from name and coordinates.
        let wanted = Set(Set(keys).sorted().enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        let expected = all.filter { wanted.contains(ImportKey.fingerprint($0.importKey)) }
        try #require(expected.count > 100 && expected.count < all.count / 2)
        #expect(expected.contains { $0.keySource == .derived } && expected.contains { $0.keySource == .id })

        let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: "k.csv", chunkSize: 4096))
        var valid = 0, places: [Place] = []
        try reader.validateRemaining(valid: &valid, onReject: { _, _ in }, placesWithKeys: wanted) { places.append($0) }
        #expect(valid == all.count)
        #expect(places == expected)
    }
}
