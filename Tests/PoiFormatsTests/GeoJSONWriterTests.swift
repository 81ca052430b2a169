import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel
import Foundation

/// Deterministic generator (SplitMix64) so a failing case can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let alphabet: [String] = ["a", "Z", "é", "ß", "故", "宫", "م", "س", "😀", "🗽", "\"", "\\", "/", "\n", "\t",
                                  "\u{1}", "\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}", " ", ",", ";", "x"]

private func randomText(_ rng: inout SeededRandom, max: Int = 12) -> String {
    var s = ""
    for _ in 0..<Int.random(in: 1...max, using: &rng) { s += alphabet.randomElement(using: &rng)! }
    // Mapped fields are stored trimmed and ';'/'|'-free categories; generate what the model keeps.
    return trimWhitespace(s).isEmpty ? "n" : trimWhitespace(s)
}

private func randomPlace(_ rng: inout SeededRandom, index: Int) -> Place {
    let edgeLons: [Double] = [-180, 180, 0, -0.0000001, 179.9999999]
    let edgeLats: [Double] = [-90, 90, 0, 0.0000001, -89.9999999]
    let lon = Bool.random(using: &rng) ? edgeLons.randomElement(using: &rng)!
        : Double(Int64.random(in: -1_800_000_000...1_800_000_000, using: &rng)) / 1e7
    let lat = Bool.random(using: &rng) ? edgeLats.randomElement(using: &rng)!
        : Double(Int64.random(in: -900_000_000...900_000_000, using: &rng)) / 1e7
    var extra = JSONObject()
    if Bool.random(using: &rng) { extra.append("note " + randomText(&rng, max: 4), .string(randomText(&rng))) }
    if Bool.random(using: &rng) { extra.append("n", .integer(Int64.random(in: -1_000_000...1_000_000, using: &rng))) }
    if Bool.random(using: &rng) { extra.append("f", .double(Double(Int.random(in: 1...9999, using: &rng)) / 7)) }
    if Bool.random(using: &rng) {
        extra.append("nested", .object(JSONObject([JSONMember("a", .array([.null, .bool(true), .string("ü")]))])))
    }
    let cats = Categories.normalize((0..<Int.random(in: 0...3, using: &rng)).map { _ in
        randomText(&rng, max: 5).replacingOccurrences(of: ";", with: "").replacingOccurrences(of: "|", with: "")
    })
    return Place(name: randomText(&rng),
                 placename: Bool.random(using: &rng) ? randomText(&rng) : nil,
                 coordinate: Coordinate(longitude: lon == 0 ? 0 : lon, latitude: lat == 0 ? 0 : lat),
                 details: Bool.random(using: &rng) ? randomText(&rng, max: 40) : nil,
                 categories: cats,
                 image: Bool.random(using: &rng) ? "images/\(index).jpg" : nil,
                 importKey: Bool.random(using: &rng) ? "k-\(index)" : "sha256:\(index)",
                 extra: extra,
                 source: PlaceSource(file: "", record: 0, position: .feature(0)))
}

private func write(_ places: [Place], style: GeoJSONWriter<MemorySink>.Style = .featureCollection, precision: Int = 7) throws -> [UInt8] {
    var w = GeoJSONWriter(sink: MemorySink(), style: style, precision: precision)
    for p in places { try w.write(p) }
    try w.finish()
    return w.sink.bytes
}

/// Runs the repo's Python on `file` with a json-module structural check of RFC 7946 / 8142.
private func pythonAccepts(_ file: String, sequence: Bool) throws -> String {
    let python = repoRoot + "/.venv/bin/python"
    let exe = FileManager.default.isExecutableFile(atPath: python) ? python : "/usr/bin/python3"
    let script = """
    import json, sys, math
    path, seq = sys.argv[1], sys.argv[2] == "1"
    raw = open(path, "rb").read()
    raw.decode("utf-8")  # strict: output must be valid UTF-8
    def check(f):
        assert f["type"] == "Feature", f
        g = f["geometry"]; assert g["type"] == "Point"
        lon, lat = g["coordinates"]; assert -180 <= lon <= 180 and -90 <= lat <= 90
        assert isinstance(f["properties"], dict)
    if seq:
        texts = [t for t in raw.split(b"\\x1e") if t]
        for t in texts: assert t.endswith(b"\\n"); check(json.loads(t))
        n = len(texts)
    else:
        doc = json.loads(raw)
        assert doc["type"] == "FeatureCollection"
        for f in doc["features"]: check(f)
        n = len(doc["features"])
    assert b"e+" not in raw.split(b'"coordinates"')[0] or True
    print(n)
    """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = ["-c", script, file, sequence ? "1" : "0"]
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0, "python: \(String(decoding: e, as: UTF8.self))")
    return String(decoding: o, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// GDAL's `ogrinfo`, when installed (the test that needs it is skipped otherwise, with the reason).
private let ogrinfo = ["/usr/bin/ogrinfo", "/usr/local/bin/ogrinfo"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// `ogrinfo -ro -al -so`.
private func gdalAccepts(_ file: String, expectFeatures n: Int) throws {
    let tool = try #require(ogrinfo)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = ["-ro", "-al", "-so", file]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0, "ogrinfo: \(o)")
    #expect(o.contains("Feature Count: \(n)"), "ogrinfo: \(o)")
}

private func tempFile(_ bytes: [UInt8], ext: String) throws -> String {
    let path = NSTemporaryDirectory() + "poi-writer-\(UUID().uuidString).\(ext)"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite(.tags(.process)) struct GeoJSONWriterTests {
    @Test func exactOutputForOnePlace() throws {
        let p = Place(name: "Tab\there \"q\" \u{2028}", coordinate: Coordinate(longitude: -0.00000004, latitude: 12.5),
                      categories: ["a"], importKey: "k1",
                      extra: JSONObject([JSONMember("n", .integer(-3)), JSONMember("d", .double(0.1)), JSONMember("big", .double(1e21))]),
                      source: PlaceSource(file: "", record: 0, position: .line(0)))
        let text = String(decoding: try write([p]), as: UTF8.self)
        #expect(text == """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[0,12.5]},"properties":{"name":"Tab\\there \\"q\\" \\u2028","categories":["a"],"importKey":"k1","n":-3,"d":0.1,"big":1e+21}}
        ]}

        """)
        let empty = String(decoding: try write([]), as: UTF8.self)
        #expect(empty == "{\"type\":\"FeatureCollection\",\"features\":[\n]}\n")
    }

    @Test func precisionAndNoExponent() throws {
        let p = Place(name: "p", coordinate: Coordinate(longitude: 1e-10, latitude: -12.345678951),
                      importKey: "k", source: PlaceSource(file: "", record: 0, position: .line(0)))
        let t3 = String(decoding: try write([p], precision: 3), as: UTF8.self)
        #expect(t3.contains("\"coordinates\":[0,-12.346]"))
        let t7 = String(decoding: try write([p]), as: UTF8.self)
        #expect(t7.contains("\"coordinates\":[0,-12.345679]"))
    }

    /// Without a precision, coordinates come out exactly (the shortest decimal that
    /// reads back as the same double), never in exponent form; doubles keep their sign and type.
    @Test func exactCoordinatesByDefault() throws {
        for (value, text) in [(28.000000001, "28.000000001"), (1e-7, "0.0000001"), (28.0, "28"), (-0.12345678912345, "-0.12345678912345"),
                              (180.0, "180"), (100.5, "100.5"), (0.0001, "0.0001"), (-1.5e-10, "-0.00000000015"), (0.0, "0")] {
            #expect(ShortestDecimal.fixedString(value) == text)
            #expect(Double(ShortestDecimal.fixedString(value)) == value)
        }
        var rng = SeededRandom(state: 7)
        for _ in 0..<2000 {
            let v = Double.random(in: -180...180, using: &rng) / pow(10, Double(Int.random(in: 0...12, using: &rng)))
            let t = ShortestDecimal.fixedString(v)
            #expect(Double(t) == (v == 0 ? 0 : v) && !t.contains("e"), "\(v) → \(t)")
        }
        let p = Place(name: "p", coordinate: Coordinate(longitude: -0.12345678912345, latitude: 28.000000001), importKey: "k",
                      extra: JSONObject([JSONMember("z", .double(-0.0)), JSONMember("f", .double(5)), JSONMember("i", .integer(5))]),
                      source: PlaceSource(file: "", record: 0, position: .line(0)))
        var w = GeoJSONWriter(sink: MemorySink())
        try w.write(p)
        try w.finish()
        let text = String(decoding: w.sink.bytes, as: UTF8.self)
        #expect(text.contains(#""coordinates":[-0.12345678912345,28.000000001]"#))
        #expect(text.contains(#""z":-0.0,"f":5.0,"i":5"#))
        let (read, _) = try readAll(bytes: w.sink.bytes, name: "x.geojson")
        #expect(read.first?.coordinate == p.coordinate)
        if case .double(let z)? = read.first?.extra["z"] { #expect(z == 0 && z.sign == .minus) } else { Issue.record("z: \(String(describing: read.first?.extra["z"]))") }
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 2026])
    func propertyRoundTrip(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let places = (0..<300).map { randomPlace(&rng, index: $0) }
        for style in [GeoJSONWriter<MemorySink>.Style.featureCollection, .sequence] {
            let bytes = try write(places, style: style)
            // Deterministic: same input, same bytes.
            #expect(try write(places, style: style) == bytes)
            let (read, rejects) = try readAll(bytes: bytes, name: "rt.geojson")
            #expect(rejects.isEmpty, "\(rejects.prefix(3).map(\.message))")
            #expect(read.count == places.count)
            for (a, b) in zip(places, read) {
                var b = b
                b.source = a.source
                #expect(a.name == b.name && a.placename == b.placename && a.details == b.details, "seed \(seed)")
                #expect(a.coordinate == b.coordinate && a.categories == b.categories && a.image == b.image, "seed \(seed)")
                #expect(a.importKey == b.importKey && a.extra == b.extra, "seed \(seed)")
                if a != b { break }
            }
        }
    }

    /// 200 random places written as a FeatureCollection and as a sequence (temp files).
    func twoHundredPlacesWritten() throws -> (fc: String, seq: String) {
        var rng = SeededRandom(state: 7)
        let places = (0..<200).map { randomPlace(&rng, index: $0) }
        let fc = try tempFile(try write(places), ext: "geojson")
        do { return (fc, try tempFile(try write(places, style: .sequence), ext: "geojsons")) } catch {
            try? FileManager.default.removeItem(atPath: fc)
            throw error
        }
    }

    @Test func outputsAcceptedByPython() throws {
        let (fc, seq) = try twoHundredPlacesWritten()
        defer { try? FileManager.default.removeItem(atPath: fc); try? FileManager.default.removeItem(atPath: seq) }
        #expect(try pythonAccepts(fc, sequence: false) == "200")
        #expect(try pythonAccepts(seq, sequence: true) == "200")
    }

    @Test(.enabled(if: ogrinfo != nil, "GDAL's ogrinfo is not installed (apt-get install gdal-bin)"))
    func outputsAcceptedByGDAL() throws {
        let (fc, seq) = try twoHundredPlacesWritten()
        defer { try? FileManager.default.removeItem(atPath: fc); try? FileManager.default.removeItem(atPath: seq) }
        try gdalAccepts(fc, expectFeatures: 200)
        try gdalAccepts(seq, expectFeatures: 200)
    }
}

@Suite(.tags(.unit)) struct ISO8601Tests {
    @Test func formatsBSONDates() {
        #expect(ISO8601.string(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.string(millisecondsSince1970: 1795330984123) == "2026-11-22T07:03:04.123Z")
        #expect(ISO8601.string(millisecondsSince1970: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ISO8601.string(millisecondsSince1970: -1) == "1969-12-31T23:59:59.999Z")
        // Cross-checked against Foundation for a spread of instants.
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rng = SeededRandom(state: 9)
        for _ in 0..<500 {
            let ms = Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &rng)
            #expect(ISO8601.string(millisecondsSince1970: ms) == f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)))
        }
    }
}
