/* libFuzzer harness over CCodecs: probe, then decode at full and reduced size, then the pixel
 * pipeline (resize, orient, flatten, encode as JPEG, PNG and WebP) on whatever decoded. Built
 * twice: FUZZ_FORMAT picks which format's magic bytes are forced onto the input so each decoder
 * gets the whole budget.
 *   FUZZ_FORMAT=1  JPEG (input prefixed with FF D8 FF when it lacks it)
 *   FUZZ_FORMAT=2  PNG  (input prefixed with the PNG signature when it lacks it)
 * The pixel limit is small so the fuzzer explores parsing, not giant allocations.
 * Every decode runs twice, with arena = NULL and with one cc_arena kept across inputs (issue 26;
 * dirty with the previous inputs' buffers, released now and then), and aborts if the two differ
 * in status, message or pixels: the arena's memory manager must not change what libjpeg does.
 *
 * PNG only: the input is decoded once more with every chunk's CRC made right (a mutated file
 * almost never has them), once streaming through zlib and once inflated ahead by libdeflate
 * (whole_inflate_max, into the arena), and the two must agree exactly, in status, message and
 * pixels: the libdeflate path promises the zlib path's results, errors included, except for the
 * streams that break a deflate rule libdeflate does not enforce (zlib's messages for them are
 * listed in zlib_only_rule), where zlib refuses and libdeflate decodes: a known difference.
 *
 * JPEG only: the input is decoded once more at 1/8 with the scans the image does not depend on
 * left out (jpeg_scans.c) and reading every scan up to the last needed one (the way before), strict
 * and lenient: wherever the second decodes, the first must decode to the same pixels. The first
 * may decode where the second refuses (damage in the data of a scan it leaves out), never the
 * other way round. Built with CC_CHECK_SCAN_WALK, the codec also aborts when libjpeg ends the
 * scans the walk kept with coefficients the image needs still incomplete (the walk misread the
 * file: an FF D9 inside a scan left out once passed for the end of the file). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "ccodecs.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT 1
#endif

static void pipeline(const cc_image *img, int orientation) {
    cc_image small = {0}, turned = {0}, flat = {0};
    uint32_t w = img->width > 48 ? 48 : img->width, h = img->height > 48 ? 48 : img->height;
    if (cc_resize(img, 0, 0, img->width, img->height, w, h, &small).status != CC_OK) return;
    if (cc_orient(&small, orientation, &turned).status == CC_OK) {
        const cc_image *enc = &turned;
        if ((turned.channels == 2 || turned.channels == 4) && cc_flatten(&turned, 255, &flat).status == CC_OK)
            enc = &flat;
        uint8_t *out = NULL;
        size_t len = 0;
        if (cc_encode_jpeg(enc, 80, orientation & 1, 1, &out, &len).status == CC_OK) cc_free(out);
        if (cc_encode_png(&turned, 1, &out, &len).status == CC_OK) cc_free(out);
        /* WebP takes every channel count as it is (gray expanded, alpha kept). */
        if (cc_encode_webp(&turned, 1 + orientation * 12, &out, &len).status == CC_OK) cc_free(out);
    }
    cc_image_free(&small);
    cc_image_free(&turned);
    cc_image_free(&flat);
}

static int same_image(const cc_image *a, const cc_image *b) {
    if (!a->pixels || !b->pixels) return !a->pixels && !b->pixels;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes_per_sample != b->bytes_per_sample)
        return 0;
    size_t row = (size_t)a->width * (size_t)a->channels * (size_t)a->bytes_per_sample;
    for (uint32_t y = 0; y < a->height; y++)
        if (memcmp(a->pixels + (size_t)y * a->stride, b->pixels + (size_t)y * b->stride, row) != 0) return 0;
    return 1;
}

/* One worker's arena, dirty with earlier inputs' buffers, released now and then. */
static cc_arena *worker_arena(void) {
    static cc_arena *arena;
    static unsigned runs;
    if (!arena && !(arena = cc_arena_create())) return NULL;
    if (++runs % 500 == 0) cc_arena_release(arena); /* and it stays usable */
    return arena;
}

/* The same decode with the worker's arena; abort unless it matches the one without. */
static void check_arena(const uint8_t *buf, size_t len, cc_decode_options opt, cc_result plain,
                        const cc_image *plain_img) {
    cc_arena *arena = worker_arena();
    if (!arena) return;
    opt.arena = arena;
    cc_info info;
    cc_image img;
    cc_result r = cc_decode(buf, len, &opt, &info, &img);
    if (r.status != plain.status || strcmp(r.message, plain.message) != 0 || !same_image(&img, plain_img)) {
        fprintf(stderr, "arena decode differs (scale %d, lenient %d): status %d \"%s\" without, %d \"%s\" with\n",
                opt.scale_denom, opt.lenient, plain.status, plain.message, r.status, r.message);
        abort();
    }
    cc_image_free(&img);
}

static void fix_png_crcs(uint8_t *d, size_t len) {
    size_t pos = 8;
    while (pos + 12 <= len) {
        uint32_t n = (uint32_t)d[pos] << 24 | (uint32_t)d[pos + 1] << 16 | (uint32_t)d[pos + 2] << 8 | d[pos + 3];
        if (n > len - pos - 12) return;
        uint32_t crc = libdeflate_crc32(0, d + pos + 4, (size_t)n + 4);
        for (int i = 0; i < 4; i++) d[pos + 8 + n + i] = (uint8_t)(crc >> (24 - 8 * i));
        pos += (size_t)n + 12;
    }
}

/* zlib's messages for deflate rules libdeflate does not enforce (HLIT > 286, HDIST > 30, a
 * code-length repeat past the list, literal/length 286-287, distance 30-31, a single-codeword
 * code-length code): decoding them is libdeflate's documented leniency, not a bug here. */
static int zlib_only_rule(const char *message) {
    static const char *rules[] = {"too many length or distance symbols", "invalid bit length repeat",
                                  "invalid literal/length code", "invalid distance code",
                                  "invalid code lengths set"};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (strstr(message, rules[i])) return 1;
    return 0;
}

static void png_zlib_vs_libdeflate(const uint8_t *data, size_t len) {
    uint8_t *d = malloc(len);
    if (!d) return;
    memcpy(d, data, len);
    fix_png_crcs(d, len);
    for (int variant = 0; variant < 3; variant++) {
        static const int shrink[3] = {1, 3, 8}, lenient[3] = {0, 1, 0};
        cc_image img[2];
        cc_info info[2];
        cc_result r[2];
        for (int m = 0; m < 2; m++) {
            cc_decode_options opt = {1u << 22, lenient[variant], 1, shrink[variant], variant == 1, 0, 0, NULL};
            if (m) {
                opt.whole_inflate_max = (size_t)1 << 26;
                opt.arena = worker_arena();
            }
            r[m] = cc_decode(d, len, &opt, &info[m], &img[m]);
        }
        int tolerated = r[0].status != CC_OK && r[1].status == CC_OK && info[1].png_whole_inflate &&
                        zlib_only_rule(r[0].message);
        if (!tolerated &&
            (r[0].status != r[1].status || strcmp(r[0].message, r[1].message) != 0 || !same_image(&img[0], &img[1]))) {
            fprintf(stderr, "zlib and libdeflate paths differ (shrink %d, lenient %d): %d \"%s\" / %d \"%s\"\n",
                    shrink[variant], lenient[variant], r[0].status, r[0].message, r[1].status, r[1].message);
            abort();
        }
        cc_image_free(&img[0]);
        cc_image_free(&img[1]);
    }
    free(d);
}

static void jpeg_scans_left_out(const uint8_t *buf, size_t len) {
    for (int lenient = 0; lenient < 2; lenient++) {
        cc_image img[2];
        cc_info info[2];
        cc_result r[2];
        for (int m = 0; m < 2; m++) {
            cc_decode_options opt = {1u << 22, lenient, 8, 8, 0, m ? CC_SCANS_UP_TO_NEEDED : CC_SCANS_NEEDED, 0, NULL};
            r[m] = cc_decode(buf, len, &opt, &info[m], &img[m]);
        }
        if (r[1].status == CC_OK && (r[0].status != CC_OK || !same_image(&img[0], &img[1]))) {
            fprintf(stderr, "leaving scans out changed the 1/8 decode (lenient %d): %d \"%s\" / %d \"%s\"\n",
                    lenient, r[0].status, r[0].message, r[1].status, r[1].message);
            abort();
        }
        cc_image_free(&img[0]);
        cc_image_free(&img[1]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint8_t jpeg_magic[3] = {0xFF, 0xD8, 0xFF};
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    const uint8_t *magic = FUZZ_FORMAT == 1 ? jpeg_magic : png_magic;
    size_t mlen = FUZZ_FORMAT == 1 ? sizeof jpeg_magic : sizeof png_magic;
    uint8_t *buf = malloc(size + mlen);
    if (!buf) return 0;
    size_t len = size;
    if (size >= mlen && memcmp(data, magic, mlen) == 0) {
        memcpy(buf, data, size);
    } else {
        memcpy(buf, magic, mlen);
        memcpy(buf + mlen, data, size);
        len = size + mlen;
    }
    cc_info info;
    cc_probe(buf, len, 0, &info);
    for (int variant = 0; variant < 3; variant++) {
        /* The second variant also converts tagged pixels to sRGB: hostile ICC profiles (JPEG
         * APP2 chunks, PNG iCCP) reach Little CMS through the same path as in production. The
         * third decodes at 1/8, where progressive JPEGs take the DC-only path (buffered-image
         * mode, stopping after the DC scans), strict so its truncation check runs too. */
        static const int scale[3] = {1, 4, 8}, shrink[3] = {1, 3, 8}, lenient[3] = {0, 1, 0};
        cc_decode_options opt = {1u << 22, lenient[variant], scale[variant], shrink[variant], variant > 0, 0, 0, NULL};
        cc_image img;
        cc_result r = cc_decode(buf, len, &opt, &info, &img);
        check_arena(buf, len, opt, r, &img);
        if (r.status == CC_OK) {
            pipeline(&img, info.orientation);
            if (img.bytes_per_sample == 2) {
                cc_image eight;
                if (cc_to_8bit(&img, &eight).status == CC_OK) cc_image_free(&eight);
            }
            cc_image_free(&img);
        }
    }
    if (FUZZ_FORMAT == 1) jpeg_scans_left_out(buf, len);
    if (FUZZ_FORMAT == 2) png_zlib_vs_libdeflate(buf, len);
    free(buf);
    return 0;
}
