/// `--shard I/N`: N machines split one job by key, each taking the keys that hash to its index.
///
/// The hash is 64-bit FNV-1a over the key's UTF-8 bytes — chosen because it is trivial to restate
/// in any language, so the split is the same on every machine, run and PoiKit version.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public static let all = Shard(uncheckedIndex: 0, count: 1)

    private init(uncheckedIndex: Int, count: Int) {
        self.index = uncheckedIndex
        self.count = count
    }

    /// Parses "I/N" with 0 ≤ I < N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 0, i < n else { return nil }
        self.init(uncheckedIndex: i, count: n)
    }

    public func contains(key: String) -> Bool {
        count == 1 || Int(Self.fnv1a64(key) % UInt64(count)) == index
    }

    public var description: String { "\(index)/\(count)" }

    static func fnv1a64(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
