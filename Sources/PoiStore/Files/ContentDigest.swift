import PoiDigest

/// SHA-256 written as lowercase hex: the one recipe for the `sha256` of a `files` document (how
/// the same photo is found again) and for the digest `upsert` keeps in `contentHash`.
public enum ContentDigest {
    /// Lowercase hex SHA-256 of `bytes` (64 characters).
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Lowercase hex of the first `byteCount` bytes of `digest` (all of them when nil).
    public static func hex(_ digest: SHA256.Digest, byteCount: Int? = nil) -> String {
        let count = min(byteCount ?? SHA256.byteCount, SHA256.byteCount)
        return digest.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: 2 * count) { out in
                for i in 0..<count {
                    let b = raw[i]
                    out[2 * i] = hexDigits[Int(b >> 4)]
                    out[2 * i + 1] = hexDigits[Int(b & 0xF)]
                }
                return 2 * count
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
