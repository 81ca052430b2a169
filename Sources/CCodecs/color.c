/* Colour management: the embedded ICC profile of a JPEG (APP2 "ICC_PROFILE" segments) or PNG
 * (iCCP, handed over by png_codec.c), and the conversion of decoded pixels to sRGB with Little
 * CMS 2. lcms2 reports errors by return value, never by longjmp; its error text arrives through a
 * per-call context (cmsCreateContext), so nothing here is global and every call is reentrant.
 *
 * A profile that cannot be used (segments missing, over the size cap, shorter than its header
 * says, refused by lcms2, or for a colour space other than the pixels') is ignored: the image is treated as untagged and the
 * reason goes to cc_info.icc_warning. Never a failed decode. */
#include <stdlib.h>
#include <lcms2.h>
#include "internal.h"

#define ICC_SIG "ICC_PROFILE"
#define ICC_SIG_LEN 12 /* with its NUL */

/* JPEG: walk the marker segments between SOI and the first SOS, as jpeg_orientation does, and
 * reassemble the APP2 ICC_PROFILE chunks in sequence order. Hostile files may repeat a chunk
 * (the first one is kept), leave gaps or disagree on the count (the profile is then ignored). */
int cc_jpeg_icc(const uint8_t *d, size_t len, uint8_t **out, size_t *out_len, char *warning) {
    const uint8_t *part[256] = {0};
    size_t part_len[256] = {0};
    int count = 0, seen = 0;
    size_t total = 0, i = 2;
    *out = NULL;
    *out_len = 0;
    while (i + 4 <= len) {
        if (d[i] != 0xFF) break;
        uint8_t m = d[i + 1];
        if (m == 0xFF) { i++; continue; }
        if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { i += 2; continue; }
        if (m == 0xDA || m == 0xD9) break;
        size_t seg = (size_t)d[i + 2] << 8 | d[i + 3];
        if (seg < 2 || seg > len - i - 2) break;
        const uint8_t *p = d + i + 4;
        size_t n = seg - 2;
        if (m == 0xE2 && n > ICC_SIG_LEN + 2 && memcmp(p, ICC_SIG, ICC_SIG_LEN) == 0) {
            int seq = p[ICC_SIG_LEN], of = p[ICC_SIG_LEN + 1];
            if (seq < 1 || of < 1 || seq > of || (count && of != count)) {
                snprintf(warning, CC_MESSAGE_MAX, "ICC profile chunk %d of %d does not fit the others", seq, of);
                return 0;
            }
            count = of;
            if (!part[seq]) {
                part[seq] = p + ICC_SIG_LEN + 2;
                part_len[seq] = n - ICC_SIG_LEN - 2;
                total += part_len[seq];
                seen++;
            }
        }
        i += 2 + seg;
    }
    if (!count) return 0;
    if (seen != count) {
        snprintf(warning, CC_MESSAGE_MAX, "ICC profile has %d of its %d chunks", seen, count);
        return 0;
    }
    if (total > CC_ICC_MAX_BYTES) {
        snprintf(warning, CC_MESSAGE_MAX, "ICC profile of %zu bytes is over the %u-byte limit", total, CC_ICC_MAX_BYTES);
        return 0;
    }
    uint8_t *buf = malloc(total ? total : 1);
    if (!buf) return 0;
    size_t at = 0;
    for (int k = 1; k <= count; k++) {
        memcpy(buf + at, part[k], part_len[k]);
        at += part_len[k];
    }
    *out = buf;
    *out_len = total;
    return 1;
}

/* The size an ICC profile declares in its header (ICC.1 7.2.2) against the bytes that arrived.
 * lcms2 reads a tag only when it is used, so a profile cut short after the tags a conversion
 * needs (a CMYK profile's A2B0 comes before the larger B2A0) would convert without complaint:
 * it is refused as the damaged profile it is. More bytes than declared is padding, and fine. */
static int truncated(const uint8_t *profile, size_t len, char *warning) {
    if (len < 4) {
        snprintf(warning, CC_MESSAGE_MAX, "ICC profile ignored: truncated to %zu bytes", len);
        return 1;
    }
    uint32_t declared = (uint32_t)profile[0] << 24 | (uint32_t)profile[1] << 16 | (uint32_t)profile[2] << 8 | profile[3];
    if (declared <= len) return 0;
    snprintf(warning, CC_MESSAGE_MAX, "ICC profile ignored: truncated to %zu of its %u bytes", len, declared);
    return 1;
}

typedef struct {
    char message[CC_MESSAGE_MAX];
} lcms_log;

static void on_lcms_error(cmsContext ctx, cmsUInt32Number code, const char *text) {
    (void)code;
    lcms_log *log = (lcms_log *)cmsGetContextUserData(ctx);
    if (log && !log->message[0]) snprintf(log->message, sizeof log->message, "%s", text);
}

/* sRGB's own tone curve for gray output (IEC 61966-2-1), on a D50 gray profile. */
static cmsHPROFILE srgb_gray(cmsContext ctx) {
    cmsFloat64Number params[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(ctx, 4, params);
    if (!curve) return NULL;
    cmsHPROFILE p = cmsCreateGrayProfileTHR(ctx, cmsD50_xyY(), curve);
    cmsFreeToneCurve(curve);
    return p;
}

void cc_icc_describe(const uint8_t *profile, size_t len, cc_info *info) {
    if (!profile || !len || truncated(profile, len, info->icc_warning)) return;
    lcms_log log = {{0}};
    cmsContext ctx = cmsCreateContext(NULL, &log);
    if (!ctx) return;
    cmsSetLogErrorHandlerTHR(ctx, on_lcms_error);
    cmsHPROFILE p = cmsOpenProfileFromMemTHR(ctx, profile, (cmsUInt32Number)len);
    if (!p) {
        snprintf(info->icc_warning, CC_MESSAGE_MAX, "ICC profile ignored: %s",
                 log.message[0] ? log.message : "Little CMS cannot read it");
    } else {
        char text[CC_ICC_DESCRIPTION_MAX];
        cmsUInt32Number n = cmsGetProfileInfoASCII(p, cmsInfoDescription, "en", "US", text, sizeof text);
        if (n == 0) snprintf(text, sizeof text, "unnamed ICC profile");
        /* Only printable ASCII reaches documents and terminals. */
        for (char *c = text; *c; c++) if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7E) *c = '?';
        snprintf(info->icc_description, CC_ICC_DESCRIPTION_MAX, "%s", text);
        cmsCloseProfile(p);
    }
    cmsDeleteContext(ctx);
}

/* The lcms2 pixel type of a cc_image, 0 when the image has none lcms2 handles here. */
static cmsUInt32Number pixel_type(int channels, int bps, int *gray) {
    *gray = channels <= 2;
    switch (channels * 4 + bps) {
    case 1 * 4 + 1: return TYPE_GRAY_8;
    case 2 * 4 + 1: return TYPE_GRAYA_8;
    case 3 * 4 + 1: return TYPE_RGB_8;
    case 4 * 4 + 1: return TYPE_RGBA_8;
    case 1 * 4 + 2: return TYPE_GRAY_16;
    case 2 * 4 + 2: return TYPE_GRAYA_16;
    case 3 * 4 + 2: return TYPE_RGB_16;
    case 4 * 4 + 2: return TYPE_RGBA_16;
    default: return 0;
    }
}

cc_icc_transform *cc_icc_open(const uint8_t *profile, size_t len, int channels, int bps, int cmyk_inverted,
                              cc_info *info) {
    if (!profile || !len || truncated(profile, len, info->icc_warning)) return NULL;
    cc_icc_transform *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    lcms_log *log = calloc(1, sizeof *log);
    if (!log) { free(t); return NULL; }
    t->log = log;
    t->ctx = cmsCreateContext(NULL, log);
    if (!t->ctx) { cc_icc_close(t); return NULL; }
    cmsSetLogErrorHandlerTHR(t->ctx, on_lcms_error);
    cmsHPROFILE in = cmsOpenProfileFromMemTHR(t->ctx, profile, (cmsUInt32Number)len);
    cmsHPROFILE out = NULL;
    const char *why = NULL;
    int gray = 0;
    cmsUInt32Number in_type = 0, out_type = 0, flags = 0;
    if (!in) {
        why = "Little CMS cannot read it";
    } else {
        cmsColorSpaceSignature space = cmsGetColorSpace(in);
        if (channels == 4 && cmsGetColorSpace(in) == cmsSigCmykData && bps == 0) {
            /* CMYK JPEG rows (bps 0 marks them): Adobe writes them inverted. */
            in_type = cmyk_inverted ? TYPE_CMYK_8_REV : TYPE_CMYK_8;
            out_type = TYPE_RGB_8;
            out = cmsCreate_sRGBProfileTHR(t->ctx);
        } else if (bps == 0) {
            why = "a CMYK image needs a CMYK profile";
        } else if (!(in_type = pixel_type(channels, bps, &gray))) {
            why = "unsupported pixel layout";
        } else if (gray ? space != cmsSigGrayData : space != cmsSigRgbData) {
            why = gray ? "a gray image with a colour profile" : "a colour image with a profile that is not RGB";
        } else {
            out_type = in_type;
            out = gray ? srgb_gray(t->ctx) : cmsCreate_sRGBProfileTHR(t->ctx);
            if (channels == 2 || channels == 4) flags |= cmsFLAGS_COPY_ALPHA;
        }
    }
    if (!why && out) {
        t->transform = cmsCreateTransformTHR(t->ctx, in, in_type, out, out_type, INTENT_PERCEPTUAL, flags);
        if (!t->transform) why = "Little CMS cannot convert it to sRGB";
    } else if (!why) {
        why = "out of memory";
    }
    if (in) cmsCloseProfile(in);
    if (out) cmsCloseProfile(out);
    if (why) {
        snprintf(info->icc_warning, CC_MESSAGE_MAX, "ICC profile ignored: %s%s%s", why,
                 log->message[0] ? ": " : "", log->message);
        cc_icc_close(t);
        return NULL;
    }
    return t;
}

void cc_icc_apply(cc_icc_transform *t, const uint8_t *src, uint8_t *dst, uint32_t pixels) {
    cmsDoTransform((cmsHTRANSFORM)t->transform, src, dst, pixels);
}

cc_result cc_icc_image(cc_icc_transform *t, cc_image *img) {
    for (uint32_t y = 0; y < img->height; y++) {
        uint8_t *row = img->pixels + (size_t)y * img->stride;
        cmsDoTransform((cmsHTRANSFORM)t->transform, row, row, img->width);
    }
    return cc_ok();
}

void cc_icc_close(cc_icc_transform *t) {
    if (!t) return;
    if (t->transform) cmsDeleteTransform((cmsHTRANSFORM)t->transform);
    if (t->ctx) cmsDeleteContext((cmsContext)t->ctx);
    free(t->log);
    free(t);
}
