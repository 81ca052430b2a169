#!/usr/bin/env bash
# Decode arena bench: scripts/bench-arena.c over the bench-images JPEG corpus, decoded
# at 1/8 as thumbnails are, once with arena = NULL and once with one arena reused across files.
#   scripts/bench-arena.sh [RUNS] [CORPUS_DIR]   (defaults: 3, .bench/corpus/jpeg)
# First a check run (both modes must give byte-identical results for every file, exit 1 if
# not), then RUNS alternating runs of each mode (one process per run, so peak RSS is the mode's
# own), then the medians. PERF=1 adds a perf record of one arena-mode run and prints its top.
# CCodecs is compiled -O2 with clang directly (as release builds it), not with swift build.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
CORPUS=${2:-.bench/corpus/jpeg}
CLANG=${CLANG:-$(command -v clang || echo /opt/swift/usr/bin/clang)}
OUT=.bench/arena
mkdir -p "$OUT"
SRC=(Sources/CCodecs/*.c)
"$CLANG" -O2 -g -ISources/CCodecs/include -ISources/CCodecs scripts/bench-arena.c "${SRC[@]}" \
    $(pkg-config --cflags --libs libjpeg libpng lcms2 libwebp libdeflate) -lm -o "$OUT/bench-arena"

shopt -s nullglob
FILES=("$CORPUS"/*.jpg)
[ ${#FILES[@]} -gt 0 ] || { echo "bench-arena: no .jpg in $CORPUS" >&2; exit 2; }

"$OUT/bench-arena" check "${FILES[@]}"
BENCH_HASHES=1 "$OUT/bench-arena" null "${FILES[@]}" | grep '^hash' > "$OUT/hash-null.txt"
BENCH_HASHES=1 "$OUT/bench-arena" arena "${FILES[@]}" | grep '^hash' > "$OUT/hash-arena.txt"
cmp -s "$OUT/hash-null.txt" "$OUT/hash-arena.txt" || { echo "bench-arena: pixel hashes differ" >&2; exit 1; }

: > "$OUT/runs.txt"
for i in $(seq 1 "$RUNS"); do
    for mode in null arena; do
        "$OUT/bench-arena" "$mode" "${FILES[@]}" | tee -a "$OUT/runs.txt"
    done
done
python3 - "$OUT/runs.txt" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split())
    runs.setdefault(kv["mode"], []).append(kv)
for mode in ("null", "arena"):
    rs = runs[mode]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    print(f"median of {len(rs)} {mode:5}: cpu {med('cpu_s'):.3f} s (user {med('user_s'):.3f}, sys {med('sys_s'):.3f}), "
          f"minor faults {med('minflt'):.0f}, peak RSS {med('peak_rss_mb'):.1f} MB "
          f"(baseline {med('baseline_rss_mb'):.1f}), arena retained {med('arena_retained_mb'):.1f} MB")
EOF

if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
    # (Debian's libjpeg is stripped: its functions show as addresses unless the dbgsym is there.)
    perf record -q -o "$OUT/perf.data" "$OUT/bench-arena" arena "${FILES[@]}" >/dev/null 2>&1 || true
    perf report -i "$OUT/perf.data" --stdio --sort dso 2>/dev/null | grep -Ev '^#|^$' | head -8
    perf report -i "$OUT/perf.data" --stdio --sort dso,sym --percent-limit 1.5 2>/dev/null | grep -Ev '^#|^$' | head -25
fi
