/* Decode arena bench, built and run by scripts/bench-arena.sh.
 *
 *   bench-arena null  FILE...   decode each file with arena = NULL (libjpeg mallocs per image)
 *   bench-arena arena FILE...   the same with one cc_arena reused across the files
 *   bench-arena check FILE...   decode each file both ways; exit 1 unless status, message, size
 *                               and pixels are byte-identical
 *
 * Decodes as thumbnails do: scale_denom 8, every_scan 0, color_manage 1, max_pixels 0. The
 * malloc policy is the process's (mmap and trim thresholds at 128 KiB), set first. The files are
 * read into memory before the clock starts; the figures (user+sys CPU, minor page faults, peak
 * RSS) cover the decodes only, except peak RSS, which is the process's (baseline printed too).
 * One line of key=value pairs on stdout; with BENCH_HASHES=1 also "hash FILE STATUS FNV64" lines,
 * with BENCH_PERFILE=1 each file's minor faults on stderr. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "ccodecs.h"

typedef struct {
    const char *path;
    uint8_t *data;
    size_t len;
} input;

static int load(input *in) {
    FILE *f = fopen(in->path, "rb");
    if (!f) return -1;
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return -1; }
    long n = ftell(f);
    rewind(f);
    in->data = malloc(n > 0 ? (size_t)n : 1);
    in->len = n > 0 ? (size_t)n : 0;
    int ok = in->data && fread(in->data, 1, in->len, f) == in->len;
    fclose(f);
    return ok ? 0 : -1;
}

static cc_result decode(const input *in, cc_arena *arena, cc_image *img) {
    cc_decode_options opt;
    memset(&opt, 0, sizeof opt);
    opt.max_pixels = 0;
    opt.lenient = 0;
    opt.scale_denom = 8;
    opt.shrink = 1;
    opt.color_manage = 1;
    opt.every_scan = 0;
    opt.arena = arena;
    cc_info info;
    return cc_decode(in->data, in->len, &opt, &info, img);
}

static uint64_t fnv64(const cc_image *img) {
    uint64_t h = 1469598103934665603ull;
    size_t row = (size_t)img->width * (size_t)img->channels * (size_t)img->bytes_per_sample;
    for (uint32_t y = 0; img->pixels && y < img->height; y++) {
        const uint8_t *p = img->pixels + (size_t)y * img->stride;
        for (size_t i = 0; i < row; i++) h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

static int same(const cc_result *a, const cc_image *ia, const cc_result *b, const cc_image *ib) {
    if (a->status != b->status || strcmp(a->message, b->message) != 0) return 0;
    if (!ia->pixels || !ib->pixels) return !ia->pixels && !ib->pixels;
    if (ia->width != ib->width || ia->height != ib->height || ia->channels != ib->channels ||
        ia->bytes_per_sample != ib->bytes_per_sample)
        return 0;
    size_t row = (size_t)ia->width * (size_t)ia->channels * (size_t)ia->bytes_per_sample;
    for (uint32_t y = 0; y < ia->height; y++)
        if (memcmp(ia->pixels + (size_t)y * ia->stride, ib->pixels + (size_t)y * ib->stride, row) != 0) return 0;
    return 1;
}

int main(int argc, char **argv) {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    if (argc < 3) {
        fprintf(stderr, "usage: %s null|arena|check FILE...\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int n = argc - 2;
    input *in = calloc((size_t)n, sizeof *in);
    for (int i = 0; i < n; i++) {
        in[i].path = argv[i + 2];
        if (load(&in[i]) != 0) {
            fprintf(stderr, "cannot read %s\n", in[i].path);
            return 2;
        }
    }
    int hashes = getenv("BENCH_HASHES") != NULL;
    int perfile = getenv("BENCH_PERFILE") != NULL; /* faults per file on stderr */
    cc_arena *arena = NULL;
    if (strcmp(mode, "null") != 0) {
        arena = cc_arena_create();
        if (!arena) return 2;
    }

    if (strcmp(mode, "check") == 0) {
        int bad = 0;
        for (int i = 0; i < n; i++) {
            cc_image a, b;
            cc_result ra = decode(&in[i], NULL, &a);
            cc_result rb = decode(&in[i], arena, &b);
            if (!same(&ra, &a, &rb, &b)) {
                bad++;
                fprintf(stderr, "DIFFERENT: %s (status %d/%d: %s / %s)\n", in[i].path, ra.status, rb.status,
                        ra.message, rb.message);
            }
            cc_image_free(&a);
            cc_image_free(&b);
        }
        printf("check files=%d different=%d arena_retained_mb=%.1f\n", n, bad,
               (double)cc_arena_retained(arena) / 1048576.0);
        cc_arena_destroy(arena);
        return bad ? 1 : 0;
    }

    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        cc_image img;
        struct rusage f0, f1;
        if (perfile) getrusage(RUSAGE_SELF, &f0);
        cc_result r = decode(&in[i], arena, &img);
        if (perfile) {
            getrusage(RUSAGE_SELF, &f1);
            fprintf(stderr, "%-60s minflt %6ld  out %ux%u  retained %.1f MB\n", in[i].path, f1.ru_minflt - f0.ru_minflt,
                    img.width, img.height, (double)cc_arena_retained(arena) / 1048576.0);
        }
        if (r.status != CC_OK) failed++;
        if (hashes) printf("hash %s %d %016llx\n", in[i].path, (int)r.status, (unsigned long long)fnv64(&img));
        cc_image_free(&img);
    }
    getrusage(RUSAGE_SELF, &r1);
    double cpu = seconds(r1.ru_utime) - seconds(r0.ru_utime) + seconds(r1.ru_stime) - seconds(r0.ru_stime);
    printf("mode=%s files=%d failed=%d cpu_s=%.3f user_s=%.3f sys_s=%.3f minflt=%ld peak_rss_mb=%.1f "
           "baseline_rss_mb=%.1f arena_retained_mb=%.1f\n",
           mode, n, failed, cpu, seconds(r1.ru_utime) - seconds(r0.ru_utime),
           seconds(r1.ru_stime) - seconds(r0.ru_stime), r1.ru_minflt - r0.ru_minflt, r1.ru_maxrss / 1024.0,
           r0.ru_maxrss / 1024.0, (double)cc_arena_retained(arena) / 1048576.0);
    cc_arena_destroy(arena);
    for (int i = 0; i < n; i++) free(in[i].data);
    free(in);
    return 0;
}
