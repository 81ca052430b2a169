/* libpng probe / decode / encode. libpng's error callback longjmps to png_jmpbuf, which is set
 * in this file only. Input comes from memory through a bounds-checked read callback: the file's
 * own bytes, or the virtual file of png_inflate.c when the image data was inflated ahead. */
#include <setjmp.h>
#include <stdlib.h>
#include <png.h>
#include "internal.h"
#include "png_inflate.h"

/* Ancillary chunks (iCCP, zTXt, ...) may not make libpng allocate more than this. */
#define CC_PNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
#define CC_PNG_CHUNK_CACHE_MAX 1000u

typedef struct {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t len, pos;
    cc_png_whole whole; /* the image data inflated ahead (png_inflate.c) */
    cc_status status;
    char message[CC_MESSAGE_MAX];
    int warnings;
    char icc_problem[CC_MESSAGE_MAX]; /* libpng's first iCCP warning: why it dropped the profile */
    uint8_t *row;
    uint8_t **rows;
    uint64_t *grid;
    cc_box box;
    uint8_t *icc;
    size_t icc_len;
    cc_icc_transform *color;
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
    pdec_ctx *c = (pdec_ctx *)png_get_error_ptr(png);
    c->warnings++;
    if (msg && strncmp(msg, "iCCP", 4) == 0 && !c->icc_problem[0])
        snprintf(c->icc_problem, sizeof c->icc_problem, "%s", msg);
}

static void on_png_read(png_structp png, png_bytep out, size_t n) {
    pdec_ctx *c = (pdec_ctx *)png_get_io_ptr(png);
    if (c->whole.active) {
        if (!cc_png_whole_read(&c->whole, c->data, c->len, out, n))
            png_error(png, "unexpected end of file (truncated PNG)");
        return;
    }
    if (c->len - c->pos < n) png_error(png, "unexpected end of file (truncated PNG)");
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
}

static cc_result too_large(uint32_t w, uint32_t h, uint64_t max_pixels) {
    return cc_fail(CC_ERR_TOO_LARGE, "image is %ux%u (%.1f MP), over the limit of %.1f MP", w, h,
                   (double)w * (double)h / 1e6, (double)max_pixels / 1e6);
}

/* Adam7 with a box shrink: read the seven passes as libpng delivers them (interlace handling
 * off, so each row is a pass's sub-row) and add every pixel straight into the sums of its output
 * cell. Memory is the output grid of sums, about (2 x thumbnail)^2 cells, never the full image.
 * The result equals the non-interlaced box shrink of the same pixels exactly. */
static void adam7_shrink(pdec_ctx *c, uint32_t w, uint32_t h, int ch, int bps, int f, cc_image *out) {
    uint32_t ow = (w + (uint32_t)f - 1) / (uint32_t)f, oh = (h + (uint32_t)f - 1) / (uint32_t)f;
    c->result = cc_image_alloc(out, ow, oh, ch, bps);
    if (c->result.status != CC_OK) return;
    c->grid = calloc((size_t)ow * oh * (size_t)ch, sizeof(uint64_t));
    c->row = malloc((size_t)w * ch * bps);
    if (!c->grid || !c->row) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory"); cc_image_free(out); return; }
    int alpha = (ch == 2 || ch == 4);
    for (int p = 0; p < 7; p++) {
        if (w <= adam7_x0[p] || h <= adam7_y0[p]) continue; /* libpng skips empty passes too */
        uint32_t pw = (w - adam7_x0[p] + adam7_dx[p] - 1) / adam7_dx[p];
        uint32_t ph = (h - adam7_y0[p] + adam7_dy[p] - 1) / adam7_dy[p];
        for (uint32_t r = 0; r < ph; r++) {
            png_read_row(c->png, c->row, NULL);
            uint64_t *line = c->grid + (size_t)((adam7_y0[p] + r * adam7_dy[p]) / (uint32_t)f) * ow * ch;
            for (uint32_t i = 0; i < pw; i++) {
                uint64_t *s = line + (size_t)((adam7_x0[p] + i * adam7_dx[p]) / (uint32_t)f) * ch;
                size_t k0 = (size_t)i * ch;
                if (bps == 1) {
                    const uint8_t *px = c->row + k0;
                    if (alpha) { uint64_t a = px[ch - 1]; for (int k = 0; k < ch - 1; k++) s[k] += px[k] * a; s[ch - 1] += a; }
                    else for (int k = 0; k < ch; k++) s[k] += px[k];
                } else {
                    const uint16_t *px = (const uint16_t *)(const void *)c->row + k0;
                    if (alpha) { uint64_t a = px[ch - 1]; for (int k = 0; k < ch - 1; k++) s[k] += px[k] * a; s[ch - 1] += a; }
                    else for (int k = 0; k < ch; k++) s[k] += px[k];
                }
            }
        }
    }
    for (uint32_t oy = 0; oy < oh; oy++) {
        uint32_t rows = h - oy * (uint32_t)f < (uint32_t)f ? h - oy * (uint32_t)f : (uint32_t)f;
        uint8_t *dst = out->pixels + (size_t)oy * out->stride;
        for (uint32_t ox = 0; ox < ow; ox++) {
            uint32_t cols = w - ox * (uint32_t)f < (uint32_t)f ? w - ox * (uint32_t)f : (uint32_t)f;
            uint64_t n = (uint64_t)rows * cols;
            const uint64_t *s = c->grid + ((size_t)oy * ow + ox) * ch;
            for (int k = 0; k < ch; k++) {
                uint64_t v;
                if (alpha && k < ch - 1) v = s[ch - 1] ? (s[k] + s[ch - 1] / 2) / s[ch - 1] : 0;
                else v = (s[k] + n / 2) / n;
                if (bps == 2) ((uint16_t *)(void *)dst)[(size_t)ox * ch + k] = (uint16_t)v;
                else dst[(size_t)ox * ch + k] = (uint8_t)v;
            }
        }
    }
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
    if (c->whole.active) {
        /* cc_png_whole_prepare checked every critical chunk's CRC; the virtual IDAT has none. */
        png_set_crc_action(c->png, PNG_CRC_QUIET_USE, PNG_CRC_DEFAULT);
        /* libpng reads image data 8 KiB at a time by default; whole stored blocks per read. */
        png_set_compression_buffer_size(c->png, CC_PNG_STORED_BLOCK_MAX + 5);
    }
#ifdef PNG_IGNORE_ADLER32
    /* zlib's Adler-32 of the inflated image data was 8 % of a PNG thumbnail's CPU (perf, bench
     * corpus). It protects nothing the chunk CRCs do not: the inflated bytes are a function of the
     * compressed ones, and every IDAT's CRC over those is still checked (a flipped bit is still
     * "IDAT: CRC error"). Browsers' decoders skip it for the same reason. */
    png_set_option(c->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    png_read_info(c->png, c->info);

    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(c->png, c->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    int trns = png_get_valid(c->png, c->info, PNG_INFO_tRNS) ? 1 : 0;
    info->format = CC_FORMAT_PNG;
    info->png_whole_inflate = c->whole.active;
    info->width = w;
    info->height = h;
    info->bit_depth = depth;
    info->progressive = interlace == PNG_INTERLACE_ADAM7;
    info->has_alpha = (color & PNG_COLOR_MASK_ALPHA) || trns;
    int base = (color & PNG_COLOR_MASK_COLOR) ? 3 : 1;
    info->channels = base + (info->has_alpha ? 1 : 0);
    info->orientation = 1;
    /* eXIf (PNG 1.5 extension) carries the same TIFF structure as JPEG's APP1; only an eXIf
     * chunk before the image data is seen here, which is where writers put it. */
    png_uint_32 exif_len = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(c->png, c->info, &exif_len, &exif) && exif)
        info->orientation = cc_tiff_orientation(exif, exif_len);
    /* iCCP: libpng inflates it (held to png_set_chunk_malloc_max) and checks its header. */
    png_charp icc_name = NULL;
    int icc_compression = 0;
    png_bytep icc = NULL;
    png_uint_32 icc_len = 0;
    if (png_get_iCCP(c->png, c->info, &icc_name, &icc_compression, &icc, &icc_len) && icc && icc_len) {
        if (icc_len > CC_ICC_MAX_BYTES) {
            snprintf(info->icc_warning, CC_MESSAGE_MAX, "ICC profile of %u bytes is over the %u-byte limit",
                     (unsigned)icc_len, CC_ICC_MAX_BYTES);
        } else if ((c->icc = malloc(icc_len))) {
            memcpy(c->icc, icc, icc_len);
            c->icc_len = icc_len;
            cc_icc_describe(c->icc, c->icc_len, info);
        }
    } else if (c->icc_problem[0]) {
        /* libpng checks the profile's header (its declared length among others) and drops a
         * profile that fails with only a warning: reported like the profiles we refuse. */
        snprintf(info->icc_warning, CC_MESSAGE_MAX, "ICC profile ignored: %s", c->icc_problem);
    }
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
    int shrink = opt->shrink > 1 ? opt->shrink : 1;
    if (shrink > (int)w) shrink = (int)w;
    if (shrink > (int)h) shrink = (int)h;
    int interlaced = interlace == PNG_INTERLACE_ADAM7;
    /* Interlaced + shrink reads raw passes (adam7_shrink); otherwise libpng de-interlaces. */
    int passes = (interlaced && shrink > 1) ? 7 : png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
    int channels = png_get_channels(c->png, c->info);
    int bps = png_get_bit_depth(c->png, c->info) == 16 ? 2 : 1;

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
    } else if (shrink > 1) {
        adam7_shrink(c, w, h, channels, bps, shrink, out);
        if (c->result.status != CC_OK) return;
    } else {
        /* Full-size Adam7 needs the whole image before any row is final. */
        c->result = cc_image_alloc(out, w, h, channels, bps);
        if (c->result.status != CC_OK) return;
        c->rows = malloc(sizeof(uint8_t *) * h);
        if (!c->rows) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory"); cc_image_free(out); return; }
        for (png_uint_32 y = 0; y < h; y++) c->rows[y] = out->pixels + (size_t)y * out->stride;
        png_read_image(c->png, c->rows);
    }
    /* Reads the chunks after the image data and checks their CRCs; lenient mode keeps an image
     * whose pixels are complete even if the tail is damaged or missing. */
    if (!opt->lenient) png_read_end(c->png, NULL);
    /* Converted at the output size (after any box shrink), alpha copied as it is. */
    if (opt->color_manage && c->icc && out->pixels) {
        c->color = cc_icc_open(c->icc, c->icc_len, out->channels, out->bytes_per_sample, 0, info);
        if (c->color) cc_icc_image(c->color, out);
    }
}

/* libpng allocates an ancillary chunk (eXIf, iCCP, text, ...) at its declared length before
 * reading it, and 1.6.39 does not hold eXIf to png_set_chunk_malloc_max: a 100-byte file
 * declaring a 1.5 GB chunk made it ask for 1.5 GB (found by fuzz_png). The whole file is in
 * memory here, so a chunk other than IDAT (read in pieces) that claims more bytes than the file
 * has left is refused before libpng sees it. */
static cc_result png_check_chunk_lengths(const uint8_t *data, size_t len) {
    size_t pos = 8;
    while (pos + 8 <= len) {
        uint32_t n = (uint32_t)data[pos] << 24 | (uint32_t)data[pos + 1] << 16 | (uint32_t)data[pos + 2] << 8 | data[pos + 3];
        const uint8_t *type = data + pos + 4;
        size_t left = len - pos - 8;
        if (memcmp(type, "IDAT", 4) != 0 && (uint64_t)n + 4 > left) {
            char name[5];
            for (int i = 0; i < 4; i++) name[i] = (type[i] >= 0x20 && type[i] < 0x7F) ? (char)type[i] : '?';
            name[4] = 0;
            return cc_fail(CC_ERR_DECODE, "%s: chunk length %u exceeds the %zu bytes left in the file", name, n, left);
        }
        if (memcmp(type, "IEND", 4) == 0) break;
        pos += (size_t)n + 12;
    }
    return cc_ok();
}

static cc_result pdec(const uint8_t *data, size_t len, const cc_decode_options *opt, uint64_t max_pixels,
                      int header_only, cc_info *info, cc_image *out) {
    cc_result sizes = png_check_chunk_lengths(data, len);
    if (sizes.status != CC_OK) return sizes;
    pdec_ctx c;
    memset(&c, 0, sizeof c);
    c.data = data;
    c.len = len;
    c.result = cc_ok();
    if (!header_only) cc_png_whole_prepare(&c.whole, data, len, opt);
    pdec_run(&c, opt, max_pixels, header_only, info, out);
    if (c.png) png_destroy_read_struct(&c.png, c.info ? &c.info : NULL, NULL);
    free(c.row);
    free(c.rows);
    free(c.grid);
    free(c.icc);
    cc_png_whole_free(&c.whole);
    if (opt->arena) cc_arena_reset(opt->arena);
    cc_icc_close(c.color);
    cc_box_end(&c.box);
    return c.result;
}

cc_result cc_png_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info) {
    cc_decode_options opt = {0, 0, 1, 1, 0, 0, 0, NULL};
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
