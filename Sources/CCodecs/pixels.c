/* Pixel loops that must be fast: streaming box shrink, Lanczos3 resize, orientation, alpha
 * flattening, 16 -> 8 bit reduction. Pure C, no library calls, no global state. */
#include <math.h>
#include <stdlib.h>
#include "internal.h"

/* ---- streaming box shrink ---- */

cc_result cc_box_begin(cc_box *box, uint32_t src_w, uint32_t src_h, int channels, int bps, int factor,
                       cc_image *out) {
    memset(box, 0, sizeof *box);
    uint32_t ow = (src_w + (uint32_t)factor - 1) / (uint32_t)factor;
    uint32_t oh = (src_h + (uint32_t)factor - 1) / (uint32_t)factor;
    cc_result r = cc_image_alloc(out, ow, oh, channels, bps);
    if (r.status != CC_OK) return r;
    /* A band's column sum is at most factor rows of the largest (alpha-weighted) sample. */
    int alpha = (channels == 2 || channels == 4);
    uint64_t largest = bps == 2 ? 65535u : 255u;
    if (alpha) largest *= largest;
    uint64_t most = (uint64_t)factor * largest;
    box->vsum_bytes = most <= UINT16_MAX ? 2 : most <= UINT32_MAX ? 4 : 8;
    box->sums = calloc((size_t)ow * (size_t)channels, sizeof(uint64_t));
    box->vsum = calloc((size_t)src_w * (size_t)channels, (size_t)box->vsum_bytes);
    if (!box->sums || !box->vsum) { cc_box_end(box); cc_image_free(out); return cc_fail(CC_ERR_NOMEM, "out of memory"); }
    box->src_w = src_w;
    box->src_h = src_h;
    box->factor = factor;
    box->out = out;
    return cc_ok();
}

/* The band's column sums, f source columns at a time, into the per-output-column sums (CH a
 * constant, so the channel loop unrolls). */
#define BOX_COLUMNS(S, CH)                                                                         \
    do {                                                                                         \
        const S *v = (const S *)box->vsum;                                                       \
        for (uint32_t ox = 0, x = 0; ox < out->width; ox++) {                                    \
            uint64_t *s = box->sums + (size_t)ox * (CH);                                         \
            uint32_t end = box->src_w - x > (uint32_t)f ? x + (uint32_t)f : box->src_w;          \
            for (; x < end; x++, v += (CH))                                                      \
                for (int k = 0; k < (CH); k++) s[k] += v[k];                                     \
        }                                                                                        \
    } while (0)
#define BOX_COLUMNS_CH(S)                                                                          \
    do {                                                                                         \
        switch (ch) {                                                                            \
        case 1: BOX_COLUMNS(S, 1); break;                                                        \
        case 2: BOX_COLUMNS(S, 2); break;                                                        \
        case 3: BOX_COLUMNS(S, 3); break;                                                        \
        default: BOX_COLUMNS(S, 4); break;                                                       \
        }                                                                                        \
    } while (0)

static void box_emit(cc_box *box) {
    cc_image *out = box->out;
    int ch = out->channels, bps = out->bytes_per_sample, f = box->factor;
    int alpha = (ch == 2 || ch == 4);
    switch (box->vsum_bytes) {
    case 2: BOX_COLUMNS_CH(uint16_t); break;
    case 4: BOX_COLUMNS_CH(uint32_t); break;
    default: BOX_COLUMNS_CH(uint64_t); break;
    }
    uint8_t *dst = out->pixels + (size_t)box->out_row * out->stride;
    for (uint32_t ox = 0; ox < out->width; ox++) {
        uint64_t *s = box->sums + (size_t)ox * ch;
        uint32_t cols = box->src_w - ox * (uint32_t)f;
        if (cols > (uint32_t)f) cols = (uint32_t)f;
        uint64_t n = (uint64_t)cols * box->rows_in_band;
        unsigned v[4];
        if (alpha) {
            /* colour sums are alpha-weighted: divide by the alpha sum, not the pixel count */
            uint64_t asum = s[ch - 1];
            for (int k = 0; k < ch - 1; k++) v[k] = asum ? (unsigned)((s[k] + asum / 2) / asum) : 0;
            v[ch - 1] = (unsigned)((asum + n / 2) / n);
        } else {
            for (int k = 0; k < ch; k++) v[k] = (unsigned)((s[k] + n / 2) / n);
        }
        for (int k = 0; k < ch; k++) {
            if (bps == 2) ((uint16_t *)(void *)dst)[(size_t)ox * ch + k] = (uint16_t)v[k];
            else dst[(size_t)ox * ch + k] = (uint8_t)v[k];
        }
    }
    memset(box->sums, 0, (size_t)out->width * ch * sizeof(uint64_t));
    memset(box->vsum, 0, (size_t)box->src_w * ch * (size_t)box->vsum_bytes);
    box->rows_in_band = 0;
    box->out_row++;
}

/* One source row into the band's per-sample sums. Summing down first keeps the per-source-pixel
 * work a contiguous widening add that clang vectorises (the horizontal sums run once per band,
 * in box_emit); specialised per sample type and alpha so the inner loop has no branches. The
 * result is the same integer sums, so the same pixels, as summing each pixel into its cell. */
#define BOX_ROW(T, S)                                                                             \
    do {                                                                                         \
        const T *px = (const T *)(const void *)row;                                              \
        S *v = (S *)box->vsum;                                                                   \
        for (size_t i = 0; i < n; i++) v[i] += px[i];                                            \
    } while (0)
#define BOX_ROW_ALPHA(T, S, CH)                                                                   \
    do {                                                                                         \
        const T *px = (const T *)(const void *)row;                                              \
        S *v = (S *)box->vsum;                                                                   \
        for (uint32_t x = 0; x < w; x++, px += (CH), v += (CH)) {                                \
            S a = px[(CH) - 1];                                                                  \
            for (int k = 0; k < (CH) - 1; k++) v[k] += (S)px[k] * a;                             \
            v[(CH) - 1] += a;                                                                    \
        }                                                                                        \
    } while (0)

#define BOX_ROW_CH(T, S)                                                                          \
    do {                                                                                         \
        switch (ch) {                                                                            \
        case 2: BOX_ROW_ALPHA(T, S, 2); break;                                                   \
        case 4: BOX_ROW_ALPHA(T, S, 4); break;                                                   \
        default: BOX_ROW(T, S); break;                                                           \
        }                                                                                        \
    } while (0)
#define BOX_ROW_SUM(T)                                                                            \
    do {                                                                                         \
        switch (box->vsum_bytes) {                                                               \
        case 2: BOX_ROW_CH(T, uint16_t); break;                                                  \
        case 4: BOX_ROW_CH(T, uint32_t); break;                                                  \
        default: BOX_ROW_CH(T, uint64_t); break;                                                 \
        }                                                                                        \
    } while (0)

void cc_box_push(cc_box *box, const uint8_t *row) {
    cc_image *out = box->out;
    int ch = out->channels;
    uint32_t w = box->src_w, f = (uint32_t)box->factor;
    size_t n = (size_t)w * (size_t)ch;
    if (out->bytes_per_sample == 1) BOX_ROW_SUM(uint8_t);
    else BOX_ROW_SUM(uint16_t);
    box->rows_in_band++;
    uint32_t seen = box->out_row * f + box->rows_in_band;
    if (box->rows_in_band == f || seen == box->src_h) box_emit(box);
}

void cc_box_end(cc_box *box) {
    free(box->sums);
    free(box->vsum);
    box->sums = NULL;
    box->vsum = NULL;
}

/* ---- Lanczos3 resize ---- */

static double lanczos3(double x) {
    x = fabs(x);
    if (x < 1e-8) return 1.0;
    if (x >= 3.0) return 0.0;
    double px = M_PI * x;
    return 3.0 * sin(px) * sin(px / 3.0) / (px * px);
}

typedef struct {
    int *start;   /* first source index per output index */
    int *count;   /* taps per output index */
    float *w;     /* taps, `stride` per output index */
    int stride;
} taps;

static void taps_free(taps *t) { free(t->start); free(t->count); free(t->w); }

/* Weights for mapping source window [x0, x0+len) onto dst samples. When shrinking the kernel is
 * stretched by the scale so every source pixel contributes (antialiasing). Taps that fall outside
 * the image are dropped and the rest renormalised, which equals edge extension closely enough. */
static int taps_make(taps *t, uint32_t src_size, double x0, double len, uint32_t dst) {
    double scale = len / dst;
    double fscale = scale > 1.0 ? scale : 1.0;
    double support = 3.0 * fscale;
    t->stride = (int)ceil(support) * 2 + 2;
    t->start = malloc(sizeof(int) * dst);
    t->count = malloc(sizeof(int) * dst);
    t->w = malloc(sizeof(float) * (size_t)t->stride * dst);
    if (!t->start || !t->count || !t->w) return 0;
    for (uint32_t i = 0; i < dst; i++) {
        double center = x0 + (i + 0.5) * scale;
        int lo = (int)floor(center - support);
        int hi = (int)ceil(center + support);
        if (lo < 0) lo = 0;
        if (hi > (int)src_size - 1) hi = (int)src_size - 1;
        if (hi - lo + 1 > t->stride) hi = lo + t->stride - 1;
        double sum = 0;
        float *w = t->w + (size_t)i * t->stride;
        int n = 0;
        for (int j = lo; j <= hi; j++, n++) {
            double v = lanczos3((j + 0.5 - center) / fscale);
            w[n] = (float)v;
            sum += v;
        }
        if (sum == 0) { /* degenerate window: nearest pixel */
            int j = (int)floor(center);
            if (j < lo) j = lo;
            if (j > hi) j = hi;
            for (int k = 0; k < n; k++) w[k] = 0;
            w[j - lo] = 1;
            sum = 1;
        }
        for (int k = 0; k < n; k++) w[k] = (float)(w[k] / sum);
        t->start[i] = lo;
        t->count[i] = n;
    }
    return 1;
}

/* One source row -> float, alpha premultiplied, scaled to 0..255 whatever the bit depth. */
static void row_to_float(const uint8_t *row, int bps, int ch, uint32_t x0, uint32_t x1, float *dst) {
    int alpha = (ch == 2 || ch == 4);
    const float k16 = 1.0f / 257.0f;
    for (uint32_t x = x0; x < x1; x++) {
        size_t i = (size_t)x * ch;
        float *d = dst + (size_t)(x - x0) * ch;
        if (bps == 1) for (int k = 0; k < ch; k++) d[k] = row[i + k];
        else for (int k = 0; k < ch; k++) d[k] = ((const uint16_t *)(const void *)row)[i + k] * k16;
        if (alpha) {
            float a = d[ch - 1] * (1.0f / 255.0f);
            for (int k = 0; k < ch - 1; k++) d[k] *= a;
        }
    }
}

#define HPASS(CH)                                                                                 \
    static void hpass_##CH(const float *src, uint32_t src_x0, const taps *t, uint32_t dw, float *dst) { \
        for (uint32_t x = 0; x < dw; x++) {                                                      \
            const float *w = t->w + (size_t)x * t->stride;                                       \
            const float *s = src + (size_t)(t->start[x] - (int)src_x0) * CH;                      \
            float acc[CH] = {0};                                                                 \
            for (int j = 0; j < t->count[x]; j++, s += CH)                                      \
                for (int k = 0; k < CH; k++) acc[k] += w[j] * s[k];                              \
            for (int k = 0; k < CH; k++) dst[(size_t)x * CH + k] = acc[k];                       \
        }                                                                                        \
    }
HPASS(1)
HPASS(2)
HPASS(3)
HPASS(4)

static inline uint8_t clamp8(float v) {
    if (v <= 0.0f) return 0;
    if (v >= 255.0f) return 255;
    return (uint8_t)(v + 0.5f);
}

cc_result cc_resize(const cc_image *src, double cx, double cy, double cw, double ch_, uint32_t dw, uint32_t dh,
                    cc_image *out) {
    memset(out, 0, sizeof *out);
    if (!src || !src->pixels || dw == 0 || dh == 0 || cw <= 0 || ch_ <= 0 || cx < 0 || cy < 0 ||
        cx + cw > src->width + 1e-6 || cy + ch_ > src->height + 1e-6)
        return cc_fail(CC_ERR_ARGUMENT, "resize window outside the image");
    int ch = src->channels;
    taps h = {0}, v = {0};
    float *rowf = NULL, *tmp = NULL, *acc = NULL;
    cc_result r = cc_ok();
    if (!taps_make(&h, src->width, cx, cw, dw) || !taps_make(&v, src->height, cy, ch_, dh)) {
        r = cc_fail(CC_ERR_NOMEM, "out of memory");
        goto done;
    }
    uint32_t x0 = (uint32_t)h.start[0], x1 = (uint32_t)(h.start[dw - 1] + h.count[dw - 1]);
    uint32_t y0 = (uint32_t)v.start[0], y1 = (uint32_t)(v.start[dh - 1] + v.count[dh - 1]);
    for (uint32_t i = 0; i < dw; i++) {
        if ((uint32_t)h.start[i] < x0) x0 = (uint32_t)h.start[i];
        if ((uint32_t)(h.start[i] + h.count[i]) > x1) x1 = (uint32_t)(h.start[i] + h.count[i]);
    }
    for (uint32_t i = 0; i < dh; i++) {
        if ((uint32_t)v.start[i] < y0) y0 = (uint32_t)v.start[i];
        if ((uint32_t)(v.start[i] + v.count[i]) > y1) y1 = (uint32_t)(v.start[i] + v.count[i]);
    }
    size_t rowlen = (size_t)dw * ch;
    rowf = malloc(sizeof(float) * (size_t)(x1 - x0) * ch);
    tmp = malloc(sizeof(float) * rowlen * (y1 - y0));
    acc = malloc(sizeof(float) * rowlen);
    if (!rowf || !tmp || !acc) { r = cc_fail(CC_ERR_NOMEM, "out of memory"); goto done; }
    /* horizontal pass over only the source rows and columns the vertical taps will read */
    for (uint32_t y = y0; y < y1; y++) {
        row_to_float(src->pixels + (size_t)y * src->stride, src->bytes_per_sample, ch, x0, x1, rowf);
        float *d = tmp + (size_t)(y - y0) * rowlen;
        switch (ch) {
        case 1: hpass_1(rowf, x0, &h, dw, d); break;
        case 2: hpass_2(rowf, x0, &h, dw, d); break;
        case 3: hpass_3(rowf, x0, &h, dw, d); break;
        default: hpass_4(rowf, x0, &h, dw, d); break;
        }
    }
    r = cc_image_alloc(out, dw, dh, ch, 1);
    if (r.status != CC_OK) goto done;
    int alpha = (ch == 2 || ch == 4);
    for (uint32_t y = 0; y < dh; y++) {
        const float *w = v.w + (size_t)y * v.stride;
        const float *s = tmp + (size_t)(v.start[y] - (int)y0) * rowlen;
        for (size_t i = 0; i < rowlen; i++) acc[i] = 0;
        for (int j = 0; j < v.count[y]; j++, s += rowlen) {
            float wj = w[j];
            for (size_t i = 0; i < rowlen; i++) acc[i] += wj * s[i];
        }
        uint8_t *o = out->pixels + (size_t)y * out->stride;
        if (!alpha) {
            for (size_t i = 0; i < rowlen; i++) o[i] = clamp8(acc[i]);
        } else {
            for (uint32_t x = 0; x < dw; x++) {
                float *p = acc + (size_t)x * ch;
                float a = p[ch - 1];
                uint8_t a8 = clamp8(a);
                float inv = a8 ? 255.0f / a : 0.0f;
                for (int k = 0; k < ch - 1; k++) o[(size_t)x * ch + k] = clamp8(p[k] * inv);
                o[(size_t)x * ch + ch - 1] = a8;
            }
        }
    }
done:
    taps_free(&h);
    taps_free(&v);
    free(rowf);
    free(tmp);
    free(acc);
    return r;
}

/* ---- orientation ---- */

cc_result cc_orient(const cc_image *src, int o, cc_image *out) {
    memset(out, 0, sizeof *out);
    if (!src || !src->pixels || src->bytes_per_sample != 1 || o < 1 || o > 8)
        return cc_fail(CC_ERR_ARGUMENT, "orientation needs an 8-bit image and a value 1...8");
    uint32_t W = src->width, H = src->height;
    int swap = o >= 5;
    cc_result r = cc_image_alloc(out, swap ? H : W, swap ? W : H, src->channels, 1);
    if (r.status != CC_OK) return r;
    int ch = src->channels;
    for (uint32_t y = 0; y < out->height; y++) {
        uint8_t *d = out->pixels + (size_t)y * out->stride;
        for (uint32_t x = 0; x < out->width; x++, d += ch) {
            uint32_t sx, sy;
            switch (o) {
            case 2: sx = W - 1 - x; sy = y; break;
            case 3: sx = W - 1 - x; sy = H - 1 - y; break;
            case 4: sx = x; sy = H - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = H - 1 - x; break;
            case 7: sx = W - 1 - y; sy = H - 1 - x; break;
            case 8: sx = W - 1 - y; sy = x; break;
            default: sx = x; sy = y; break;
            }
            memcpy(d, src->pixels + (size_t)sy * src->stride + (size_t)sx * ch, (size_t)ch);
        }
    }
    return r;
}

cc_result cc_flatten(const cc_image *src, uint8_t bg, cc_image *out) {
    memset(out, 0, sizeof *out);
    if (!src || !src->pixels || src->bytes_per_sample != 1 || (src->channels != 2 && src->channels != 4))
        return cc_fail(CC_ERR_ARGUMENT, "flatten needs an 8-bit image with alpha");
    int ch = src->channels, oc = ch - 1;
    cc_result r = cc_image_alloc(out, src->width, src->height, oc, 1);
    if (r.status != CC_OK) return r;
    for (uint32_t y = 0; y < src->height; y++) {
        const uint8_t *s = src->pixels + (size_t)y * src->stride;
        uint8_t *d = out->pixels + (size_t)y * out->stride;
        for (uint32_t x = 0; x < src->width; x++, s += ch, d += oc) {
            unsigned a = s[ch - 1];
            for (int k = 0; k < oc; k++) d[k] = (uint8_t)((s[k] * a + bg * (255 - a) + 127) / 255);
        }
    }
    return r;
}

cc_result cc_to_8bit(const cc_image *src, cc_image *out) {
    memset(out, 0, sizeof *out);
    if (!src || !src->pixels) return cc_fail(CC_ERR_ARGUMENT, "no image");
    cc_result r = cc_image_alloc(out, src->width, src->height, src->channels, 1);
    if (r.status != CC_OK) return r;
    size_t n = (size_t)src->width * src->channels;
    for (uint32_t y = 0; y < src->height; y++) {
        const uint8_t *s = src->pixels + (size_t)y * src->stride;
        uint8_t *d = out->pixels + (size_t)y * out->stride;
        if (src->bytes_per_sample == 1) memcpy(d, s, n);
        else for (size_t i = 0; i < n; i++) d[i] = (uint8_t)((((const uint16_t *)(const void *)s)[i] * 255u + 32767u) / 65535u);
    }
    return r;
}
