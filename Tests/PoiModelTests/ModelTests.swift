import PoiTestSupport
import Testing
@testable import PoiModel

private let src = PlaceSource(file: "t.csv", record: 1, position: .line(2))

private func draft(name: JSONValue? = .string("Café"), lon: JSONValue? = .string("2.35"),
                   lat: JSONValue? = .string("48.85")) -> PlaceDraft {
    var d = PlaceDraft(source: src)
    d.name = name
    d.longitude = lon
    d.latitude = lat
    return d
}

@Suite(.tags(.unit)) struct ValidationTests {
    @Test func acceptsAValidPlace() throws {
        let p = try PlaceValidator.validate(draft()).get()
        #expect(p.name == "Café")
        #expect(p.coordinate == Coordinate(longitude: 2.35, latitude: 48.85))
        #expect(p.importKey.hasPrefix("sha256:"))
        #expect(p.importKey.count == 7 + 64)
    }

    @Test(arguments: [
        ("NaN", "latitude \"NaN\" is not a number"),
        ("Infinity", "latitude \"Infinity\" is not a number"),
        ("-inf", "latitude \"-inf\" is not a number"),
        ("abc", "latitude \"abc\" is not a number"),
        ("", "latitude is empty"),
        ("   ", "latitude is empty"),
        ("95", "latitude 95 out of range [-90, 90] (looks swapped: latitude 2.35, longitude 95 would fit; check which column is which)"),
        ("-90.0000001", "latitude -90.0000001 out of range [-90, 90] (looks swapped: latitude 2.35, longitude -90.0000001 would fit; check which column is which)"),
        ("1e400", "latitude 1e400 is not a finite number"),
        ("0x1p3", "latitude \"0x1p3\" is not a number"),
        ("12.5abc", "latitude \"12.5abc\" is not a number"),
    ])
    func rejectsBadLatitude(text: String, reason: String) {
        let r = PlaceValidator.validate(draft(lat: .string(text)))
        guard case .failure(let rej) = r else { Issue.record("accepted \(text)"); return }
        #expect(rej.field == "latitude")
        #expect(rej.reason == reason)
    }

    /// Both bad values named, each as written; a pair that fits the other way round says so.
    @Test func bothCoordinatesAreNamedAsWritten() {
        #expect(PlaceValidator.validate(draft(lon: .string("200"), lat: .string("-95.50"))).failureReason
                == "longitude 200 out of range [-180, 180]; latitude -95.50 out of range [-90, 90]")
        #expect(PlaceValidator.validate(draft(lon: .string("x"), lat: .string(""))).failureReason
                == "longitude \"x\" is not a number; latitude is empty")
        #expect(PlaceValidator.validate(draft(lon: .string("48.85"), lat: .string("120.5"))).failureReason
                == "latitude 120.5 out of range [-90, 90] (looks swapped: latitude 48.85, longitude 120.5 would fit; check which column is which)")
        #expect(PlaceValidator.validate(draft(lon: .integer(181), lat: .integer(1))).failureReason
                == "longitude 181 out of range [-180, 180]")
    }

    @Test func rejectsBadLongitudeAndName() {
        #expect(PlaceValidator.validate(draft(lon: .string("180.5"))).failureReason == "longitude 180.5 out of range [-180, 180]")
        #expect(PlaceValidator.validate(draft(lon: nil)).failureReason == "longitude is missing")
        #expect(PlaceValidator.validate(draft(lon: .bool(true))).failureReason == "longitude must be a number, got boolean")
        #expect(PlaceValidator.validate(draft(name: .string("  \t "))).failureReason == "name is empty")
        #expect(PlaceValidator.validate(draft(name: nil)).failureReason == "name is missing")
        #expect(PlaceValidator.validate(draft(name: .integer(4))).failureReason == "name must be a string, got number")
    }

    @Test func acceptsEdgesAndDecimalComma() throws {
        for (lo, la) in [("180", "90"), ("-180", "-90"), ("+0", "-0"), ("2,35", "48,85"), (" 1.5e1 ", ".5")] {
            let p = try PlaceValidator.validate(draft(lon: .string(lo), lat: .string(la))).get()
            #expect(p.coordinate.longitude.isFinite)
        }
        let z = try PlaceValidator.validate(draft(lon: .string("-0"), lat: .string("-0.0"))).get()
        #expect(z.coordinate.longitude.sign == .plus && z.coordinate.latitude.sign == .plus)
    }

    @Test func categoriesAreSplitTrimmedDeduplicated() throws {
        var d = draft()
        d.categories = .string(" cafe ; bakery|cafe;; |  ")
        #expect(try PlaceValidator.validate(d).get().categories == ["cafe", "bakery"])
        // A list is a list: items are trimmed, empties and repeats dropped, never split again.
        d.categories = .array([.string("a"), .string("b;a"), .string(" "), .string(" a ")])
        #expect(try PlaceValidator.validate(d).get().categories == ["a", "b;a"])
        d.categories = .array([.string("a"), .integer(3)])
        #expect(PlaceValidator.validate(d).failureReason == "categories must be strings, got number")
    }

    @Test func importKeyPrecedence() throws {
        var d = draft()
        d.id = .integer(42)
        #expect(try PlaceValidator.validate(d).get().importKey == "42")
        d.id = .string("  abc ")
        #expect(try PlaceValidator.validate(d).get().importKey == "abc")
        d.importKey = .string("k1")
        let p = try PlaceValidator.validate(d).get()
        #expect(p.importKey == "k1")
        #expect(p.extra["id"] == .string("  abc "))  // a losing CSV id column is kept, not dropped
        // A Feature id beside an importKey property is the exporting database's _id: not kept.
        var feature = d
        feature.source = PlaceSource(file: "f.geojson", record: 1, position: .feature(0))
        let fromExport = try PlaceValidator.validate(feature).get()
        #expect(fromExport.importKey == "k1")
        #expect(fromExport.extra["id"] == nil)
        d.importKey = .string("")
        #expect(try PlaceValidator.validate(d).get().importKey == "abc")
    }
}

@Suite(.tags(.unit)) struct ImportKeyTests {
    @Test func stableRecipe() {
        // Pinned: changing the recipe would re-key every stored place.
        let c = Coordinate(longitude: 2.35, latitude: 48.85)
        let k = ImportKey.derived(name: "Café de Flore", coordinate: c)
        #expect(k == ImportKey.derived(name: "  CAFÉ   de\tflore ", coordinate: c))
        // NFD "e + combining acute" normalises to the same key as NFC "é".
        #expect(k == ImportKey.derived(name: "Cafe\u{301} de Flore", coordinate: c))
        #expect(k != ImportKey.derived(name: "Café de Flore", coordinate: Coordinate(longitude: 2.3500001, latitude: 48.85)))
        #expect(k == ImportKey.derived(name: "Café de Flore", coordinate: Coordinate(longitude: 2.350000004, latitude: 48.85)))
        #expect(ImportKey.normalizeName("  Big   BEN\n") == "big ben")
        // = hashlib.sha256("café de flore\x1f2.3500000\x1f48.8500000".encode()).hexdigest()
        #expect(k == "sha256:a908e5aa7ffa056d17386ad3fd8e4aa1796cceecbcf8675ca47363f133ec9ba2")
    }

    @Test func fixedDecimal() {
        #expect(FixedDecimal.string(-0.00000001, places: 7) == "0.0000000")
        #expect(FixedDecimal.string(-180, places: 7) == "-180.0000000")
        #expect(FixedDecimal.string(0.5, places: 0) == "1")
        #expect(FixedDecimal.string(1e-7, places: 7, trimZeros: true) == "0.0000001")
        #expect(FixedDecimal.string(12.5, places: 7, trimZeros: true) == "12.5")
        #expect(FixedDecimal.string(-3, places: 7, trimZeros: true) == "-3")
    }
}


extension Result where Failure == Reject {
    var failureReason: String? { if case .failure(let r) = self { return r.reason } else { return nil } }
}
