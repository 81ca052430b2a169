/* libpng probe / decode / encode. libpng's error callback longjmps to png_jmpbuf, which is set
 * in this file only. Input comes from memory through a bounds-checked read callback. */
#include <setjmp.h>
#include <stdlib.h>
#include <png.h>
#include "internal.h"

/* Ancillary chunks (iCCP, zTXt, ...) may not make libpng allocate more than this. */
#define CC_PNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
#define CC_PNG_CHUNK_CACHE_MAX 1000u
#define CC_PNG_MAX_DIMENSION 1000000u

typedef struct {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t len, pos;
    cc_status status;
    char message[CC_MESSAGE_MAX];
    int warnings;
    uint8_t *row;
    uint8_t **rows;
    cc_image full;
    cc_box box;
    cc_result result;
} pdec_ctx;

static void on_png_error(png_structp png, png_const_charp msg) {
    pdec_ctx *c = (pdec_ctx *)png_get_error_ptr(png);
    snprintf(c->message, sizeof c->message, "%s", msg);
    c->status = CC_ERR_DECODE;
    png_longjmp(png, 1);
}

/* Warnings (bad ancillary CRC, odd iCCP profile, ...) are common in the wild and do not damage
 * pixels, so they are counted but never reject a file. */
static void on_png_warning(png_structp png, png_const_charp msg) {
    (void)msg;
    pdec_ctx *c = (pdec_ctx *)png_get_error_ptr(png);
    c->warnings++;
}

static void on_png_read(png_structp png, png_bytep out, size_t n) {
    pdec_ctx *c = (pdec_ctx *)png_get_io_ptr(png);
    if (c->len - c->pos < n) png_error(png, "unexpected end of file (truncated PNG)");
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
}

static cc_result too_large(uint32_t w, uint32_t h, uint64_t max_pixels) {
    return cc_fail(CC_ERR_TOO_LARGE, "image is %ux%u (%.1f MP), over the limit of %.1f MP", w, h,
                   (double)w * (double)h / 1e6, (double)max_pixels / 1e6);
}

static void pdec_run(pdec_ctx *c, const cc_decode_options *opt, uint64_t max_pixels, int header_only,
                     cc_info *info, cc_image *out) {
    c->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, on_png_error, on_png_warning);
    if (!c->png) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory creating PNG reader"); return; }
    c->info = png_create_info_struct(c->png);
    if (!c->info) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory creating PNG reader"); return; }
    if (setjmp(png_jmpbuf(c->png))) {
        c->result = cc_fail(c->status == CC_OK ? CC_ERR_DECODE : c->status, "%s", c->message);
        if (out) cc_image_free(out);
        return;
    }
    png_set_user_limits(c->png, CC_PNG_MAX_DIMENSION, CC_PNG_MAX_DIMENSION);
    png_set_chunk_malloc_max(c->png, CC_PNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(c->png, CC_PNG_CHUNK_CACHE_MAX);
    png_set_read_fn(c->png, c, on_png_read);
    png_read_info(c->png, c->info);

    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(c->png, c->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    int trns = png_get_valid(c->png, c->info, PNG_INFO_tRNS) ? 1 : 0;
    info->format = CC_FORMAT_PNG;
    info->width = w;
    info->height = h;
    info->bit_depth = depth;
    info->progressive = interlace == PNG_INTERLACE_ADAM7;
    info->has_alpha = (color & PNG_COLOR_MASK_ALPHA) || trns;
    int base = (color & PNG_COLOR_MASK_COLOR) ? 3 : 1;
    info->channels = base + (info->has_alpha ? 1 : 0);
    info->orientation = 1;
    if (cc_pixels_over_limit(w, h, max_pixels)) { c->result = too_large(w, h, max_pixels); return; }
    if (header_only) return;

    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(c->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(c->png);
    if (trns) png_set_tRNS_to_alpha(c->png);
    if (depth == 16) {
        /* PNG stores big-endian; hand out native uint16 samples. */
        const uint16_t one = 1;
        if (*(const uint8_t *)&one == 1) png_set_swap(c->png);
    }
    int passes = png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
    int channels = png_get_channels(c->png, c->info);
    int bps = png_get_bit_depth(c->png, c->info) == 16 ? 2 : 1;
    int shrink = opt->shrink > 1 ? opt->shrink : 1;
    if (shrink > (int)w) shrink = (int)w;
    if (shrink > (int)h) shrink = (int)h;

    if (passes == 1 && shrink == 1) {
        c->result = cc_image_alloc(out, w, h, channels, bps);
        if (c->result.status != CC_OK) return;
        for (png_uint_32 y = 0; y < h; y++) png_read_row(c->png, out->pixels + (size_t)y * out->stride, NULL);
    } else if (passes == 1) {
        /* Stream rows through the box filter: memory stays at one row plus the small output. */
        c->result = cc_box_begin(&c->box, w, h, channels, bps, shrink, out);
        if (c->result.status != CC_OK) return;
        c->row = malloc((size_t)w * channels * bps);
        if (!c->row) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory"); cc_image_free(out); return; }
        for (png_uint_32 y = 0; y < h; y++) {
            png_read_row(c->png, c->row, NULL);
            cc_box_push(&c->box, c->row);
        }
    } else {
        /* Adam7 needs the whole image before any row is final. */
        cc_image *target = shrink == 1 ? out : &c->full;
        c->result = cc_image_alloc(target, w, h, channels, bps);
        if (c->result.status != CC_OK) return;
        c->rows = malloc(sizeof(uint8_t *) * h);
        if (!c->rows) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory"); cc_image_free(target); return; }
        for (png_uint_32 y = 0; y < h; y++) c->rows[y] = target->pixels + (size_t)y * target->stride;
        png_read_image(c->png, c->rows);
        if (shrink > 1) {
            c->result = cc_box_begin(&c->box, w, h, channels, bps, shrink, out);
            if (c->result.status != CC_OK) return;
            for (png_uint_32 y = 0; y < h; y++) cc_box_push(&c->box, c->rows[y]);
        }
    }
    /* Reads the chunks after the image data and checks their CRCs; lenient mode keeps an image
     * whose pixels are complete even if the tail is damaged or missing. */
    if (!opt->lenient) png_read_end(c->png, NULL);
}

static cc_result pdec(const uint8_t *data, size_t len, const cc_decode_options *opt, uint64_t max_pixels,
                      int header_only, cc_info *info, cc_image *out) {
    pdec_ctx c;
    memset(&c, 0, sizeof c);
    c.data = data;
    c.len = len;
    c.result = cc_ok();
    pdec_run(&c, opt, max_pixels, header_only, info, out);
    if (c.png) png_destroy_read_struct(&c.png, c.info ? &c.info : NULL, NULL);
    free(c.row);
    free(c.rows);
    cc_image_free(&c.full);
    cc_box_end(&c.box);
    return c.result;
}

cc_result cc_png_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info) {
    cc_decode_options opt = {0, 0, 1, 1};
    return pdec(data, len, &opt, max_pixels, 1, info, NULL);
}

cc_result cc_png_decode(const uint8_t *data, size_t len, const cc_decode_options *opt, cc_info *info,
                        cc_image *out) {
    return pdec(data, len, opt, opt->max_pixels, 0, info, out);
}

/* ---- encoder ---- */

typedef struct {
    png_structp png;
    png_infop info;
    uint8_t *buf;
    size_t len, cap;
    char message[CC_MESSAGE_MAX];
    cc_result result;
} penc_ctx;

static void on_penc_error(png_structp png, png_const_charp msg) {
    penc_ctx *c = (penc_ctx *)png_get_error_ptr(png);
    snprintf(c->message, sizeof c->message, "%s", msg);
    png_longjmp(png, 1);
}

static void on_penc_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static void on_penc_write(png_structp png, png_bytep data, size_t n) {
    penc_ctx *c = (penc_ctx *)png_get_io_ptr(png);
    if (c->cap - c->len < n) {
        size_t cap = c->cap ? c->cap : 16384;
        while (cap - c->len < n) cap *= 2;
        uint8_t *grown = realloc(c->buf, cap);
        if (!grown) png_error(png, "out of memory");
        c->buf = grown;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
}

static void on_penc_flush(png_structp png) { (void)png; }

static void penc_run(penc_ctx *c, const cc_image *src, int level) {
    c->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, on_penc_error, on_penc_warning);
    if (!c->png) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory creating PNG writer"); return; }
    c->info = png_create_info_struct(c->png);
    if (!c->info) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory creating PNG writer"); return; }
    if (setjmp(png_jmpbuf(c->png))) {
        c->result = cc_fail(CC_ERR_ENCODE, "%s", c->message);
        return;
    }
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_write_fn(c->png, c, on_penc_write, on_penc_flush);
    png_set_compression_level(c->png, level);
    png_set_IHDR(c->png, c->info, src->width, src->height, 8, types[src->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    for (uint32_t y = 0; y < src->height; y++) png_write_row(c->png, src->pixels + (size_t)y * src->stride);
    png_write_end(c->png, NULL);
}

cc_result cc_encode_png(const cc_image *src, int compression_level, uint8_t **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    if (!src || !src->pixels || src->bytes_per_sample != 1 || src->channels < 1 || src->channels > 4)
        return cc_fail(CC_ERR_ARGUMENT, "PNG encoding needs 8-bit pixels with 1 to 4 channels");
    if (compression_level < 0 || compression_level > 9)
        return cc_fail(CC_ERR_ARGUMENT, "PNG compression level must be 0...9");
    penc_ctx c;
    memset(&c, 0, sizeof c);
    c.result = cc_ok();
    penc_run(&c, src, compression_level);
    if (c.png) png_destroy_write_struct(&c.png, c.info ? &c.info : NULL);
    if (c.result.status != CC_OK) {
        free(c.buf);
        return c.result;
    }
    *out = c.buf;
    *out_len = c.len;
    return c.result;
}
