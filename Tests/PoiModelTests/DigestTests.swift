import PoiDigest
import PoiTestSupport
import Testing

/// PoiDigest's SHA-256 and SHA-1 give the FIPS 180-4 known answers, streamed or in one call: every
/// stored file's `sha256`, every derived `importKey` and every `contentHash` rests on them.
@Suite(.tags(.unit)) struct DigestTests {
    static func hex<S: Sequence<UInt8>>(_ bytes: S) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test func sha256GivesTheStandardsKnownAnswers() {
        #expect(Self.hex(SHA256.hash(data: [])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(SHA256.hash(data: Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(SHA256.hash(data: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Array(SHA256.hash(data: [1, 2, 3])).count == SHA256.byteCount)
    }

    @Test func aStreamedSHA256EqualsTheOneShotOne() {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var hasher = SHA256()
        var start = 0
        for size in [1, 63, 64, 65, 4096, 999_000] where start < million.count {
            let end = min(million.count, start + size)
            million[start..<end].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            start = end
        }
        hasher.update(data: Array(million[start...]))
        let streamed = hasher.finalize()
        #expect(streamed == SHA256.hash(data: million))
        #expect(Self.hex(streamed) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha1GivesTheStandardsKnownAnswer() {
        #expect(Self.hex(SHA1.hash(data: Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Self.hex(SHA1.hash(data: [])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }
}
