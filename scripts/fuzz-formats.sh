#!/usr/bin/env bash
# make fuzz-formats SECONDS=N: libFuzzer over the PoiFormats readers, two targets (csv, geojson),
# each run for N seconds (default 30). The harness is Swift (Fuzz/FormatsFuzz/FormatsFuzz.swift,
# product poi-fuzz-formats of the Fuzz/ package, which depends on this one by path) built with
# -sanitize=fuzzer,address in its own scratch path (.build-fuzz; the first build compiles
# swift-crypto too, about a minute on 2 cores, later ones seconds). Everything else lands in .fuzz/ (gitignored): seeds, corpora, logs, artifacts.
# A crash, hang, memory blow-up or a disagreement between whole and chunked reading leaves its
# input in .fuzz/artifacts/<target>/ and the exit status is 1: fix it, then copy the input to
# Tests/PoiFormatsTests/FuzzRegressions/<target>-<what>.<csv|geojson> so `swift test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-30}
SWIFT=${SWIFT:-swift}
OUT=.fuzz
BIN=.build-fuzz/debug/poi-fuzz-formats

# The debug build keeps SwiftPM's usual flags; -DPOI_LIBFUZZER swaps the replaying main for
# libFuzzer's driver. The flags go on the command line, not in Fuzz/Package.swift: -Xswiftc reaches
# every Swift module of the build, so PoiFormats is instrumented too (coverage is what guides
# libFuzzer), where a target's settings would reach the harness alone. (ld.gold chatters about ASan-local symbols: the log shows only on failure.)
mkdir -p "$OUT"
"$SWIFT" build -c debug --package-path Fuzz --product poi-fuzz-formats --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DPOI_LIBFUZZER >"$OUT/build-formats.log" 2>&1 \
    || { grep -v "Cannot export local symbol" "$OUT/build-formats.log" >&2; exit 2; }

# Seeds: the samples, plus small inputs for the paths samples don't reach (BOM, CRLF/CR, other
# delimiters, quoted newlines, RFC 8142 sequences, newline-delimited and single features, gzip,
# UTF-16, zip), plus
# every committed regression input. Rewritten each run (small); the corpora persist.
S="$OUT/seeds-formats"
rm -rf "$S"
mkdir -p "$S/csv" "$S/geojson"
cp Samples/places.csv "$S/csv/"
cp Samples/landmarks.geojson "$S/geojson/"
# Rejects files of an earlier import are good seeds too (extra _line/_field/_reason columns),
# but they exist only where someone ran one: they are not part of a clone.
for r in Samples/*.rejects.csv; do [ -f "$r" ] && cp "$r" "$S/csv/"; done
for r in Samples/*.rejects.geojson; do [ -f "$r" ] && cp "$r" "$S/geojson/"; done
printf '\xef\xbb\xbfname;lat;lon;tags\r\n"Caf\xc3\xa9 ""x""";48,85;2,35;a|b\r\n\r\nB;1;2;\r\n' > "$S/csv/bom-semicolon-crlf.csv"
printf 'title\ty\tx\nA\t1\t2\nB\t3\nC\t95\t4\t\t\n' > "$S/csv/tab.csv"
printf 'name|lat|lon|description\r"multi\rline\r\nfield"|1|2|"open\r' > "$S/csv/pipe-cr-unterminated.csv"
printf 'Name,Latitude,Longitude,id,importKey,image,categories\n"a,b",1.5,-2e1,7,k,i.jpg,"x;y"\nz,,3,,,,\n' > "$S/csv/aliases.csv"
F='{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[2.35,48.85,10]},"properties":{"name":"A\u00e9\ud83d\ude00","tags":["x","y"],"n":{"k":[1,2.5e-3,null,true,false]}}}'
printf '\x1e%s\n\x1e{"type":"Feature","geometry":\n\x1e%s\n' "$F" "$F" > "$S/geojson/sequence.geojsons"
printf '%s\n%s\r\n{"type":"Feature","geometry":null,"properties":{"name":"N"}}\n' "$F" "$F" > "$S/geojson/ndjson.geojson"
printf '\xef\xbb\xbf  %s' "$F" > "$S/geojson/bom-feature.geojson"
printf '{"type":"FeatureCollection","crs":{"a":[1,{"b":"\\"]"}]},"features":[%s,{"type":"Feature","geometry":{"type":"Point","coordinates":[1e400,0]},"properties":{"name":"d","name":"e"}},[],"s",12]}' "$F" > "$S/geojson/collection-odd.geojson"
# Dumps as they arrive: gzip'd (one member, two concatenated, cut short) and UTF-16 with a BOM.
gzip -c -n Samples/places.csv > "$S/csv/places.csv.gz"
gzip -c -n Samples/landmarks.geojson > "$S/geojson/landmarks.geojson.gz"
{ head -c 700 Samples/places.csv | gzip -c -n; tail -c +701 Samples/places.csv | gzip -c -n; } > "$S/csv/two-members.csv.gz"
head -c 300 "$S/csv/places.csv.gz" > "$S/csv/truncated.csv.gz"
{ printf '\xff\xfe'; head -n 8 Samples/places.csv | iconv -f UTF-8 -t UTF-16LE; } > "$S/csv/utf16le-bom.csv"
# Zipped: two members (stored and deflate) and a README; the oracle reads each member.
python3 - "$S" <<'PY'
import sys, zipfile
s = sys.argv[1]
csv = open("Samples/places.csv", "rb").read().splitlines(keepends=True)
geo = open("Samples/landmarks.geojson", "rb").read()
with zipfile.ZipFile(s + "/csv/dump.zip", "w") as z:
    z.writestr("dump/README.txt", b"two parts\n")
    z.writestr(zipfile.ZipInfo("dump/part-a.csv"), b"".join(csv[:8]))
    z.writestr("dump/part-b.csv", csv[0] + b"".join(csv[8:]), compress_type=zipfile.ZIP_DEFLATED)
with zipfile.ZipFile(s + "/geojson/landmarks.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("landmarks.geojson", geo)
PY
for r in Tests/PoiFormatsTests/FuzzRegressions/*; do
    [ -f "$r" ] || continue
    case "$r" in *.md) ;; *.geojson) cp "$r" "$S/geojson/";; *) cp "$r" "$S/csv/";; esac
done

# -detect_leaks=0: libFuzzer would run LeakSanitizer after every input whose mallocs and frees
# don't pair up, which Dispatch's thread pool and the Swift runtime's caches make every input
# (10x slower). SWIFT_BACKTRACE=enable=no: the Swift backtracer would hold each crash for 30 s.
status=0
for target in csv geojson; do
    mkdir -p "$OUT/corpus/formats-$target" "$OUT/artifacts/$target"
    echo "== poi-fuzz-formats $target for ${DURATION}s =="
    if ! SWIFT_BACKTRACE=enable=no POI_FUZZ_FORMAT=$target "$BIN" \
        -max_total_time="$DURATION" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
        -max_len=8192 -detect_leaks=0 -artifact_prefix="$OUT/artifacts/$target/" -print_final_stats=1 \
        "$OUT/corpus/formats-$target" "$S/$target" > "$OUT/fuzz_formats_$target.log" 2>&1; then
        status=1
        echo "poi-fuzz-formats $target FOUND A CRASH: see $OUT/fuzz_formats_$target.log and $OUT/artifacts/$target/" >&2
        grep -A4 -E 'Fatal error|ERROR: |SUMMARY: ' "$OUT/fuzz_formats_$target.log" | cut -c1-400 | head -30 >&2
    fi
    grep -E "^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" \
        "$OUT/fuzz_formats_$target.log" || true
done
exit $status
