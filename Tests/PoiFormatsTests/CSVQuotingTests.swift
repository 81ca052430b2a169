import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// `ReadOptions.quoting = .none`: `"` is text (GeoNames and other tab-separated dumps), whatever
/// the chunk boundaries; the default still reads RFC 4180 quotes.
@Suite(.tags(.unit)) struct CSVQuotingTests {
    static let tsv = "name\tlat\tlon\tnote\n\"Quoted\" Hill\t1.0\t2.0\t\"open\nNext\t3.0\t4.0\t\"\"\n"

    @Test(arguments: [1, 2, 3, 7, 64, 1 << 16]) func quotesAreTextWithQuotingNone(chunkSize: Int) throws {
        var options = ReadOptions()
        options.quoting = CSVQuoting.none
        let reader = try PlaceReader(source: ByteSource(bytes: Array(Self.tsv.utf8), name: "g.tsv", chunkSize: chunkSize),
                                     options: options)
        var places: [Place] = []
        while let item = try reader.next() {
            guard case .place(let p, _) = item else { Issue.record("unexpected reject: \(item)"); continue }
            places.append(p)
        }
        #expect(places.map(\.name) == ["\"Quoted\" Hill", "Next"])
        #expect(places.map(\.source.line) == [2, 3])
        #expect(places.map { $0.extra["note"] } == [.string("\"open"), .string("\"\"")])
    }

    @Test func theDefaultStillQuotes() throws {
        let (places, rejects) = try readAll(Self.tsv, name: "g.tsv")
        #expect(places.isEmpty)
        #expect(rejects.map(\.source.line) == [2])
        #expect(rejects.first?.reason.hasPrefix("unterminated quoted field") == true)
    }

    /// The first record decides whether the names given fit: more fields than names stops the
    /// file before any record; fewer leave the last names empty, as for a short row.
    @Test func columnNamesMustCoverTheFirstRecord() throws {
        var options = ReadOptions()
        options.columns = ["name", "lat", "lon"]
        #expect(throws: FormatError.columnCountMismatch(file: "h.csv", line: 2, fields: 4, names: 3)) {
            _ = try readAll("\na,1,2,x\nb,3,4\n", name: "h.csv", options: options)
        }
        options.columns = ["name", "lat", "lon", "more"]
        let (places, rejects) = try readAll("a,1,2,\nb,3,4\n", name: "h.csv", options: options)
        #expect(places.map(\.name) == ["a", "b"])
        #expect(rejects.isEmpty)
    }

    @Test func unmarkedUTF16IsRecognised() {
        let little = Array("name,lat,lon\na,1,2\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(TextEncoding.unmarkedUTF16(little[...]) == false)
        #expect(TextEncoding.unmarkedUTF16(Array(little.dropFirst())[...]) == true, "one byte off reads as big-endian")
        #expect(TextEncoding.unmarkedUTF16(Array("name,lat,lon\na,1,2\n".utf8)[...]) == nil)
        #expect(TextEncoding.unmarkedUTF16(Array(little.prefix(10))[...]) == nil, "too short to tell")
        #expect(throws: FormatError.unmarkedUTF16(file: "u.csv", bigEndian: false)) {
            _ = try PlaceReader(source: ByteSource(bytes: little, name: "u.csv"))
        }
    }
}
