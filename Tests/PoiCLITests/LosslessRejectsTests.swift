import Foundation
import PoiTestSupport
import Testing

/// The rejects file gives back every rejected record exactly as it was written — whether the
/// reader refused it or it was refused later (here by `--require-images`, its image missing) —
/// so fixing the file and importing it again loses nothing.
@Suite(.tags(.live, .process), .serialized, .liveServer)
struct LosslessRejectsTests {
    @Test func csvRowsComeBackByteForByte() throws {
        let ws = try #require(try Workspace("lossless-csv"))
        defer { ws.cleanUp() }
        // BOM, CRLF line ends, a header name quoted that need not be and one holding `;`.
        let header = "\u{FEFF}id,\"name\",lat,lon,tags,photo,note,\"hours; local\""
        let rows = [
            // Numbers as written: a trailing zero is not a different number, but it is what the user wrote.
            "r1,Trailing zero,51.50,-0.1250,museum,missing/1.jpg,plain,9-5",
            // Categories split on `|` must not come back joined by `;`.
            "r2,Pipes,48.1,11.5,a|b,missing/2.jpg,,",
            // A decimal comma, quoted because the delimiter is a comma.
            "r3,Decimal comma,\"48,85\",\"2,35\",cafe,missing/3.jpg,x,y",
            // Extra columns holding quotes, delimiters and non-ASCII text.
            "r4,Extras,1.5,2.5,,missing/4.jpg,\"say \"\"hi\"\", then, go\",\"Zürich ✓ 🗽\"",
            // Quotes that need not be there, and an empty quoted field.
            "r5,\"Needless quotes\",10,20,\"art\",missing/5.jpg,\"n\",\"\"",
            // Refused by the reader itself (latitude not a number).
            "r6,Bad lat,abc,2,,missing/6.jpg,\"kept \"\"as\"\" is\",z",
            // Line breaks inside quotes (the record spans lines 8 to 10).
            "r7,\"Two\r\nlines\",3,4,,missing/7.jpg,\"a\nb\",",
        ]
        // The last line has no line end.
        let last = "r8,Last,5,6,,missing/8.jpg,end,z"
        let input = header + "\r\n" + rows.map { $0 + "\r\n" }.joined() + last
        try Data(input.utf8).write(to: URL(fileURLWithPath: ws.path("lossless.csv")))

        let r = try ws.poi(["import", "lossless.csv", "--require-images", "--json", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let summary = try ws.json(r)
        #expect(int(summary, "rejected") == 8)
        #expect(int(summary, "inserted") == 0)

        // The reader's reject comes out as it is read; the image rejects when their window is
        // written. Each row is its input bytes, then `,_line,_field,_reason`, then its own line
        // end (the header's for the last line, which had none).
        let expected = header + ",_line,_field,_reason\r\n"
            + rows[5] + ",7,latitude,\"latitude \"\"abc\"\" is not a number\"\r\n"
            + rows[0] + ",2,image,no such file\r\n"
            + rows[1] + ",3,image,no such file\r\n"
            + rows[2] + ",4,image,no such file\r\n"
            + rows[3] + ",5,image,no such file\r\n"
            + rows[4] + ",6,image,no such file\r\n"
            + rows[6] + ",8,image,no such file\r\n"
            + last + ",11,image,no such file\r\n"
        try expectSameBytes(ws.path("lossless.rejects.csv"), Array(expected.utf8))
    }

    @Test func geojsonFeaturesComeBackAsWritten() throws {
        let ws = try #require(try Workspace("lossless-geojson"))
        defer { ws.cleanUp() }
        // Unusual key order and whitespace, `51.50` and `-0.0`, nested properties.
        let g1 = """
        { "properties" : { "name":"Zero", "photo": "missing/z.jpg", "nested": {"b": [1, 2.50, {"c": null}], "a": "x"}, "n": 51.50 },
            "geometry": {"coordinates": [ -0.0, 51.50 ], "type": "Point"},
            "type": "Feature", "id": "g1" }
        """
        // Refused by the reader (no name): an empty properties object, and none at all.
        let g2 = #"{"type":"Feature","id":"g2","geometry":{"type":"Point","coordinates":[1e1,2.0E0]},"properties":{}}"#
        let g3 = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,4]}}"#
        let input = "{\"type\": \"FeatureCollection\",\n \"features\": [\n  " + g1 + ",\n  " + g2 + " ,\n" + g3 + "\n]}\n"
        try Data(input.utf8).write(to: URL(fileURLWithPath: ws.path("lossless.geojson")))

        let r = try ws.poi(["import", "lossless.geojson", "--require-images", "--json", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(int(try ws.json(r), "rejected") == 3)

        // Each feature's bytes as written, with `_feature`, `_field`, `_reason` spliced into its
        // properties after the last member (or a properties member added after the last member).
        let reasons = { (i: Int, field: String, reason: String) in #""_feature":\#(i),"_field":"\#(field)","_reason":"\#(reason)""# }
        let g1Out = g1.replacingOccurrences(of: #""n": 51.50 }"#, with: #""n": 51.50,"# + reasons(0, "image", "no such file") + " }")
        let g2Out = g2.replacingOccurrences(of: #""properties":{}"#, with: #""properties":{"# + reasons(1, "name", "name is missing") + "}")
        let g3Out = String(g3.dropLast()) + #","properties":{"# + reasons(2, "name", "name is missing") + "}}"
        let expected = #"{"type":"FeatureCollection","features":["# + "\n" + g2Out + ",\n" + g3Out + ",\n" + g1Out + "\n]}\n"
        try expectSameBytes(ws.path("lossless.rejects.geojson"), Array(expected.utf8))
    }

    @Test func geojsonSequenceFeaturesComeBackAsWritten() throws {
        let ws = try #require(try Workspace("lossless-seq"))
        defer { ws.cleanUp() }
        // RFC 8142: each feature is a top-level text of its own, read member by member.
        let f = #"{"id": 7, "type":"Feature","properties":{"photo":"missing/s.jpg","name":"Seq","tags":"a|b"},"geometry":{"type":"Point","coordinates":[2.50,-0.0]}}"#
        let input = "\u{1E}" + f + "\n\u{1E}" + #"{"type":"Feature","properties":{"name":"ok"},"geometry":{"type":"Point","coordinates":[1,2]}}"# + "\n"
        try Data(input.utf8).write(to: URL(fileURLWithPath: ws.path("seq.geojson")))
        let r = try ws.poi(["import", "seq.geojson", "--require-images", "--json", "--quiet"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let expected = #"{"type":"FeatureCollection","features":["# + "\n"
            + f.replacingOccurrences(of: #""tags":"a|b"}"#, with: #""tags":"a|b","_feature":0,"_field":"image","_reason":"no such file"}"#)
            + "\n]}\n"
        try expectSameBytes(ws.path("seq.rejects.geojson"), Array(expected.utf8))
    }

    /// Compares a file with the expected bytes, naming the first line that differs.
    private func expectSameBytes(_ path: String, _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let got = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) }, "no file at \(path)")
        if got == expected { return }
        let gotLines = got.split(separator: 0x0A, omittingEmptySubsequences: false)
        let wantLines = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        let k = (0..<min(gotLines.count, wantLines.count)).first { gotLines[$0] != wantLines[$0] } ?? min(gotLines.count, wantLines.count)
        func show(_ lines: [ArraySlice<UInt8>], _ i: Int) -> String {
            i < lines.count ? String(decoding: lines[i], as: UTF8.self).debugDescription : "(end)"
        }
        Issue.record("\(path) differs at line \(k + 1):\n  got:      \(show(gotLines, k))\n  expected: \(show(wantLines, k))",
                     sourceLocation: sourceLocation)
    }
}
