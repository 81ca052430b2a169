#!/usr/bin/env bash
# make bench-webp: WebP thumbnails against the JPEG ones of the same photos at comparable quality:
# what choosing WebP for thumbnails saves and costs. For each opaque photo (Samples/images, plus
# bench-images' JPEG corpus in .bench/ when it is there), `poi thumb --format png` gives the
# thumbnail's exact pixels; PoiKit's encoders (CCodecs, built here -O2 as in release) then write
# them as JPEG q85 and as WebP at qualities 50..100, timed in-process (median of REPS, codecs
# interleaved). SSIM against those pixels (scikit-image, Gaussian window as Wang et al.; JPEG
# decoded by djpeg, WebP by ImageMagick's libwebp delegate) says which WebP quality matches JPEG
# q85, and what it weighs there.
#
# Env: POI (default .build/release/poi, else .build/debug/poi), SIZE=256x256, REPS=31,
#      SSIM_VENV=/tmp/poikit-ssim-venv (a throwaway venv with scikit-image, made on first use).
# Output in .bench/webp/ (gitignored): the thumbnails, results.tsv and the summary printed here.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.bench/webp
SIZE=${SIZE:-256x256}
REPS=${REPS:-31}
SSIM_VENV=${SSIM_VENV:-/tmp/poikit-ssim-venv}
CLANG=${CLANG:-$(command -v clang || echo /opt/swift/usr/bin/clang)}
IM=/usr/bin/convert-im6.q16
POI=${POI:-$([ -x .build/release/poi ] && echo .build/release/poi || echo .build/debug/poi)}
[ -x "$POI" ] || { echo "bench-webp: $POI is missing (make build)" >&2; exit 2; }
command -v djpeg >/dev/null || { echo "bench-webp: djpeg is missing (apt-get install libjpeg-turbo-progs)" >&2; exit 2; }
[ -x "$IM" ] || { echo "bench-webp: $IM is missing (apt-get install imagemagick-6.q16)" >&2; exit 2; }
if [ ! -x "$SSIM_VENV/bin/python" ]; then
    python3 -m venv "$SSIM_VENV" && "$SSIM_VENV/bin/pip" install -q scikit-image >&2
fi
rm -rf "$OUT" && mkdir -p "$OUT/ref" "$OUT/enc"

# The exact pixels both encoders get: the PNG thumbnail of the same recipe (one folder per source,
# so equal names from two sources do not collide).
shopt -s nullglob
samples=(Samples/images/*.jpg Samples/images/*.png)
corpus=()
for f in .bench/corpus/jpeg/*.jpg; do case $f in *-progressive.jpg|*-exif6.jpg) ;; *) corpus+=("$f");; esac; done
"$POI" thumb "${samples[@]}" -o "$OUT/ref/samples" --size "$SIZE" --format png --quiet 2>/dev/null || true
[ ${#corpus[@]} -gt 0 ] && "$POI" thumb "${corpus[@]}" -o "$OUT/ref/corpus" --size "$SIZE" --format png --quiet

cat > "$OUT/bench_encode.c" <<'EOF'
/* Times cc_encode_jpeg (q85, baseline, as poi writes it) and cc_encode_webp on the pixels of each
 * PNG given; skips images with alpha (JPEG would flatten them: not the same picture). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ccodecs.h"
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
    static const int qs[] = {85, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100}; /* [0]: JPEG */
    enum { N = sizeof qs / sizeof qs[0] };
    const char *outdir = argv[1];
    int reps = atoi(argv[2]);
    double *t = malloc(sizeof(double) * N * reps);
    for (int i = 3; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        fseek(f, 0, SEEK_END); long len = ftell(f); fseek(f, 0, SEEK_SET);
        uint8_t *png = malloc(len);
        if (fread(png, 1, len, f) != (size_t)len) return 1;
        fclose(f);
        cc_decode_options opt = {0, 0, 1, 1, 0, 0};
        cc_info info; cc_image img;
        if (cc_decode(png, len, &opt, &info, &img).status != CC_OK) return 1;
        if (img.channels == 2 || img.channels == 4) { fprintf(stderr, "skipped (alpha): %s\n", argv[i]); continue; }
        uint8_t *out[N]; size_t out_len[N];
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < N; k++) {
                double t0 = now_ms();
                cc_result res = k == 0 ? cc_encode_jpeg(&img, qs[k], 0, 0, &out[k], &out_len[k])
                                       : cc_encode_webp(&img, qs[k], &out[k], &out_len[k]);
                t[k * reps + r] = now_ms() - t0;
                if (res.status != CC_OK) { fprintf(stderr, "%s: %s\n", argv[i], res.message); return 1; }
                if (r < reps - 1) cc_free(out[k]);
            }
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        for (int k = 0; k < N; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%.*s.%s-q%d.%s", outdir, (int)(strlen(base) - 4), base,
                     k ? "webp" : "jpeg", qs[k], k ? "webp" : "jpg");
            FILE *o = fopen(path, "wb"); fwrite(out[k], 1, out_len[k], o); fclose(o);
            qsort(t + k * reps, reps, sizeof(double), cmp);
            printf("%s\t%s\t%s\t%d\t%zu\t%.4f\n", argv[i], path, k ? "webp" : "jpeg", qs[k], out_len[k], t[k * reps + reps / 2]);
            cc_free(out[k]);
        }
        cc_image_free(&img);
        free(png);
    }
    return 0;
}
EOF
"$CLANG" -O2 -ISources/CCodecs/include -ISources/CCodecs "$OUT/bench_encode.c" Sources/CCodecs/*.c \
    $(pkg-config --cflags --libs libjpeg libpng lcms2 libwebp) -lm -o "$OUT/bench_encode"
"$OUT/bench_encode" "$OUT/enc" "$REPS" "$OUT"/ref/*/*.png > "$OUT/encodes.tsv"

"$SSIM_VENV/bin/python" - "$OUT" "$IM" <<'EOF'
import collections, os, subprocess, sys
import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity
out, im = sys.argv[1], sys.argv[2]

def load(path, like):
    if path.endswith(".jpg"):   # djpeg: libjpeg-turbo's own decoder
        pnm = path + ".pnm"; subprocess.run(["djpeg", "-outfile", pnm, path], check=True); path = pnm
    elif path.endswith(".webp"):  # ImageMagick through libwebp
        png = path + ".png"; subprocess.run([im, path, "png:" + png], check=True); path = png
    return np.asarray(Image.open(path).convert(like))

rows, refs = [], {}
for line in open(os.path.join(out, "encodes.tsv")):
    ref, path, codec, q, size, ms = line.rstrip("\n").split("\t")
    if ref not in refs:
        img = Image.open(ref); mode = "L" if img.mode in ("L", "I;16") else "RGB"
        refs[ref] = (np.asarray(img.convert(mode)), mode)
    a, mode = refs[ref]
    b = load(path, mode)
    s = structural_similarity(a, b, data_range=255, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                              channel_axis=-1 if mode == "RGB" else None)
    rows.append((ref, codec, int(q), int(size), float(ms), s))
with open(os.path.join(out, "results.tsv"), "w") as f:
    f.write("reference\tcodec\tquality\tbytes\tencode_ms\tssim\n")
    for r in rows: f.write("%s\t%s\t%d\t%d\t%.4f\t%.5f\n" % r)

by_ref = collections.defaultdict(dict)
for ref, codec, q, size, ms, s in rows: by_ref[ref][(codec, q)] = (size, ms, s)
qualities = sorted({q for d in by_ref.values() for c, q in d if c == "webp"})

def equal_ssim(d, target):
    """WebP bytes at JPEG q85's SSIM, interpolated between the two qualities around it, the
    quality reached, and the encode time there."""
    prev = None
    for q in qualities:
        size, ms, s = d[("webp", q)]
        if s >= target:
            if prev is None or s == prev[2]: return size, "%d" % q, ms
            f = (target - prev[2]) / (s - prev[2])
            return prev[0] + f * (size - prev[0]), "%d-%d" % (prev[3], q), ms
        prev = (size, ms, s, q)
    return prev[0], ">%d" % prev[3], prev[1]

print("%-44s %6s %6s %6s | %6s %7s %6s | %5s" % ("thumbnail (" + os.environ.get("SIZE", "256x256") + ")",
                                             "JPEG", "SSIM", "ms", "WebP q", "bytes", "ms", "bytes"))
print("%-44s %6s %6s %6s | %6s %7s %6s | %5s" % ("", "q85 B", "", "", "", "", "", "÷JPEG"))
eq_total = 0
for ref, d in by_ref.items():
    jb, jms, js = d[("jpeg", 85)]
    wb, q, wms = equal_ssim(d, js)
    eq_total += wb
    name = os.path.relpath(ref, out)[4:]
    print("%-44s %6d %6.4f %6.3f | %6s %7.0f %6.3f | %5.2f" % (name[-44:], jb, js, jms, q, wb, wms, wb / jb))
n = len(by_ref)
jpeg = [d[("jpeg", 85)] for d in by_ref.values()]
jpeg_total, mean_js = sum(x[0] for x in jpeg), sum(x[2] for x in jpeg) / n
print("\n%d photos. JPEG q85: %d bytes, mean SSIM %.4f, median encode %.3f ms. WebP at each photo's "
      "JPEG q85 SSIM: %.0f bytes (%.2f x JPEG)." % (n, jpeg_total, mean_js, sorted(x[1] for x in jpeg)[n // 2],
                                                  eq_total, eq_total / jpeg_total))
first = min((q for q in qualities if sum(d[("webp", q)][2] for d in by_ref.values()) / n >= mean_js), default=None)
print("%-8s %9s %8s %10s %12s" % ("WebP q", "bytes", "÷JPEG", "mean SSIM", "median ms"))
for q in qualities:
    w = [d[("webp", q)] for d in by_ref.values()]
    print("%-8d %9d %8.2f %10.4f %12.3f%s" % (q, sum(x[0] for x in w), sum(x[0] for x in w) / jpeg_total,
                                              sum(x[2] for x in w) / n, sorted(x[1] for x in w)[n // 2],
                                              "  <- lowest with mean SSIM >= JPEG q85's" if q == first else ""))
EOF
