import CCodecs

/// One worker's decode memory (CCodecs' `cc_arena`): libjpeg's working buffers (a progressive
/// photo's coefficient arrays, row buffers) and a PNG's inflated image data, kept from one image
/// to the next so the next decode writes to pages already mapped instead of having the kernel
/// fault in and zero fresh ones (measured: 352,000 page faults for 48 photos without, 49,000
/// with). Used by one decode at a time: `ThumbnailBudget` lends them out and gives their memory
/// back when thumbnailing goes idle.
final class DecodeArena: @unchecked Sendable {
    // Only the decode that borrowed it, or the budget under its mutex, touches `raw`.
    let raw: OpaquePointer

    init?() {
        guard let arena = cc_arena_create() else { return nil }
        raw = arena
    }

    deinit { cc_arena_destroy(raw) }

    /// What it holds between decodes: the largest decode it has served since the last release.
    var retainedBytes: Int { Int(cc_arena_retained(raw)) }

    /// Every byte back to the system; the arena stays usable.
    func release() { cc_arena_release(raw) }
}
