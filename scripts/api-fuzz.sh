#!/usr/bin/env bash
# `make api-fuzz`: schemathesis (PyPI, in .venv) against a live `poi serve` and its own OpenAPI
# document, with every check schemathesis has (`--checks all`): no server error; statuses,
# content types, headers and bodies as documented; schema-violating requests refused and
# schema-valid ones accepted; undeclared methods answered 405 with a matching Allow; resources
# created through the document's links readable (the stateful phase); with --write-token, writes
# without it refused. A bounded number of examples per operation (EXAMPLES=, default 100),
# deterministic. Needs MONGODB_URI (run it through scripts/db.sh).
# Left out, each for its reason:
# - use_after_free: the reference answers a document that is not there (deleted, or never made)
#   with 200 and an empty body, and the app relies on it; the document says so (an empty
#   text/plain 200, which a typed client tells apart from a document).
# Per-operation exceptions (statuses that a schema-valid request can still get, with why) are in
# scripts/schemathesis.toml.
# Ends with `api-fuzz: N passed, M failed`; exit status 1 when schemathesis found anything.
set -uo pipefail
cd "$(dirname "$0")/.."
POI=${POI:-.build/debug/poi}
EXAMPLES=${EXAMPLES:-100}
SEED=${SEED:-20261125}
: "${MONGODB_URI:?MONGODB_URI is not set (run: scripts/db.sh with scripts/api-fuzz.sh)}"
[ -x .venv/bin/schemathesis ] || { echo "api-fuzz: .venv/bin/schemathesis missing (make setup)"; exit 2; }
EXCLUDED=use_after_free
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT  # on an interrupted run too
passed=0; failed=0
run() {  # label, extra poi serve arguments, then schemathesis arguments
  local label=$1 serve_args=$2
  shift 2
  local port
  port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local db="poikit_apifuzz_${label}_$$"
  mkdir -p "$work/$label/uploads"
  # shellcheck disable=SC2086
  "$POI" serve --port "$port" --db "$db" --uploads "$work/$label/uploads" --max-upload 2000000 $serve_args \
    > "$work/$label/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.1; done
  echo "== schemathesis ($label): $EXAMPLES examples per operation, seed $SEED"
  # One worker: with two, hypothesis parses lambda sources with ast.parse on two threads at
  # once, which CPython 3.11 (this machine's 3.11.7) can fail with "SystemError: AST constructor
  # recursion depth mismatch" (CPython gh-106905) — a crash of the fuzzer, not of the server,
  # that CI met once in the coverage phase.
  # shellcheck disable=SC2086
  if timeout 900 .venv/bin/schemathesis --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
       --checks all --exclude-checks "$EXCLUDED" --max-examples "$EXAMPLES" --seed "$SEED" --generation-deterministic \
       --phases examples,coverage,fuzzing,stateful --request-timeout 15 --workers 1 \
       --suppress-health-check all --no-color "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "api-fuzz ($label): poi serve's log, last lines:"; tail -n 20 "$work/$label/serve.log"
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "api-fuzz ($label): poi serve is gone (crashed?)"; failed=$((failed + 1))
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  .venv/bin/python -c 'import pymongo,sys; pymongo.MongoClient(sys.argv[1]).drop_database(sys.argv[2])' "$MONGODB_URI" "$db" 2>/dev/null
}
run open ""
run token "--write-token fuzz-secret" -H "Authorization: Bearer fuzz-secret"
echo "api-fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
