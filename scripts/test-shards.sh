#!/usr/bin/env bash
# make test: the tests in six processes side by side (the CLI tests in four parts, the server
# tests, the rest), then the budget suites alone, against the database server it is run with
# (under scripts/db.sh with); on the embedded one, the server tests get a server of their own.
#
# Why processes: Swift Testing runs tests on the Swift concurrency pool, whose width is the
# number of cores, and most of our tests block a thread of it while a `poi` they started works
# or a server they started comes up. On 2 cores that meant two tests at a time, each mostly
# waiting: twelve tests that each wait 2 s for a child take 12 s in one process. Each process has
# a pool of its own, so six of them keep twelve tests going. The CLI parts split the suites by the
# first letter of their names and together take every letter (a suite renamed moves between
# parts, never out of all of them).
#
#   scripts/test-shards.sh [SWIFT [--scratch-path DIR]]
#       exit 0 when every shard passed; each shard's whole output is printed after all have
#       ended, one after the other. PARTS=shards runs only the six shards, PARTS=budget only the
#       budget suites (CI runs the shards beside other suites and the budget suites alone, later).
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${1:-swift}
shift || true
PARTS=${PARTS:-all}
mkdir -p out/test
names=(cli-a-f cli-g-q cli-r-z cli-round-trip server rest)
# Swift Testing matches --filter and --skip against ids such as PoiCLITests.RoundTripTests/f().
# RoundTripTests has a process of its own: it was the last suite to end wherever it shared one.
args=("--filter PoiCLITests\\.[A-F]" "--filter PoiCLITests\\.[G-Q]" "--filter PoiCLITests\\.(?!RoundTripTests(/|$))[^A-Q]"
      "--filter PoiCLITests\\.RoundTripTests(/|$)" "--filter PoiServerTests\\." "--skip PoiCLITests\\.|PoiServerTests\\.")
# The budget suites assert CPU seconds or peak memory of what they run: they are left out of the
# shards and run last, alone on the machine, so that other tests' work cannot push them over.
# They are the suites tagged .budget (PoiTestSupport's Tags), found by scripts/tagged-suites.py.
BUDGET=$(.venv/bin/python scripts/tagged-suites.py --tag=budget) || { echo "make test: a suite has no tags"; exit 1; }
# The test bundle is run directly, as `swift test` runs it: `swift test` holds SwiftPM's lock on
# .build and its build database for its whole run, even with --skip-build, so four of them ran
# one after another (and with --ignore-lock found the database locked and no tests).
BUNDLE="$("$SWIFT" build --show-bin-path "$@")/PoiKitPackageTests.xctest"
[ -x "$BUNDLE" ] || { echo "make test: no test bundle at $BUNDLE (make build-debug builds it)"; exit 1; }
# NO_COLOR: the output goes to files (out/test/), then to CI's log.
run_tests() { NO_COLOR=1 "$BUNDLE" --testing-library swift-testing "$@"; }
# The server tests answer 503 when the database has not answered within their deadline (the
# query timeout, 10 s). With all six shards on one SecantusDB (a Python server), it once answered
# no one for about 100 s (what inside it stalled is not known; its log is silent), and a server
# test's upload came back without an id. On the embedded server, the server shard gets a
# SecantusDB of its own. A server the user named (MONGODB_URI) is used by every shard.
on_own_server() {
  if [ -n "${POI_EMBEDDED_DB_DATA:-}" ]; then
    env -u MONGODB_URI DB_DATA="$POI_EMBEDDED_DB_DATA/server-shard" scripts/db.sh with "$@"
  else
    "$@"
  fi
}
failed=()
shown=()
if [ "$PARTS" != budget ]; then
  rm -f out/test/{cli-*,server,rest}.log
  pids=()
  for i in "${!names[@]}"; do
    ( read -r flag pattern <<< "${args[$i]}"
      if [ "$flag" = --skip ]; then pattern="$pattern|$BUDGET"; extra=(); else extra=(--skip "$BUDGET"); fi
      if [ "${names[$i]}" = server ]; then
        on_own_server env NO_COLOR=1 "$BUNDLE" --testing-library swift-testing "$flag" "$pattern" "${extra[@]}"
      else
        run_tests "$flag" "$pattern" "${extra[@]}"
      fi ) > "out/test/${names[$i]}.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!names[@]}"; do
    wait "${pids[$i]}" || failed+=("${names[$i]}")
  done
  shown=("${!names[@]}")
fi
names+=(budget)
args+=("--filter $BUDGET")
if [ "$PARTS" != shards ]; then
  run_tests --filter "$BUDGET" > out/test/budget.log 2>&1 || failed+=(budget)
  shown+=($(( ${#names[@]} - 1 )))
fi
for i in "${shown[@]}"; do
  echo "==== make test, shard ${names[$i]} (${args[$i]})"
  cat "out/test/${names[$i]}.log"
done
echo "==== make test: the shards' last lines"
for i in "${shown[@]}"; do
  printf '%-7s %s\n' "${names[$i]}" "$(grep -E 'Test run with|error:' "out/test/${names[$i]}.log" | tail -1)"
done
if [ ${#failed[@]} -gt 0 ]; then
  # CI's record keeps only the start and the end of a long log: the failures are repeated here,
  # last, with the lines that say what was expected.
  for name in "${failed[@]}"; do
    echo "==== make test, shard $name: what failed"
    grep -E -A3 '✘ Test .*(recorded an issue|failed)|error:|Fatal error|crashed' "out/test/$name.log" | head -24
  done
  echo "make test: failed shards: ${failed[*]}"
  exit 1
fi
