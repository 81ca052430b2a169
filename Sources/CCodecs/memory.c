#include <malloc.h>
#include "ccodecs.h"

/* See ImagingMemory.returnLargeBuffersToTheSystem (PoiImaging): why, and what was measured. */
void ccodecs_return_large_buffers_to_the_system(void) {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}
