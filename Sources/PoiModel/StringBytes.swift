extension String {
    /// The string's UTF-8 lent in place when it is stored as UTF-8 (always, but for a bridged
    /// one), else through a copy. Hot paths use it: a `var` copy to call `withUTF8` on costs a
    /// retain and a release per string (encoding, fingerprints, trimming).
    @inlinable
    public func withUTF8InPlace<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
