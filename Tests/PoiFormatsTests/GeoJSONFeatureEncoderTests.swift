import Foundation
import PoiModel
import PoiTestSupport
import Testing
@testable import PoiFormats

/// `GeoJSONFeatureEncoder.append(_ place:)` writes what `GeoJSONFeature(place:)` writes without
/// building it; the string escaper skips eight plain bytes at a time; coordinates without an
/// exponent are copied as Swift prints them. Each is held here against the slow, plain form.
@Suite(.tags(.unit)) struct GeoJSONFeatureEncoderTests {
    /// Keys that collide with fields, PoiKit's own properties, " (extra)" names and each other.
    private static let extraKeys = ["note", "name", "title", "imageId", "foo", "foo (extra)", "lat", "_reason", "x",
                                    "weird\u{2028}key", "id", "n", "caf\u{E9}", "cafe\u{301}"]
    private static let texts = ["plain", "a\"b", "back\\slash", "tab\there", "nl\nline", "ctl\u{1}x", "ls\u{2028}ps\u{2029}",
                                "Café 🗽 故宫", "", "twelve chars", "exactly8", "sixteen bytes ok",
                                "€ sign (E2 82 AC)", String(repeating: "long text ", count: 9) + "\"end\""]

    private static func place(_ rng: inout SeededRandom, _ i: Int, extras: ClosedRange<Int> = 0...5) -> Place {
        func text() -> String { texts.randomElement(using: &rng)! }
        var extra = JSONObject()
        for _ in 0..<Int.random(in: extras, using: &rng) {
            let value: JSONValue = switch Int.random(in: 0...5, using: &rng) {
            case 0: .string(text())
            case 1: .integer(Int64.random(in: -5...5_000_000, using: &rng))
            case 2: .double([1.0, -0.0, 2.5e-8, 1e300, 0.1][Int.random(in: 0...4, using: &rng)])
            case 3: .null
            case 4: .array([.bool(true), .string(text())])
            default: .object(JSONObject([JSONMember(text(), .string(text()))]))
            }
            // Repeats on purpose; many columns when there are many extras.
            let key = extras.upperBound > 5 && Bool.random(using: &rng) ? "c\(Int.random(in: 0..<40, using: &rng))"
                : extraKeys.randomElement(using: &rng)!
            extra.append(key, value)
        }
        var own = JSONObject()
        if i % 5 == 0 { own.append("imageId", .string("5f5f")); own.append("created_at", .string("2024-01-01")) }
        if i % 11 == 0 { own.append("name", .string("an own property named like a field")) }
        let lons: [Double] = [-178.0, 28.0, 0.0000001, 1e-5, -0.0, 179.9999999, 12.000000001, 100]
        return Place(name: text(), placename: Bool.random(using: &rng) ? text() : nil,
                     coordinate: Coordinate(longitude: lons.randomElement(using: &rng)!,
                                            latitude: Double(Int.random(in: -899_999...899_999, using: &rng)) / 1e4),
                     details: Bool.random(using: &rng) ? text() : nil,
                     categories: (0..<Int.random(in: 0...3, using: &rng)).map { _ in text() },
                     image: Bool.random(using: &rng) ? "img/\(i).jpg" : nil, importKey: "k\(i)", extra: extra,
                     source: PlaceSource(file: "f", record: i, position: .line(i)),
                     altitude: i % 3 == 0 ? [12.5, 0, -3, 1e-9][i % 4] : nil, poiKitProperties: own,
                     id: [nil, .integer(Int64(i)), .string("s\(i)"), .double(1.5)][i % 4])
    }

    @Test(arguments: [nil, 0, 6] as [Int?])
    func aPlaceIsWrittenAsTheFeatureMadeOfIt(precision: Int?) {
        var rng = SeededRandom(state: 26)
        var encoder = GeoJSONFeatureEncoder(precision: precision)
        for i in 0..<3000 {
            let p = Self.place(&rng, i)
            var direct: [UInt8] = [], viaFeature: [UInt8] = []
            encoder.append(p, to: &direct)
            encoder.append(GeoJSONFeature(place: p), to: &viaFeature)
            #expect(direct == viaFeature, "place \(i): \(String(decoding: direct, as: UTF8.self))")
            if direct != viaFeature { return }
        }
    }

    /// Past 16 property names, whether a name was written is looked up in a set, not the array
    /// (a 600-column CSV was quadratic): the same names, suffixes and order as the feature made
    /// of the place, canonically equivalent keys ("café" composed and decomposed) included.
    @Test func aPlaceWithManyPropertiesIsWrittenAsTheFeatureMadeOfIt() {
        var rng = SeededRandom(state: 2611)
        var encoder = GeoJSONFeatureEncoder(precision: nil)
        for i in 0..<600 {
            let p = Self.place(&rng, i, extras: 10...60)
            var direct: [UInt8] = [], viaFeature: [UInt8] = []
            encoder.append(p, to: &direct)
            encoder.append(GeoJSONFeature(place: p), to: &viaFeature)
            #expect(direct == viaFeature, "place \(i): \(String(decoding: direct, as: UTF8.self))")
            if direct != viaFeature { return }
        }
    }

    /// An extra's name is written with its own bytes: "café" composed (NFC) and decomposed (NFD)
    /// are equal as Swift strings, and the per-column name cache gave the second record the
    /// first one's bytes.
    @Test func anExtraNameKeepsItsOwnUnicodeForm() {
        var encoder = GeoJSONFeatureEncoder(precision: nil)
        var out: [UInt8] = []
        for (i, key) in ["caf\u{E9}", "cafe\u{301}", "caf\u{E9}", "name", "n\u{E2}me"].enumerated() {
            let place = Place(name: "P", coordinate: Coordinate(longitude: 1, latitude: 2), importKey: "k\(i)",
                              extra: JSONObject([JSONMember(key, .integer(Int64(i)))]),
                              source: PlaceSource(file: "f", record: i, position: .line(i)))
            out.removeAll()
            encoder.append(place, to: &out)
            let name = PoiKitProperties.propertyName(forExtra: key)
            let expected = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"P","importKey":"k"#
                + "\(i)\",\"\(name)\":\(i)}}"
            #expect(out == Array(expected.utf8), "\(key.unicodeScalars.map(\.value)): \(String(decoding: out, as: UTF8.self))")
        }
    }

    /// Every special byte at every offset of strings up to 40 bytes, against a byte-at-a-time
    /// escaper written from RFC 8259 §7 (plus U+2028/U+2029).
    @Test func stringsEscapeAsByteByByte() {
        func reference(_ s: String) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += Array(#"\""#.utf8)
                case "\\": out += Array(#"\\"#.utf8)
                case "\n": out += Array(#"\n"#.utf8)
                case "\r": out += Array(#"\r"#.utf8)
                case "\t": out += Array(#"\t"#.utf8)
                case "\u{8}": out += Array(#"\b"#.utf8)
                case "\u{C}": out += Array(#"\f"#.utf8)
                case "\u{2028}": out += Array(#"\u2028"#.utf8)
                case "\u{2029}": out += Array(#"\u2029"#.utf8)
                default:
                    if scalar.value < 0x20 {
                        out += Array(String(format: "\\u%04x", scalar.value).utf8)
                    } else {
                        out += Array(String(scalar).utf8)
                    }
                }
            }
            return out + [0x22]
        }
        let specials = ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{2028}", "\u{2029}", "€", "\u{E000}", "é", "\u{7F}"]
        var checked = 0
        for length in 0...40 {
            for special in specials {
                for offset in 0...length {
                    let s = String(repeating: "a", count: offset) + special + String(repeating: "b", count: length - offset)
                    var out: [UInt8] = []
                    JSONEncoding.appendString(s, to: &out)
                    #expect(out == reference(s), "\(s.debugDescription)")
                    checked += 1
                }
            }
        }
        #expect(checked == 9471)
    }

    /// The shortest round-trip digits, no exponent: every value reads back as itself; the
    /// fast path (Swift's own text) and the placed digits agree where both apply.
    @Test func coordinatesReadBackExactly() {
        #expect(ShortestDecimal.fixedString(28.0) == "28")
        #expect(ShortestDecimal.fixedString(-178.0) == "-178")
        #expect(ShortestDecimal.fixedString(0.5) == "0.5")
        #expect(ShortestDecimal.fixedString(1e-7) == "0.0000001")
        #expect(ShortestDecimal.fixedString(-1e-5) == "-0.00001")
        #expect(ShortestDecimal.fixedString(0.0001) == "0.0001")
        #expect(ShortestDecimal.fixedString(12.000000001) == "12.000000001")
        #expect(ShortestDecimal.fixedString(1e16) == "10000000000000000")
        #expect(ShortestDecimal.fixedString(123456789012345.0) == "123456789012345")
        #expect(ShortestDecimal.fixedString(-0.0) == "0")
        var rng = SeededRandom(state: 7)
        for _ in 0..<200_000 {
            let magnitude = Double.random(in: -12...4, using: &rng)
            let v = (Bool.random(using: &rng) ? -1 : 1) * Double.random(in: 1...10, using: &rng) * pow(10, magnitude.rounded())
            let text = ShortestDecimal.fixedString(v)
            #expect(Double(text) == v && !text.contains("e") && !text.hasSuffix(".0"), "\(v) -> \(text)")
            if Double(text) != v { return }
        }
    }
}
