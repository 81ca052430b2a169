/* A longjmp out of a call that the arena's memory manager passes on to libjpeg's own manager
 * (the decode arenas, which take libjpeg's page faults away, must survive it), built and run
 * under ASan by scripts/arena-limit-test.sh. It includes jpeg_codec.c to reach its static
 * decode context and error handler (the manager is jpeg_memory.c's, cc_jmem_install): after
 * some image-pool allocations from the arena, a JPOOL_PERMANENT
 * request too large for libjpeg makes jmemmgr.c raise "Insufficient memory (case 7)" while
 * cinfo->mem points at the library's manager. Then, as jdec does: jpeg_destroy_decompress must
 * free everything (LeakSanitizer checks at exit), cc_arena_reset must leave the arena usable, and a
 * real decode with it must match one without. Exit 1 on failure. */
#include "../Sources/CCodecs/jpeg_codec.c"

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #cond);      \
            return 1;                                                      \
        }                                                                  \
    } while (0)

static int raise_in_delegated_call(cc_arena *arena) {
    jdec_ctx *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    j_decompress_ptr d = &c->cinfo;
    d->err = &c->err.pub;
    install_errors(&c->err, 0);
    if (setjmp(c->err.jump) == 0) {
        jpeg_create_decompress(d);
        cc_jmem_install((j_common_ptr)d, &c->jmem, arena);
        d->mem->alloc_small((j_common_ptr)d, JPOOL_IMAGE, 1000);
        d->mem->alloc_large((j_common_ptr)d, JPOOL_IMAGE, (size_t)3 << 20);
        d->mem->alloc_sarray((j_common_ptr)d, JPOOL_PERMANENT, 500, 4); /* passed on, succeeds */
        d->mem->alloc_small((j_common_ptr)d, JPOOL_PERMANENT, (size_t)-1); /* passed on, raises */
        fprintf(stderr, "FAILED: no error raised\n");
        return 1;
    }
    CHECK(strcmp(c->err.message, "Insufficient memory (case 7)") == 0);
    CHECK(d->mem == c->jmem.lib); /* the jump left the library's manager in place */
    jpeg_destroy_decompress(d);
    CHECK(d->mem == NULL);
    cc_arena_reset(arena);
    free(c);
    return 0;
}

int main(void) {
    cc_arena *arena = cc_arena_create();
    for (int i = 0; i < 3; i++)
        if (raise_in_delegated_call(arena)) return 1;
    printf("arena retained after the jumps: %.1f MB\n", (double)cc_arena_retained(arena) / 1048576.0);

    /* The arena still serves a real decode, with the same result as without it. */
    cc_image src = {0};
    src.width = 640;
    src.height = 480;
    src.channels = 3;
    src.bytes_per_sample = 1;
    src.stride = 640 * 3;
    src.pixels = malloc(src.stride * src.height);
    for (size_t i = 0; i < src.stride * src.height; i++) src.pixels[i] = (uint8_t)(i * 31 + i / 640);
    uint8_t *jpg;
    size_t len;
    CHECK(cc_encode_jpeg(&src, 90, 1, 0, &jpg, &len).status == CC_OK);
    free(src.pixels);
    for (int scale = 1; scale <= 8; scale *= 2) {
        cc_decode_options opt = {0, 0, scale, 1, 0, 0, 0, NULL};
        cc_info info;
        cc_image a, b;
        CHECK(cc_decode(jpg, len, &opt, &info, &a).status == CC_OK);
        opt.arena = arena;
        CHECK(cc_decode(jpg, len, &opt, &info, &b).status == CC_OK);
        CHECK(a.width == b.width && a.height == b.height && a.stride == b.stride);
        CHECK(memcmp(a.pixels, b.pixels, a.stride * a.height) == 0);
        cc_image_free(&a);
        cc_image_free(&b);
    }
    free(jpg);
    cc_arena_release(arena);
    CHECK(cc_arena_retained(arena) == 0);
    cc_arena_destroy(arena);
    printf("longjmp out of a passed-on call: ok\n");
    return 0;
}
