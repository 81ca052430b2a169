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

printf '\nDone. Outputs: out/places.geojson, out/images/, out/european-museums.geojson; rejects: Samples/*.rejects.*\n'
