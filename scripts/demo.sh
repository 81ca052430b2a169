#!/usr/bin/env bash
# The main job on the bundled samples, against $MONGODB_URI (set by `scripts/db.sh with`).
set -euo pipefail
cd "$(dirname "$0")/.."
POI=${1:-.build/release/poi}
mkdir -p out
"$POI" doctor --uploads uploads
