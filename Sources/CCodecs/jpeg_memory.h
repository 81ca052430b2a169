/* libjpeg's image pool from a decode arena (jpeg_memory.c): a struct jpeg_memory_mgr of this
 * module's own, which jpeg_codec.c installs right after jpeg_create_decompress when the decode was
 * given an arena. Private to CCodecs; the why and the rules it keeps are at the top of
 * jpeg_memory.c. */
#ifndef CC_JPEG_MEMORY_H
#define CC_JPEG_MEMORY_H

#include <stddef.h>
#include <stdio.h> /* jpeglib.h uses FILE without including it */
#include <jpeglib.h>
#include "ccodecs.h"

typedef struct lj_small_pool lj_small_pool;

/* The manager's state. It lives in jpeg_codec.c's decode context, which outlives the
 * decompressor and survives a longjmp, so the type is complete here; only jpeg_memory.c reads or
 * writes its fields (scripts/arena-longjmp-test.c reads `lib`). */
typedef struct {
    struct jpeg_memory_mgr pub; /* first: libjpeg holds &pub as cinfo->mem, the methods cast it back */
    struct jpeg_memory_mgr *lib; /* the library's own manager: JPOOL_PERMANENT, and the destroy */
    cc_arena *arena;
    size_t max_alloc_chunk;     /* the library's MAX_ALLOC_CHUNK */
    jvirt_sarray_ptr sarrays;
    jvirt_barray_ptr barrays;
    size_t image_space;         /* what jmemmgr would count for the image pool */
    lj_small_pool *small_pools;
} cc_jmem;

/* After jpeg_create_decompress: libjpeg's JPOOL_IMAGE comes from `arena` until the decompressor
 * is destroyed; JPOOL_PERMANENT stays with the library's manager. `m` must outlive
 * the decompressor. The caller resets the arena after jpeg_destroy_decompress, on every path. */
void cc_jmem_install(j_common_ptr cinfo, cc_jmem *m, cc_arena *arena);

#endif
