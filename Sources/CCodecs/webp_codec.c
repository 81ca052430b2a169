/* libwebp lossy encode to memory. WebP is an output format only: nothing here decodes it, and a
 * WebP source stays "not a JPEG or PNG file" (dispatch.c). libwebp reports failure by return
 * value and WebPPicture.error_code, never by longjmp, so no setjmp guard is needed; its failures
 * map to the same cc_status codes as the JPEG and PNG encoders' (CC_ERR_ENCODE with the reason,
 * CC_ERR_NOMEM, CC_ERR_ARGUMENT for a request the caller could have avoided). */
#include <stdlib.h>
#include <webp/encode.h>
#include "internal.h"

typedef struct {
    uint8_t *buf;
    size_t len, cap;
} wenc_buf;

/* Our own writer rather than libwebp's WebPMemoryWriter: its buffer must be released with
 * WebPFree, and every encoder here hands back bytes the caller frees with cc_free. */
static int on_wenc_write(const uint8_t *data, size_t n, const WebPPicture *pic) {
    wenc_buf *w = (wenc_buf *)pic->custom_ptr;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 16384;
        while (cap - w->len < n) {
            if (cap > SIZE_MAX / 2) return 0;
            cap *= 2;
        }
        uint8_t *grown = realloc(w->buf, cap);
        if (!grown) return 0; /* libwebp stops with VP8_ENC_ERROR_BAD_WRITE */
        w->buf = grown;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
    return 1;
}

static cc_result encode_failure(WebPEncodingError e) {
    switch (e) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BAD_WRITE: /* only our writer's realloc fails */
        return cc_fail(CC_ERR_NOMEM, "out of memory encoding WebP");
    case VP8_ENC_ERROR_BAD_DIMENSION:
        return cc_fail(CC_ERR_ARGUMENT, "WebP images are at most %dx%d pixels", WEBP_MAX_DIMENSION,
                       WEBP_MAX_DIMENSION);
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
        return cc_fail(CC_ERR_ENCODE, "partition 0 overflows 512 KiB (image too large for this quality)");
    case VP8_ENC_ERROR_PARTITION_OVERFLOW:
        return cc_fail(CC_ERR_ENCODE, "a partition overflows 16 MiB");
    case VP8_ENC_ERROR_FILE_TOO_BIG:
        return cc_fail(CC_ERR_ENCODE, "the file would exceed 4 GiB");
    case VP8_ENC_ERROR_INVALID_CONFIGURATION:
        return cc_fail(CC_ERR_ENCODE, "libwebp refused the configuration");
    default:
        return cc_fail(CC_ERR_ENCODE, "libwebp error %d", (int)e);
    }
}

/* Gray (+alpha) as RGB(A): libwebp imports only interleaved RGB/RGBA (VP8 is always YUV, so a
 * gray thumbnail costs its chroma planes either way; they are flat and compress to almost nothing). */
static cc_result gray_to_rgb(const cc_image *src, cc_image *out) {
    int alpha = src->channels == 2;
    cc_result r = cc_image_alloc(out, src->width, src->height, alpha ? 4 : 3, 1);
    if (r.status != CC_OK) return r;
    for (uint32_t y = 0; y < src->height; y++) {
        const uint8_t *s = src->pixels + (size_t)y * src->stride;
        uint8_t *d = out->pixels + (size_t)y * out->stride;
        for (uint32_t x = 0; x < src->width; x++) {
            uint8_t v = s[x * src->channels];
            *d++ = v;
            *d++ = v;
            *d++ = v;
            if (alpha) *d++ = s[x * 2 + 1];
        }
    }
    return r;
}

cc_result cc_encode_webp(const cc_image *src, int quality, uint8_t **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    if (!src || !src->pixels || src->bytes_per_sample != 1 || src->channels < 1 || src->channels > 4)
        return cc_fail(CC_ERR_ARGUMENT, "WebP encoding needs 8-bit pixels with 1 to 4 channels");
    if (quality < 1 || quality > 100) return cc_fail(CC_ERR_ARGUMENT, "WebP quality must be 1...100");
    if (src->width > WEBP_MAX_DIMENSION || src->height > WEBP_MAX_DIMENSION)
        return cc_fail(CC_ERR_ARGUMENT, "WebP images are at most %dx%d pixels, this one is %ux%u",
                       WEBP_MAX_DIMENSION, WEBP_MAX_DIMENSION, src->width, src->height);

    /* cwebp's defaults (method 4, lossless alpha, no sharp YUV) at the caller's quality: the
     * same trade-off vipsthumbnail and browsers' encoders make. */
    WebPConfig config;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, (float)quality))
        return cc_fail(CC_ERR_ENCODE, "libwebp version mismatch (WebPConfigPreset)");
    WebPPicture pic;
    if (!WebPPictureInit(&pic)) return cc_fail(CC_ERR_ENCODE, "libwebp version mismatch (WebPPictureInit)");

    cc_image rgb = {0};
    const cc_image *pixels = src;
    if (src->channels <= 2) {
        cc_result r = gray_to_rgb(src, &rgb);
        if (r.status != CC_OK) return r;
        pixels = &rgb;
    }
    pic.width = (int)pixels->width;
    pic.height = (int)pixels->height;
    pic.use_argb = 0; /* lossy: RGB goes straight to YUV420 on import, no ARGB copy */
    /* An RGBA image whose alpha is all 255 is written without an alpha chunk (libwebp checks). */
    int imported = pixels->channels == 4
        ? WebPPictureImportRGBA(&pic, pixels->pixels, (int)pixels->stride)
        : WebPPictureImportRGB(&pic, pixels->pixels, (int)pixels->stride);
    cc_image_free(&rgb);
    if (!imported) {
        cc_result r = encode_failure(pic.error_code);
        WebPPictureFree(&pic);
        return r;
    }

    wenc_buf w = {0};
    pic.writer = on_wenc_write;
    pic.custom_ptr = &w;
    int ok = WebPEncode(&config, &pic);
    WebPEncodingError error = pic.error_code;
    WebPPictureFree(&pic);
    if (!ok) {
        free(w.buf);
        return encode_failure(error);
    }
    *out = w.buf;
    *out_len = w.len;
    return cc_ok();
}
