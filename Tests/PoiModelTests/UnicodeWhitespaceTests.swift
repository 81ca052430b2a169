import PoiTestSupport
import Testing
@testable import PoiModel

/// `UnicodeWhitespace` is Unicode's White_Space written out by hand: held here to the standard
/// library's `isWhitespace` for every scalar, and `trimWhitespace` to the scalar walk it replaced.
@Suite(.tags(.unit)) struct UnicodeWhitespaceTests {
    /// What `trimWhitespace` did before: the reference.
    static func trimmedByScalars(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }

    @Test func everyScalarIsClassedAsTheStandardLibraryClassesIt() {
        var mismatches: [UInt32] = []
        var whitespace = 0
        for v in UInt32(0)...0x10FFFF {
            guard let u = Unicode.Scalar(v) else { continue }
            let bytes = Array(String(Character(u)).utf8)
            let expected = u.properties.isWhitespace ? bytes.count : 0
            if expected > 0 { whitespace += 1 }
            bytes.withUnsafeBufferPointer { p in
                // Alone, and between letters (so the lengths cannot read past the character).
                let forward = UnicodeWhitespace.length(startingAt: 0, in: p, end: p.count)
                let backward = UnicodeWhitespace.length(endingAt: p.count, in: p, start: 0)
                if forward != expected || backward != expected { mismatches.append(v) }
            }
            let framed = Array("a".utf8) + bytes + Array("é".utf8)
            framed.withUnsafeBufferPointer { p in
                let forward = UnicodeWhitespace.length(startingAt: 1, in: p, end: p.count)
                let backward = UnicodeWhitespace.length(endingAt: p.count - 2, in: p, start: 0)
                if forward != expected || backward != expected { mismatches.append(v) }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20).map { String($0, radix: 16) })")
        #expect(whitespace == 25)
    }

    @Test func trimmingMatchesTheScalarWalk() {
        let pieces = [" ", "\t", "\n", "\r\n", "\u{85}", "\u{A0}", "\u{1680}", "\u{2000}", "\u{200A}", "\u{200B}",
                      "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{180E}", "\u{FEFF}", "a", "é",
                      "e\u{301}", "🗽", "\u{301}", "ß", "中", "\u{7F}", "\u{1}"]
        var rng = SystemRandomNumberGenerator()
        var checked = 0
        for _ in 0..<20_000 {
            var s = ""
            for _ in 0..<Int.random(in: 0...6, using: &rng) { s += pieces.randomElement(using: &rng)! }
            #expect(trimWhitespace(s) == Self.trimmedByScalars(s), "\(Array(s.unicodeScalars.map(\.value)))")
            #expect(Array(trimWhitespace(s).utf8) == Array(Self.trimmedByScalars(s).utf8))
            var copy = s
            let fromBytes = copy.withUTF8 { UnicodeWhitespace.trimmedString($0) }
            #expect(Array(fromBytes.utf8) == Array(Self.trimmedByScalars(s).utf8))
            checked += 1
        }
        #expect(checked == 20_000)
    }

    @Test func categoriesAreTrimmedOfEveryKindOfSpace() {
        #expect(Categories.parse("\u{3000}Café\u{A0}; \u{2003}bar\u{2028}|\u{205F}") == ["Café", "bar"])
        #expect(Categories.parse(" 🗽 ;\u{85}🗽\u{85}") == ["🗽"])
    }
}
