#!/usr/bin/env bash
# make bench-images: 256 px thumbnails of a real-photo corpus with `poi thumb` (one process, all
# cores), vipsthumbnail and ImageMagick, in the same run; prints wall time, peak RSS and PoiKit's
# ratios (targets: DESIGN.md §6, issue 3).
#
# Corpus (never committed; lives in .bench/, which is gitignored): Debian's wallpaper packages
# (gnome-backgrounds 4096x4096 photos/renders, shipped as WebP, re-encoded here by libvips as
# JPEG q90 and as PNG; desktop-base's PNGs of 1 MP and more). Packages are fetched with
# `apt-get download` and unpacked with dpkg-deb -x: nothing is installed.
#
# Env: POI=path/to/poi (default .build/release/poi, built if missing), RUNS=3 (best of),
#      JOBS=(default nproc), SIZE=256x256.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BENCH=$ROOT/.bench
POI=${POI:-$ROOT/.build/release/poi}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
SIZE=${SIZE:-256x256}
IM=/usr/bin/convert-im6.q16   # by path: another `convert` may come first on PATH

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench-images: $1 is missing ($2)" >&2; exit 2; }; }
need vipsthumbnail "apt-get install libvips-tools"
need vips "apt-get install libvips-tools"
[ -x "$IM" ] || { echo "bench-images: $IM is missing (apt-get install imagemagick)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-images: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

if [ ! -x "$POI" ]; then
    echo "building $POI ..." >&2
    swift build -c release --product poi >&2
fi

# ---- corpus ----
if [ ! -f "$BENCH/corpus/.complete" ]; then
    rm -rf "$BENCH/corpus" "$BENCH/pkgroot"
    mkdir -p "$BENCH/debs" "$BENCH/pkgroot" "$BENCH/corpus/jpeg" "$BENCH/corpus/png"
    (cd "$BENCH/debs" && { apt-get download gnome-backgrounds desktop-base >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get download gnome-backgrounds desktop-base >/dev/null; }; })
    for deb in "$BENCH"/debs/*.deb; do dpkg-deb -x "$deb" "$BENCH/pkgroot"; done
    while IFS= read -r -d '' f; do
        name=$(basename "${f%.*}")
        vips copy "$f" "$BENCH/corpus/jpeg/$name.jpg[Q=90]"
        vips copy "$f" "$BENCH/corpus/png/$name.png[compression=6]"
    done < <(find "$BENCH/pkgroot/usr/share/backgrounds" -name '*.webp' -print0)
    while IFS= read -r -d '' f; do
        px=$(( $(vipsheader -f width "$f") * $(vipsheader -f height "$f") ))
        [ "$px" -ge 1000000 ] && cp "$f" "$BENCH/corpus/png/desktop-base-$(basename "$f")"
    done < <(find "$BENCH/pkgroot/usr/share" -path '*backgrounds*' -prune -o -name '*.png' -print0)
    touch "$BENCH/corpus/.complete"
fi

# ---- runs ----
# measure CMD...: best-of-$RUNS wall seconds, that run's CPU seconds (user+sys, all processes)
# and peak RSS (KB) into $WALL/$CPU/$RSS. CPU time is printed too because wall time on a busy
# machine says more about the neighbours than about the tool.
measure() {
    local best="" bestrss=0 bestcpu=0
    for _ in $(seq "$RUNS"); do
        rm -rf "$BENCH/out" && mkdir -p "$BENCH/out"
        /usr/bin/time -f "%e %M %U %S" -o "$BENCH/time.txt" "$@" >/dev/null 2>"$BENCH/stderr.txt" || {
            echo "bench-images: failed: $*" >&2; cat "$BENCH/stderr.txt" >&2; exit 1; }
        read -r wall rss user sys < "$BENCH/time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
            best=$wall; bestrss=$rss; bestcpu=$(echo "$user + $sys" | bc -l)
        fi
    done
    WALL=$best; RSS=$bestrss; CPU=$bestcpu
}
row() { # LABEL [POIKIT_WALL]
    local ratio="-"
    [ -n "${2:-}" ] && ratio=$(printf '%.2f' "$(echo "$2/$WALL" | bc -l)")
    printf '%-34s %9.2f %9.2f %10.1f %10s\n' "$1" "$WALL" "$CPU" "$(echo "$RSS/1024" | bc -l)" "$ratio"
}

im_seq() { # ImageMagick's documented command line, one file after the other
    for f in "$@"; do b=$(basename "${f%.*}"); "$IM" -define jpeg:size=512x512 "$f" -thumbnail "$SIZE" "$BENCH/out/$b.jpg"; done
}
im_each() { # ImageMagick, one process per file, $JOBS at a time
    printf '%s\0' "$@" | xargs -0 -P "$JOBS" -I{} sh -c \
        'f="$1"; b=$(basename "${f%.*}"); exec '"$IM"' -define jpeg:size=512x512 "$f" -thumbnail '"$SIZE"' "$0/$b.jpg"' \
        "$BENCH/out" {}
}
vips_each() { # vipsthumbnail, one process per file, $JOBS at a time
    printf '%s\0' "$@" | xargs -0 -P "$JOBS" -n 1 vipsthumbnail -s "$SIZE" -o "$BENCH/out/%s.jpg"
}

report() { # KIND FILES...
    local kind=$1; shift
    local n=$# mp
    mp=$(for f in "$@"; do echo $(( $(vipsheader -f width "$f") * $(vipsheader -f height "$f") )); done \
        | awk '{s+=$1} END {printf "%.0f", s/1e6}')
    echo
    echo "== $kind: $n files, $mp MP total, thumbnails $SIZE, best of $RUNS, $JOBS cores =="
    printf '%-34s %9s %9s %10s %10s\n' tool "wall s" "CPU s" "peak MB" "PoiKit ÷"
    measure "$POI" thumb "$@" -o "$BENCH/out" --size "$SIZE" --jobs "$JOBS" --format jpeg
    local pw=$WALL prss=$RSS
    row "poi thumb (1 process, --jobs $JOBS)"
    measure vipsthumbnail -s "$SIZE" -o "$BENCH/out/%s.jpg" "$@"
    row "vipsthumbnail (1 process)" "$pw"
    eval "ratio_vips_$kind=$(echo "$pw/$WALL" | bc -l)"
    measure bash -c "$(declare -f vips_each); BENCH='$BENCH' JOBS=$JOBS SIZE=$SIZE; vips_each \"\$@\"" _ "$@"
    row "vipsthumbnail (xargs -P $JOBS)" "$pw"
    measure bash -c "$(declare -f im_seq); BENCH='$BENCH' SIZE=$SIZE IM=$IM; im_seq \"\$@\"" _ "$@"
    row "convert-im6.q16 (one by one)" "$pw"
    eval "ratio_im_$kind=$(echo "$pw/$WALL" | bc -l)"
    measure bash -c "$(declare -f im_each); BENCH='$BENCH' JOBS=$JOBS SIZE=$SIZE IM=$IM; im_each \"\$@\"" _ "$@"
    row "convert-im6.q16 (xargs -P $JOBS)" "$pw"
    eval "ratio_imp_$kind=$(echo "$pw/$WALL" | bc -l)"
    eval "rss_$kind=$prss"
}

shopt -s nullglob
report jpeg "$BENCH"/corpus/jpeg/*.jpg
report png "$BENCH"/corpus/png/*.png

limit=$(( (100 + 60 * JOBS) * 1024 ))
echo
echo "== targets =="
verdict() { if awk "BEGIN{exit !($1)}"; then echo met; else echo MISSED; fi; }
printf 'JPEG  <= 0.8 x vipsthumbnail : %.2f  %s\n' "$ratio_vips_jpeg" "$(verdict "$ratio_vips_jpeg <= 0.8")"
printf 'JPEG  <= 0.2 x ImageMagick   : %.2f  %s (one by one; %.2f against xargs -P %d)\n' "$ratio_im_jpeg" \
    "$(verdict "$ratio_im_jpeg <= 0.2")" "$ratio_imp_jpeg" "$JOBS"
printf 'PNG   <= 1.0 x vipsthumbnail : %.2f  %s\n' "$ratio_vips_png" "$(verdict "$ratio_vips_png <= 1.0")"
printf 'peak RSS <= %d MB (100 + 60 x %d): JPEG %.0f MB, PNG %.0f MB  %s\n' $((limit / 1024)) "$JOBS" \
    "$(echo "$rss_jpeg/1024" | bc -l)" "$(echo "$rss_png/1024" | bc -l)" \
    "$(verdict "$rss_jpeg <= $limit && $rss_png <= $limit")"
