/* libjpeg's memory limit with and without a decode arena, built and run by
 * scripts/arena-limit-test.sh. jpeg_codec.c is compiled with CC_JPEG_MAX_MEMORY read from
 * cc_test_max_memory, so the limit can move byte by byte: for each test image (progressive,
 * whose coefficient arrays are libjpeg's virtual arrays, and baseline) this finds the smallest
 * limit at which a decode without an arena succeeds, then checks that a decode with an arena
 * (kept dirty across every decode of the run) gives the same status, message and pixels at every
 * limit in a window around it: the arena's memory manager must count what libjpeg's jmemmgr.c
 * counts, byte for byte. Then the real limit (1 GiB) against a header claiming 30000x30000.
 * Exit 1 on any difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ccodecs.h"

long cc_test_max_memory = 1024L * 1024L * 1024L;

static cc_arena *arena;
static int failures;

typedef struct {
    cc_result r;
    cc_image img;
} outcome;

static outcome decode(const uint8_t *data, size_t len, int scale, int with_arena) {
    outcome o;
    cc_decode_options opt;
    memset(&opt, 0, sizeof opt);
    opt.scale_denom = scale;
    opt.shrink = 1;
    opt.arena = with_arena ? arena : NULL;
    cc_info info;
    o.r = cc_decode(data, len, &opt, &info, &o.img);
    return o;
}

static int same(const outcome *a, const outcome *b) {
    if (a->r.status != b->r.status || strcmp(a->r.message, b->r.message) != 0) return 0;
    if (!a->img.pixels || !b->img.pixels) return !a->img.pixels && !b->img.pixels;
    if (a->img.width != b->img.width || a->img.height != b->img.height || a->img.channels != b->img.channels)
        return 0;
    return memcmp(a->img.pixels, b->img.pixels, a->img.stride * a->img.height) == 0;
}

static int compare_at(const char *name, const uint8_t *data, size_t len, int scale, long limit, int verbose) {
    cc_test_max_memory = limit;
    outcome a = decode(data, len, scale, 0), b = decode(data, len, scale, 1);
    int ok = same(&a, &b);
    if (!ok || verbose)
        printf("%s %s at 1/%d, limit %ld: without arena %d \"%s\", with arena %d \"%s\"\n", ok ? "  " : "DIFFERENT", name,
               scale, limit, a.r.status, a.r.message, b.r.status, b.r.message);
    cc_image_free(&a.img);
    cc_image_free(&b.img);
    return ok;
}

static void test_image(const char *name, const uint8_t *data, size_t len, int scale) {
    /* Smallest limit at which the decode without an arena succeeds (0 = no limit in libjpeg, so
     * start at 1). */
    long lo = 1, hi = 256L << 20;
    cc_test_max_memory = hi;
    outcome o = decode(data, len, scale, 0);
    cc_image_free(&o.img);
    if (o.r.status != CC_OK) {
        printf("FAILED %s: does not decode at all: %s\n", name, o.r.message);
        failures++;
        return;
    }
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        cc_test_max_memory = mid;
        o = decode(data, len, scale, 0);
        cc_image_free(&o.img);
        if (o.r.status == CC_OK) hi = mid;
        else lo = mid + 1;
    }
    int bad = 0;
    for (long limit = lo - 40; limit <= lo + 40; limit++)
        if (limit > 0 && !compare_at(name, data, len, scale, limit, 0)) bad++;
    compare_at(name, data, len, scale, lo - 1, 1);
    compare_at(name, data, len, scale, lo, 1);
    printf("%s %s at 1/%d: threshold %ld bytes, %d differences in the 81 limits around it\n", bad ? "FAILED" : "ok    ",
           name, scale, lo, bad);
    failures += bad;
}

static uint8_t *encode(uint32_t w, uint32_t h, int channels, int progressive, size_t *len) {
    cc_image img;
    memset(&img, 0, sizeof img);
    img.width = w;
    img.height = h;
    img.channels = channels;
    img.bytes_per_sample = 1;
    img.stride = (size_t)w * (size_t)channels;
    img.pixels = malloc(img.stride * h);
    for (size_t i = 0; i < img.stride * h; i++) img.pixels[i] = (uint8_t)(i * 7 + i / 13);
    uint8_t *out = NULL;
    cc_result r = cc_encode_jpeg(&img, 85, progressive, 0, &out, len);
    free(img.pixels);
    if (r.status != CC_OK) {
        fprintf(stderr, "encode: %s\n", r.message);
        exit(2);
    }
    return out;
}

int main(void) {
    arena = cc_arena_create();
    struct {
        const char *name;
        uint32_t w, h;
        int channels, progressive;
    } images[] = {
        {"gray progressive 4000x400", 4000, 400, 1, 1},
        {"RGB 4:2:0 progressive 1000x700", 1000, 700, 3, 1},
        {"RGB 4:2:0 progressive 8000x200", 8000, 200, 3, 1},
        {"RGB 4:2:0 baseline 1500x900", 1500, 900, 3, 0},
    };
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        size_t len;
        uint8_t *jpg = encode(images[i].w, images[i].h, images[i].channels, images[i].progressive, &len);
        test_image(images[i].name, jpg, len, 1);
        test_image(images[i].name, jpg, len, 8);
        free(jpg);
    }

    /* The real limit: a progressive gray header patched to 30000x30000 (1.76 GB of coefficients). */
    size_t len;
    uint8_t *jpg = encode(64, 64, 1, 1, &len);
    for (size_t i = 2; i + 9 < len; i++)
        if (jpg[i] == 0xFF && jpg[i + 1] == 0xC2) {
            jpg[i + 5] = 30000 >> 8; jpg[i + 6] = 30000 & 0xFF; /* height */
            jpg[i + 7] = 30000 >> 8; jpg[i + 8] = 30000 & 0xFF; /* width */
            break;
        }
    for (int scale = 1; scale <= 8; scale *= 8)
        if (!compare_at("30000x30000 progressive header", jpg, len, scale, 1024L * 1024L * 1024L, 1)) failures++;
    free(jpg);
    printf("arena retained %.1f MB\n", (double)cc_arena_retained(arena) / 1048576.0);
    cc_arena_destroy(arena);
    printf(failures ? "FAILED\n" : "all the same\n");
    return failures ? 1 : 0;
}
