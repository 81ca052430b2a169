#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/encode.h>
#include "ccodecs.h"

#define CC_STR2(x) #x
#define CC_STR(x) CC_STR2(x)

const char *ccodecs_libjpeg_turbo_version(void) {
#ifdef LIBJPEG_TURBO_VERSION
    return CC_STR(LIBJPEG_TURBO_VERSION);
#else
    return "unknown (not libjpeg-turbo)";
#endif
}

const char *ccodecs_libpng_version(void) { return png_get_libpng_ver(NULL); }

int ccodecs_libwebp_version(void) { return WebPGetEncoderVersion(); }
