#!/usr/bin/env python3
"""`make bench-map`: GET /map over a collection of N places (N=100000 by default), panned and
zoomed in a real browser (chromium + Selenium, as scripts/browser-test.py), timing the page's own
requests as the browser saw them (Resource Timing of every GET /locations it sent) and how long
each view took from the move to its markers on the map. For each view it also prints what the
database alone took for the first page (`explain` executionTimeMillis), so a slow figure says
whose time it is. Not a pass/fail test: the figures are for the README and the report.

The places are random points over Europe (most) and the world, with categories; the collection is
kept between runs (poikit_bench_map_<N>, made again when its size differs): inserting 100,000
places into the embedded test server takes minutes. Needs MONGODB_URI (scripts/db.sh with).
Writes out/bench-map.json.
"""
import importlib.util
import json
import os
import random
import statistics
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("browser_test", os.path.join(ROOT, "scripts", "browser-test.py"))
bt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bt)

N = int(os.environ.get("N", "100000"))
POI = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
bt.POI = POI
# A view of the whole collection can take minutes on the embedded test server: wait for it.
bt.WAIT = 900
CATEGORIES = ["museum", "park", "cafe", "church", "bridge", "shop", "castle", "station", "market", "library"]
# (label, zoom, lat, lon): the moves of a person looking over an import, from a city out to the
# world. Wider views come last: on the embedded test server a view's first page costs about as
# much as the places in its box, and a view that is not shown within VIEW_LIMIT seconds ends the
# run (wider ones would take longer still; the database keeps working on the abandoned query).
VIEWS = [
    ("Paris", 11, 48.86, 2.34),
    ("pan east", 11, 48.86, 2.60),
    ("Berlin", 10, 52.52, 13.40),
    ("Paris region", 8, 48.85, 2.35),
    ("France", 6, 46.5, 2.5),
    ("Europe", 4, 50.0, 10.0),
    ("world", 2, 30.0, 10.0),
]
VIEW_LIMIT = int(os.environ.get("VIEW_LIMIT", "300"))


def ensure_places(db):
    name = db.name
    if db.locations.estimated_document_count() == N and db.bench_meta.find_one({"n": N}):
        print(f"bench-map: reusing {name} ({N} places)")
        return
    db.client.drop_database(name)
    db.locations.create_index([("location", "2dsphere")])
    db.locations.create_index([("categories", 1)])
    rnd = random.Random(47)
    started = time.time()
    batch = []
    for i in range(N):
        if rnd.random() < 0.8:
            lon, lat = rnd.uniform(-10, 30), rnd.uniform(36, 60)
        else:
            lon, lat = rnd.uniform(-180, 180), rnd.uniform(-60, 70)
        batch.append({"name": f"Place {i}", "placename": f"Town {i % 997}", "details": "A place made up for the map benchmark.",
                      "categories": rnd.sample(CATEGORIES, rnd.randint(1, 2)),
                      "location": {"type": "Point", "coordinates": [round(lon, 6), round(lat, 6)]}})
        if len(batch) == 5000:
            db.locations.insert_many(batch)
            batch = []
            print(f"\rbench-map: inserting places… {i + 1}/{N}", end="", flush=True)
    if batch:
        db.locations.insert_many(batch)
    db.bench_meta.insert_one({"n": N})
    print(f"\nbench-map: {N} places inserted in {time.time() - started:.0f} s")


def main():
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        print("bench-map: MONGODB_URI is not set (run: scripts/db.sh with .venv/bin/python scripts/bench-map.py)")
        sys.exit(2)
    if not os.path.exists(bt.CHROMIUM) or not os.path.exists(bt.CHROMEDRIVER):
        print(f"SKIPPED bench-map: no browser ({bt.CHROMIUM}, {bt.CHROMEDRIVER}; apt-get install chromium chromium-driver)")
        return
    os.environ["SE_OFFLINE"] = "true"
    import pymongo
    client = pymongo.MongoClient(uri)
    db = client[f"poikit_bench_map_{N}"]
    ensure_places(db)
    os.makedirs(bt.OUT, exist_ok=True)
    uploads = os.path.join(bt.OUT, "bench-uploads")
    os.makedirs(uploads, exist_ok=True)
    # The default --query-timeout (10 s) would cut the slowest views short with 503: measured
    # instead, whatever they take.
    server = bt.Serve("bench", db.name, uploads, ["--map-tiles", "none", "--query-timeout", "900"])
    driver = bt.browser()
    rows = []
    try:
        first = VIEWS[0]
        driver.get(server.base + f"/map#{first[1]}/{first[2]}/{first[3] + 0.5}")
        bt.wait_ready(driver)
        for label, zoom, lat, lon in VIEWS:
            driver.execute_script("performance.clearResourceTimings()")
            started = time.time()
            driver.execute_script("poiMap.map.setView([arguments[0], arguments[1]], arguments[2], {animate: false})", lat, lon, zoom)
            time.sleep(0.3)
            try:
                bt.wait_for(driver, "return document.body.dataset.state !== 'loading'", f"view {label}", timeout=VIEW_LIMIT)
            except AssertionError:
                rows.append({"view": label, "zoom": zoom, "not_shown_within_s": VIEW_LIMIT})
                print(f"{label:13} z{zoom:<2} not shown within {VIEW_LIMIT} s; the run ends here")
                break
            view_seconds = time.time() - started
            entries = driver.execute_script(
                "return performance.getEntriesByType('resource').filter(e => e.name.includes('/locations?'))"
                ".map(e => [e.name, e.duration, e.transferSize])")
            places = int(driver.execute_script("return document.body.dataset.places || 0"))
            more = driver.execute_script("return document.body.dataset.more") == "true"
            first_query = json.loads(urllib.parse.parse_qs(urllib.parse.urlparse(entries[0][0]).query)["query"][0]) if entries else {}
            explain = db.command("explain", {"find": "locations", "filter": first_query, "sort": {"_id": 1}, "limit": 1001,
                                             "projection": {"name": 1, "placename": 1, "categories": 1, "details": 1,
                                                            "imageId": 1, "location": 1}},
                                 verbosity="executionStats") if entries else {}
            db_ms = explain.get("executionStats", {}).get("executionTimeMillis")
            durations = [e[1] / 1000 for e in entries]
            row = {"view": label, "zoom": zoom, "places": places, "more": more, "requests": len(entries),
                   "slowest_request_s": round(max(durations), 3) if durations else None,
                   "median_request_s": round(statistics.median(durations), 3) if durations else None,
                   "view_s": round(view_seconds, 2), "database_first_page_s": db_ms / 1000 if db_ms is not None else None}
            rows.append(row)
            print(f"{label:13} z{zoom:<2} {places:5}{'+' if more else ' '} places  {len(entries)} requests  "
                  f"slowest {row['slowest_request_s']} s  median {row['median_request_s']} s  view {row['view_s']} s  "
                  f"(database alone, first page: {row['database_first_page_s']} s)")
    finally:
        driver.quit()
        server.stop()
    all_requests = [r["slowest_request_s"] for r in rows if r.get("slowest_request_s") is not None]
    summary = {"places": N, "views": rows, "slowest_request_s": max(all_requests) if all_requests else None,
               "load_average": os.getloadavg()}
    os.makedirs(os.path.join(ROOT, "out"), exist_ok=True)
    with open(os.path.join(ROOT, "out", "bench-map.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"bench-map: {N} places, slowest request of the page {summary['slowest_request_s']} s "
          f"(load average {summary['load_average'][0]:.1f}); out/bench-map.json")


if __name__ == "__main__":
    main()
