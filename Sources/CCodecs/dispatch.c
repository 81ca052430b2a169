/* Format detection and the probe/decode entry points, which hand each file to its codec. Apart
 * from common.c so the arrows run one way: dispatch.c -> jpeg_codec.c / png_codec.c -> common.c. */
#include <stdlib.h>
#include "internal.h"

cc_format cc_detect_format(const uint8_t *d, size_t len) {
    if (len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return CC_FORMAT_JPEG;
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (len >= 8 && memcmp(d, png_sig, 8) == 0) return CC_FORMAT_PNG;
    return CC_FORMAT_UNKNOWN;
}

static cc_result unknown_format(const uint8_t *d, size_t len) {
    if (len == 0) return cc_fail(CC_ERR_EMPTY, "empty file (0 bytes)");
    char hex[3 * 8 + 1] = {0};
    size_t n = len < 8 ? len : 8;
    for (size_t i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02X", d[i]);
    return cc_fail(CC_ERR_UNKNOWN_FORMAT, "not a JPEG or PNG file: starts with 0x%s", hex);
}

cc_result cc_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info) {
    memset(info, 0, sizeof *info);
    info->orientation = 1;
    switch (cc_detect_format(data, len)) {
    case CC_FORMAT_JPEG: return cc_jpeg_probe(data, len, max_pixels, info);
    case CC_FORMAT_PNG: return cc_png_probe(data, len, max_pixels, info);
    default: return unknown_format(data, len);
    }
}

cc_result cc_decode(const uint8_t *data, size_t len, const cc_decode_options *opt, cc_info *info,
                    cc_image *out) {
    memset(out, 0, sizeof *out);
    memset(info, 0, sizeof *info);
    info->orientation = 1;
    switch (cc_detect_format(data, len)) {
    case CC_FORMAT_JPEG: return cc_jpeg_decode(data, len, opt, info, out);
    case CC_FORMAT_PNG: return cc_png_decode(data, len, opt, info, out);
    default: return unknown_format(data, len);
    }
}
