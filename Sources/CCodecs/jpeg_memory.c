/* libjpeg's image pool from a decode arena.
 *
 * Why a whole manager: libjpeg-turbo's memory manager (jmemmgr.c) gets every pool from
 * jpeg_get_small/jpeg_get_large by direct calls between its static functions, so nothing can be
 * hooked under it. With an arena, jpeg_codec.c installs a struct jpeg_memory_mgr of this file's
 * (cc_jmem_install) right after jpeg_create_decompress, so that a worker's next image writes to
 * pages the last one already faulted in. JPOOL_IMAGE (everything one image needs: the progressive
 * coefficient arrays, row buffers, the decoder's modules) comes from the arena; JPOOL_PERMANENT,
 * where jpeg_create_decompress has already put its objects, stays with the library's manager, to
 * which those calls are passed on. Its functions cast cinfo->mem to their private struct, so
 * cinfo->mem points back to it for the length of each such call (LIB_CALL). A longjmp out of one
 * of them leaves cinfo->mem on the library's manager: that is a complete manager owning everything
 * libjpeg malloc'd, so jpeg_destroy_decompress still frees all of it, and the arena's part is
 * dropped by cc_arena_reset after the destroy, as on every path (scripts/arena-longjmp-test.c).
 *
 * What must behave as jmemmgr.c 2.1.5 does, and does here:
 *  - ALIGN_SIZE (32 with SIMD): every object rounded up to it (the SIMD routines read and write
 *    up to the next multiple), sample rows a multiple of 2 * ALIGN_SIZE samples long (upsampling
 *    straddles), rows chunked by MAX_ALLOC_CHUNK as alloc_sarray/alloc_barray do;
 *  - the size checks and their errors: "Insufficient memory (case N)" with jmemmgr's N, "Image too
 *    wide for this implementation", "Invalid memory pool code";
 *  - virtual arrays: realized whole at realize_virt_arrays, rows zeroed on first access when
 *    pre_zero (the progressive coefficient arrays start from zero coefficients), the access
 *    checks ("Bogus virtual array access");
 *  - max_memory_to_use: jmemnobs.c has no backing store, so when the unrealized arrays do not fit
 *    under max_memory_to_use minus what the manager has already allocated, realize_virt_arrays
 *    fails with JERR_NO_BACKING_STORE, "Backing store not supported". This manager counts what
 *    jmemmgr would have counted (pool headers, alignment slop, small-pool slop: image_space, plus
 *    the library manager's permanent-pool count) and refuses the same arrays with the same error
 *    (scripts/arena-limit-test.sh moves the limit byte by byte), only before allocating any of
 *    them: jmemmgr mallocs the arrays ahead of the refused one first, which would only show if
 *    one of those mallocs failed ("case 4" there, the refusal here), and an arena would keep a
 *    block sized for arrays it never used.
 * Memory is not given back piecemeal: free_pool(JPOOL_IMAGE) only forgets the image pool;
 * cc_arena_reset at the end of the decode takes it all back. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "internal.h"
#include "jpeg_memory.h"

/* The memory limit counts the library manager's permanent pool by reading a private field of
 * jmemmgr.c's my_memory_mgr (lj_memory_mgr_prefix below), and the rest of this file copies
 * jmemmgr.c's constants and arithmetic. Both were checked against libjpeg-turbo 2.0 to 3.1 only;
 * another library would be read at the wrong offset, or refuse different images than without an
 * arena, without a word. So the build stops instead. */
#if !defined(LIBJPEG_TURBO_VERSION_NUMBER)
#error "jpeg_memory.c needs libjpeg-turbo (jconfig.h defines no LIBJPEG_TURBO_VERSION_NUMBER): it reads the private layout of libjpeg-turbo's jmemmgr.c. Build against libjpeg-turbo 2.0-3.1 (Debian: libjpeg62-turbo-dev)."
#elif LIBJPEG_TURBO_VERSION_NUMBER < 2000000 || LIBJPEG_TURBO_VERSION_NUMBER >= 3020000
#error "libjpeg-turbo outside 2.0-3.1, the versions jpeg_memory.c was checked against. Compare that version's jmemmgr.c with this file: my_memory_mgr's fields up to total_space_allocated (lj_memory_mgr_prefix), jmemsys.h's backing_store_info (lj_virt_control_size), ALIGN_SIZE, the pool header and first/extra_pool_slop, the 'case N' numbers, and alloc_sarray's sample size; then run make arena-test and widen this range."
#endif

/* jmemmgr.c's constants (its private jmemsys.h / jmemmgr.c). */
#if defined(ALIGN_SIZE) /* jconfig.h may override it */
#define LJ_ALIGN_SIZE ((size_t)ALIGN_SIZE)
#elif defined(WITH_SIMD) /* AVX2 needs 32 */
#define LJ_ALIGN_SIZE ((size_t)32)
#else
#define LJ_ALIGN_SIZE (sizeof(void *) > sizeof(double) ? sizeof(void *) : sizeof(double))
#endif
#define LJ_POOL_HDR (3 * sizeof(size_t))  /* small/large_pool_hdr: next, bytes_used, bytes_left */
#define LJ_FIRST_IMAGE_SLOP ((size_t)16000) /* first_pool_slop[JPOOL_IMAGE] */
#define LJ_EXTRA_IMAGE_SLOP ((size_t)5000)  /* extra_pool_slop[JPOOL_IMAGE] */

/* sizeof jmemmgr's jvirt_[sb]array_control (jmemsys.h's backing_store_info: three methods, a FILE
 * pointer, a 64-byte temp name), counted as it would be; ours are smaller. */
typedef struct {
    void *mem_buffer;
    JDIMENSION dims[7];
    boolean flags[3];
    void *next;
    void (*methods[3])(void);
    void *temp_file;
    char temp_name[64];
} lj_virt_control_size;

/* jmemmgr.c's my_memory_mgr up to its count of allocated bytes, read from the library's manager
 * (which holds only the permanent pool once ours is installed): the one private field this file
 * reads, so the memory limit counts the same bytes as without an arena. The same layout from
 * libjpeg-turbo 2.0 to 3.1 (the version check above). */
typedef struct {
    struct jpeg_memory_mgr pub;
    void *small_list[JPOOL_NUMPOOLS];
    void *large_list[JPOOL_NUMPOOLS];
    void *virt_sarray_list, *virt_barray_list;
    size_t total_space_allocated;
} lj_memory_mgr_prefix;
#define LJ_PERMANENT_SPACE(lib) (((const lj_memory_mgr_prefix *)(lib))->total_space_allocated)

/* What the copied layouts and arithmetic take for granted. */
_Static_assert(offsetof(lj_memory_mgr_prefix, total_space_allocated) ==
                   sizeof(struct jpeg_memory_mgr) + (2 * JPOOL_NUMPOOLS + 2) * sizeof(void *),
               "total_space_allocated must follow jpeg_memory_mgr and six pointers with no padding, as in jmemmgr.c");
_Static_assert(sizeof(size_t) == sizeof(void *),
               "LJ_POOL_HDR counts jmemmgr's pool header (a pointer and two size_t) as three size_t");
_Static_assert((LJ_ALIGN_SIZE & (LJ_ALIGN_SIZE - 1)) == 0, "lj_round_up rounds to a power of two");
_Static_assert(sizeof(JBLOCK) % LJ_ALIGN_SIZE == 0,
               "alloc_barray's rows stay aligned only when a JBLOCK is a whole number of ALIGN_SIZE");

struct jvirt_sarray_control {
    JSAMPARRAY mem_buffer;   /* NULL until realized */
    JDIMENSION rows_in_array, samplesperrow, maxaccess;
    JDIMENSION first_undef_row; /* rows below it have been written (or zeroed) */
    boolean pre_zero;
    jvirt_sarray_ptr next;
};

struct jvirt_barray_control {
    JBLOCKARRAY mem_buffer;
    JDIMENSION rows_in_array, blocksperrow, maxaccess;
    JDIMENSION first_undef_row;
    boolean pre_zero;
    jvirt_barray_ptr next;
};

struct lj_small_pool { /* jmemmgr's small pools, for the count only */
    struct lj_small_pool *next;
    size_t bytes_left;
};

/* libjpeg calls the methods with cinfo->mem == &m->pub, and JMEM casts that back to the cc_jmem. */
_Static_assert(offsetof(cc_jmem, pub) == 0, "cc_jmem must start with its struct jpeg_memory_mgr");

#define JMEM(cinfo) ((cc_jmem *)(cinfo)->mem)
/* Call the library's manager with cinfo->mem pointing at it (see above for a longjmp in it). */
#define LIB_CALL(m, cinfo, expr)               \
    do {                                       \
        (cinfo)->mem = (m)->lib;               \
        expr;                                  \
        (cinfo)->mem = &(m)->pub;              \
    } while (0)

static size_t lj_round_up(size_t a, size_t b) { return (a + b - 1) & ~(b - 1); }

static void jmem_out_of_memory(j_common_ptr cinfo, int which) {
    ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, which);
}

/* jmemmgr's accounting of a small object of `size` (already rounded): first fit in its pools,
 * else a new pool with the image pool's slop. */
static void jmem_count_small(j_common_ptr cinfo, cc_jmem *m, size_t size) {
    lj_small_pool **link = &m->small_pools, *p = m->small_pools;
    for (; p; link = &p->next, p = p->next)
        if (p->bytes_left >= size) {
            p->bytes_left -= size;
            return;
        }
    size_t min_request = LJ_POOL_HDR + size + LJ_ALIGN_SIZE - 1;
    size_t slop = m->small_pools ? LJ_EXTRA_IMAGE_SLOP : LJ_FIRST_IMAGE_SLOP;
    if (slop > m->max_alloc_chunk - min_request) slop = m->max_alloc_chunk - min_request;
    p = cc_arena_alloc(m->arena, sizeof *p);
    if (!p) jmem_out_of_memory(cinfo, 2);
    p->next = NULL;
    p->bytes_left = slop;
    *link = p;
    m->image_space += min_request + slop;
}

static void *jmem_alloc_small(j_common_ptr cinfo, int pool_id, size_t size) {
    cc_jmem *m = JMEM(cinfo);
    void *r;
    if (pool_id != JPOOL_IMAGE) {
        LIB_CALL(m, cinfo, r = m->lib->alloc_small(cinfo, pool_id, size));
        return r;
    }
    if (size > m->max_alloc_chunk) jmem_out_of_memory(cinfo, 7); /* before rounding can wrap */
    size = lj_round_up(size, LJ_ALIGN_SIZE);
    if (LJ_POOL_HDR + size + LJ_ALIGN_SIZE - 1 > m->max_alloc_chunk) jmem_out_of_memory(cinfo, 1);
    jmem_count_small(cinfo, m, size);
    r = cc_arena_alloc(m->arena, size);
    if (!r) jmem_out_of_memory(cinfo, 2);
    return r;
}

static void *jmem_alloc_large(j_common_ptr cinfo, int pool_id, size_t size) {
    cc_jmem *m = JMEM(cinfo);
    void *r;
    if (pool_id != JPOOL_IMAGE) {
        LIB_CALL(m, cinfo, r = m->lib->alloc_large(cinfo, pool_id, size));
        return r;
    }
    if (size > m->max_alloc_chunk) jmem_out_of_memory(cinfo, 8);
    size = lj_round_up(size, LJ_ALIGN_SIZE);
    if (LJ_POOL_HDR + size + LJ_ALIGN_SIZE - 1 > m->max_alloc_chunk) jmem_out_of_memory(cinfo, 3);
    r = cc_arena_alloc(m->arena, size);
    if (!r) jmem_out_of_memory(cinfo, 4);
    m->image_space += size + LJ_POOL_HDR + LJ_ALIGN_SIZE - 1;
    return r;
}

/* Rows of `rowbytes` bytes, grouped in chunks of at most MAX_ALLOC_CHUNK as jmemmgr groups them
 * (each chunk one large object, so the count and the per-chunk rounding are the same). */
static void **jmem_alloc_rows(j_common_ptr cinfo, size_t rowbytes, JDIMENSION numrows) {
    cc_jmem *m = JMEM(cinfo);
    long per_chunk = rowbytes ? (long)((m->max_alloc_chunk - LJ_POOL_HDR) / rowbytes) : (long)numrows;
    if (per_chunk <= 0) ERREXIT(cinfo, JERR_WIDTH_OVERFLOW);
    JDIMENSION rowsperchunk = per_chunk < (long)numrows ? (JDIMENSION)per_chunk : numrows;
    void **rows = jmem_alloc_small(cinfo, JPOOL_IMAGE, (size_t)numrows * sizeof(void *));
    JDIMENSION currow = 0;
    while (currow < numrows) {
        if (rowsperchunk > numrows - currow) rowsperchunk = numrows - currow;
        unsigned char *chunk = jmem_alloc_large(cinfo, JPOOL_IMAGE, (size_t)rowsperchunk * rowbytes);
        for (JDIMENSION i = 0; i < rowsperchunk; i++, chunk += rowbytes) rows[currow++] = chunk;
    }
    return rows;
}

static JSAMPARRAY jmem_alloc_sarray(j_common_ptr cinfo, int pool_id, JDIMENSION samplesperrow,
                                    JDIMENSION numrows) {
    cc_jmem *m = JMEM(cinfo);
    if (pool_id != JPOOL_IMAGE) {
        JSAMPARRAY r;
        LIB_CALL(m, cinfo, r = m->lib->alloc_sarray(cinfo, pool_id, samplesperrow, numrows));
        return r;
    }
    if (samplesperrow > m->max_alloc_chunk) jmem_out_of_memory(cinfo, 9);
    /* Whole multiples of 2 * ALIGN_SIZE: the upsamplers write a little past the width. */
    samplesperrow = (JDIMENSION)lj_round_up(samplesperrow, 2 * LJ_ALIGN_SIZE / sizeof(JSAMPLE));
    return (JSAMPARRAY)jmem_alloc_rows(cinfo, (size_t)samplesperrow * sizeof(JSAMPLE), numrows);
}

static JBLOCKARRAY jmem_alloc_barray(j_common_ptr cinfo, int pool_id, JDIMENSION blocksperrow,
                                     JDIMENSION numrows) {
    cc_jmem *m = JMEM(cinfo);
    if (pool_id != JPOOL_IMAGE) {
        JBLOCKARRAY r;
        LIB_CALL(m, cinfo, r = m->lib->alloc_barray(cinfo, pool_id, blocksperrow, numrows));
        return r;
    }
    /* sizeof(JBLOCK) (128) is a multiple of ALIGN_SIZE, so rows stay aligned. */
    return (JBLOCKARRAY)jmem_alloc_rows(cinfo, (size_t)blocksperrow * sizeof(JBLOCK), numrows);
}

static jvirt_sarray_ptr jmem_request_virt_sarray(j_common_ptr cinfo, int pool_id, boolean pre_zero,
                                                 JDIMENSION samplesperrow, JDIMENSION numrows,
                                                 JDIMENSION maxaccess) {
    cc_jmem *m = JMEM(cinfo);
    if (pool_id != JPOOL_IMAGE) ERREXIT1(cinfo, JERR_BAD_POOL_ID, pool_id);
    jmem_count_small(cinfo, m, lj_round_up(sizeof(lj_virt_control_size), LJ_ALIGN_SIZE));
    jvirt_sarray_ptr a = cc_arena_alloc(m->arena, sizeof *a);
    if (!a) jmem_out_of_memory(cinfo, 2);
    memset(a, 0, sizeof *a);
    a->rows_in_array = numrows;
    a->samplesperrow = samplesperrow;
    a->maxaccess = maxaccess;
    a->pre_zero = pre_zero;
    a->next = m->sarrays;
    m->sarrays = a;
    return a;
}

static jvirt_barray_ptr jmem_request_virt_barray(j_common_ptr cinfo, int pool_id, boolean pre_zero,
                                                 JDIMENSION blocksperrow, JDIMENSION numrows,
                                                 JDIMENSION maxaccess) {
    cc_jmem *m = JMEM(cinfo);
    if (pool_id != JPOOL_IMAGE) ERREXIT1(cinfo, JERR_BAD_POOL_ID, pool_id);
    jmem_count_small(cinfo, m, lj_round_up(sizeof(lj_virt_control_size), LJ_ALIGN_SIZE));
    jvirt_barray_ptr a = cc_arena_alloc(m->arena, sizeof *a);
    if (!a) jmem_out_of_memory(cinfo, 2);
    memset(a, 0, sizeof *a);
    a->rows_in_array = numrows;
    a->blocksperrow = blocksperrow;
    a->maxaccess = maxaccess;
    a->pre_zero = pre_zero;
    a->next = m->barrays;
    m->barrays = a;
    return a;
}

/* Whether an array of `rows` rows read `maxaccess` at a time fits in memory when each array may
 * have `max_minheights` accesses' worth of rows (jmemmgr's test, in its long arithmetic). */
static int jmem_fits(JDIMENSION rows, JDIMENSION maxaccess, size_t max_minheights) {
    size_t minheights = (size_t)(((long)rows - 1L) / (long)maxaccess + 1L);
    return minheights <= max_minheights;
}

static void jmem_realize_virt_arrays(j_common_ptr cinfo) {
    cc_jmem *m = JMEM(cinfo);
    size_t space_per_minheight = 0, maximum_space = 0;
    for (jvirt_sarray_ptr a = m->sarrays; a; a = a->next) {
        if (a->mem_buffer) continue;
        size_t space = (size_t)a->rows_in_array * a->samplesperrow * sizeof(JSAMPLE);
        space_per_minheight += (size_t)a->maxaccess * a->samplesperrow * sizeof(JSAMPLE);
        if (SIZE_MAX - maximum_space < space) jmem_out_of_memory(cinfo, 10);
        maximum_space += space;
    }
    for (jvirt_barray_ptr a = m->barrays; a; a = a->next) {
        if (a->mem_buffer) continue;
        size_t space = (size_t)a->rows_in_array * a->blocksperrow * sizeof(JBLOCK);
        space_per_minheight += (size_t)a->maxaccess * a->blocksperrow * sizeof(JBLOCK);
        if (SIZE_MAX - maximum_space < space) jmem_out_of_memory(cinfo, 11);
        maximum_space += space;
    }
    if (space_per_minheight == 0) return;
    /* jmemnobs.c's jpeg_mem_available against everything allocated so far, both pools. */
    size_t allocated = m->image_space + LJ_PERMANENT_SPACE(m->lib);
    size_t avail = maximum_space;
    if (m->pub.max_memory_to_use)
        avail = (size_t)m->pub.max_memory_to_use > allocated ? (size_t)m->pub.max_memory_to_use - allocated : 0;
    size_t max_minheights = 1000000000;
    if (avail < maximum_space) {
        max_minheights = avail / space_per_minheight;
        if (max_minheights == 0) max_minheights = 1;
    }
    /* An array that does not fit whole would need backing store, which jmemnobs.c refuses. */
    for (jvirt_sarray_ptr a = m->sarrays; a; a = a->next)
        if (!a->mem_buffer && a->maxaccess && !jmem_fits(a->rows_in_array, a->maxaccess, max_minheights))
            ERREXIT(cinfo, JERR_NO_BACKING_STORE);
    for (jvirt_barray_ptr a = m->barrays; a; a = a->next)
        if (!a->mem_buffer && a->maxaccess && !jmem_fits(a->rows_in_array, a->maxaccess, max_minheights))
            ERREXIT(cinfo, JERR_NO_BACKING_STORE);
    /* The arrays in one arena block (cc_arena_reserve), with room for each one's row pointers and
     * rounding. */
    size_t slack = 0;
    for (jvirt_sarray_ptr a = m->sarrays; a; a = a->next)
        if (!a->mem_buffer) slack += (size_t)a->rows_in_array * sizeof(void *) + 512;
    for (jvirt_barray_ptr a = m->barrays; a; a = a->next)
        if (!a->mem_buffer) slack += (size_t)a->rows_in_array * sizeof(void *) + 512;
    if (maximum_space <= SIZE_MAX - slack) cc_arena_reserve(m->arena, maximum_space + slack);
    for (jvirt_sarray_ptr a = m->sarrays; a; a = a->next) {
        if (a->mem_buffer) continue;
        a->mem_buffer = jmem_alloc_sarray(cinfo, JPOOL_IMAGE, a->samplesperrow, a->rows_in_array);
        a->first_undef_row = 0;
    }
    for (jvirt_barray_ptr a = m->barrays; a; a = a->next) {
        if (a->mem_buffer) continue;
        a->mem_buffer = jmem_alloc_barray(cinfo, JPOOL_IMAGE, a->blocksperrow, a->rows_in_array);
        a->first_undef_row = 0;
    }
}

/* jmemmgr's access checks and pre-zeroing, for an array that is all in memory: rows
 * [start_row, start_row + num_rows) are returned; rows never written before are zeroed first
 * when pre_zero (reading ahead of the writer is allowed then), an error otherwise. Returns the
 * first row to zero and sets *end to one past the last (equal: nothing to zero). */
static JDIMENSION jmem_access_check(j_common_ptr cinfo, int realized, JDIMENSION rows_in_array,
                                    JDIMENSION maxaccess, JDIMENSION *first_undef_row, boolean pre_zero,
                                    JDIMENSION start_row, JDIMENSION num_rows, boolean writable,
                                    JDIMENSION *end) {
    JDIMENSION end_row = start_row + num_rows;
    *end = 0;
    if (end_row > rows_in_array || num_rows > maxaccess || !realized) ERREXIT(cinfo, JERR_BAD_VIRTUAL_ACCESS);
    if (*first_undef_row >= end_row) return 0;
    JDIMENSION undef_row = *first_undef_row;
    if (undef_row < start_row) {
        if (writable) ERREXIT(cinfo, JERR_BAD_VIRTUAL_ACCESS); /* the writer skipped rows */
        undef_row = start_row;
    }
    if (writable) *first_undef_row = end_row;
    if (!pre_zero) {
        if (!writable) ERREXIT(cinfo, JERR_BAD_VIRTUAL_ACCESS); /* reading rows never written */
        return 0;
    }
    *end = end_row;
    return undef_row;
}

static JSAMPARRAY jmem_access_virt_sarray(j_common_ptr cinfo, jvirt_sarray_ptr a, JDIMENSION start_row,
                                          JDIMENSION num_rows, boolean writable) {
    JDIMENSION end, row = jmem_access_check(cinfo, a->mem_buffer != NULL, a->rows_in_array, a->maxaccess,
                                            &a->first_undef_row, a->pre_zero, start_row, num_rows, writable, &end);
    for (; row < end; row++) memset(a->mem_buffer[row], 0, (size_t)a->samplesperrow * sizeof(JSAMPLE));
    return a->mem_buffer + start_row;
}

static JBLOCKARRAY jmem_access_virt_barray(j_common_ptr cinfo, jvirt_barray_ptr a, JDIMENSION start_row,
                                           JDIMENSION num_rows, boolean writable) {
    JDIMENSION end, row = jmem_access_check(cinfo, a->mem_buffer != NULL, a->rows_in_array, a->maxaccess,
                                            &a->first_undef_row, a->pre_zero, start_row, num_rows, writable, &end);
    for (; row < end; row++) memset(a->mem_buffer[row], 0, (size_t)a->blocksperrow * sizeof(JBLOCK));
    return a->mem_buffer + start_row;
}

static void jmem_free_pool(j_common_ptr cinfo, int pool_id) {
    cc_jmem *m = JMEM(cinfo);
    if (pool_id == JPOOL_IMAGE) {
        /* Forgotten, not freed: the arena takes its memory back at cc_arena_reset. */
        m->sarrays = NULL;
        m->barrays = NULL;
        m->small_pools = NULL;
        m->image_space = 0;
    }
    /* The library's own checks (pool id) and its (empty) image pool. */
    LIB_CALL(m, cinfo, m->lib->free_pool(cinfo, pool_id));
}

static void jmem_self_destruct(j_common_ptr cinfo) {
    cc_jmem *m = JMEM(cinfo);
    m->sarrays = NULL;
    m->barrays = NULL;
    m->small_pools = NULL;
    cinfo->mem = m->lib; /* the library's manager frees itself and its pools, sets mem to NULL */
    m->lib->self_destruct(cinfo);
}

/* After jpeg_create_decompress: libjpeg's image pool from `arena` (see the top of this file). `m`
 * outlives the decompressor (jpeg_codec.c keeps it in jdec's context). */
void cc_jmem_install(j_common_ptr cinfo, cc_jmem *m, cc_arena *arena) {
    memset(m, 0, sizeof *m);
    m->lib = cinfo->mem;
    m->arena = arena;
    m->max_alloc_chunk = (size_t)m->lib->max_alloc_chunk;
    m->pub = *m->lib; /* max_memory_to_use (JPEGMEM) and max_alloc_chunk as the library set them */
    m->pub.alloc_small = jmem_alloc_small;
    m->pub.alloc_large = jmem_alloc_large;
    m->pub.alloc_sarray = jmem_alloc_sarray;
    m->pub.alloc_barray = jmem_alloc_barray;
    m->pub.request_virt_sarray = jmem_request_virt_sarray;
    m->pub.request_virt_barray = jmem_request_virt_barray;
    m->pub.realize_virt_arrays = jmem_realize_virt_arrays;
    m->pub.access_virt_sarray = jmem_access_virt_sarray;
    m->pub.access_virt_barray = jmem_access_virt_barray;
    m->pub.free_pool = jmem_free_pool;
    m->pub.self_destruct = jmem_self_destruct;
    cinfo->mem = &m->pub;
}
