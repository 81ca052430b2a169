#!/usr/bin/env bash
# make bench-images: 256 px thumbnails of a real-photo corpus with `poi thumb` (one process, all
# cores), vipsthumbnail and ImageMagick, in the same run; prints wall time, peak RSS and PoiKit's
# ratios (targets: ARCHITECTURE.md §6). For JPEG also the floor: libjpeg-turbo alone
# decoding every file at 1/8 (`djpeg -scale 1/8 -dct int`, one file at a time), whose CPU seconds
# divided by the cores is the wall time no thumbnailer built on libjpeg can beat.
#
# Corpus (never committed; lives in .bench/, which is gitignored): Debian's wallpaper packages
# (gnome-backgrounds 4096x4096 photos/renders, shipped as WebP, re-encoded here by libvips as
# JPEG q90 and as PNG; desktop-base's PNGs of 1 MP and more). Packages are fetched with
# `apt-get download` and unpacked with dpkg-deb -x: nothing is installed. Beside each JPEG, the
# two variants the tests make: progressive (jpegtran -progressive: libjpeg's standard script,
# lossless) and EXIF-rotated (orientation 6 in an APP1, written by Pillow from the .venv), so both
# the DC-only progressive path and the orientation path are measured.
#
# Env: POI=path/to/poi (default .build/release/poi, built if missing), RUNS=3 (median of),
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
need djpeg "apt-get install libjpeg-turbo-progs"
need jpegtran "apt-get install libjpeg-turbo-progs"
PY=$ROOT/.venv/bin/python
[ -x "$PY" ] || { echo "bench-images: $PY is missing (make setup)" >&2; exit 2; }
[ -x "$IM" ] || { echo "bench-images: $IM is missing (apt-get install imagemagick)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-images: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

if [ ! -x "$POI" ]; then
    echo "building $POI ..." >&2
    make --no-print-directory -s -C "$ROOT" build >&2
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
if [ ! -f "$BENCH/corpus/.variants" ]; then
    for f in "$BENCH"/corpus/jpeg/*.jpg; do
        case $f in *-progressive.jpg|*-exif6.jpg) continue;; esac
        jpegtran -progressive -copy all -outfile "${f%.jpg}-progressive.jpg" "$f"
        "$PY" -c 'import sys; from PIL import Image
im = Image.open(sys.argv[1]); exif = Image.Exif(); exif[0x0112] = 6
im.save(sys.argv[2], quality=90, exif=exif.tobytes())' "$f" "${f%.jpg}-exif6.jpg"
    done
    touch "$BENCH/corpus/.variants"
fi

# Second corpus: photos as their packages ship them (camera and editor encodes, not libvips'
# re-encodes), from mate-backgrounds (nature photos, up to 5640x3172) and ukui-wallpapers (JPEG
# photos and PNG artwork): every JPEG and PNG of 1 MP and more.
if [ ! -f "$BENCH/corpus2/.complete" ]; then
    rm -rf "$BENCH/corpus2" "$BENCH/pkgroot2"
    mkdir -p "$BENCH/debs2" "$BENCH/pkgroot2" "$BENCH/corpus2/jpeg" "$BENCH/corpus2/png"
    (cd "$BENCH/debs2" && { apt-get download mate-backgrounds ukui-wallpapers >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get download mate-backgrounds ukui-wallpapers >/dev/null; }; })
    for deb in "$BENCH"/debs2/*.deb; do dpkg-deb -x "$deb" "$BENCH/pkgroot2"; done
    while IFS= read -r -d '' f; do
        px=$(( $(vipsheader -f width "$f") * $(vipsheader -f height "$f") ))
        [ "$px" -ge 1000000 ] || continue
        case ${f,,} in
        *.png) cp "$f" "$BENCH/corpus2/png/$(basename "$f")" ;;
        *) cp "$f" "$BENCH/corpus2/jpeg/$(basename "${f%.*}").jpg" ;;
        esac
    done < <(find "$BENCH/pkgroot2/usr/share/backgrounds" -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -print0)
    touch "$BENCH/corpus2/.complete"
fi
# CORPORA="1 2" (default): which corpora to measure (1: the wallpapers above, 2: shipped photos).
CORPORA=${CORPORA:-1 2}

# ---- runs ----
# Each tool runs once per round, RUNS rounds, tools interleaved, so a burst of load from the
# neighbours hits every tool alike; the best round per tool counts. Recorded per tool: wall
# seconds, CPU seconds (user+sys, all processes; on a busy machine wall time says more about the
# neighbours than the tool) and peak RSS.
im_seq() { # ImageMagick's documented command line, one file after the other
    for f in "$@"; do b=$(basename "${f%.*}"); "$IM" -define jpeg:size=512x512 "$f" -thumbnail "$SIZE" "$BENCH/out/$b.jpg"; done
}
im_each() { # ImageMagick, one process per file, $JOBS at a time
    printf '%s\0' "$@" | xargs -0 -P "$JOBS" -I{} sh -c \
        'f="$1"; b=$(basename "${f%.*}"); exec "$IM" -define jpeg:size=512x512 "$f" -thumbnail "$SIZE" "$0/$b.jpg"' \
        "$BENCH/out" {}
}
vips_each() { # vipsthumbnail, one process per file, $JOBS at a time
    printf '%s\0' "$@" | xargs -0 -P "$JOBS" -n 1 vipsthumbnail -s "$SIZE" -o "$BENCH/out/%s.jpg"
}
run_tool() { # TOOL FILES...
    local tool=$1; shift
    case $tool in
    poi) "$POI" thumb "$@" -o "$BENCH/out" --size "$SIZE" --jobs "$JOBS" --format jpeg ;;
    vips) vipsthumbnail -s "$SIZE" -o "$BENCH/out/%s.jpg" "$@" ;;
    vips_par) vips_each "$@" ;;
    im_seq) im_seq "$@" ;;
    im_par) im_each "$@" ;;
    floor) floor "$@" ;;
    esac
}
floor() { # libjpeg-turbo alone at 1/8, one file after the other: the decoder's limit
    for f in "$@"; do djpeg -scale 1/8 -dct int -outfile /dev/null "$f"; done
}
export -f im_seq im_each vips_each run_tool floor
export BENCH JOBS SIZE IM POI

TOOLS=(poi vips vips_par im_seq im_par)
declare -A LABEL=([floor]="djpeg -scale 1/8 (floor, one by one)" [poi]="poi thumb (1 process, --jobs $JOBS)" [vips]="vipsthumbnail (1 process)"
                  [vips_par]="vipsthumbnail (xargs -P $JOBS)" [im_seq]="convert-im6.q16 (one by one)"
                  [im_par]="convert-im6.q16 (xargs -P $JOBS)")
declare -A WALL CPU RSS WALLS CPUS FAULTS FAULTSS

measure_once() { # TOOL FILES...
    local tool=$1
    rm -rf "$BENCH/out" && mkdir -p "$BENCH/out"
    # %R: minor page faults (fresh zeroed pages the kernel handed out): what reusing decoder
    # buffers, instead of allocating and freeing them per image, takes away.
    /usr/bin/time -f "%e %M %U %S %R" -o "$BENCH/time.txt" bash -c 'run_tool "$@"' _ "$@" \
        >/dev/null 2>"$BENCH/stderr.txt" || {
        echo "bench-images: $tool failed" >&2; cat "$BENCH/stderr.txt" >&2; exit 1; }
    local wall rss user sys faults
    read -r wall rss user sys faults < "$BENCH/time.txt"
    WALLS[$tool]+="$wall "; CPUS[$tool]+="$(echo "$user + $sys" | bc -l) "; FAULTSS[$tool]+="$faults "
    # Peak memory: the largest of the runs, not a median.
    if [ -z "${RSS[$tool]:-}" ] || [ "$rss" -gt "${RSS[$tool]}" ]; then RSS[$tool]=$rss; fi
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

summarize() { # median wall and CPU of every tool's runs
    for t in "${TOOLS[@]}"; do
        WALL[$t]=$(echo "${WALLS[$t]}" | median)
        CPU[$t]=$(echo "${CPUS[$t]}" | median)
        FAULTS[$t]=$(echo "${FAULTSS[$t]}" | median)
    done
}

report() { # KIND FILES...
    local kind=$1; shift
    local n=$# mp
    mp=$(for f in "$@"; do echo $(( $(vipsheader -f width "$f") * $(vipsheader -f height "$f") )); done \
        | awk '{s+=$1} END {printf "%.0f", s/1e6}')
    WALL=(); CPU=(); RSS=(); WALLS=(); CPUS=(); FAULTS=(); FAULTSS=()
    TOOLS=(poi vips vips_par im_seq im_par)
    [ "$kind" = jpeg ] && TOOLS+=(floor)
    local load0 load1
    load0=$(cut -d' ' -f1 /proc/loadavg)
    for _ in $(seq "$RUNS"); do
        for t in "${TOOLS[@]}"; do measure_once "$t" "$@"; done
    done
    load1=$(cut -d' ' -f1 /proc/loadavg)
    summarize
    echo
    echo "== $kind: $n files, $mp MP total, thumbnails $SIZE, median of $RUNS interleaved rounds, $JOBS cores" \
         "(load average $load0 -> $load1) =="
    printf '%-34s %9s %9s %10s %12s %10s\n' tool "wall s" "CPU s" "peak MB" "page faults" "PoiKit ÷"
    local pw=${WALL[poi]}
    for t in "${TOOLS[@]}"; do
        local ratio="-"
        [ "$t" != poi ] && ratio=$(printf '%.2f' "$(echo "$pw/${WALL[$t]}" | bc -l)")
        printf '%-34s %9.2f %9.2f %10.1f %12.0f %10s\n' "${LABEL[$t]}" "${WALL[$t]}" "${CPU[$t]}" \
            "$(echo "${RSS[$t]}/1024" | bc -l)" "${FAULTS[$t]}" "$ratio"
    done
    eval "ratio_vips_$kind=$(echo "$pw/${WALL[vips]}" | bc -l)"
    eval "ratio_im_$kind=$(echo "$pw/${WALL[im_seq]}" | bc -l)"
    eval "ratio_imp_$kind=$(echo "$pw/${WALL[im_par]}" | bc -l)"
    eval "rss_$kind=${RSS[poi]}"
    if [ "$kind" = jpeg ]; then
        local cores limit
        cores=$(nproc)
        limit=$(echo "${CPU[floor]} / $cores" | bc -l)
        ratio_limit_jpeg=$(echo "$pw / $limit" | bc -l)
        ratio_floorcpu_jpeg=$(echo "${CPU[poi]} / ${CPU[floor]}" | bc -l)
        printf 'floor: libjpeg-turbo at 1/8 needs %.2f CPU s; on %d cores the wall limit is %.2f s\n' \
            "${CPU[floor]}" "$cores" "$limit"
        printf 'poi wall / limit %.2f, poi CPU / floor CPU %.2f, poi wall / vipsthumbnail %.2f\n' \
            "$ratio_limit_jpeg" "$ratio_floorcpu_jpeg" "$(echo "$pw/${WALL[vips]}" | bc -l)"
        emit "jpeg thumbnails ($n files): wall s" "$pw" "floor CPU / $cores cores" "$limit" "<= 1.2"
        emit "jpeg thumbnails ($n files): CPU s" "${CPU[poi]}" "djpeg -scale 1/8 CPU" "${CPU[floor]}" "<= 0.9"
    fi
    # One row per peer for `make bench`'s table.
    local target_vips="<= 0.5"; case $kind in png*) target_vips="<= 0.4" ;; esac
    emit "$kind thumbnails ($n files): wall s" "$pw" "vipsthumbnail" "${WALL[vips]}" "$target_vips"
    emit "$kind thumbnails ($n files): wall s" "$pw" "ImageMagick one by one" "${WALL[im_seq]}" \
        "$([ "$kind" = jpeg ] && echo "<= 0.2")"
    # The target is what --memory bounds: the decodes, over the process's baseline (its help;
    # as sort -S or ImageMagick's -limit memory bound their buffers, not the process).
    emit "$kind thumbnails: poi peak RSS over baseline MB" "$(echo "(${RSS[poi]} - $baseline)/1024" | bc -l)" \
        "--memory default (100+60/worker)" "$(( 100 + 60 * JOBS ))" "<= 1.0"
}

emit() { # BENCHMARK POIKIT PEER PEER_VALUE [TARGET]
    [ -n "${BENCH_RESULTS:-}" ] || return 0
    python3 -c 'import sys; sys.path.insert(0, "scripts"); from bench_results import emit
emit(sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5] or None)' "$@" "${5:-}"
}

shopt -s nullglob
# --memory bounds what the decodes use "besides the process's baseline": the baseline is poi's
# peak RSS thumbnailing one small image, measured here, in the same run.
small=$(ls -S "$BENCH"/corpus/png/*.png | tail -1)
rm -rf "$BENCH/out" && mkdir -p "$BENCH/out"
/usr/bin/time -f "%M" -o "$BENCH/time.txt" "$POI" thumb "$small" -o "$BENCH/out" --jobs "$JOBS" >/dev/null 2>&1
baseline=$(cat "$BENCH/time.txt")

if [[ " $CORPORA " == *" 1 "* ]]; then
    report jpeg "$BENCH"/corpus/jpeg/*.jpg
    report png "$BENCH"/corpus/png/*.png
fi
# The second corpus (kinds jpeg2, png2: their rows say so).
if [[ " $CORPORA " == *" 2 "* ]]; then
    report jpeg2 "$BENCH"/corpus2/jpeg/*.jpg
    report png2 "$BENCH"/corpus2/png/*.png
fi

limit=$(( (100 + 60 * JOBS) * 1024 ))
echo
echo "== targets =="
verdict() { if awk "BEGIN{exit !($1)}"; then echo met; else echo MISSED; fi; }
if [[ " $CORPORA " == *" 1 "* ]]; then
    printf 'JPEG  <= 0.5 x vipsthumbnail : %.2f  %s\n' "$ratio_vips_jpeg" "$(verdict "$ratio_vips_jpeg <= 0.5")"
    printf 'JPEG  <= 1.2 x wall limit    : %.2f  %s (floor CPU / cores)\n' "$ratio_limit_jpeg" \
        "$(verdict "$ratio_limit_jpeg <= 1.2")"
    printf 'JPEG  CPU <= 0.9 x floor CPU : %.2f  %s\n' "$ratio_floorcpu_jpeg" "$(verdict "$ratio_floorcpu_jpeg <= 0.9")"
    printf 'JPEG  <= 0.2 x ImageMagick   : %.2f  %s (one by one; %.2f against xargs -P %d)\n' "$ratio_im_jpeg" \
        "$(verdict "$ratio_im_jpeg <= 0.2")" "$ratio_imp_jpeg" "$JOBS"
    printf 'PNG   <= 0.4 x vipsthumbnail : %.2f  %s\n' "$ratio_vips_png" "$(verdict "$ratio_vips_png <= 0.4")"
    printf 'JPEG  <= 0.25 x vipsthumbnail: %.2f  %s\n' "$ratio_vips_jpeg" "$(verdict "$ratio_vips_jpeg <= 0.25")"
    printf 'PNG   <= 0.25 x vipsthumbnail: %.2f  %s\n' "$ratio_vips_png" "$(verdict "$ratio_vips_png <= 0.25")"
fi
if [[ " $CORPORA " == *" 2 "* ]]; then
    printf 'JPEG (shipped photos) <= 0.25 x vipsthumbnail: %.2f  %s\n' "$ratio_vips_jpeg2" "$(verdict "$ratio_vips_jpeg2 <= 0.25")"
    printf 'PNG  (shipped photos) <= 0.25 x vipsthumbnail: %.2f  %s\n' "$ratio_vips_png2" "$(verdict "$ratio_vips_png2 <= 0.25")"
fi
if [ -n "${rss_jpeg:-}" ]; then
    printf 'peak RSS, whole process (no target: the baseline is outside --memory): JPEG %.0f MB, PNG %.0f MB\n' \
        "$(echo "$rss_jpeg/1024" | bc -l)" "$(echo "$rss_png/1024" | bc -l)"
    printf 'peak RSS - baseline (%.0f MB) <= --memory %d MB: JPEG %.0f MB, PNG %.0f MB  %s\n' \
        "$(echo "$baseline/1024" | bc -l)" $((limit / 1024)) "$(echo "($rss_jpeg - $baseline)/1024" | bc -l)" \
        "$(echo "($rss_png - $baseline)/1024" | bc -l)" \
        "$(verdict "$rss_jpeg - $baseline <= $limit && $rss_png - $baseline <= $limit")"
fi
