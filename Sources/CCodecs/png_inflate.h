/* A PNG's image data inflated ahead in one libdeflate call, and the virtual file libpng reads
 * instead of the real one (png_inflate.c; why, and where it differs from zlib, is said there).
 * Private to CCodecs: png_codec.c decides nothing here, it calls cc_png_whole_prepare before
 * libpng starts and reads through cc_png_whole_read while `active`. Nothing here calls libpng or
 * longjmps. */
#ifndef CC_PNG_INFLATE_H
#define CC_PNG_INFLATE_H

#include <stddef.h>
#include <stdint.h>
#include "ccodecs.h"

/* Largest width or height accepted (libpng's user limits, and the same test before inflating). */
#define CC_PNG_MAX_DIMENSION 1000000u
/* A stored deflate block's largest payload (its LEN field is 16 bits); libpng is told to read
 * one whole block with its 5-byte header at a time. */
#define CC_PNG_STORED_BLOCK_MAX 65535u

/* Adam7's seven passes: first column and row, and the steps between them (PNG spec, 8.2). Here
 * for the size of the inflated data and png_codec.c's adam7_shrink. */
static const uint32_t adam7_x0[7] = {0, 4, 0, 2, 0, 1, 0}, adam7_dx[7] = {8, 8, 4, 4, 2, 2, 1};
static const uint32_t adam7_y0[7] = {0, 0, 4, 0, 2, 0, 1}, adam7_dy[7] = {8, 8, 8, 4, 4, 2, 2};

typedef struct {
    int active;         /* the image data was inflated: libpng reads the virtual file */
    uint8_t *inflated;  /* the filtered scanlines, every pass; from the arena or malloc */
    size_t inflated_len;
    size_t head_end;    /* file offset of the first IDAT chunk */
    size_t tail_start;  /* file offset just past the last IDAT chunk */
    size_t zlen;        /* length of the stored zlib stream in the virtual IDAT */
    uint8_t adler[4];   /* the original stream's Adler-32: the same inflated bytes */
    size_t vpos;        /* libpng's read position in the virtual file */
    int from_arena;     /* inflated lives in opt->arena: never freed, reset with the decode */
} cc_png_whole;

/* On a zeroed `w`, before libpng reads anything: inflates the image data of the PNG file
 * data[0..len) when opt allows it and the file qualifies, and sets w->active. Otherwise leaves
 * w inactive and libpng meets the real file. */
void cc_png_whole_prepare(cc_png_whole *w, const uint8_t *data, size_t len, const cc_decode_options *opt);

/* The next n bytes of the virtual file into out. Returns 0, copying nothing, when fewer than n
 * are left (the caller raises libpng's truncation error), 1 otherwise. */
int cc_png_whole_read(cc_png_whole *w, const uint8_t *data, size_t len, uint8_t *out, size_t n);

/* Frees the inflated data unless it is the arena's (reset with the decode). */
void cc_png_whole_free(cc_png_whole *w);

#endif
