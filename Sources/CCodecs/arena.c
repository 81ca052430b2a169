/* A decode arena: the big working buffers of one decode (libjpeg's JPOOL_IMAGE pool:
 * coefficient arrays of progressive files, row buffers) are bump-allocated from blocks that an
 * imaging worker keeps from one image to the next, so the next image writes to pages that are
 * already mapped instead of having the kernel fault in and zero fresh ones.
 *
 * One decode at a time per arena: the arena belongs to one worker and is not locked. There is
 * no global state; every arena is its own.
 *
 * Blocks come from malloc, not mmap: ARCHITECTURE.md §3 allows ISO C headers only (no <sys/mman.h>), and
 * with the process's 128 KiB mmap threshold glibc serves every block of 1 MiB or more with its
 * own mmap and munmaps it on free anyway, so cc_arena_release does give the pages back. malloc
 * also keeps the blocks visible to ASan (leaks, and the poisoning below).
 *
 * Growth: an allocation goes to the first block with room, else to the largest block this decode
 * has not touched, grown to fit (block_for), else to a new block of at least CC_ARENA_GRAIN.
 * cc_arena_reserve makes room for several allocations in one block the same way. cc_arena_reset keeps a lone block as it is; when the decode needed several, it
 * replaces them by one block of that decode's total (the sum of its rounded allocations, rounded
 * up to CC_ARENA_GRAIN; the largest block resized, the others freed), so the same sequence of
 * allocations fits in it next time: a run of similar images settles on one block and maps
 * nothing new. The arena never shrinks by itself: it holds the largest decode it has served
 * until cc_arena_release (cc_arena_retained says how much that is, so the owner can decide). */
#include <stdint.h>
#include <stdlib.h>
#include "internal.h"

#define CC_ARENA_ALIGN ((size_t)64)        /* cache line; more than libjpeg's ALIGN_SIZE (32) */
#define CC_ARENA_GRAIN ((size_t)1 << 20)   /* block sizes are multiples of 1 MiB */

/* Under ASan, the free part of every block is poisoned and each allocation is followed by a
 * poisoned gap, so an overrun or a use after cc_arena_reset is still reported although the
 * memory is never given back to malloc. Declared here rather than via <sanitizer/asan_interface.h>
 * (ISO C headers only). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CC_ARENA_ASAN 1
#endif
#endif
#if !defined(CC_ARENA_ASAN) && defined(__SANITIZE_ADDRESS__)
#define CC_ARENA_ASAN 1
#endif
#ifdef CC_ARENA_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define POISON(p, n) __asan_poison_memory_region((p), (n))
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#define REDZONE CC_ARENA_ALIGN
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define REDZONE ((size_t)0)
#endif

typedef struct cc_arena_block {
    struct cc_arena_block *next;
    unsigned char *data; /* the first CC_ARENA_ALIGN boundary after this header */
    size_t size;         /* usable bytes from data */
    size_t used;
    size_t bytes;        /* what was asked of malloc */
} cc_arena_block;

struct cc_arena {
    cc_arena_block *blocks;
    size_t nblocks;
    size_t used;     /* bytes handed out since the last reset, rounded as they were */
    size_t retained; /* bytes of all blocks, headers included */
    size_t peak;     /* the most `retained` has been */
};

/* A block whose usable part holds at least `need` bytes, new, or `old` resized: realloc,
 * because glibc moves a big block with mremap, so the pages it has faulted in stay mapped. Its
 * contents are dead (cc_arena_reset), only the header is rewritten. NULL when out of memory or
 * when the size does not fit in size_t; `old` is then still allocated. */
static cc_arena_block *block_sized(cc_arena_block *old, size_t need) {
    size_t overhead = sizeof(cc_arena_block) + CC_ARENA_ALIGN - 1;
    if (need > SIZE_MAX - overhead - (CC_ARENA_GRAIN - 1)) return NULL;
    size_t bytes = (need + overhead + CC_ARENA_GRAIN - 1) / CC_ARENA_GRAIN * CC_ARENA_GRAIN;
    cc_arena_block *b = old ? realloc(old, bytes) : malloc(bytes);
    if (!b) return NULL;
    uintptr_t start = (uintptr_t)(b + 1);
    b->data = (unsigned char *)b + ((start + CC_ARENA_ALIGN - 1) / CC_ARENA_ALIGN * CC_ARENA_ALIGN - (uintptr_t)b);
    b->next = NULL;
    b->size = bytes - (size_t)(b->data - (unsigned char *)b);
    b->used = 0;
    b->bytes = bytes;
    POISON(b->data, b->size);
    return b;
}

static void block_free(cc_arena_block *b) {
    UNPOISON(b->data, b->size);
    free(b);
}

cc_arena *cc_arena_create(void) { return calloc(1, sizeof(cc_arena)); }

void cc_arena_release(cc_arena *arena) {
    if (!arena) return;
    cc_arena_block *b = arena->blocks;
    while (b) {
        cc_arena_block *next = b->next;
        block_free(b);
        b = next;
    }
    arena->blocks = NULL;
    arena->nblocks = 0;
    arena->used = 0;
    arena->retained = 0;
}

void cc_arena_destroy(cc_arena *arena) {
    cc_arena_release(arena);
    free(arena);
}

size_t cc_arena_retained(const cc_arena *arena) { return arena ? arena->retained : 0; }

size_t cc_arena_peak(const cc_arena *arena) { return arena ? arena->peak : 0; }

/* A block with room for `need` when none has it: the largest block this decode has not touched
 * yet, grown (realloc: its pages stay mapped), else a new one. Why: an arena kept from a smaller
 * image met a bigger one by adding a block beside the untouched one it already held, so during
 * that decode it held both, unreserved: 30 MB over `--memory` for a 4000x3000 PNG inflated whole
 * after a slightly smaller one (measured; peak 182 MB where the reservations came to 130). */
static cc_arena_block *block_for(cc_arena *arena, size_t need) {
    cc_arena_block **link = NULL;
    for (cc_arena_block **p = &arena->blocks; *p; p = &(*p)->next)
        if ((*p)->used == 0 && (!link || (*p)->bytes > (*link)->bytes)) link = p;
    if (link) {
        cc_arena_block *old = *link, *next = old->next;
        size_t before = old->bytes;
        UNPOISON(old->data, old->size);
        cc_arena_block *b = block_sized(old, need);
        if (!b) {
            POISON(old->data, old->size);
            return NULL;
        }
        b->next = next;
        *link = b;
        arena->retained = arena->retained - before + b->bytes;
        if (arena->retained > arena->peak) arena->peak = arena->retained;
        return b;
    }
    cc_arena_block *b = block_sized(NULL, need);
    if (!b) return NULL;
    b->next = arena->blocks;
    arena->blocks = b;
    arena->nblocks++;
    arena->retained += b->bytes;
    if (arena->retained > arena->peak) arena->peak = arena->retained;
    return b;
}

void *cc_arena_alloc(cc_arena *arena, size_t size) {
    if (size == 0) size = 1; /* a distinct, valid pointer, like malloc's */
    if (size > SIZE_MAX - (CC_ARENA_ALIGN - 1) - REDZONE) return NULL;
    size_t rounded = (size + CC_ARENA_ALIGN - 1) / CC_ARENA_ALIGN * CC_ARENA_ALIGN + REDZONE;
    if (arena->used > SIZE_MAX - rounded) return NULL;
    cc_arena_block *b = arena->blocks;
    while (b && b->size - b->used < rounded) b = b->next; /* first fit: there are a few blocks */
    if (!b && !(b = block_for(arena, rounded))) return NULL;
    unsigned char *p = b->data + b->used;
    b->used += rounded;
    arena->used += rounded;
    UNPOISON(p, size);
    return p;
}

/* Why: libjpeg realizes a progressive file's coefficient arrays one component at a time, so
 * without this each became a block of its own, and the reset after the first such image grew the
 * largest one (a third of them) into a block of the total: two thirds of that image's coefficient
 * memory faulted in afresh for the second image as well (17k page faults per 4096x4096 4:4:4
 * photo, measured). Reserved up front, the arrays share one block, which the reset keeps as it is
 * or grows in place. Best effort: without the memory, allocations fail (or not) as before. */
void cc_arena_reserve(cc_arena *arena, size_t size) {
    for (cc_arena_block *b = arena->blocks; b; b = b->next)
        if (b->size - b->used >= size) return;
    (void)block_for(arena, size);
}

void cc_arena_reset(cc_arena *arena) {
    if (!arena || !arena->blocks) return;
    size_t used = arena->used;
    arena->used = 0;
    if (arena->nblocks == 1) {
        arena->blocks->used = 0;
        POISON(arena->blocks->data, arena->blocks->size);
        return;
    }
    /* Several blocks: one that holds this whole decode replaces them, grown from the largest so
     * its pages stay mapped. If it cannot be had, the arena is simply empty and grows again. */
    cc_arena_block *largest = arena->blocks;
    for (cc_arena_block *b = arena->blocks; b; b = b->next)
        if (b->bytes > largest->bytes) largest = b;
    for (cc_arena_block *b = arena->blocks, *next; b; b = next) {
        next = b->next;
        if (b != largest) block_free(b);
    }
    UNPOISON(largest->data, largest->size);
    cc_arena_block *one = block_sized(largest, used);
    if (!one) {
        free(largest);
        arena->blocks = NULL;
        arena->nblocks = 0;
        arena->retained = 0;
        return;
    }
    arena->blocks = one;
    arena->nblocks = 1;
    arena->retained = one->bytes;
    if (arena->retained > arena->peak) arena->peak = arena->retained;
}
