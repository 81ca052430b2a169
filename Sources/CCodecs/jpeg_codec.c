/* libjpeg-turbo probe / decode / encode. Every libjpeg call runs under a setjmp set in this file;
 * error_exit and (unless lenient) corrupt-data warnings longjmp back here, never further. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
#include <jerror.h>
#include "internal.h"
#include "jpeg_memory.h"
#include "jpeg_scans.h"

/* libjpeg-turbo's documented defence against progressive files with absurd scan counts
 * (CPU exhaustion): abort once the decoder has seen this many scans. */
#define CC_MAX_SCANS 500
/* Upper bound for libjpeg's own working memory (coefficient buffers of progressive files).
 * Overridable for scripts/arena-limit-test.sh, which moves it byte by byte. */
#ifndef CC_JPEG_MAX_MEMORY
#define CC_JPEG_MAX_MEMORY (1024L * 1024L * 1024L)
#endif

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int lenient;
    int warnings;
    cc_status status;
    char message[JMSG_LENGTH_MAX];
} cc_jerr;

static void on_error_exit(j_common_ptr cinfo) {
    cc_jerr *e = (cc_jerr *)cinfo->err;
    cinfo->err->format_message(cinfo, e->message);
    e->status = CC_ERR_DECODE;
    longjmp(e->jump, 1);
}

static void on_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; /* trace messages */
    cc_jerr *e = (cc_jerr *)cinfo->err;
    e->warnings++;
    cinfo->err->num_warnings++;
    if (e->warnings == 1 || !e->lenient) cinfo->err->format_message(cinfo, e->message);
    if (!e->lenient) {
        e->status = CC_ERR_CORRUPT_DATA;
        longjmp(e->jump, 1);
    }
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->input_scan_number > CC_MAX_SCANS) {
        cc_jerr *e = (cc_jerr *)cinfo->err;
        snprintf(e->message, sizeof e->message, "progressive JPEG has more than %d scans", CC_MAX_SCANS);
        e->status = CC_ERR_DECODE;
        longjmp(e->jump, 1);
    }
}

static void install_errors(cc_jerr *e, int lenient) {
    jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error_exit;
    e->pub.emit_message = on_emit_message;
    e->pub.output_message = on_output_message;
    e->lenient = lenient;
    e->warnings = 0;
    e->status = CC_OK;
    e->message[0] = 0;
}

/* State that must survive a longjmp lives here, in the caller's frame (not as locals of the
 * function that calls setjmp, whose non-volatile locals are indeterminate after longjmp). */
typedef struct {
    struct jpeg_decompress_struct cinfo;
    cc_jerr err;
    struct jpeg_progress_mgr progress;
    uint8_t *row;
    uint8_t *icc;
    size_t icc_len;
    cc_icc_transform *color;
    cc_jmem jmem; /* libjpeg's memory manager when decoding with an arena (jpeg_memory.c) */
    cc_scan_source scans; /* libjpeg's data source when scans are left out (jpeg_scans.c) */
    cc_result result;
} jdec_ctx;

static void fill_info(j_decompress_ptr d, cc_info *info) {
    info->format = CC_FORMAT_JPEG;
    info->width = d->image_width;
    info->height = d->image_height;
    info->channels = d->num_components;
    info->bit_depth = d->data_precision;
    info->has_alpha = 0;
    info->progressive = d->progressive_mode ? 1 : 0;
    info->jpeg_color_space = (int)d->jpeg_color_space;
    info->adobe_marker = d->saw_Adobe_marker ? 1 : 0;
    /* The whole-image coefficient arrays jdcoefct.c requests for a progressive file: per
     * component, its blocks rounded up to its sampling factors, 64 JCOEFs each. jpeg_read_header
     * has set the block counts (libjpeg's initial_setup runs at the first SOS). */
    info->jpeg_coefficient_bytes = 0;
    if (d->progressive_mode) {
        for (int ci = 0; ci < d->num_components; ci++) {
            const jpeg_component_info *comp = &d->comp_info[ci];
            uint64_t w = comp->width_in_blocks, h = comp->height_in_blocks;
            uint64_t hs = comp->h_samp_factor > 0 ? (uint64_t)comp->h_samp_factor : 1;
            uint64_t vs = comp->v_samp_factor > 0 ? (uint64_t)comp->v_samp_factor : 1;
            w = (w + hs - 1) / hs * hs;
            h = (h + vs - 1) / vs * vs;
            info->jpeg_coefficient_bytes += w * h * DCTSIZE2 * sizeof(JCOEF);
        }
    }
}

/* EXIF orientation straight from the bytes: walk the marker segments between SOI and the first
 * SOS and parse the first APP1 "Exif" payload in place. Nothing is copied, so a file stuffed with
 * APP1 segments costs no memory (libjpeg's jpeg_save_markers would keep them all). */
static int jpeg_orientation(const uint8_t *d, size_t len) {
    size_t i = 2;
    while (i + 4 <= len) {
        if (d[i] != 0xFF) return 1;
        uint8_t m = d[i + 1];
        if (m == 0xFF) { i++; continue; }                      /* fill byte */
        if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { i += 2; continue; }
        if (m == 0xDA || m == 0xD9) return 1;                  /* scan data starts: no EXIF */
        size_t seg = (size_t)d[i + 2] << 8 | d[i + 3];
        if (seg < 2 || seg > len - i - 2) return 1;
        if (m == 0xE1 && seg - 2 >= 6 && memcmp(d + i + 4, "Exif\0\0", 6) == 0)
            return cc_exif_orientation(d + i + 4, seg - 2);
        i += 2 + seg;
    }
    return 1;
}

static cc_result too_large(uint32_t w, uint32_t h, uint64_t max_pixels) {
    return cc_fail(CC_ERR_TOO_LARGE, "image is %ux%u (%.1f MP), over the limit of %.1f MP", w, h,
                   (double)w * (double)h / 1e6, (double)max_pixels / 1e6);
}

/* Adobe writes CMYK inverted (0 = full ink) and flags it with APP14; plain CMYK is not. */
static void cmyk_row_to_rgb(const uint8_t *src, uint8_t *dst, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++, src += 4, dst += 3) {
        unsigned c = src[0], m = src[1], y = src[2], k = src[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        dst[0] = (uint8_t)((c * k + 127) / 255);
        dst[1] = (uint8_t)((m * k + 127) / 255);
        dst[2] = (uint8_t)((y * k + 127) / 255);
    }
}

/* Whether every coefficient the scaled IDCT will read is at full precision. libjpeg sets
 * coef_bits[c][k] (k in zigzag order) to a scan's Al when the scan starts, so once a scan has
 * completed, 0 means nothing is left to refine (-1: not sent yet). At 1/8 a component whose
 * IDCT is 1x1 (luma; every component of 4:4:4 and gray) reads only its DC. libjpeg-turbo gives
 * 4:2:0 chroma a 2x2 IDCT instead, to spare the upsampling, and that one reads AC coefficients
 * from every band (rows and columns 0, 1, 3, 5, 7), so chroma is waited for whole: stopping at
 * its DC would shift colours by up to several levels (PSNR 41-46 dB on the test photos). */
static int coefficients_complete(j_decompress_ptr d) { return cc_scaled_coefficients_complete(d, d->coef_bits); }

/* Whether the rest of the file still holds an EOI marker. The scans after the needed ones are
 * never read, so this is how a file cut short in them is still reported as truncated (libjpeg's own
 * "Premature end of JPEG file"). Entropy-coded data cannot contain FF D9 (a data FF is stuffed
 * as FF 00); a marker segment between scans could, which at worst misses a truncation. */
static int eoi_follows(j_decompress_ptr d) {
    const uint8_t *p = d->src->next_input_byte;
    size_t left = d->src->bytes_in_buffer;
    while (left >= 2) {
        const uint8_t *ff = memchr(p, 0xFF, left - 1);
        if (!ff) return 0;
        if (ff[1] == 0xD9) return 1;
        left -= (size_t)(ff + 1 - p);
        p = ff + 1;
    }
    return 0;
}

/* Progressive JPEG at 1/8 scale: read only the scans the 1/8 image needs. At 1/8 libjpeg's IDCT
 * for luma (and for every component of gray and 4:4:4 files) is 1x1 and reads only the DC
 * coefficient; every progressive script sends a component's DC before its AC (T.81 G.1.1.1.1),
 * so once the DC scans (a late DC refinement included) and, for 4:2:0 files, the chroma scans are
 * complete (coefficients_complete), the output is the same as a full decode's at 1/8. In
 * buffered-image mode we consume scans until then and output that state of the coefficients,
 * with block smoothing off (it would estimate AC coefficients the 1x1 IDCT ignores).
 *
 * What is skipped: reading and Huffman-decoding every scan after that point, and
 * jpeg_finish_decompress's read to EOI. For libjpeg's standard script (cjpeg, Pillow, jpegtran:
 * DC Al=1, luma AC 1-5, chroma AC, luma AC 6-63, luma AC refinement, DC refinement in scan 7,
 * chroma AC refinements in 8 and 9, the final luma AC refinement in 10) that is scan 10, the
 * largest one; for a script that sends everything about a component before the next (or the DC
 * refinement last) it is nothing. Before that point, the AC scans of 1x1 components are left out
 * as well (jpeg_scans.c): libjpeg's decoder could not skip a scan (it finds a scan's end only by
 * decoding through it), so the file is walked first and libjpeg reads it without them. The
 * coefficient arrays are allocated and zeroed for the whole image at jpeg_start_decompress
 * either way, so memory is the same as a full decode's. Damage in the scans not read goes
 * unnoticed (the thumbnail does not depend on them); a file cut short is still reported
 * (eoi_follows, or the walk, which finds the EOI). Measured (CPU time, -O2, one thread, one arena):
 * the 14 progressive 4096x4096 wallpapers of make bench-images (4:4:4, jpegtran with libjpeg's
 * script, so only the two DC scans are needed) take 2.09 s for every scan, 1.29 s up to the last
 * needed one, 0.70 s with the AC scans left out; libjpeg's DC refinement (a bit per block into
 * 100 MB of coefficients, 30 %), jpeg_idct_1x1 (18 %) and the zeroing (11 %) are most of what
 * is left. On the photos of ProgressiveDCTests stopping early took 70-92 %, ~100 % when the DC
 * refinement is last; stopping after the first DC scan (DC short of its last bit, not the same
 * pixels) would have been 41 %. */
static void read_needed_scans(j_decompress_ptr d, int eoi_seen) {
    for (;;) {
        int r = jpeg_consume_input(d);
        if (r == JPEG_REACHED_EOI || r == JPEG_SUSPENDED) return;
        /* jpeg_consume_input never calls the progress monitor, so the scan limit is applied
         * here. */
        if (r == JPEG_REACHED_SOS) on_progress((j_common_ptr)d);
        if (r == JPEG_SCAN_COMPLETED && coefficients_complete(d)) break;
    }
    /* The Huffman decoder stops at the marker after the scan and keeps it as unread_marker. */
    if (d->unread_marker != JPEG_EOI && !eoi_seen && !eoi_follows(d)) WARNMS(d, JWRN_JPEG_EOF);
}

static void jdec_run(jdec_ctx *c, const uint8_t *data, size_t len, const cc_decode_options *opt,
                     uint64_t max_pixels, int header_only, cc_info *info, cc_image *out) {
    j_decompress_ptr d = &c->cinfo;
    d->err = &c->err.pub;
    install_errors(&c->err, opt ? opt->lenient : 0);
    if (setjmp(c->err.jump)) {
        c->result = cc_fail(c->err.status, "%s", c->err.message);
        if (out) cc_image_free(out);
        return;
    }
    jpeg_create_decompress(d);
    if (opt && opt->arena) cc_jmem_install((j_common_ptr)d, &c->jmem, opt->arena);
    d->mem->max_memory_to_use = CC_JPEG_MAX_MEMORY;
    c->progress.progress_monitor = on_progress;
    d->progress = &c->progress;
    jpeg_mem_src(d, data, (unsigned long)len);
    jpeg_read_header(d, TRUE);
    fill_info(d, info);
    info->orientation = jpeg_orientation(data, len);
    if (cc_jpeg_icc(data, len, &c->icc, &c->icc_len, info->icc_warning)) cc_icc_describe(c->icc, c->icc_len, info);
    if (cc_pixels_over_limit(d->image_width, d->image_height, max_pixels)) {
        c->result = too_large(d->image_width, d->image_height, max_pixels);
        return;
    }
    if (header_only) return;

    int denom = opt->scale_denom;
    if (denom != 1 && denom != 2 && denom != 4 && denom != 8) denom = 1;
    d->scale_num = 1;
    d->scale_denom = (unsigned)denom;
    int cmyk = 0, channels = 3;
    switch (d->jpeg_color_space) {
    case JCS_GRAYSCALE: d->out_color_space = JCS_GRAYSCALE; channels = 1; break;
    case JCS_CMYK:
    case JCS_YCCK: d->out_color_space = JCS_CMYK; cmyk = 1; break;
    default: d->out_color_space = JCS_RGB; break;
    }
    jpeg_calc_output_dimensions(d);
    c->result = cc_image_alloc(out, d->output_width, d->output_height, channels, 1);
    if (c->result.status != CC_OK) return;
    if (opt->color_manage && c->icc)
        c->color = cc_icc_open(c->icc, c->icc_len, cmyk ? 4 : channels, cmyk ? 0 : 1, d->saw_Adobe_marker, info);
    if (cmyk) {
        c->row = malloc((size_t)d->output_width * 4);
        if (!c->row) { c->result = cc_fail(CC_ERR_NOMEM, "out of memory"); cc_image_free(out); return; }
    }
    int early = d->progressive_mode && denom == 8 && opt->every_scan != CC_SCANS_EVERY;
    if (early) {
        d->buffered_image = TRUE;
        d->do_block_smoothing = FALSE;
    }
    jpeg_start_decompress(d);
    if (early) {
        /* The walk that leaves scans out ends at the file's EOI, or nothing is left out. */
        int walked = opt->every_scan != CC_SCANS_UP_TO_NEEDED && cc_skip_unneeded_scans(d, CC_MAX_SCANS, &c->scans);
        read_needed_scans(d, walked);
#ifdef CC_CHECK_SCAN_WALK
        /* The fuzzer's build: the walk promised that the scans it kept complete the image
         * (image_complete); libjpeg's own coef_bits must agree, or the walk misread the file. */
        if (walked && !coefficients_complete(d)) abort();
#endif
        jpeg_start_output(d, d->input_scan_number);
    }
    while (d->output_scanline < d->output_height) {
        uint8_t *dst = out->pixels + (size_t)d->output_scanline * out->stride;
        if (cmyk) {
            JSAMPROW rows[1] = {c->row};
            if (jpeg_read_scanlines(d, rows, 1) != 1) break;
            if (c->color) cc_icc_apply(c->color, c->row, dst, d->output_width);
            else cmyk_row_to_rgb(c->row, dst, d->output_width, d->saw_Adobe_marker);
        } else {
            JSAMPROW rows[4];
            JDIMENSION n = d->output_height - d->output_scanline;
            if (n > 4) n = 4;
            for (JDIMENSION i = 0; i < n; i++) rows[i] = dst + i * out->stride;
            if (jpeg_read_scanlines(d, rows, n) == 0) break;
        }
    }
    /* Stopped early: jpeg_destroy_decompress (in jdec) abandons the unread scans. */
    if (!early) jpeg_finish_decompress(d);
    /* Gray and RGB are converted after the decode, at the (DCT-scaled) output size. */
    if (c->color && !cmyk) cc_icc_image(c->color, out);
}

static cc_result jdec(const uint8_t *data, size_t len, const cc_decode_options *opt, uint64_t max_pixels,
                      int header_only, cc_info *info, cc_image *out) {
    jdec_ctx c;
    memset(&c, 0, sizeof c);
    c.result = cc_ok();
    jdec_run(&c, data, len, opt, max_pixels, header_only, info, out);
    jpeg_destroy_decompress(&c.cinfo);
    /* After the destroy (libjpeg no longer holds arena memory), on every path: a longjmp out of
     * the decode lands in jdec_run's setjmp and comes back through here too. */
    if (opt && opt->arena) cc_arena_reset(opt->arena);
    cc_scan_source_free(&c.scans);
    free(c.row);
    free(c.icc);
    cc_icc_close(c.color);
    return c.result;
}

cc_result cc_jpeg_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info) {
    cc_decode_options opt = {0, 0, 1, 1, 0, 0, 0, NULL};
    return jdec(data, len, &opt, max_pixels, 1, info, NULL);
}

cc_result cc_jpeg_decode(const uint8_t *data, size_t len, const cc_decode_options *opt, cc_info *info,
                         cc_image *out) {
    return jdec(data, len, opt, opt->max_pixels, 0, info, out);
}

typedef struct {
    struct jpeg_compress_struct cinfo;
    cc_jerr err;
    unsigned char *buf;
    unsigned long size;
    cc_result result;
} jenc_ctx;

static void jenc_run(jenc_ctx *c, const cc_image *src, int quality, cc_jpeg_mode mode, cc_jpeg_huffman huffman) {
    j_compress_ptr e = &c->cinfo;
    e->err = &c->err.pub;
    install_errors(&c->err, 1);
    if (setjmp(c->err.jump)) {
        c->result = cc_fail(CC_ERR_ENCODE, "%s", c->err.message);
        return;
    }
    jpeg_create_compress(e);
    jpeg_mem_dest(e, &c->buf, &c->size);
    e->image_width = src->width;
    e->image_height = src->height;
    e->input_components = src->channels;
    e->in_color_space = src->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(e); /* YCbCr with 2x2 luma sampling = 4:2:0 */
    jpeg_set_quality(e, quality, TRUE);
    if (mode != CC_JPEG_BASELINE) jpeg_simple_progression(e);
    e->optimize_coding = huffman != CC_JPEG_HUFFMAN_STANDARD ? TRUE : FALSE;
    jpeg_start_compress(e, TRUE);
    while (e->next_scanline < e->image_height) {
        JSAMPROW row[1] = {src->pixels + (size_t)e->next_scanline * src->stride};
        jpeg_write_scanlines(e, row, 1);
    }
    jpeg_finish_compress(e);
}

cc_result cc_encode_jpeg(const cc_image *src, int quality, cc_jpeg_mode mode, cc_jpeg_huffman huffman,
                         uint8_t **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    if (!src || !src->pixels || src->bytes_per_sample != 1 || (src->channels != 1 && src->channels != 3))
        return cc_fail(CC_ERR_ARGUMENT, "JPEG encoding needs 8-bit gray or RGB pixels");
    if (quality < 1 || quality > 100) return cc_fail(CC_ERR_ARGUMENT, "JPEG quality must be 1...100");
    jenc_ctx c;
    memset(&c, 0, sizeof c);
    c.result = cc_ok();
    jenc_run(&c, src, quality, mode, huffman);
    jpeg_destroy_compress(&c.cinfo);
    if (c.result.status != CC_OK) {
        free(c.buf);
        return c.result;
    }
    *out = c.buf;
    *out_len = c.size;
    return c.result;
}
