# PoiKit — the user's entry point. `make demo` and `make test` are the two commands in README.md.
SHELL := /bin/bash
SWIFT ?= swift
RELEASE_BIN = .build/release/poi
# The release binary carries the Swift runtime and Foundation: it starts in ~10 ms instead of
# ~16 ms (most of a small `poi check`), and runs on a server that has only the C libraries.
RELEASE_FLAGS = -c release --static-swift-stdlib
# The debug build (the tests) in a folder of its own when DEBUG_SCRATCH is set: SwiftPM locks its
# build folder for a whole run, so CI builds debug there beside the release build instead of after it.
DEBUG_FLAGS = $(if $(DEBUG_SCRATCH),--scratch-path $(DEBUG_SCRATCH))

.PHONY: setup db-start db-stop build build-debug test demo clean help

help:
	@echo "make demo    set up, build, and run the main job on Samples/ against the embedded server"
	@echo "make test    set up and run every test against a live server"
	@echo "make test-unit   only the tests that need no database and spawn no process (suites tagged .unit)"
	@echo "make setup | build | db-start | db-stop | clean"
	@echo "make bench   every benchmark beside its peers, one table (out/bench.json), beside Benchmarks/baseline.json"
	@echo "make bench-smoke   the short bench CI runs: downloads vs nginx, thumbnails vs vipsthumbnail, import vs pymongo"
	@echo "make crash-test | fault-test | hostile-test | arena-test | fuzz SECONDS=N   reliability suites and fuzzers"
	@echo "make lint    the module rules of ARCHITECTURE.md §3 (self-test first, then this tree)"
	@echo "make api-fuzz | client-test   schemathesis with every check; the generated Swift client doing what the app does"
	@echo "make browser-test   GET /map in a real browser (chromium + Selenium); make bench-map   the map over 100,000 places"

setup:
	@scripts/setup.sh

db-start: setup
	@scripts/db.sh start

db-stop:
	@scripts/db.sh stop

build: setup
	$(SWIFT) build $(RELEASE_FLAGS) --product poi

build-debug: setup
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)

# The server starts only after the build, and is stopped even when the tests fail;
# the exit status is the tests'. The tests start the `poi` built beside them, or POI_BIN
# (CI passes the release binary: the same behaviour, several times faster on big inputs).
# Six test processes side by side, each with its share of the suites, then the budget suites alone: most tests wait on
# a process or a server, and one process runs only as many tests at once as there are cores
# (scripts/test-shards.sh says why). `swift test --skip-build` still runs them all in one.
test: build-debug
	@scripts/db.sh with scripts/test-shards.sh $(SWIFT) $(DEBUG_FLAGS)

# The two halves of `make test`, for CI: the shards beside the other suites, the budget suites
# later, alone on the machine.
.PHONY: test-shards test-budget
test-shards: build-debug
	@PARTS=shards scripts/db.sh with scripts/test-shards.sh $(SWIFT) $(DEBUG_FLAGS)
test-budget: build-debug
	@PARTS=budget scripts/db.sh with scripts/test-shards.sh $(SWIFT) $(DEBUG_FLAGS)

# Only the suites tagged .unit (no database, no process spawned), without starting the server:
# under a minute after the build. Swift Testing filters by name only, so scripts/tagged-suites.py
# turns the tags in the sources into a --filter of suite names (and fails on an untagged suite).
.PHONY: test-unit
test-unit: build-debug
	@filter="$$($(LINT_PYTHON) scripts/tagged-suites.py)" && env -u MONGODB_URI $(SWIFT) test --skip-build $(DEBUG_FLAGS) --filter "$$filter"

demo: build
	@scripts/db.sh with scripts/demo.sh $(RELEASE_BIN)

clean:
	-@scripts/db.sh stop
	rm -rf .build .build-debug .data out Benchmarks/.build .build-fuzz

# Formats benchmark: poi check/convert vs Python csv/json and ogr2ogr, peak RSS on 10x input.
.PHONY: bench-formats
bench-formats:
	@scripts/bench-formats.sh

# Store benchmark: PoiStore vs pymongo, same server, same run (scripts/bench-store.sh; N=... to resize).
.PHONY: bench-store
bench-store: build
	@POI=$(abspath $(RELEASE_BIN)) scripts/bench-store.sh

# Imaging benchmark: poi thumb vs vipsthumbnail and ImageMagick on Debian wallpapers
# (corpus in .bench/, never committed); RUNS=, JOBS=, SIZE= to adjust.
.PHONY: bench-images
bench-images: build
	@POI=$(abspath $(RELEASE_BIN)) scripts/bench-images.sh

# WebP thumbnails vs JPEG q85 ones: bytes, encode time and SSIM on Samples/ and the
# bench-images corpus when present (scripts/bench-webp.sh; output in .bench/webp/).
.PHONY: bench-webp
bench-webp:
	@scripts/bench-webp.sh

# libFuzzer targets over the CCodecs decoders, SECONDS each (default 30); crashes land in .fuzz/.
.PHONY: fuzz-images
SECONDS ?= 30
fuzz-images:
	@scripts/fuzz-images.sh $(SECONDS)

# Decode arenas, under ASan/UBSan: libjpeg's memory limit refuses exactly the same
# images with the same message with and without an arena, byte by byte around each threshold,
# and a longjmp out of libjpeg's own manager leaves the arena reusable (scripts/arena-limit-test.sh).
.PHONY: arena-test
arena-test:
	@scripts/arena-limit-test.sh

# Jobs benchmark: poi import/export vs pymongo scripts, same server, same run
# (BENCH_ROWS=, DRY_ROWS= to resize).
.PHONY: bench-jobs
bench-jobs: build
	@scripts/db.sh with .venv/bin/python scripts/bench-jobs.py

# poi serve benchmark: poi serve vs the tutorial's Express server and nginx sendfile,
# wrk on loopback (DURATION= seconds per run); wrk and nginx-light from Debian.
.PHONY: bench-serve
bench-serve: build
	@command -v wrk >/dev/null || $(MAKE) --no-print-directory bench-serve-deps
	@POI=$(abspath $(RELEASE_BIN)) scripts/db.sh with .venv/bin/python scripts/bench-serve.py

.PHONY: bench-serve-deps
bench-serve-deps:
	@if [ "$$(id -u)" -eq 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk nginx-light >/dev/null; \
	else echo "bench-serve: needs wrk and nginx-light (apt-get install wrk nginx-light)" >&2; fi

# Every benchmark in one run, ending with one table (also out/bench.json), then every row beside
# the committed baseline (Benchmarks/baseline.json): a row more than 15 % worse fails the run.
# BENCHES= to choose. A commit that moves rows on purpose records them and why:
#   make bench-baseline REASON="..." [FROM=out/bench-smoke.json]
.PHONY: bench bench-baseline bench-smoke
bench: setup
	@.venv/bin/python scripts/bench.py

bench-baseline:
	@.venv/bin/python scripts/bench_baseline.py

# A few minutes (CI runs it): a big download and a thumbnail download against nginx on the same
# files, JPEG thumbnails against vipsthumbnail, an import against pymongo's insert_many; fails
# below generous floors (scripts/bench-smoke.py). Measures the release binary: a debug build's
# figures say nothing about speed. POI= to measure another binary.
bench-smoke: build
	@POI=$${POI:-$(abspath $(RELEASE_BIN))} scripts/db.sh with .venv/bin/python scripts/bench-smoke.py

# Reliability suites, each ending with `<suite>: N passed, M failed`.
# crash-test: kill -9 `poi import` / `poi thumbnails --all` at seeded random moments, rerun, check
#   (ROWS= KILLS= SEED= IMAGES=; short CI run: make crash-test ROWS=2000 KILLS=4).
# fault-test: server stopped mid-import and mid-export, uploads full / read-only, production
# set-up (TLS, SCRAM, replica set), the fail-point matrix (own servers); then overlapping cron
# runs of every job pair (scripts/overlap-test.py).
# hostile-test: the hostile-input table (Tests/PoiCLITests/HostileInputTests.swift) against a live server.
.PHONY: crash-test fault-test hostile-test api-fuzz
CRASH_ENV = $(if $(ROWS),ROWS=$(ROWS)) $(if $(KILLS),KILLS=$(KILLS)) $(if $(SEED),SEED=$(SEED)) $(if $(IMAGES),IMAGES=$(IMAGES))
# The suites drive the release binary (POI_BIN=...: another one). POI_BUILD= (empty) skips asking
# SwiftPM for it: CI builds it once, then runs the suites beside a debug build that holds
# SwiftPM's lock on .build, which would make every suite wait for it.
POI_BUILD ?= build
POI_BIN ?= $(RELEASE_BIN)
crash-test: $(POI_BUILD)
	@POI=$(abspath $(POI_BIN)) $(CRASH_ENV) .venv/bin/python scripts/crash-test.py
fault-test: $(POI_BUILD)
	@POI=$(abspath $(POI_BIN)) $(if $(ROWS),ROWS=$(ROWS)) $(if $(SEED),SEED=$(SEED)) .venv/bin/python scripts/fault-test.py
	@POI=$(abspath $(POI_BIN)) .venv/bin/python scripts/overlap-test.py
# api-fuzz: schemathesis against a live poi serve and its OpenAPI document (EXAMPLES= per operation).
api-fuzz: $(POI_BUILD)
	@POI=$(abspath $(POI_BIN)) scripts/db.sh with scripts/api-fuzz.sh
# client-test: the Swift client swift-openapi-generator makes from a live poi serve's /openapi.json
# (Examples/SwiftClient, the README's recipe) does what the TourMyTown app does, each step checked
# in the database (scripts/client-test.sh, .py); ends with `client-test: N passed, M failed`.
.PHONY: client-test client-build
client-test: $(POI_BUILD)
	@POI=$(abspath $(POI_BIN)) scripts/db.sh with scripts/client-test.sh
# The example client built from the document in the repository, the bytes `poi serve` serves:
# the generator and its dependencies are most of client-test's time, and need no server, so CI
# builds them early, beside other work. client-test then fetches the live document and rebuilds
# only if it differs.
client-build:
	@cmp -s Sources/PoiServer/Resources/openapi.json Examples/SwiftClient/Sources/TourMyTownAPI/openapi.json \
	  || cp Sources/PoiServer/Resources/openapi.json Examples/SwiftClient/Sources/TourMyTownAPI/openapi.json
	$(SWIFT) build --package-path Examples/SwiftClient --product tmt-app-steps 2>&1 | grep -E "error:|Build complete"; exit $${PIPESTATUS[0]}
# browser-test: GET /map in Debian's chromium driven by Selenium against a live poi serve over
# the samples (scripts/browser-test.py); installs chromium and chromium-driver when run as root,
# and says SKIPPED with the reason where no browser can be installed.
.PHONY: browser-test browser-test-deps
browser-test: $(POI_BUILD) browser-test-deps
	@POI=$(abspath $(POI_BIN)) scripts/db.sh with .venv/bin/python scripts/browser-test.py
browser-test-deps:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" -eq 0 ]; then echo "browser-test: installing chromium chromium-driver"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null \
	      || echo "browser-test: could not install chromium (the test will say SKIPPED)"; \
	  else echo "browser-test: needs chromium and chromium-driver (apt-get install chromium chromium-driver)"; fi; fi
# bench-map: GET /map over N places (default 100000; kept between runs) panned and zoomed in
# chromium, timing the page's own requests (scripts/bench-map.py; out/bench-map.json).
.PHONY: bench-map
bench-map: $(POI_BUILD) browser-test-deps
	@POI=$(abspath $(POI_BIN)) $(if $(N),N=$(N)) scripts/db.sh with .venv/bin/python scripts/bench-map.py
hostile-test: build-debug
	@scripts/db.sh with $(SWIFT) test --skip-build --filter HostileInputTests

# libFuzzer targets over the PoiFormats readers (csv, geojson: scripts/fuzz-formats.sh), SECONDS
# each (default 30); crashes land in .fuzz/artifacts/, fixed ones go to
# Tests/PoiFormatsTests/FuzzRegressions/ (replayed by swift test).
.PHONY: fuzz-formats fuzz
fuzz-formats:
	@scripts/fuzz-formats.sh $(SECONDS)

# Every fuzz target, SECONDS each; both sets run even when the first finds a crash.
fuzz:
	@s=0; $(MAKE) --no-print-directory fuzz-images || s=1; $(MAKE) --no-print-directory fuzz-formats || s=1; exit $$s

# The module rules of ARCHITECTURE.md §3 (scripts/lint-modules.py): first the self-test (one planted
# violation per rule kind must be reported), then this tree. Needs only python3 and swift.
.PHONY: lint
LINT_PYTHON = $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
lint:
	@$(LINT_PYTHON) scripts/lint-modules.py --self-test
	@$(LINT_PYTHON) scripts/lint-modules.py
