/* Private to CCodecs: shared helpers between the codec files. */
#ifndef CCODECS_INTERNAL_H
#define CCODECS_INTERNAL_H
#include <stdio.h>
#include <string.h>
#include "ccodecs.h"

cc_result cc_ok(void);
cc_result cc_fail(cc_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cc_exif_orientation(const uint8_t *app1, size_t len);  /* "Exif\0\0" + TIFF (JPEG APP1) */
int cc_tiff_orientation(const uint8_t *tiff, size_t len);  /* bare TIFF (PNG eXIf chunk) */
int cc_pixels_over_limit(uint64_t width, uint64_t height, uint64_t max_pixels);
cc_result cc_image_alloc(cc_image *img, uint32_t w, uint32_t h, int channels, int bps);

/* Arena (arena.c). One decode at a time per arena. */
void *cc_arena_alloc(cc_arena *arena, size_t size); /* >= 64-byte aligned; NULL when out of memory; valid until cc_arena_reset */
void cc_arena_reset(cc_arena *arena);               /* end of one decode: every allocation gone, memory kept */
void cc_arena_reserve(cc_arena *arena, size_t size); /* the next allocations, `size` bytes in all, come from one block */

cc_result cc_jpeg_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info);
cc_result cc_jpeg_decode(const uint8_t *data, size_t len, const cc_decode_options *opt,
                         cc_info *info, cc_image *out);
cc_result cc_png_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info);
cc_result cc_png_decode(const uint8_t *data, size_t len, const cc_decode_options *opt,
                        cc_info *info, cc_image *out);

/* Colour (color.c). Profiles over CC_ICC_MAX_BYTES are ignored with a warning. */
#define CC_ICC_MAX_BYTES (4u << 20)
typedef struct {
    void *ctx;       /* cmsContext: per call, so the error text is ours alone */
    void *transform; /* cmsHTRANSFORM to sRGB */
    void *log;
} cc_icc_transform;
/* JPEG APP2 chunks reassembled into a malloc'd profile; 0 when none or unusable (warning set). */
int cc_jpeg_icc(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, char *warning);
/* Fills info->icc_description, or info->icc_warning when Little CMS cannot read the profile. */
void cc_icc_describe(const uint8_t *profile, size_t len, cc_info *info);
/* A transform of pixels laid out as (channels, bps) to sRGB; bps 0 = 8-bit CMYK rows (to RGB).
 * NULL with info->icc_warning set when the profile cannot serve these pixels. */
cc_icc_transform *cc_icc_open(const uint8_t *profile, size_t len, int channels, int bps, int cmyk_inverted,
                              cc_info *info);
void cc_icc_apply(cc_icc_transform *t, const uint8_t *src, uint8_t *dst, uint32_t pixels);
cc_result cc_icc_image(cc_icc_transform *t, cc_image *img);
void cc_icc_close(cc_icc_transform *t);

/* Streaming integer box shrink: rows go in one by one, averaged rows come out into `out`.
 * Colour is averaged weighted by alpha so transparent pixels do not darken edges. */
typedef struct {
    const cc_image *shape; /* channels and bytes_per_sample of input and output */
    uint32_t src_w, src_h;
    int factor;
    uint64_t *sums;        /* per output column: channels sums (+ weight in alpha slot) */
    void *vsum;            /* per source sample: the band's rows summed, in the narrowest of
                            * uint16_t/uint32_t/uint64_t that cannot overflow (cc_box_begin) */
    int vsum_bytes;        /* 2, 4 or 8 */
    uint32_t rows_in_band;
    uint32_t out_row;
    cc_image *out;
} cc_box;
cc_result cc_box_begin(cc_box *box, uint32_t src_w, uint32_t src_h, int channels, int bps,
                       int factor, cc_image *out);
void cc_box_push(cc_box *box, const uint8_t *row);
void cc_box_end(cc_box *box);
#endif
