#!/usr/bin/env bash
# Store benchmark (part of `make bench`): PoiKit's poi-bench-store beside a pymongo script doing
# the same work against the same server in the same run. Prints wall time and client user+sys CPU
# per phase, and PoiKit/pymongo ratios (target: client CPU <= 0.5x pymongo in both directions).
#   N=100000 scripts/bench-store.sh     (MONGODB_URI: an existing server; else an embedded one)
# The driver, poi-bench-store, is in the Benchmarks/ package (it depends on this one by path).
# Env: N (documents), BATCH, SCRATCH (SwiftPM scratch path, default Benchmarks/.build).
# Then scripts/bench-firstload.py: `poi import` first loads and reruns beside the server's own
# insert_many and key-read floors (FIRSTLOAD_ROWS, RUNS; POI, default the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
BATCH=${BATCH:-1000}
SCRATCH=${SCRATCH:-Benchmarks/.build}

if [ -z "${MONGODB_URI:-}" ]; then
  exec scripts/db.sh with "$0" "$@"
fi

swift build -c release --package-path Benchmarks --scratch-path "$SCRATCH" --product poi-bench-store >&2
BIN="$SCRATCH/release/poi-bench-store"
DB="poikit_bench_$$"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "bench-store: $N place documents, batches of $BATCH, server $(.venv/bin/python - <<PY
import pymongo; print(pymongo.MongoClient("$MONGODB_URI", serverSelectionTimeoutMS=3000).admin.command("buildInfo")["version"])
PY
)" >&2
"$BIN" --uri "$MONGODB_URI" --db "$DB" --count "$N" --batch "$BATCH" >> "$out"
.venv/bin/python scripts/bench-store.py --uri "$MONGODB_URI" --db "$DB" --count "$N" --batch "$BATCH" >> "$out"

status=0
(.venv/bin/python - "$out" <<'PY'
import json, os, sys
sys.path.insert(0, "scripts")
from bench_results import emit
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["client"], r["phase"]): r for r in rows}
print(f'{"phase":<6} {"client":<8} {"docs":>7} {"wall s":>8} {"cpu s":>8} {"docs/s":>9}')
for phase in ("write", "read"):
    for client in ("poikit", "pymongo"):
        r = by[(client, phase)]
        print(f'{phase:<6} {client:<8} {r["count"]:>7} {r["wall"]:>8.2f} {r["cpu"]:>8.3f} {r["count"] / r["wall"]:>9.0f}')
ok = True
for phase in ("write", "read"):
    p, q = by[("poikit", phase)], by[("pymongo", phase)]
    cpu = p["cpu"] / q["cpu"] if q["cpu"] > 0 else float("inf")
    wall = p["wall"] / q["wall"] if q["wall"] > 0 else float("inf")
    verdict = "ok" if cpu <= 0.5 else "MISSED"
    ok &= cpu <= 0.5
    print(f'{phase}: PoiKit/pymongo client CPU {cpu:.2f}x (target <= 0.50x: {verdict}), wall {wall:.2f}x')
    emit(f"store {phase} {p['count']} docs: client CPU s", p["cpu"], "pymongo", q["cpu"], "<= 0.5")
    emit(f"store {phase} {p['count']} docs: wall s", p["wall"], "pymongo", q["wall"])
sys.exit(0 if ok else 1)
PY
) || status=1

# First loads: poi import against the server's own insert and key-read floors.
.venv/bin/python scripts/bench-firstload.py || status=1
exit $status
