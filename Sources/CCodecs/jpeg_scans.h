/* Which scans of a progressive JPEG a 1/8 decode reads (jpeg_scans.c). Included by jpeg_codec.c
 * only; needs jpeglib.h before it. */
#ifndef CC_JPEG_SCANS_H
#define CC_JPEG_SCANS_H

#include <stddef.h>

typedef struct {
    const JOCTET *start;
    size_t length;
} cc_span;

/* libjpeg's data source for a file whose unneeded scans are left out: the file's own bytes, from
 * where libjpeg stood, served span by span around the scans left out (nothing copied). */
typedef struct {
    struct jpeg_source_mgr pub;
    cc_span *spans;
    int count, next;
} cc_scan_source;

/* Call in buffered-image mode right after jpeg_start_decompress, before any scan data is read.
 * When the rest of the file walks cleanly to its EOI marker, at most max_scans scans, and some
 * scan is one the output cannot depend on (an AC scan of a component whose scaled IDCT is 1x1),
 * installs `source` as d->src without those scans and returns 1. Otherwise (anything libjpeg
 * would refuse or warn about in a scan to be left out, a short file, a marker it would not
 * expect) changes nothing and returns 0, so libjpeg meets the file as before. */
int cc_skip_unneeded_scans(j_decompress_ptr d, int max_scans, cc_scan_source *source);

/* Whether every coefficient the scaled IDCTs read is at full precision in `bits` (libjpeg's
 * coef_bits layout: per component, per zigzag index, the last scan's Al; 0 = complete, -1 = not
 * sent): all 64 of a component whose IDCT is larger than 1x1, the DC of the others. Read scan by
 * scan from libjpeg's own coef_bits (read_needed_scans) and from the walk's copy. */
int cc_scaled_coefficients_complete(j_decompress_ptr d, int (*bits)[DCTSIZE2]);

/* Frees what cc_skip_unneeded_scans allocated (safe on a zeroed or unused source). */
void cc_scan_source_free(cc_scan_source *source);

#endif
