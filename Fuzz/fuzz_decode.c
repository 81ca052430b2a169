/* libFuzzer harness over CCodecs: probe, then decode at full and reduced size, then the pixel
 * pipeline (resize, orient, flatten, encode as JPEG, PNG and WebP) on whatever decoded. Built
 * twice: FUZZ_FORMAT picks which format's magic bytes are forced onto the input so each decoder
 * gets the whole budget.
 *   FUZZ_FORMAT=1  JPEG (input prefixed with FF D8 FF when it lacks it)
 *   FUZZ_FORMAT=2  PNG  (input prefixed with the PNG signature when it lacks it)
 * The pixel limit is small so the fuzzer explores parsing, not giant allocations. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
        cc_decode_options opt = {1u << 22, lenient[variant], scale[variant], shrink[variant], variant > 0, 0};
        cc_image img;
        if (cc_decode(buf, len, &opt, &info, &img).status == CC_OK) {
            pipeline(&img, info.orientation);
            if (img.bytes_per_sample == 2) {
                cc_image eight;
                if (cc_to_8bit(&img, &eight).status == CC_OK) cc_image_free(&eight);
            }
            cc_image_free(&img);
        }
    }
    free(buf);
    return 0;
}
