#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bounds the memory of thumbnailing on many threads at once: ordinary images share the gate,
/// an image whose decode is estimated (from its header) to need more than `bigImageBytes` runs
/// alone. Without it, N workers meeting N huge progressive JPEGs would each hold one in memory.
///
/// A writer-preferring readers-writer lock, so a big image is not starved by a stream of small
/// ones. One gate per job, shared by all its workers.
public final class ThumbnailGate: @unchecked Sendable {
    /// Working memory above which an image is thumbnailed alone.
    public static let bigImageBytes = 48 << 20

    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    public init() {
        lock = .allocate(capacity: 1)
        var attr = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attr)
        pthread_rwlockattr_setkind_np(&attr, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attr)
        pthread_rwlockattr_destroy(&attr)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// `Thumbnailer.make`, alone when the image is big. The header is read once: it decides the
    /// schedule and then the thumbnail plan (a header that fails its checks ends here).
    public func make(from bytes: [UInt8], spec: ThumbnailSpec, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        let header = try Thumbnailer.probe(bytes, options: options)
        let big = Thumbnailer.estimatedPeakBytes(source: header, spec: spec) + bytes.count > Self.bigImageBytes
        let run = { Result { () throws(ImageError) in try Thumbnailer.make(from: bytes, info: header, spec: spec, options: options) } }
        return try (big ? exclusive(run) : shared(run)).get()
    }

    func shared<T>(_ body: () -> T) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return body()
    }

    func exclusive<T>(_ body: () -> T) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return body()
    }
}
