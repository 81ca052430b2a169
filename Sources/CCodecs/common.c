/* What every codec file shares: results, image allocation, limits, EXIF orientation parsing.
 * The codecs call into this file and it calls none of them (the dispatch is dispatch.c). */
#include <stdarg.h>
#include <stdlib.h>
#include "internal.h"

cc_result cc_ok(void) {
    cc_result r;
    r.status = CC_OK;
    r.message[0] = 0;
    return r;
}

cc_result cc_fail(cc_status status, const char *fmt, ...) {
    cc_result r;
    r.status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.message, sizeof r.message, fmt, ap);
    va_end(ap);
    return r;
}

void cc_free(void *p) { free(p); }

void cc_image_free(cc_image *image) {
    if (!image) return;
    free(image->pixels);
    image->pixels = NULL;
}

int cc_pixels_over_limit(uint64_t width, uint64_t height, uint64_t max_pixels) {
    return max_pixels != 0 && width * height > max_pixels;
}

cc_result cc_image_alloc(cc_image *img, uint32_t w, uint32_t h, int channels, int bps) {
    memset(img, 0, sizeof *img);
    if (w == 0 || h == 0) return cc_fail(CC_ERR_ARGUMENT, "image has zero width or height");
    size_t stride = (size_t)w * (size_t)channels * (size_t)bps;
    if (stride / (size_t)w != (size_t)channels * (size_t)bps || (size_t)h > SIZE_MAX / stride)
        return cc_fail(CC_ERR_NOMEM, "image of %ux%u does not fit in memory", w, h);
    img->pixels = malloc(stride * h);
    if (!img->pixels) return cc_fail(CC_ERR_NOMEM, "out of memory allocating %ux%u pixels", w, h);
    img->width = w;
    img->height = h;
    img->channels = channels;
    img->bytes_per_sample = bps;
    img->stride = stride;
    return cc_ok();
}

/* EXIF orientation from an APP1 payload ("Exif\0\0" + TIFF). Every offset is bounds-checked:
 * the payload is attacker-controlled. Returns 1 when absent or out of range. */
static uint32_t rd16(const uint8_t *p, int le) { return le ? (uint32_t)(p[0] | p[1] << 8) : (uint32_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p, int le) {
    return le ? ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24)
              : ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

int cc_exif_orientation(const uint8_t *p, size_t len) {
    if (len < 6 + 8 || memcmp(p, "Exif\0\0", 6) != 0) return 1;
    return cc_tiff_orientation(p + 6, len - 6);
}

int cc_tiff_orientation(const uint8_t *t, size_t tlen) {
    if (tlen < 8) return 1;
    int le;
    if (t[0] == 'I' && t[1] == 'I') le = 1;
    else if (t[0] == 'M' && t[1] == 'M') le = 0;
    else return 1;
    if (rd16(t + 2, le) != 42) return 1;
    uint32_t ifd = rd32(t + 4, le);
    if (ifd > tlen || tlen - ifd < 2) return 1;
    uint32_t count = rd16(t + ifd, le);
    size_t pos = (size_t)ifd + 2;
    for (uint32_t i = 0; i < count; i++, pos += 12) {
        if (pos > tlen || tlen - pos < 12) return 1;
        if (rd16(t + pos, le) == 0x0112) {
            uint32_t type = rd16(t + pos + 2, le);
            uint32_t v;
            if (type == 3) v = rd16(t + pos + 8, le);       /* SHORT, stored in the value field */
            else if (type == 4) v = rd32(t + pos + 8, le);  /* LONG, tolerated */
            else return 1;
            return (v >= 1 && v <= 8) ? (int)v : 1;
        }
    }
    return 1;
}
