#!/usr/bin/env bash
# The main job on the bundled samples, against $MONGODB_URI (set by `scripts/db.sh with`):
# import both dumps with their photos, regenerate thumbnails at a second size, export with images.
set -euo pipefail
cd "$(dirname "$0")/.."
POI=${1:-.build/release/poi}
UPLOADS=.data/uploads
mkdir -p out "$UPLOADS"

step() { printf '\n== %s\n' "$*"; }

step "poi doctor"
"$POI" doctor --uploads "$UPLOADS"

step "poi import Samples/places.csv Samples/landmarks.geojson (the samples hold 5 bad records and 3 bad image references on purpose)"
rc=0
"$POI" import Samples/places.csv Samples/landmarks.geojson --uploads "$UPLOADS" --progress || rc=$?
[ "$rc" -le 1 ] || exit "$rc"   # 1 = finished with rejects, expected here

step "poi import again: nothing changes"
rc=0
"$POI" import Samples/places.csv Samples/landmarks.geojson --uploads "$UPLOADS" --quiet --json || rc=$?
[ "$rc" -le 1 ] || exit "$rc"

step "poi thumbnails --size 512x512"
"$POI" thumbnails --uploads "$UPLOADS" --size 512x512 --progress

step "poi export -o out/places.geojson --with-images out/images"
"$POI" export --uploads "$UPLOADS" -o out/places.geojson --with-images out/images --progress

step "poi export --bbox -10,35,30,60 --category museum (European museums)"
"$POI" export --bbox -10,35,30,60 --category museum -o out/european-museums.geojson --progress

step "poi serve: the app's backend over the same data, for a moment"
# Port 0: any free port; the server says which on its first line.
log=$(mktemp)
"$POI" serve --uploads "$UPLOADS" --port 0 2>"$log" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null; rm -f "$log"' EXIT
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log" | head -n1)
  [ -n "$port" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$log" >&2; exit 3; }
  sleep 0.1
done
[ -n "$port" ] || { echo "poi serve did not start" >&2; cat "$log" >&2; exit 3; }
base="http://127.0.0.1:$port"
query='{"imageId":{"$exists":true}}'
place=$(curl -sf -G -H 'Accept: application/json' --data-urlencode "query=$query" --data-urlencode limit=1 "$base/locations")
echo "GET /locations?query=…&limit=1 → ${place:0:160}…"
image_id=$(printf '%s' "$place" | sed -n 's/.*"imageId":"\([0-9a-f]\{24\}\)".*/\1/p')
[ -n "$image_id" ] || { echo "no place with an image came back" >&2; exit 3; }
curl -sf -o out/served-image -w "GET /files/$image_id → %{http_code}, %{size_download} bytes, %{content_type}\n" "$base/files/$image_id"
kill -TERM "$serve_pid"; wait "$serve_pid"
echo "poi serve stopped with status $?"
trap - EXIT
rm -f "$log"

printf '\nDone. Outputs: out/places.geojson, out/images/, out/european-museums.geojson, out/served-image; rejects: Samples/*.rejects.*\n'
