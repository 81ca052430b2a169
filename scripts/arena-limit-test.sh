#!/usr/bin/env bash
# libjpeg's memory limit with and without a decode arena: scripts/arena-limit-test.c,
# CCodecs compiled with CC_JPEG_MAX_MEMORY read from a variable the test moves byte by byte, and
# ASan/UBSan on. Exit 1 if the arena's memory manager refuses a different set of images, or with
# a different message, than libjpeg's own; then scripts/arena-longjmp-test.c.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG=${CLANG:-$(command -v clang || echo /opt/swift/usr/bin/clang)}
OUT=.bench/arena
mkdir -p "$OUT"
"$CLANG" -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    '-DCC_JPEG_MAX_MEMORY=({ extern long cc_test_max_memory; cc_test_max_memory; })' \
    -ISources/CCodecs/include -ISources/CCodecs scripts/arena-limit-test.c Sources/CCodecs/*.c \
    $(pkg-config --cflags --libs libjpeg libpng lcms2 libwebp libdeflate) -lm -o "$OUT/arena-limit-test" \
    2>"$OUT/build.log" || { cat "$OUT/build.log" >&2; exit 2; }  # (ld.gold chatters about ASan symbols)
ASAN_OPTIONS=detect_leaks=1 "$OUT/arena-limit-test" | grep -Ev "^   "  # the per-limit lines only when they differ

# A longjmp out of a call passed on to libjpeg's own manager (scripts/arena-longjmp-test.c, which
# includes jpeg_codec.c for its static functions, so that file is not linked again).
OTHERS=($(ls Sources/CCodecs/*.c | grep -v '/jpeg_codec\.c$'))
"$CLANG" -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -ISources/CCodecs/include -ISources/CCodecs scripts/arena-longjmp-test.c "${OTHERS[@]}" \
    $(pkg-config --cflags --libs libjpeg libpng lcms2 libwebp libdeflate) -lm -o "$OUT/arena-longjmp-test" \
    2>"$OUT/build.log" || { cat "$OUT/build.log" >&2; exit 2; }
ASAN_OPTIONS=detect_leaks=1 "$OUT/arena-longjmp-test"
