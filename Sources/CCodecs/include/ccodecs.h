/* CCodecs: the only hand-written C in PoiKit.
 *
 * Owns: setjmp-guarded calls into libjpeg-turbo and libpng (probe, decode, encode), the libwebp
 * encoder (WebP is written, never read; libwebp never longjmps), plus the few pixel loops that
 * must be fast (Lanczos3 resampling, box shrink, orientation, alpha flattening).
 * Every longjmp raised by a library lands inside this target; callers only ever see a cc_status
 * and a NUL-terminated message copied from the library (format_message / png error text).
 *
 * Must not: know about files, MongoDB or Swift types; keep global mutable state (every call is
 * reentrant and may run concurrently on many threads).
 *
 * Memory: pixel buffers returned in a cc_image are malloc'd and released with cc_image_free;
 * encoded bytes are malloc'd and released with cc_free. A decode given a cc_arena takes the
 * library's working memory from it instead of malloc (never the returned pixels). */
#ifndef CCODECS_H
#define CCODECS_H

#include <stddef.h>
#include <stdint.h>

const char *ccodecs_libjpeg_turbo_version(void);
const char *ccodecs_libpng_version(void);
/* libwebp's encoder version packed as 0xMMmmpp (1.2.4 = 0x010204). */
int ccodecs_libwebp_version(void);

typedef enum {
    CC_FORMAT_UNKNOWN = 0,
    CC_FORMAT_JPEG = 1,
    CC_FORMAT_PNG = 2,
} cc_format;

typedef enum {
    CC_OK = 0,
    CC_ERR_EMPTY = 1,          /* zero bytes */
    CC_ERR_UNKNOWN_FORMAT = 2, /* magic bytes are neither JPEG nor PNG */
    CC_ERR_DECODE = 3,         /* the library gave up (fatal error); message holds its text */
    CC_ERR_CORRUPT_DATA = 4,   /* the library warned about corrupt data and lenient was off */
    CC_ERR_TOO_LARGE = 5,      /* width*height over the caller's pixel limit; nothing allocated */
    CC_ERR_NOMEM = 6,
    CC_ERR_ARGUMENT = 7,       /* caller passed an impossible request */
    CC_ERR_ENCODE = 8,
} cc_status;

#define CC_MESSAGE_MAX 200
#define CC_ICC_DESCRIPTION_MAX 128

typedef struct {
    cc_status status;
    char message[CC_MESSAGE_MAX];
} cc_result;

typedef struct {
    cc_format format;
    uint32_t width, height;
    int channels;     /* as stored: JPEG 1/3/4, PNG 1..4 after palette expansion */
    int bit_depth;    /* 8 for JPEG; 1,2,4,8,16 for PNG */
    int has_alpha;    /* PNG with alpha channel or tRNS */
    int orientation;  /* EXIF orientation 1..8, 1 when absent or invalid */
    int progressive;  /* JPEG progressive / PNG Adam7 interlaced */
    int jpeg_color_space; /* J_COLOR_SPACE of the file (JPEG only), 0 otherwise */
    int adobe_marker; /* JPEG: saw an Adobe APP14 marker */
    /* Progressive JPEG: bytes libjpeg allocates to keep every DCT coefficient until the last scan
     * (all components, padded to whole MCUs); 0 otherwise. */
    uint64_t jpeg_coefficient_bytes;
    /* Embedded ICC profile (JPEG APP2 ICC_PROFILE, PNG iCCP): its description, "" when none. */
    char icc_description[CC_ICC_DESCRIPTION_MAX];
    /* Why an embedded profile was not used (damaged, refused by Little CMS, wrong colour space);
     * "" when there is none or it was used. The image is then treated as untagged. */
    char icc_warning[CC_MESSAGE_MAX];
    /* PNG decode: the image data was inflated ahead in one libdeflate call (whole_inflate_max),
     * not streamed through zlib. Same pixels either way; for tests and profiles. */
    int png_whole_inflate;
} cc_info;

typedef struct {
    uint8_t *pixels;  /* malloc'd; row r starts at pixels + r * stride */
    uint32_t width, height;
    int channels;     /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA (alpha straight, not premultiplied) */
    int bytes_per_sample; /* 1, or 2 = native-endian uint16 */
    size_t stride;
} cc_image;

/* A decode arena (arena.c): one imaging worker's memory for the library's working buffers,
 * kept between decodes so the next image reuses pages already mapped. One decode at a time per
 * arena (not locked). cc_decode resets it when it returns (every allocation gone, the memory
 * kept); cc_arena_release gives every byte back to the system between decodes and leaves the
 * arena usable; cc_arena_destroy frees it (NULL is ignored). */
typedef struct cc_arena cc_arena;
cc_arena *cc_arena_create(void); /* NULL when out of memory */
void cc_arena_destroy(cc_arena *arena);
size_t cc_arena_retained(const cc_arena *arena);   /* bytes held between decodes */
size_t cc_arena_peak(const cc_arena *arena);       /* the most it has held at once, decodes included */
void cc_arena_release(cc_arena *arena);            /* give every byte back to the system; stays usable */

/* Which scans of a progressive JPEG a decode at 1/8 reads; the pixels are the same either way. */
typedef enum {
    CC_SCANS_NEEDED = 0,       /* the default: only those the 1/8 image depends on */
    CC_SCANS_EVERY = 1,        /* all of them, as at any other scale */
    CC_SCANS_UP_TO_NEEDED = 2, /* all up to the last needed one: the way before the scans left out
                                * (jpeg_scans.c), kept so the fuzzer and tests can compare the two */
} cc_scan_mode;

/* How cc_encode_jpeg writes the file. */
typedef enum {
    CC_JPEG_BASELINE = 0,    /* sequential: one scan */
    CC_JPEG_PROGRESSIVE = 1, /* libjpeg's standard progressive script (jpeg_simple_progression) */
} cc_jpeg_mode;
typedef enum {
    CC_JPEG_HUFFMAN_STANDARD = 0,  /* the tables of the JPEG spec's annex K: one pass */
    CC_JPEG_HUFFMAN_OPTIMIZED = 1, /* tables fitted to the image: smaller, a second pass */
} cc_jpeg_huffman;

/* The enums take an int's place in structs and calls, so the layout is as simple as an int's for
 * every caller (Swift imports them as structs wrapping the raw value). */
_Static_assert(sizeof(cc_scan_mode) == sizeof(int) && sizeof(cc_jpeg_mode) == sizeof(int) &&
                   sizeof(cc_jpeg_huffman) == sizeof(int) && sizeof(cc_format) == sizeof(int) &&
                   sizeof(cc_status) == sizeof(int),
               "CCodecs' enums are int-sized");

typedef struct {
    uint64_t max_pixels;  /* width*height limit checked before any pixel allocation; 0 = none */
    int lenient;          /* keep images that produced corrupt-data warnings */
    int scale_denom;      /* JPEG: decode at 1/scale_denom (1,2,4,8) using DCT scaling */
    int shrink;           /* PNG: integer box shrink applied while rows stream in (1 = none) */
    int color_manage;     /* convert pixels tagged with an ICC profile to sRGB (Little CMS 2) */
    cc_scan_mode every_scan; /* JPEG progressive at 1/8: which scans are decoded (same pixels);
                              * CC_SCANS_NEEDED (0) unless a test compares */
    size_t whole_inflate_max; /* PNG: inflate all image data in one call (libdeflate) when that needs at most this many bytes; 0 = stream through zlib */
    cc_arena *arena;      /* JPEG: libjpeg's per-image working memory (coefficient arrays, row
                           * buffers) comes from this arena and is kept for the next decode;
                           * reset when the decode returns. NULL = malloc'd and freed per image */
} cc_decode_options;

/* Format from the first bytes (magic), never from a name. */
cc_format cc_detect_format(const uint8_t *data, size_t len);

/* Header only: no pixel decode, no pixel allocation. */
cc_result cc_probe(const uint8_t *data, size_t len, uint64_t max_pixels, cc_info *info);

/* Decode to 8-bit gray/RGB (JPEG; CMYK and YCCK converted to RGB) or to PNG's own channels
 * with 8- or 16-bit samples. With color_manage, pixels of an image carrying a usable ICC profile
 * come out in sRGB (gray in sRGB's tone curve); untagged images are untouched. On failure
 * out->pixels is NULL. */
cc_result cc_decode(const uint8_t *data, size_t len, const cc_decode_options *options,
                    cc_info *info, cc_image *out);

void cc_image_free(cc_image *image);
void cc_free(void *p);

/* Lanczos3 resample of the source window (crop_x, crop_y, crop_w, crop_h) to dst_w x dst_h,
 * alpha premultiplied while filtering. Output is 8-bit with the source's channel count. */
cc_result cc_resize(const cc_image *src, double crop_x, double crop_y, double crop_w, double crop_h,
                    uint32_t dst_w, uint32_t dst_h, cc_image *out);

/* Apply EXIF orientation 1..8 (8-bit images). */
cc_result cc_orient(const cc_image *src, int orientation, cc_image *out);

/* Composite alpha over a solid gray background level (8-bit, 2 -> 1 or 4 -> 3 channels). */
cc_result cc_flatten(const cc_image *src, uint8_t background, cc_image *out);

/* Reduce 16-bit samples to 8 bits with rounding (v*255/65535), for callers that need 8-bit. */
cc_result cc_to_8bit(const cc_image *src, cc_image *out);

/* Encoders: 8-bit input only. JPEG takes 1 or 3 channels (4:2:0 chroma subsampling), quality
 * 1..100 (libjpeg's scale); PNG 1..4 channels, zlib compression level 0..9. */
cc_result cc_encode_jpeg(const cc_image *src, int quality, cc_jpeg_mode mode, cc_jpeg_huffman huffman,
                         uint8_t **out, size_t *out_len);
cc_result cc_encode_png(const cc_image *src, int compression_level, uint8_t **out, size_t *out_len);
/* Lossy WebP (libwebp, quality 1..100 as cwebp -q), 1..4 channels, at most 16383 px a side.
 * Alpha is kept (an alpha chunk when any pixel is not opaque); gray is written as RGB. */
cc_result cc_encode_webp(const cc_image *src, int quality, uint8_t **out, size_t *out_len);

#endif
