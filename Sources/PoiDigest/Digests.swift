import COpenSSL

/// SHA-256 through OpenSSL's libcrypto, the library libmongoc already links for TLS and SCRAM:
/// one crypto library in the process, and none to compile with PoiKit.
public struct SHA256 {
    public static let byteCount = 32
    private var context = SHA256_CTX()

    public init() { SHA256_Init(&context) }

    public mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        SHA256_Update(&context, base, bytes.count)
    }

    public mutating func update(data bytes: [UInt8]) {
        bytes.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// The digest of everything given; the hasher is used up.
    public mutating func finalize() -> Digest {
        var digest = Digest()
        withUnsafeMutableBytes(of: &digest.words) { out in
            _ = SHA256_Final(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
        }
        return digest
    }

    public static func hash(data bytes: [UInt8]) -> Digest {
        var hasher = SHA256()
        hasher.update(data: bytes)
        return hasher.finalize()
    }

    /// 32 bytes, kept inline (no allocation per digest: one is made per imported record).
    public struct Digest: Equatable, Hashable, Sendable, Sequence {
        fileprivate var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try Swift.withUnsafeBytes(of: words, body)
        }

        public func makeIterator() -> IndexingIterator<[UInt8]> { withUnsafeBytes { Array($0) }.makeIterator() }

        public static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }
        public func hash(into hasher: inout Hasher) {
            hasher.combine(words.0); hasher.combine(words.1); hasher.combine(words.2); hasher.combine(words.3)
        }
    }
}

/// SHA-1, for what a protocol asks it of (an HTTP entity tag), never for identity or security.
public enum SHA1 {
    public static let byteCount = 20

    public static func hash(data bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in _ = COpenSSL.SHA1(input.baseAddress, input.count, out.baseAddress) }
        }
        return digest
    }
}
