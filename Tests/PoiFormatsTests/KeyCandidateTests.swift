import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// `KeyCandidate`: what `poi check`'s first pass fingerprints keys by. Equal keys must have equal
/// candidates (a repeat missed would be a duplicate never reported); different keys differ.
@Suite(.tags(.unit)) struct KeyCandidateTests {
    static let names = ["Café Central", "  CAFÉ   central ", "café central", "Café Centrai", "Kafe", "\u{212A}AFE", "kafe\t",
                        "\u{00A0}kafe\u{3000}", "Old  Mill", "old mill", "Straße", "STRASSE", "e\u{301}glise", "\u{E9}glise",
                        "故宫", "المسجد", "🗽 Hall", "A", "a"]
    static let coordinates: [(Double, Double)] = [(16.3600001, 48.2100001), (16.3600001, 48.2100002), (16.3600001, 48.21000014),
                                                  (10, -0.00000001), (10, 0), (-10, 0), (10.00000005, 0), (2.5, 1.5)]

    @Test func equalKeysHaveEqualCandidatesAndOnlyThem() throws {
        var byKey: [String: UInt64] = [:], byCandidate: [UInt64: String] = [:]
        for name in Self.names {
            for (lon, lat) in Self.coordinates {
                let trimmed = trimWhitespace(name)
                let c = try Coordinate.validated(longitude: lon, latitude: lat)
                let key = ImportKey.derived(name: trimmed, coordinate: c)
                let candidate = KeyCandidate.derived(name: trimmed, coordinate: c)
                #expect(KeyCandidate.isDerived(candidate) && !KeyCandidate.isDerivedLooking(candidate))
                // The byte path the CSV reader takes, on the name untrimmed, says the same or nothing.
                if let bytes = Array(name.utf8).withUnsafeBufferPointer({ KeyCandidate.derived(utf8Name: $0, coordinate: c) }) {
                    #expect(bytes == candidate, "\(name)")
                }
                // And it is the hash of what ImportKey normalises.
                #expect(candidate == ImportKey.normalizeName(trimmed).withUTF8InPlace { normalized in
                    Array(normalized).withUnsafeBufferPointer { KeyCandidate.derived(utf8Name: $0, coordinate: c) }
                }, "\(name)")
                if let earlier = byKey[key] { #expect(earlier == candidate, "\(name) \(lon) \(lat)") }
                byKey[key] = candidate
                if let other = byCandidate[candidate] { #expect(ImportKey.derived(name: trimWhitespace(other), coordinate: c) == key) }
                byCandidate[candidate] = name
            }
        }
        #expect(byKey.count == byCandidate.count)
    }

    @Test func explicitKeysAreMarkedWhenTheyLookDerived() {
        let derived = ImportKey.derived(name: "Kafe", coordinate: Coordinate(longitude: 2.5, latitude: 1.5))
        #expect(KeyCandidate.isDerivedLooking(KeyCandidate.explicit(derived)))
        #expect(!KeyCandidate.isDerived(KeyCandidate.explicit(derived)))
        for key in ["7", "p-1", "sha25", ""] {
            let c = KeyCandidate.explicit(key)
            #expect(c != 0 && !KeyCandidate.isDerived(c) && !KeyCandidate.isDerivedLooking(c), "\(key)")
        }
    }
}
