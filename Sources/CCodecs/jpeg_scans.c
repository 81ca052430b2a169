/* Progressive JPEG at 1/8: the scans the image does not depend on are never read (a thumbnail
 * decoded at 1/8 needs only the DC coefficients of most components, so big progressive photos
 * stay cheap).
 *
 * At 1/8 the IDCT of a component whose scaled size is 1x1 (luma; every component of gray and
 * 4:4:4 files) reads only its DC coefficient, so its AC scans (Ss > 0; a progressive AC scan
 * holds one component) cannot change a pixel. read_needed_scans in jpeg_codec.c already stops
 * after the last scan the image needs, but every scan before that point was Huffman-decoded
 * whole: libjpeg has no way to skip a scan, because its decoder finds a scan's end only by
 * decoding through it. Here the file is walked first, the way a JPEG's structure allows without
 * decoding: a scan's entropy-coded data ends at the first FF byte followed by neither 00 (a
 * stuffed data byte) nor D0-D7 (a restart marker), and between scans there are only marker
 * segments with lengths. libjpeg is then given a data source that leaves those AC scans out.
 * It decodes the rest exactly as before, coefficient by coefficient, so the pixels are the same
 * bytes; the AC coefficients it never sees stay zero, and nothing reads them.
 *
 * What leaving a scan out must not change is the verdict on a bad file. libjpeg checks a scan's
 * header, its Huffman table and its place in the progression when the scan starts; the walk makes
 * the same checks for the scans it would leave out (get_sos in jdmarker.c,
 * start_pass_phuff_decoder in jdphuff.c, jpeg_make_d_derived_tbl in jdhuff.c of libjpeg-turbo
 * 2.1) and leaves nothing out if any of them fails, if the file does not walk cleanly to its
 * EOI (cut short, an unknown marker, a segment running past the end, too many scans), or if the
 * scans before that EOI do not complete what the image needs (image_complete): libjpeg then
 * reads every scan as before and says what it always said. Not checked is what only decoding a
 * scan left out would show: damage in its entropy-coded data, or a header or table that passes
 * the checks but is not the one it was encoded with. That no longer stops a 1/8 thumbnail (whose
 * pixels do not depend on it), as it already did not in the scans after the last needed one.
 * One message changes: bytes between a kept scan's data and a scan left out right after it are
 * "extraneous bytes before marker 0x.." naming the marker after the scan left out.
 *
 * Measured on make bench-images' 16 progressive wallpapers (4096x4096 4:4:4, libjpeg's standard
 * script, so only the two DC scans are needed): see the figures in jpeg_codec.c above
 * read_needed_scans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "jpeg_scans.h"

/* ---- the data source ---- */

static void source_init(j_decompress_ptr d) { (void)d; }
static void source_term(j_decompress_ptr d) { (void)d; }

static boolean source_fill(j_decompress_ptr d) {
    /* Past the last span: what jpeg_mem_src does at the end of its buffer (never reached for a
     * file the walk took, which ends in an EOI inside the last span). */
    static const JOCTET eoi[2] = {0xFF, JPEG_EOI};
    cc_scan_source *s = (cc_scan_source *)d->src;
    if (s->next < s->count) {
        s->pub.next_input_byte = s->spans[s->next].start;
        s->pub.bytes_in_buffer = s->spans[s->next].length;
        s->next++;
        return TRUE;
    }
    WARNMS(d, JWRN_JPEG_EOF);
    s->pub.next_input_byte = eoi;
    s->pub.bytes_in_buffer = 2;
    return TRUE;
}

static void source_skip(j_decompress_ptr d, long count) {
    struct jpeg_source_mgr *s = d->src;
    if (count <= 0) return;
    while (count > (long)s->bytes_in_buffer) {
        count -= (long)s->bytes_in_buffer;
        (void)source_fill(d);
    }
    s->next_input_byte += (size_t)count;
    s->bytes_in_buffer -= (size_t)count;
}

/* ---- the walk ---- */

typedef struct {
    j_decompress_ptr d;
    const JOCTET *end;
    int bits[MAX_COMPONENTS][DCTSIZE2]; /* libjpeg's coef_bits as the scans so far leave them */
    signed char ac_table[NUM_HUFF_TBLS]; /* -1 not defined, 0 one libjpeg would refuse, 1 usable */
    int scans, max_scans;
    cc_span *spans; /* max_scans + 1: one before each scan left out, one to the end */
    int count;
} walk;

/* jpeg_make_d_derived_tbl's checks of a table's code lengths: at most 256 codes, and after the
 * codes of each length the next code must still fit in that length (no all-ones codeword). */
static int code_lengths_usable(const UINT8 counts[17]) {
    long code = 0, total = 0;
    int last = 0;
    for (int l = 1; l <= 16; l++) {
        total += counts[l];
        if (counts[l]) last = l;
    }
    if (total > 256) return 0;
    for (int l = 1; l <= last; l++) {
        code += counts[l];
        if (code >= (1L << l)) return 0;
        code <<= 1;
    }
    return 1;
}

/* A DHT segment's tables (get_dht's layout); 0 if it would not parse. */
static int read_dht(walk *w, const JOCTET *p, size_t length) {
    while (length > 0) {
        if (length < 17) return 0;
        int index = p[0];
        UINT8 counts[17] = {0};
        size_t total = 0;
        for (int l = 1; l <= 16; l++) {
            counts[l] = p[l];
            total += p[l];
        }
        if (total > 256 || length < 17 + total) return 0;
        if (index & 0x10) {
            int slot = index - 0x10;
            if (slot < 0 || slot >= NUM_HUFF_TBLS) return 0;
            w->ac_table[slot] = (signed char)code_lengths_usable(counts);
        } else if (index < 0 || index >= NUM_HUFF_TBLS) {
            return 0;
        }
        p += 17 + total;
        length -= 17 + total;
    }
    return 1;
}

static int component_index(j_decompress_ptr d, int id) {
    for (int ci = 0; ci < d->num_components; ci++)
        if (d->comp_info[ci].component_id == id) return ci;
    return -1;
}


/* One scan's place in the progression, as start_pass_phuff_decoder checks and records it: 0 if
 * libjpeg would refuse the parameters or warn about the order. */
static int progression_step(walk *w, const int *components, int n, int ss, int se, int ah, int al) {
    int dc = ss == 0;
    if (dc ? se != 0 : (se < ss || se > DCTSIZE2 - 1 || n != 1)) return 0;
    if (ah != 0 && al != ah - 1) return 0;
    if (al > 13) return 0;
    for (int i = 0; i < n; i++) {
        int *bits = w->bits[components[i]];
        if (!dc && bits[0] < 0) return 0;
        for (int k = ss; k <= se; k++) {
            if (ah != (bits[k] < 0 ? 0 : bits[k])) return 0;
            bits[k] = al;
        }
    }
    return 1;
}

static int idct_is_1x1(const jpeg_component_info *comp) {
#if JPEG_LIB_VERSION >= 70
    return comp->DCT_h_scaled_size == 1 && comp->DCT_v_scaled_size == 1;
#else
    return comp->DCT_scaled_size == 1;
#endif
}

int cc_scaled_coefficients_complete(j_decompress_ptr d, int (*bits)[DCTSIZE2]) {
    for (int ci = 0; ci < d->num_components; ci++) {
        int needed = idct_is_1x1(&d->comp_info[ci]) ? 1 : DCTSIZE2;
#ifdef CC_EXPERIMENT_DC_ONLY
        needed = 1;
#endif
        for (int k = 0; k < needed; k++)
            if (bits[ci][k] != 0) return 0;
    }
    return 1;
}

/* Whether the scans walked complete what the image needs, by the same rule libjpeg's coef_bits
 * are held to (cc_scaled_coefficients_complete). A file that ends before that is read as before,
 * scan by scan. This is what keeps an FF D9 inside the data of a scan left out from passing for
 * the file's end: it would hide the needed scans after it, and libjpeg would output what it had,
 * without a word, where reading that scan says "premature end of data segment". */
static int image_complete(walk *w) { return cc_scaled_coefficients_complete(w->d, w->bits); }

static int add_span(walk *w, const JOCTET *from, const JOCTET *to) {
    if (to > from) {
        w->spans[w->count].start = from;
        w->spans[w->count].length = (size_t)(to - from);
        w->count++;
    }
    return 1;
}

/* The marker ending the entropy-coded data from p on: its FF (the last of any fill FFs), or NULL
 * if the file ends first. */
static const JOCTET *scan_end(const JOCTET *p, const JOCTET *end) {
    while (p < end) {
        const JOCTET *ff = memchr(p, 0xFF, (size_t)(end - p));
        if (!ff || ff + 1 >= end) return NULL;
        JOCTET m = ff[1];
        if (m == 0x00 || (m >= 0xD0 && m <= 0xD7)) p = ff + 2;
        else if (m == 0xFF) p = ff + 1;
        else return ff;
    }
    return NULL;
}

/* Walks from the entropy-coded data of the current scan to EOI; 1 if every step was one libjpeg
 * takes without complaint where it matters (above), with the spans to keep in w. */
static int walk_file(walk *w, const JOCTET *p) {
    const JOCTET *end = w->end, *keep = p;
    j_decompress_ptr d = w->d;
    for (;;) {
        const JOCTET *q = scan_end(p, end);
        if (!q) return 0;
        /* Marker segments up to the next scan or EOI. */
        for (;;) {
            JOCTET m = q[1];
            if (m == JPEG_EOI) return image_complete(w) && add_span(w, keep, end);
            if (end - q < 4) return 0;
            size_t length = (size_t)q[2] << 8 | q[3];
            if (length < 2 || (size_t)(end - q) - 2 < length) return 0;
            const JOCTET *body = q + 4, *next = q + 2 + length;
            if (m == 0xDA) { /* SOS */
                if (++w->scans > w->max_scans) return 0; /* libjpeg's limit then speaks */
                int n = body[0];
                if (n < 1 || n > MAX_COMPS_IN_SCAN || length != (size_t)(n * 2 + 6)) return 0;
                int components[MAX_COMPS_IN_SCAN], ac_tables[MAX_COMPS_IN_SCAN];
                for (int i = 0; i < n; i++) {
                    int ci = component_index(d, body[1 + 2 * i]);
                    if (ci < 0) return 0;
                    for (int j = 0; j < i; j++)
                        if (components[j] == ci) return 0;
                    components[i] = ci;
                    ac_tables[i] = body[2 + 2 * i] & 15;
                }
                const JOCTET *tail = body + 1 + 2 * n;
                int ss = tail[0], se = tail[1], ah = tail[2] >> 4, al = tail[2] & 15;
                if (!progression_step(w, components, n, ss, se, ah, al)) return 0;
                int leave_out = ss > 0 && idct_is_1x1(&d->comp_info[components[0]]);
                if (leave_out) {
                    int t = ac_tables[0];
                    if (t >= NUM_HUFF_TBLS || w->ac_table[t] != 1) return 0;
                    add_span(w, keep, q);
                    p = next;
                    const JOCTET *after = scan_end(p, end);
                    if (!after) return 0;
                    keep = after;
                    q = after;
                    continue;
                }
                p = next;
                break;
            }
            /* What libjpeg's read_markers takes between scans; anything else it refuses or
             * treats in ways not worth following here. */
            if (m == 0xC4) {
                if (!read_dht(w, body, length - 2)) return 0;
            } else if (!(m == 0xDB || m == 0xDD || m == 0xFE || (m >= 0xE0 && m <= 0xEF))) {
                return 0;
            }
            q = next;
            while (end - q >= 2 && q[0] == 0xFF && q[1] == 0xFF) q++;
            if (end - q < 2 || q[0] != 0xFF) return 0;
        }
    }
}

int cc_skip_unneeded_scans(j_decompress_ptr d, int max_scans, cc_scan_source *source) {
    if (!d->progressive_mode || d->arith_code || d->num_components > MAX_COMPONENTS) return 0;
    walk w;
    memset(&w, 0, sizeof w);
    w.d = d;
    w.end = d->src->next_input_byte + d->src->bytes_in_buffer;
    for (int ci = 0; ci < MAX_COMPONENTS; ci++)
        for (int k = 0; k < DCTSIZE2; k++) w.bits[ci][k] = -1;
    for (int t = 0; t < NUM_HUFF_TBLS; t++) {
        const JHUFF_TBL *table = d->ac_huff_tbl_ptrs[t];
        w.ac_table[t] = table ? (signed char)code_lengths_usable(table->bits) : -1;
    }
    /* The scan libjpeg stands in: its header is read, its data not yet. */
    int first[MAX_COMPS_IN_SCAN];
    for (int i = 0; i < d->comps_in_scan; i++) first[i] = d->cur_comp_info[i]->component_index;
    if (!progression_step(&w, first, d->comps_in_scan, d->Ss, d->Se, d->Ah, d->Al)) return 0;
    w.scans = 1;
    w.max_scans = max_scans;
    w.spans = malloc(sizeof(cc_span) * (size_t)(max_scans + 1));
    if (!w.spans) return 0;
    if (!walk_file(&w, d->src->next_input_byte) || w.count < 2) {
        free(w.spans);
        return 0;
    }
    source->spans = w.spans;
    source->count = w.count;
    source->next = 1;
    source->pub.next_input_byte = w.spans[0].start;
    source->pub.bytes_in_buffer = w.spans[0].length;
    source->pub.init_source = source_init;
    source->pub.fill_input_buffer = source_fill;
    source->pub.skip_input_data = source_skip;
    source->pub.resync_to_restart = jpeg_resync_to_restart;
    source->pub.term_source = source_term;
    d->src = &source->pub;
    return 1;
}

void cc_scan_source_free(cc_scan_source *source) {
    free(source->spans);
    source->spans = NULL;
    source->count = source->next = 0;
}
