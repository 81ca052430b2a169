/* A PNG's image data inflated ahead by libdeflate (cc_png_whole_prepare), and the file libpng
 * reads instead of the real one (cc_png_whole_read): the same bytes, except that the IDAT chunks
 * are replaced by one IDAT holding those inflated bytes as stored (uncompressed) deflate blocks,
 * generated as libpng reads them.
 *
 * Why this shape: libdeflate inflates 2-3x faster than zlib (75 % of a PNG thumbnail's CPU was
 * zlib's inflate) but only a whole buffer at once, and libpng inflates through zlib with no way
 * to hand it inflated rows. Given stored blocks, zlib's inflate is a memcpy, and libpng still does
 * everything else (unfiltering, interlacing, every transform, every check and message) exactly
 * as before, so the pixels are the same bytes by construction. Whatever libdeflate does not
 * accept exactly (a damaged stream, too much or too little data, bytes after the stream, a
 * window under 32 KiB that zlib would enforce) leaves the file to zlib, streaming, as before.
 *
 * Where they differ: libdeflate knowingly decodes a few streams that break RFC 1951 and that
 * zlib refuses (287-288 literal/length or 31-32 distance codes declared, a code-length repeat
 * past the list, literal/length 286-287 or distance 30-31 used, a one-codeword code read as if
 * both codewords were it). With the CRCs right such a stream was written that way, never
 * damaged; zlib's path refuses it, this one makes an image (DecodeMemoryTests pins one). Checking
 * zlib's rules first was tried and measured: it means walking every Huffman symbol, which cost
 * as much as libdeflate's whole inflate (22 bench PNGs: 1.67 s through zlib, 2.18 s through
 * libdeflate plus the walk), so nothing would be left of the gain. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "internal.h"
#include "png_inflate.h"

#define STORED_BLOCK_MAX CC_PNG_STORED_BLOCK_MAX
/* The largest inflated image taken (bigger ones stream through zlib): the virtual IDAT, that
 * much data in stored blocks plus the zlib header and Adler-32, must fit PNG's 31-bit chunk
 * length. */
#define WHOLE_INFLATED_MAX 0x7F000000u

_Static_assert(STORED_BLOCK_MAX <= 0xFFFFu, "a stored deflate block's LEN field is 16 bits");
_Static_assert((uint64_t)WHOLE_INFLATED_MAX + 5u * ((uint64_t)WHOLE_INFLATED_MAX / STORED_BLOCK_MAX + 1u) + 6u <=
                   0x7FFFFFFFu,
               "the virtual IDAT's data (stored blocks, zlib header and Adler-32) must fit PNG's 31-bit length");
_Static_assert(sizeof(size_t) >= sizeof(uint32_t), "chunk lengths and offsets are held in size_t");

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Bytes of the stored zlib stream from offset z: header 78 01 (32 KiB window, no dictionary),
 * blocks of STORED_BLOCK_MAX with their 5-byte headers, the Adler-32. Returns how many it wrote. */
static size_t stored_stream_read(const cc_png_whole *w, size_t z, uint8_t *out, size_t n) {
    static const uint8_t zlib_header[2] = {0x78, 0x01};
    if (z < 2) {
        size_t k = min_size(n, 2 - z);
        memcpy(out, zlib_header + z, k);
        return k;
    }
    size_t body = w->zlen - 6;
    z -= 2;
    if (z >= body) {
        size_t k = min_size(n, 4 - (z - body));
        memcpy(out, w->adler + (z - body), k);
        return k;
    }
    size_t block = z / (STORED_BLOCK_MAX + 5), off = z % (STORED_BLOCK_MAX + 5);
    size_t start = block * STORED_BLOCK_MAX;
    size_t blen = min_size(STORED_BLOCK_MAX, w->inflated_len - start);
    if (off < 5) {
        int last = start + blen == w->inflated_len;
        uint8_t header[5] = {(uint8_t)last, (uint8_t)(blen & 0xFF), (uint8_t)(blen >> 8),
                             (uint8_t)(~blen & 0xFF), (uint8_t)((~blen >> 8) & 0xFF)};
        size_t k = min_size(n, 5 - off);
        memcpy(out, header + off, k);
        return k;
    }
    off -= 5;
    size_t k = min_size(n, blen - off);
    memcpy(out, w->inflated + start + off, k);
    return k;
}

/* The virtual file: the real bytes before the first IDAT, one IDAT chunk holding the stored
 * stream (its CRC field zero: libpng is told not to check critical CRCs, cc_png_whole_prepare
 * checked every real one), the real bytes after the last IDAT. */
int cc_png_whole_read(cc_png_whole *w, const uint8_t *data, size_t len, uint8_t *out, size_t n) {
    size_t chunk_end = w->head_end + 12 + w->zlen;
    size_t vlen = chunk_end + (len - w->tail_start);
    if (vlen - w->vpos < n) return 0;
    while (n > 0) {
        size_t p = w->vpos, k;
        if (p < w->head_end) {
            k = min_size(n, w->head_end - p);
            memcpy(out, data + p, k);
        } else if (p < chunk_end) {
            size_t q = p - w->head_end;
            if (q < 8) {
                uint8_t header[8] = {(uint8_t)(w->zlen >> 24), (uint8_t)(w->zlen >> 16), (uint8_t)(w->zlen >> 8),
                                     (uint8_t)w->zlen, 'I', 'D', 'A', 'T'};
                k = min_size(n, 8 - q);
                memcpy(out, header + q, k);
            } else if (q < 8 + w->zlen) {
                k = stored_stream_read(w, q - 8, out, n);
            } else {
                k = min_size(n, 12 + w->zlen - q);
                memset(out, 0, k);
            }
        } else {
            size_t f = p - chunk_end + w->tail_start;
            k = min_size(n, len - f);
            memcpy(out, data + f, k);
        }
        out += k;
        n -= k;
        w->vpos += k;
    }
    return 1;
}

/* Filtered bytes of the image data as IHDR lays them out: a filter byte plus the packed samples
 * of each row, of each non-empty Adam7 pass when interlaced. 0 for a header libpng would refuse. */
static uint64_t png_filtered_bytes(uint32_t w, uint32_t h, int depth, int color, int interlace) {
    int samples;
    switch (color) {
    case 0: samples = 1; if (depth != 1 && depth != 2 && depth != 4 && depth != 8 && depth != 16) return 0; break;
    case 3: samples = 1; if (depth != 1 && depth != 2 && depth != 4 && depth != 8) return 0; break;
    case 2: samples = 3; if (depth != 8 && depth != 16) return 0; break;
    case 4: samples = 2; if (depth != 8 && depth != 16) return 0; break;
    case 6: samples = 4; if (depth != 8 && depth != 16) return 0; break;
    default: return 0;
    }
    uint64_t bits = (uint64_t)samples * (uint64_t)depth;
    if (interlace == 0) return (uint64_t)h * (1 + ((uint64_t)w * bits + 7) / 8);
    uint64_t total = 0;
    for (int p = 0; p < 7; p++) {
        if (w <= adam7_x0[p] || h <= adam7_y0[p]) continue;
        uint64_t pw = (w - adam7_x0[p] + adam7_dx[p] - 1) / adam7_dx[p];
        uint64_t ph = (h - adam7_y0[p] + adam7_dy[p] - 1) / adam7_dy[p];
        total += ph * (1 + (pw * bits + 7) / 8);
    }
    return total;
}

/* Decides whether this file's image data is inflated ahead in one libdeflate call, and does it.
 * Only for a file whose chunks are all whole, whose critical chunks' CRCs hold (libpng is then
 * told not to check them again), whose IDATs are consecutive, and whose stream libdeflate
 * inflates to exactly the size IHDR implies with no byte left over; within opt->whole_inflate_max
 * for the inflated image plus the joined IDATs. Anything else: nothing happens here, and libpng
 * meets the file as it always did, errors and all. */
void cc_png_whole_prepare(cc_png_whole *w, const uint8_t *data, size_t len, const cc_decode_options *opt) {
    const uint8_t *d = data;
    if (opt->whole_inflate_max == 0 || len < 8 + 25 || be32(d + 8) != 13 || memcmp(d + 12, "IHDR", 4) != 0) return;
    uint32_t width = be32(d + 16), height = be32(d + 20);
    int depth = d[24], color = d[25], interlace = d[28];
    if (width == 0 || height == 0 || width > CC_PNG_MAX_DIMENSION || height > CC_PNG_MAX_DIMENSION || d[26] != 0 ||
        d[27] != 0 || interlace > 1 || cc_pixels_over_limit(width, height, opt->max_pixels))
        return;
    uint64_t inflated = png_filtered_bytes(width, height, depth, color, interlace);
    if (inflated == 0 || inflated > opt->whole_inflate_max) return;

    size_t pos = 8, head_end = 0, tail_start = 0, idat_total = 0, idat_chunks = 0;
    int idat_done = 0;
    while (pos < len) {
        if (len - pos < 12) return;
        uint32_t n = be32(d + pos);
        const uint8_t *type = d + pos + 4;
        if (n > 0x7FFFFFFFu || (size_t)n > len - pos - 12) return;
        int critical = !(type[0] & 0x20);
        if (critical && libdeflate_crc32(0, type, (size_t)n + 4) != be32(d + pos + 8 + n)) return;
        if (memcmp(type, "IDAT", 4) == 0) {
            if (idat_done) return;
            if (idat_chunks++ == 0) head_end = pos;
            idat_total += n;
            tail_start = pos + 12 + n;
        } else if (idat_chunks > 0) {
            idat_done = 1;
        }
        pos += (size_t)n + 12;
        if (memcmp(type, "IEND", 4) == 0) break;
    }
    if (idat_chunks == 0 || idat_total < 2) return;
    /* Deflate, and a window libdeflate's 32 KiB cannot outreach: zlib refuses a distance past the
     * window the header declares, libdeflate only one past the start of the data, so a smaller
     * window is the same rule only when all the data fits in it (as when an encoder shrank the
     * window because the image is small). */
    unsigned cmf = d[head_end + 8];
    if ((cmf & 0x0F) != 8 || (cmf >> 4) > 7 || ((cmf >> 4) < 7 && inflated > (1u << ((cmf >> 4) + 8)))) return;
    uint64_t need = inflated + (idat_chunks > 1 ? idat_total : 0);
    /* The virtual IDAT's length must fit PNG's 31 bits. */
    if (need > opt->whole_inflate_max || inflated > WHOLE_INFLATED_MAX) return;

    const uint8_t *stream = d + head_end + 8;
    /* Both buffers from the worker's arena when there is one (pages already mapped; reset with
     * the decode), else malloc'd and freed here and in pdec. */
    cc_arena *arena = opt->arena;
    /* Both in one arena block (cc_arena_reserve), with room for their rounding. */
    if (arena) cc_arena_reserve(arena, (size_t)need + 512);
    uint8_t *joined = NULL;
    if (idat_chunks > 1) {
        joined = arena ? cc_arena_alloc(arena, idat_total) : malloc(idat_total);
        if (!joined) return;
        size_t at = 0;
        for (size_t p = head_end; p < tail_start;) {
            uint32_t n = be32(d + p);
            memcpy(joined + at, d + p + 8, n);
            at += n;
            p += (size_t)n + 12;
        }
        stream = joined;
    }
    uint8_t *out = arena ? cc_arena_alloc(arena, (size_t)inflated) : malloc((size_t)inflated);
    struct libdeflate_decompressor *z = out ? libdeflate_alloc_decompressor() : NULL;
    size_t in_used = 0, out_used = 0;
    enum libdeflate_result r = z ? libdeflate_zlib_decompress_ex(z, stream, idat_total, out, (size_t)inflated,
                                                                &in_used, &out_used)
                                 : LIBDEFLATE_BAD_DATA;
    if (z) libdeflate_free_decompressor(z);
    if (r == LIBDEFLATE_SUCCESS && in_used == idat_total && out_used == inflated) {
        w->active = 1;
        w->inflated = out;
        w->inflated_len = (size_t)inflated;
        w->head_end = head_end;
        w->tail_start = tail_start;
        size_t blocks = ((size_t)inflated + STORED_BLOCK_MAX - 1) / STORED_BLOCK_MAX;
        w->zlen = 2 + (size_t)inflated + 5 * blocks + 4;
        memcpy(w->adler, stream + idat_total - 4, 4);
    } else if (!arena) {
        free(out);
    }
    if (!arena) free(joined);
    w->from_arena = arena != NULL;
}

void cc_png_whole_free(cc_png_whole *w) {
    if (!w->from_arena) free(w->inflated);
    w->inflated = NULL;
}
