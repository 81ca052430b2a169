#!/usr/bin/env bash
# Starts/stops the embedded test server (SecantusDB) under .data/.
#   db.sh start   start one on a free loopback port (or reuse the running one), print its URI
#   db.sh stop    stop the one recorded in .data/secantus.pid, by that pid only
#   db.sh with CMD...  run CMD with MONGODB_URI exported; starts and stops a server unless
#                      MONGODB_URI is already set; exits with CMD's status
# DB_DATA=<folder> (default .data) keeps one server's files, pid and URI: steps that run side by
# side (CI's lanes) each give their own, so that one's `with` never stops the other's server.
set -uo pipefail
cd "$(dirname "$0")/.."
DATA=${DB_DATA:-.data}
PIDFILE=$DATA/secantus.pid
URIFILE=$DATA/uri

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

ping() {
  .venv/bin/python - "$1" <<'PY' >/dev/null 2>&1
import sys, pymongo
pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=500).admin.command("ping")
PY
}

start() {
  if [ -n "${MONGODB_URI:-}" ]; then
    # The URI may hold a password: say where it comes from, not what it is.
    echo "db: MONGODB_URI is set; using that server, not starting the embedded one" >&2
    return 0
  fi
  if running; then cat "$URIFILE"; return 0; fi
  mkdir -p "$DATA/db"
  : > "$DATA/empty.toml"
  port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  uri="mongodb://127.0.0.1:$port"
  setsid .venv/bin/secantusd-py --host 127.0.0.1 --port "$port" --storage-path "$DATA/db" \
    --standalone --config "$DATA/empty.toml" > "$DATA/secantus.log" 2>&1 < /dev/null &
  echo $! > "$PIDFILE"
  for _ in $(seq 1 150); do
    if ping "$uri"; then echo "$uri" > "$URIFILE"; echo "$uri"; return 0; fi
    if ! running; then break; fi
    sleep 0.2
  done
  echo "db: SecantusDB did not answer a ping on $uri; log follows" >&2
  tail -n 20 "$DATA/secantus.log" >&2
  stop >/dev/null
  return 3
}

stop() {
  if running; then
    pid=$(cat "$PIDFILE")
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    echo "db: stopped SecantusDB (pid $pid)"
  fi
  rm -f "$PIDFILE" "$URIFILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  with)
    shift
    if [ -n "${MONGODB_URI:-}" ]; then exec "$@"; fi
    started=0
    running || started=1
    uri=$(start) || exit 3
    export MONGODB_URI="$uri"
    # Says the URI is this embedded server's (not one the user gave): a command may then start
    # more of them beside it (make test gives the server tests one of their own).
    export POI_EMBEDDED_DB_DATA="$DATA"
    [ $started -eq 1 ] && trap 'stop >/dev/null' EXIT INT TERM
    "$@"
    exit $?
    ;;
  *) echo "usage: $0 start|stop|with CMD..." >&2; exit 2 ;;
esac
