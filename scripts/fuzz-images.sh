#!/usr/bin/env bash
# make fuzz-images SECONDS=N: builds the libFuzzer targets in Fuzz/ (CCodecs C sources with
# -fsanitize=fuzzer,address,undefined, clang from the Swift toolchain) and runs each for N seconds
# (default 30) on a seed corpus of the test fixtures. Everything lands in .fuzz/ (gitignored).
# A crash leaves its input in .fuzz/artifacts/<target>/; turn it into a regression fixture under
# Tests/PoiImagingTests/Fixtures/regressions/ and the exit status is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-30}
CLANG=${CLANG:-$(command -v clang || echo /opt/swift/usr/bin/clang)}
OUT=.fuzz
mkdir -p "$OUT/bin"
SRC=(Sources/CCodecs/*.c)
FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -ISources/CCodecs/include -ISources/CCodecs -DCC_CHECK_SCAN_WALK)
LIBS=($(pkg-config --cflags --libs libjpeg libpng lcms2 libwebp libdeflate) -lm)

# (ld.gold chatters about ASan-local symbols; the log is shown only when the build fails)
for spec in jpeg:1 png:2; do
    "$CLANG" "${FLAGS[@]}" -DFUZZ_FORMAT="${spec#*:}" Fuzz/fuzz_decode.c "${SRC[@]}" "${LIBS[@]}" \
        -o "$OUT/bin/fuzz_${spec%%:*}" 2>"$OUT/build.log" || { cat "$OUT/build.log" >&2; exit 2; }
done

# Seeds: the test fixtures (made by Pillow/ImageMagick), plus any committed regression inputs.
if [ ! -d "$OUT/seeds/jpeg" ]; then
    [ -x .venv/bin/python ] || { echo "fuzz-images: .venv/bin/python missing; run make setup" >&2; exit 2; }
    .venv/bin/python Tests/PoiImagingTests/Fixtures/make_fixtures.py "$OUT/fixtures" >/dev/null
    mkdir -p "$OUT/seeds/jpeg" "$OUT/seeds/png"
    cp "$OUT"/fixtures/*.jpg "$OUT/seeds/jpeg/"
    cp "$OUT"/fixtures/*.png "$OUT/seeds/png/"
    # A deflate stream only libdeflate takes: the zlib/libdeflate comparison's known difference.
    cp "$OUT"/fixtures/lenient/*.png "$OUT/seeds/png/"
    # ICC-tagged images and damaged profiles: seeds for the colour path.
    .venv/bin/python Tests/PoiImagingTests/Fixtures/make_color_fixtures.py "$OUT/fixtures/color" >/dev/null
    cp "$OUT"/fixtures/color/*.jpg "$OUT/seeds/jpeg/"
    cp "$OUT"/fixtures/color/*.png "$OUT/seeds/png/"
    rm -rf "$OUT/fixtures"
fi
for r in Tests/PoiImagingTests/Fixtures/regressions/*; do
    [ -f "$r" ] || continue
    case "$r" in *.md) ;; *.png) cp "$r" "$OUT/seeds/png/";; *) cp "$r" "$OUT/seeds/jpeg/";; esac
done

status=0
for target in jpeg png; do
    mkdir -p "$OUT/corpus/$target" "$OUT/artifacts/$target"
    echo "== fuzz_$target for ${DURATION}s =="
    if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$OUT/bin/fuzz_$target" \
        -max_total_time="$DURATION" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
        -artifact_prefix="$OUT/artifacts/$target/" -print_final_stats=1 \
        "$OUT/corpus/$target" "$OUT/seeds/$target" > "$OUT/fuzz_$target.log" 2>&1; then
        status=1
        echo "fuzz_$target FOUND A CRASH: see $OUT/fuzz_$target.log and $OUT/artifacts/$target/" >&2
        tail -30 "$OUT/fuzz_$target.log" >&2
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$OUT/fuzz_$target.log" || true
done
exit $status
