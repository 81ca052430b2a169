import Foundation
import NIOCore
import PoiStore
import Synchronization

/// The bytes of small disk-stored files (thumbnails above all: a list screen loads dozens at
/// once, and they never change), kept in memory up to a byte budget, so a download of one skips
/// the disk thread pool: that hop (open, fstat, pread on another thread and back) was most of a
/// thumbnail's cost, a third of nginx's rate.
///
/// Each hit is still checked against the file on disk with one `stat` on the calling thread, as
/// nginx checks its files: a file deleted or replaced through another process (or by hand) is
/// never served from here, and its entry goes. `stat` of a local file takes microseconds; the
/// pool remains for everything else (opening, reading, large files).
final class SmallFileCache: Sendable {
    /// What identifies the bytes on disk: the same inode, size and modification time.
    struct DiskIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int

        init(_ st: stat) {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            size = Int(st.st_size)
            modifiedSeconds = Int(st.st_mtim.tv_sec)
            modifiedNanoseconds = Int(st.st_mtim.tv_nsec)
        }

        /// The identity of `path` now; nil when it is gone or not a regular file.
        static func of(_ path: String) -> DiskIdentity? {
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return DiskIdentity(st)
        }
    }

    private struct Entry {
        var bytes: ByteBuffer
        var identity: DiskIdentity
    }

    private struct State {
        var entries: [ObjectId: Entry] = [:]
        /// Insertion order, for eviction (oldest first); ids already evicted are skipped.
        var order: [ObjectId] = []
        var head = 0
        var total = 0
    }

    private let state = Mutex(State())
    /// Bytes held at most (0: nothing is cached).
    let budget: Int
    /// Files larger than this are never cached (and are read through the pool).
    let maxFileBytes: Int

    init(budget: Int, maxFileBytes: Int) {
        self.budget = budget
        self.maxFileBytes = maxFileBytes
    }

    /// The cached bytes of file `id` stored at `path`, when they are still what is on disk.
    func get(_ id: ObjectId, path: String) -> ByteBuffer? {
        guard budget > 0, let entry = state.withLock({ $0.entries[id] }) else { return nil }
        guard DiskIdentity.of(path) == entry.identity else {
            remove(id)
            return nil
        }
        return entry.bytes
    }

    /// Keeps `bytes`, read from a file whose identity was `identity` when it was read.
    func put(_ id: ObjectId, bytes: ByteBuffer, identity: DiskIdentity) {
        let size = bytes.readableBytes
        guard budget > 0, size <= maxFileBytes, size <= budget else { return }
        state.withLock { s in
            if let old = s.entries.updateValue(Entry(bytes: bytes, identity: identity), forKey: id) {
                s.total -= old.bytes.readableBytes
            } else {
                s.order.append(id)
            }
            s.total += size
            while s.total > budget, s.head < s.order.count {
                let victim = s.order[s.head]
                s.head += 1
                if let gone = s.entries.removeValue(forKey: victim) { s.total -= gone.bytes.readableBytes }
            }
            // Ids removed (DELETE, a stale hit) stay in `order` until eviction reaches them:
            // compact when they outnumber the live ones, so the list stays bounded.
            if s.order.count - s.head > 2 * s.entries.count + 1024 {
                var seen = Set<ObjectId>()
                s.order = s.order[s.head...].filter { s.entries[$0] != nil && seen.insert($0).inserted }
                s.head = 0
            }
        }
    }

    func remove(_ id: ObjectId) {
        state.withLock { s in
            if let gone = s.entries.removeValue(forKey: id) { s.total -= gone.bytes.readableBytes }
        }
    }

    /// Bytes held now (for tests and the metrics).
    var heldBytes: Int { state.withLock { $0.total } }
}
