import CCodecs

/// How the process's allocator treats the decoders' large buffers.
public enum ImagingMemory {
    /// glibc raises its mmap threshold after the first large free (up to 32 MiB), so every later
    /// decoder buffer of a photo (tens of MB for a 24-megapixel image) comes from the heap arenas,
    /// which are not given back: `poi serve` stayed 81 MB above its idle level after 32 uploads
    /// of 16 MB photos, for good. A fixed threshold (128 KiB) keeps large buffers in mappings of
    /// their own, returned when freed, and a fixed trim threshold gives back the heap's free top.
    /// Measured (make bench-serve's burst, release build): the same burst then leaves the server
    /// 11 MB above idle, for 6 % more time (such buffers are faulted in afresh each image).
    /// Call first thing, before any thread allocates; a no-op where malloc is not glibc's.
    public static func returnLargeBuffersToTheSystem() {
        ccodecs_return_large_buffers_to_the_system()
    }
}
