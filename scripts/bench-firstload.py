#!/usr/bin/env python3
"""First-load benchmark (part of `make bench-store`): `poi import` into an empty
database beside the server's own floor for the same work, same server, same run.

  first load   `poi import` of ROWS places (no images) into a fresh database, against: the
               documents it wrote, read back without `_id`, inserted with pymongo `insert_many`
               into a fresh collection carrying exactly the same indexes (target <= 1.2x);
  rerun        `poi import` of the same file again (nothing changed), against: a plain read of
               every key in batches of 1,000 (target <= 1.3x).

Pairs alternate (poi, floor, poi, floor, ...) RUNS times; medians are compared, so a slow spell of
the machine hits both sides alike. Env: FIRSTLOAD_ROWS (default 20000), RUNS (default 3), POI.
"""
import csv, json, os, random, statistics, subprocess, sys, time

import pymongo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_results import emit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POI = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
URI = os.environ["MONGODB_URI"]
ROWS = int(os.environ.get("FIRSTLOAD_ROWS", "20000"))
RUNS = int(os.environ.get("RUNS", "3"))
BENCH = os.path.join(ROOT, ".bench", "firstload")
os.makedirs(BENCH, exist_ok=True)
client = pymongo.MongoClient(URI)


def generate(n):
    """An airport-like dump: ids, names, codes, coordinates, no images."""
    path = os.path.join(BENCH, f"airports-{n}.csv")
    if os.path.exists(path):
        return path
    rnd = random.Random(16)
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "municipality", "lat", "lon", "type", "iata", "elevation_ft"])
        for i in range(n):
            w.writerow([f"a{i}", f"Airfield {i}", f"Town {i % 3000}", f"{rnd.uniform(-85, 85):.6f}",
                        f"{rnd.uniform(-179, 179):.6f}", ("small_airport", "heliport", "medium_airport")[i % 3],
                        f"{chr(65 + i % 26)}{chr(65 + i // 26 % 26)}{chr(65 + i // 676 % 26)}", str(rnd.randint(0, 9000))])
    os.replace(path + ".tmp", path)
    return path


def poi_import(path, db):
    start = time.monotonic()
    r = subprocess.run([POI, "import", path, "--db", db, "--uploads", os.path.join(BENCH, "uploads"), "--json", "--quiet"],
                       capture_output=True, text=True)
    wall = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"bench-firstload: poi import failed ({r.returncode}): {r.stdout[-1000:]} {r.stderr[-1000:]}")
    return wall, json.loads(r.stdout)


def insert_floor(source_db, target_db):
    """The documents poi wrote, without _id, inserted into a collection with the same indexes."""
    src = client[source_db].locations
    docs = list(src.find({}, {"_id": 0}))
    dst = client[target_db].locations
    for spec in src.list_indexes():
        if spec["name"] == "_id_":
            continue
        options = {k: v for k, v in spec.items() if k not in ("v", "key", "ns")}
        dst.create_index(list(spec["key"].items()), **options)
    start = time.monotonic()
    for i in range(0, len(docs), 1000):
        dst.insert_many(docs[i:i + 1000], ordered=False)
    return time.monotonic() - start


def key_read_floor(db, keys):
    coll = client[db].locations
    start = time.monotonic()
    for i in range(0, len(keys), 1000):
        list(coll.find({"importKey": {"$in": keys[i:i + 1000]}}, {"_id": 0, "importKey": 1, "contentHash": 1}))
    return time.monotonic() - start


def main():
    path = generate(ROWS)
    base = f"poikit_firstload_{os.getpid()}"
    first, floor, rerun, keyread = [], [], [], []
    try:
        for run in range(RUNS):
            db, peer = f"{base}_{run}", f"{base}_{run}_floor"
            wall, summary = poi_import(path, db)
            if summary.get("inserted") != ROWS:
                sys.exit(f"bench-firstload: first load inserted {summary.get('inserted')} of {ROWS}")
            first.append(wall)
            floor.append(insert_floor(db, peer))
            wall, summary = poi_import(path, db)
            if summary.get("unchanged") != ROWS:
                sys.exit(f"bench-firstload: rerun left {summary.get('unchanged')} of {ROWS} unchanged")
            rerun.append(wall)
            keys = [d["importKey"] for d in client[db].locations.find({}, {"_id": 0, "importKey": 1})]
            keyread.append(key_read_floor(db, keys))
            client.drop_database(db)
            client.drop_database(peer)
    finally:
        for name in client.list_database_names():
            if name.startswith(base):
                client.drop_database(name)
    ok = True
    for label, poi, peer, peer_name, target in [
        (f"first load {ROWS} places", first, floor, "insert_many floor", 1.2),
        (f"rerun {ROWS} places, nothing changed", rerun, keyread, "key read floor", 1.3),
    ]:
        p, q = statistics.median(poi), statistics.median(peer)
        ratio = p / q if q else float("inf")
        met = ratio <= target
        ok &= met
        print(f"{label}: poi {p:.2f} s, {peer_name} {q:.2f} s: {ratio:.2f}x (target <= {target}x: {'ok' if met else 'MISSED'})"
              f"  [runs: poi {', '.join(f'{x:.2f}' for x in poi)}; floor {', '.join(f'{x:.2f}' for x in peer)}]")
        emit(f"{label}: wall s", p, peer_name, q, f"<= {target}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
