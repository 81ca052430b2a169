#!/usr/bin/env bash
# `make bench-formats`: builds poi (release) and runs scripts/bench-formats.py.
# POI=path/to/poi skips the build; BENCH_ROWS (default 100000) and BENCH_REPEAT (5) tune the run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${POI:-}" ]]; then
  make --no-print-directory -s build
  export POI="$PWD/.build/release/poi"
fi
PY=.venv/bin/python
[[ -x "$PY" ]] || PY=python3
command -v ogr2ogr >/dev/null || echo "note: ogr2ogr not found (apt-get install gdal-bin); the convert comparison is skipped"
exec "$PY" scripts/bench-formats.py
