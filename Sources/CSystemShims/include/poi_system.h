/* CSystemShims: typed C wrappers for the few C library calls PoiKit's Swift needs and Swift's
 * Glibc module does not declare (<malloc.h>'s mallopt, the GNU half of <fcntl.h>). Each one
 * compiles on any system and says so by its result where the call does not exist, so the Swift
 * side needs no dlsym and no unsafeBitCast to a guessed signature. The values and when to call
 * are the callers' (Sources/poi/Poi.swift, Sources/PoiFormats/ByteSink.swift). */
#ifndef POI_SYSTEM_H
#define POI_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/* glibc's mallopt(M_MMAP_THRESHOLD, mmap_threshold), then mallopt(M_TRIM_THRESHOLD,
 * trim_threshold), in bytes. Fixing either also stops glibc from moving the mmap threshold by
 * itself. Returns 1 when both were set; 0 when the C library has no mallopt (not glibc), a value
 * is over INT_MAX (nothing set), or glibc refused one (the other is still tried and stays set). */
int poi_set_malloc_policy(size_t mmap_threshold, size_t trim_threshold);

/* sync_file_range(2)'s flags, with Linux's values (checked against <fcntl.h> where it has them). */
enum {
    POI_SYNC_FILE_RANGE_WAIT_BEFORE = 1,
    POI_SYNC_FILE_RANGE_WRITE = 2, /* start writing the range's dirty pages, do not wait */
    POI_SYNC_FILE_RANGE_WAIT_AFTER = 4,
};

/* sync_file_range(2) on Linux: 0, or -1 with errno set. Elsewhere -1 with errno ENOSYS. */
int poi_sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags);

#endif
