import Foundation
import PoiTestSupport
import Testing

/// UTF-16 text without a byte-order mark is not read as UTF-8: the message names the encoding to
/// give, and with it the file reads.
@Suite(.tags(.process))
struct UnmarkedUTF16Tests: DumpFixtures {
    @Test(arguments: [false, true]) func unmarkedUTF16SaysWhichEncodingToName(_ bigEndian: Bool) throws {
        let dir = try Self.scratch("utf16")
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = "name\tlat\tlon\nCafé\t1.0\t2.0\n"
        try #require(text.data(using: bigEndian ? .utf16BigEndian : .utf16LittleEndian))
            .write(to: dir.appendingPathComponent("u.txt"))
        let r = try PoiProcess.run(["check", "u.txt"], currentDirectory: dir)
        #expect(r.status == 2)
        let name = bigEndian ? "utf-16be" : "utf-16le"
        #expect(r.stderr.contains("u.txt: looks like UTF-16 \(bigEndian ? "BE" : "LE") text without a byte-order mark "
                                  + "(a NUL byte every other byte); it was not read as UTF-8. Name its encoding: --encoding \(name)."),
                "\(r.stderr)")
        let named = try PoiProcess.run(["check", "u.txt", "--encoding", name, "--json"], currentDirectory: dir)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try Self.json(named.stdout)["valid"] as? Int == 1)
    }
}
