/* The wrappers of include/poi_system.h. sync_file_range is a GNU extension of <fcntl.h>, hence
 * _GNU_SOURCE before any header; 64-bit file offsets so that int64_t offsets pass through whole
 * on 32-bit systems too. */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include "poi_system.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <fcntl.h>
#endif

int poi_set_malloc_policy(size_t mmap_threshold, size_t trim_threshold) {
#if defined(__GLIBC__)
    if (mmap_threshold > INT_MAX || trim_threshold > INT_MAX) return 0;
    int mmap_set = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) == 1;
    int trim_set = mallopt(M_TRIM_THRESHOLD, (int)trim_threshold) == 1;
    return mmap_set && trim_set;
#else
    (void)mmap_threshold;
    (void)trim_threshold;
    return 0;
#endif
}

#if defined(__linux__)
_Static_assert(sizeof(off_t) == sizeof(int64_t), "sync_file_range's offsets must hold an int64_t whole");
_Static_assert(POI_SYNC_FILE_RANGE_WAIT_BEFORE == SYNC_FILE_RANGE_WAIT_BEFORE &&
                   POI_SYNC_FILE_RANGE_WRITE == SYNC_FILE_RANGE_WRITE &&
                   POI_SYNC_FILE_RANGE_WAIT_AFTER == SYNC_FILE_RANGE_WAIT_AFTER,
               "poi_system.h's flags must be the kernel's");
#endif

int poi_sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)nbytes, flags);
#else
    (void)fd;
    (void)offset;
    (void)nbytes;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
