import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// A bare `"` at a field's start in a file that does not quote (GeoNames) pairs with
/// the next bare one, and the rows between used to vanish into one field while the first row took
/// the last one's coordinates. Such records are now rejected, naming the lines; no silent merge.
@Suite(.tags(.unit)) struct JoinedLinesTests {
    static let columns = ["id", "name", "alt", "lat", "lon"]

    static func tabOptions(quoting: CSVQuoting = .doubleQuote) -> ReadOptions {
        var options = ReadOptions()
        options.delimiter = 0x09
        options.columns = columns
        options.quoting = quoting
        return options
    }

    /// The issue's minimal file: A's quote closes on C's line.
    @Test(arguments: [1, 3, 7, 1 << 16]) func theIssuesFileIsRejectedNotMerged(chunkSize: Int) throws {
        let tsv = "1\tA\t\"x\t10\t10\n2\tB\ty\t20\t20\n3\tC\t\"z\t30\t30\n4\tD\tw\t40\t40\n"
        let reader = try PlaceReader(source: ByteSource(bytes: Array(tsv.utf8), name: "q.tsv", chunkSize: chunkSize),
                                     options: Self.tabOptions())
        var places: [Place] = [], rejects: [Reject] = []
        while let item = try reader.next() {
            switch item {
            case .place(let p, _): places.append(p)
            case .reject(let r, _): rejects.append(r)
            }
        }
        #expect(places.map(\.name) == ["D"])
        #expect(places.map(\.coordinate) == [try Coordinate.validated(longitude: 40, latitude: 40)])
        #expect(rejects.map(\.source.line) == [1])
        #expect(rejects.map(\.field) == ["alt"])
        #expect(rejects.map(\.reason) == ["quoted field spans 3 lines holding 8 delimiters (lines 1–3 were read as one "
            + "record; 3 of them are records by themselves); if \" is plain text in this file, read it with --quote none"])
        // Counted once the file is read, for the summary: the rows merged are never hidden.
        #expect(reader.notes.map(\.kind) == [.quotedLines(records: 1, lines: 3, wholeRecordLines: 3)])
        #expect(reader.notes.first?.message == "1 record rejected because a quoted field spans lines: together 3 lines, "
            + "3 of them records by themselves; if \" is plain text in this file, read it with --quote none")
        // The validate-only path (`poi check`) agrees.
        _ = try readAll(tsv, name: "q.tsv", options: Self.tabOptions())
    }

    /// A short or blank line inside the span (a truncated row) does not hide the merge: the
    /// record holds a record's worth of delimiters inside its quotes (found by a new-user trial).
    @Test(arguments: ["2\tshort\n", "\n", "\r\n"]) func aShortLineInsideTheSpanStillRejects(middle: String) throws {
        let columns = ["geonameid", "name", "asciiname", "alternatenames", "latitude", "longitude", "feature_class", "feature_code", "country_code"]
        var options = Self.tabOptions()
        options.columns = columns
        let tsv = "1\t\"Big\tBig\t\t12.5\t22.5\tP\tPPL\tUS\n" + middle
            + "3\tFoo\"\tFoo\t\t13.5\t23.5\tP\tPPL\tUS\n4\tLast\tLast\t\t15.5\t25.5\tP\tPPL\tUS\n"
        let (places, rejects) = try readAll(tsv, name: "g.txt", options: options)
        #expect(places.map(\.name) == ["Last"])
        #expect(rejects.map(\.source.line) == [1])
        #expect(rejects.first?.reason.hasPrefix("quoted field spans 3 lines holding ") == true, "\(rejects)")
        // Quoting off, every line is read as the row it is.
        options.quoting = CSVQuoting.none
        let (plain, _) = try readAll(tsv, name: "g.txt", options: options)
        #expect(plain.map(\.name).filter { $0 != "short" } == ["\"Big", "Foo\"", "Last"])
    }

    /// Two bare quotes on neighbouring lines: no whole line between them, still two records.
    @Test func neighbouringQuotesAreCaught() throws {
        let (places, rejects) = try readAll("1\tA\t\"x\t10\t10\n2\tB\t\"y\t20\t20\n3\tC\tz\t30\t30\n", name: "q.tsv",
                                            options: Self.tabOptions())
        #expect(places.map(\.name) == ["C"])
        #expect(rejects.map { String($0.reason.prefix(45)) } == ["quoted field spans 2 lines holding 4 delimite"])
    }

    /// A value with real line breaks (an address, a description) is still one value, in CSV with a
    /// header line as in tab files.
    @Test func realLineBreaksInAValueStayOneValue() throws {
        let csv = "name,lat,lon,details\nA,1,2,\"first line\nsecond, with a comma\"\nB,3,4,\"a\r\nb\r\nc\"\n"
        let (places, rejects) = try readAll(csv)
        #expect(rejects.isEmpty)
        #expect(places.map(\.details) == ["first line\nsecond, with a comma", "a\r\nb\r\nc"])
        let (tabbed, tabRejects) = try readAll("1\tA\t\"one\ntwo\"\t10\t10\n2\tB\ty\t20\t20\n", name: "q.tsv",
                                               options: Self.tabOptions())
        #expect(tabRejects.isEmpty)
        #expect(tabbed.map { $0.extra["alt"] } == [.string("one\ntwo"), .string("y")])
        // Prose in the last column of a comma file: its first line is whole by its separators
        // alone, and a line of prose may hold three commas (B: every line is "whole"). Commas
        // and semicolons are what prose uses, so there quotes are taken as written.
        let prose = "name,lat,lon,details\nA,1,2,\"Open daily, 9-5, closed Mondays, bring cash\nor a card\"\n"
            + "B,3,4,\"first\nOpen daily, 9-5, closed Mondays, bring cash\"\n"
        let (described, proseRejects) = try readAll(prose)
        #expect(proseRejects.isEmpty)
        #expect(described.map(\.name) == ["A", "B"])
    }

    /// A GeoNames-shaped file of 20,000 rows whose alternate names start with a quote now and
    /// then, as the real ones do: every place read with quoting is the same row, field for field,
    /// as read with `--quote none`, and every other row is inside a rejected record that names
    /// its lines.
    @Test func aGeoNamesShapedFileIsReadRowForRowOrRejected() throws {
        var rng = SeededRandom(state: 28)
        var text = ""
        let n = 20_000
        for id in 1...n {
            let quoted = rng.next() % 40 == 0
            let alt = (quoted ? "\"" : "") + "Alt\(id),Другое \(id)" + (rng.next() % 97 == 0 ? ",\"Bo\" Hill" : "")
            let lat = Double(Int(rng.next() % 180_000)) / 1000 - 90
            let lon = Double(Int(rng.next() % 360_000)) / 1000 - 180
            text += "\(id)\tPlace \(id)\t\(alt)\t\(lat)\t\(lon)\n"
        }
        let plain = try readAll(text, name: "cities.txt", options: Self.tabOptions(quoting: .none))
        #expect(plain.places.count == n && plain.rejects.isEmpty)
        let byLine = Dictionary(uniqueKeysWithValues: plain.places.map { ($0.source.line!, $0) })

        let (places, rejects) = try readAll(text, name: "cities.txt", options: Self.tabOptions())
        #expect(!rejects.isEmpty)
        var covered = Set<Int>()
        for p in places {
            let line = try #require(p.source.line)
            let expected = try #require(byLine[line])
            #expect(p.name == expected.name && p.coordinate == expected.coordinate && p.extra == expected.extra,
                    "line \(line) differs from its --quote none read")
            covered.insert(line)
        }
        for r in rejects {
            let first = try #require(r.source.line)
            // "… (lines A–B were read …" or, for a quote never closed, to the end of the file.
            var last = n
            if let range = r.reason.range(of: "(lines ") {
                let span = r.reason[range.upperBound...].prefix { $0 != " " }.split(separator: "–")
                last = try #require(Int(span[1]))
                #expect(Int(span[0]) == first)
            } else if r.reason.hasPrefix("text follows the closing quote") {
                last = first  // `"Bo" Hill,…` on one line: its quotes would be lost
            } else {
                #expect(r.reason.hasPrefix("unterminated quoted field"))
            }
            for line in first...last { #expect(covered.insert(line).inserted, "line \(line) in two records") }
        }
        #expect(covered == Set(1...n))
        // The note's count is the rejects' own: every joined record and every line it took.
        let reader = try PlaceReader(source: ByteSource(bytes: Array(text.utf8), name: "cities.txt"), options: Self.tabOptions())
        while try reader.next() != nil {}
        let joined = rejects.filter { $0.reason.hasPrefix("quoted field spans") }
        let lines = joined.map { r in Int(r.reason.dropFirst("quoted field spans ".count).prefix { $0 != " " })! }.reduce(0, +)
        guard case .quotedLines(let records, let noted, _)? = reader.notes.last?.kind else {
            Issue.record("no quotedLines note: \(reader.notes)")
            return
        }
        #expect(records == joined.count && noted == lines && records > 0)
    }
}
