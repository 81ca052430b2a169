#!/usr/bin/env bash
# Installs what PoiKit needs and nothing else; silent when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# gdal-bin: the tests check every GeoJSON the writer produces with GDAL's ogrinfo as well.
# liblcms2-dev: colour management of tagged photos (CCodecs/color.c). icc-profiles-free: the
# Adobe RGB (1998)-compatible and gray profiles PoiImagingTests tag their fixtures with.
# libgs-common: Ghostscript's ICC profiles (architecture-independent, no dependencies), for its
# CMYK press profile (default_cmyk.icc): icc-profiles-free has no CMYK profile, and the CMYK
# colour tests need a real one.
# imagemagick-6.q16: Tests/PoiImagingTests/Fixtures/make_fixtures.py makes the CMYK and other
# fixtures Pillow cannot with /usr/bin/convert-im6.q16; without it every imaging test fails.
# nodejs node-express node-mongodb: the reference server (../shared/reference/tmt-server) that
# PoiServerTests' compatibility test runs `poi serve` against (skipped, with the reason, without).
# libjpeg-turbo-progs: cjpeg writes the progressive scripts ProgressiveDCTests need, djpeg is
# make bench-images' floor (libjpeg-turbo alone at 1/8).
# libwebp-dev: WebP thumbnails (--format webp, CCodecs/webp_codec.c).
# libdeflate-dev: a PNG's image data inflated in one call (CCodecs/png_codec.c), in less than
# half the time zlib takes.
# libjs-leaflet libjs-leaflet.markercluster: the map of `poi serve` (GET /map) serves these from
# /usr/share/javascript/leaflet itself, so the page needs no CDN. Chromium for the browser test is
# installed by `make browser-test` only (it is large).
# nginx-light wrk libvips-tools: the peers of make bench-smoke (CI) and bench-serve/bench-images:
# nginx serving the same files with sendfile, the load generator, vipsthumbnail. time: GNU time,
# how the benches read a command's own peak memory (a child's rusage carries its parent's).
DEBS=(libpng-dev libjpeg-dev liblcms2-dev libwebp-dev libdeflate-dev zlib1g-dev libmongoc-dev libbson-dev libssl-dev pkg-config python3-venv gdal-bin
      imagemagick-6.q16 nodejs node-express node-mongodb icc-profiles-free libgs-common libjpeg-turbo-progs
      libjs-leaflet libjs-leaflet.markercluster nginx-light wrk libvips-tools time)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  cmd="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    bash -c "$cmd" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "setup: installing Debian packages with sudo: ${missing[*]}"
    sudo bash -c "$cmd" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run this as root, then run make again:" >&2
    echo "  $cmd" >&2
    exit 2
  fi
fi

PYTHON=${PYTHON:-python3}
stamp=".venv/.installed-$(sha256sum scripts/requirements.txt | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: creating .venv (SecantusDB, Pillow)"
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
  rm -f .venv/.installed-*
  touch "$stamp"
fi
