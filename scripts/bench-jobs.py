#!/usr/bin/env python3
"""Jobs benchmark: `poi import` / `poi export` beside pymongo scripts doing the same
work against the same server in the same run: wall time, client CPU (user+sys) and peak RSS.

The server is the one in $MONGODB_URI (`make bench-jobs` starts the embedded SecantusDB). With
SecantusDB the wall times are the stand-in server's, not the clients': compare CPU columns.

Env: BENCH_ROWS (default 100000), DRY_ROWS (default 1000000, the memory check), POI, BENCH_RESULTS
(append result rows as JSON lines, for `make bench`'s table).
"""
import csv, json, os, random, resource, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_results import PeakRSS, emit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POI = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
PY = os.path.join(ROOT, ".venv/bin/python")
URI = os.environ["MONGODB_URI"]
ROWS = int(os.environ.get("BENCH_ROWS", "100000"))
DRY_ROWS = int(os.environ.get("DRY_ROWS", "1000000"))
RUNS = int(os.environ.get("RUNS", "3"))
BENCH = os.path.join(ROOT, ".bench", "jobs")
os.makedirs(BENCH, exist_ok=True)


def generate(n):
    path = os.path.join(BENCH, f"places-{n}.csv")
    if os.path.exists(path):
        return path
    rnd = random.Random(7)
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "address", "lat", "lon", "description", "tags", "opening_hours"])
        for i in range(n):
            w.writerow([f"p{i}", f"Place {i} — café Ü", f"{i} Main Street, Springfield",
                        f"{rnd.uniform(-85, 85):.7f}", f"{rnd.uniform(-179, 179):.7f}",
                        "A place worth a visit, with a longer description to look like real data.",
                        f"cat{i % 11};tag{i % 5}", "09:00-17:00"])
    os.replace(path + ".tmp", path)
    return path


def median_of(runs):
    """Per column (wall, cpu, rss), the median over runs."""
    import statistics
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def measure(cmd, env=None):
    """Wall seconds, user+sys CPU seconds and peak RSS (MB) of one child process."""
    peak = PeakRSS(cmd)
    start = time.monotonic()
    proc = subprocess.Popen(peak.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"bench-jobs: {' '.join(cmd)} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, peak.megabytes()


PEER_IMPORT = r'''
import csv, sys, datetime, pymongo
from pymongo import UpdateOne
uri, db, path = sys.argv[1:4]
coll = pymongo.MongoClient(uri)[db].locations
coll.create_index([("importKey", 1)], unique=True)
now = datetime.datetime.now(datetime.timezone.utc)
ops = []
with open(path, newline="", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        lat, lon = float(row["lat"]), float(row["lon"])
        if not row["name"].strip() or not (-90 <= lat <= 90 and -180 <= lon <= 180):
            continue
        cats = sorted({c.strip() for c in row["tags"].replace("|", ";").split(";") if c.strip()})
        doc = {"importKey": row["id"], "name": row["name"].strip(), "placename": row["address"],
               "location": {"type": "Point", "coordinates": [lon, lat]}, "details": row["description"],
               "categories": cats, "extra": {"opening_hours": row["opening_hours"]},
               "source": {"file": "places.csv", "line": 0}}
        ops.append(UpdateOne({"importKey": row["id"]}, {"$set": {**doc, "updated_at": now},
                                                         "$setOnInsert": {"created_at": now}}, upsert=True))
        if len(ops) == 500:
            coll.bulk_write(ops, ordered=False); ops = []
if ops:
    coll.bulk_write(ops, ordered=False)
'''

PEER_EXPORT = r'''
import json, sys, pymongo
uri, db, out = sys.argv[1:4]
coll = pymongo.MongoClient(uri)[db].locations
with open(out, "w", encoding="utf-8") as f:
    f.write('{"type":"FeatureCollection","features":[')
    first = True
    for d in coll.find({}, batch_size=1000).sort("_id", 1):
        props = {k: d[k] for k in ("name", "placename", "details", "categories", "importKey", "imageId", "thumbnailId") if k in d}
        for k in ("created_at", "updated_at"):
            if k in d: props[k] = d[k].isoformat() + "Z"
        props.update(d.get("extra", {}))
        feat = {"type": "Feature", "id": str(d["_id"]), "geometry": d["location"], "properties": props}
        f.write(("" if first else ",") + "\n" + json.dumps(feat, ensure_ascii=False))
        first = False
    f.write("\n]}\n")
'''

# mongoexport --type=csv --fields … semantics (the tool is not installed here): the
# same columns as `poi export --format csv`, read from the same collection, csv module writing.
PEER_EXPORT_CSV = r'''
import csv, sys, pymongo
uri, db, out = sys.argv[1:4]
coll = pymongo.MongoClient(uri)[db].locations
fields = ["_id", "name", "lat", "lon", "placename", "details", "categories", "importKey", "imageId", "thumbnailId",
          "created_at", "updated_at", "opening_hours"]
with open(out, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(fields)
    for d in coll.find({}, batch_size=1000).sort("_id", 1):
        lon, lat = d["location"]["coordinates"][:2]
        stamp = lambda k: d[k].isoformat(timespec="milliseconds") + "Z" if k in d else ""
        w.writerow([str(d["_id"]), d.get("name", ""), repr(lat), repr(lon), d.get("placename", ""), d.get("details", ""),
                    ";".join(d.get("categories", [])), d.get("importKey", ""), d.get("imageId", ""), d.get("thumbnailId", ""),
                    stamp("created_at"), stamp("updated_at"), d.get("extra", {}).get("opening_hours", "")])
'''
CSV_FIELDS = "id,name,lat,lon,placename,details,categories,importKey,imageId,thumbnailId,created_at,updated_at,opening_hours"


def row(name, poi, peer, peer_name, metric, target=None):
    ratio = poi / peer if peer else float("nan")
    met = None if target is None else ratio <= target
    result = {"benchmark": name, "metric": metric, "poikit": round(poi, 3), "peer": peer_name,
              "peer_value": round(peer, 3), "ratio": round(ratio, 3),
              "target": None if target is None else f"<= {target}", "met": met}
    emit(name, poi, peer_name, peer, result["target"], unit=metric)
    return result


def main():
    csv_path = generate(ROWS)
    stamp = str(int(time.time()))
    results = []
    print(f"Jobs benchmark: {ROWS} CSV rows without images, median of {RUNS} runs, server {URI.split('@')[-1]}", flush=True)

    # Each run imports into fresh databases (a rerun would only find everything unchanged).
    imports, peer_imports, exports, peer_exports, dbs = [], [], [], [], []
    csv_fields, csv_auto, peer_csv = [], [], []
    for run in range(RUNS):
        db_poi, db_peer = f"bench_poi_{stamp}_{run}", f"bench_peer_{stamp}_{run}"
        dbs += [db_poi, db_peer]
        imports.append(measure([POI, "import", csv_path, "--uri", URI, "--db", db_poi, "--quiet",
                                "--rejects", os.path.join(BENCH, "r.csv")]))
        peer_imports.append(measure([PY, "-c", PEER_IMPORT, URI, db_peer, csv_path]))
        out_poi, out_peer = os.path.join(BENCH, "poi.geojson"), os.path.join(BENCH, "peer.geojson")
        exports.append(measure([POI, "export", "--uri", URI, "--db", db_poi, "-o", out_poi, "--quiet"]))
        peer_exports.append(measure([PY, "-c", PEER_EXPORT, URI, db_poi, out_peer]))
        csv_poi, csv_peer = os.path.join(BENCH, "poi.csv"), os.path.join(BENCH, "peer.csv")
        csv_fields.append(measure([POI, "export", "--uri", URI, "--db", db_poi, "-o", csv_poi, "--fields", CSV_FIELDS, "--quiet"]))
        csv_auto.append(measure([POI, "export", "--uri", URI, "--db", db_poi, "-o", csv_poi, "--quiet"]))
        peer_csv.append(measure([PY, "-c", PEER_EXPORT_CSV, URI, db_poi, csv_peer]))
        print(f"  run {run + 1}/{RUNS} done", flush=True)
    imp, peer_imp = median_of(imports), median_of(peer_imports)
    exp, peer_exp = median_of(exports), median_of(peer_exports)
    results.append(row(f"import {ROWS} rows: client CPU s", imp[1], peer_imp[1], "pymongo bulk upserts", "cpu"))
    results.append(row(f"import {ROWS} rows: wall s", imp[0], peer_imp[0], "pymongo bulk upserts", "wall"))
    results.append(row(f"import {ROWS} rows: peak RSS MB", imp[2], peer_imp[2], "pymongo bulk upserts", "rss"))
    results.append(row(f"export {ROWS} places: wall s", exp[0], peer_exp[0], "pymongo + json", "wall", 0.5))
    results.append(row(f"export {ROWS} places: client CPU s", exp[1], peer_exp[1], "pymongo + json", "cpu"))
    cf, ca, pc = median_of(csv_fields), median_of(csv_auto), median_of(peer_csv)
    results.append(row(f"export csv --fields {ROWS}: client CPU s", cf[1], pc[1], "pymongo + csv", "cpu", 0.5))
    results.append(row(f"export csv --fields {ROWS}: wall s", cf[0], pc[0], "pymongo + csv", "wall", 0.5))
    results.append(row(f"export csv (all columns) {ROWS}: client CPU s", ca[1], pc[1], "pymongo + csv", "cpu", 0.5))
    results.append(row(f"export csv (all columns) {ROWS}: wall s", ca[0], pc[0], "pymongo + csv", "wall", 1.0))
    # The full CSV export reads the collection once, as the GeoJSON export does: at most 1.2x it.
    results.append(row(f"export csv (all columns) {ROWS}: wall s vs geojson", ca[0], exp[0], "poi export geojson", "wall", 1.2))
    results.append(row(f"export csv (all columns) {ROWS}: CPU s vs geojson", ca[1], exp[1], "poi export geojson", "cpu", 1.2))
    # Memory flat with the number of places: the same export of a tenth of them, same server.
    small_csv, small_db = generate(ROWS // 10), f"bench_poi_{stamp}_small"
    dbs.append(small_db)
    measure([POI, "import", small_csv, "--uri", URI, "--db", small_db, "--quiet", "--rejects", os.path.join(BENCH, "r.csv")])
    small = measure([POI, "export", "--uri", URI, "--db", small_db, "-o", os.path.join(BENCH, "small.csv"), "--quiet"])
    results.append(row(f"export csv peak RSS MB, {ROWS} vs {ROWS // 10} places", ca[2], small[2],
                       f"same export of {ROWS // 10}", "rss", 1.2))

    dry_csv = generate(DRY_ROWS)
    dry = measure([POI, "import", dry_csv, "--dry-run", "--quiet", "--rejects", os.path.join(BENCH, "r.csv")])
    r = {"benchmark": f"import --dry-run {DRY_ROWS} rows: peak RSS MB", "metric": "rss", "poikit": round(dry[2], 1),
         "peer": "target 200 MB", "peer_value": 200, "ratio": round(dry[2] / 200, 3), "target": "<= 1.0", "met": dry[2] <= 200}
    emit(r["benchmark"], dry[2], "limit 200 MB", 200.0, "<= 1.0", unit="MB")
    results.append(r)

    subprocess.run([PY, "-c", "import pymongo,sys; c=pymongo.MongoClient(sys.argv[1]); [c.drop_database(d) for d in sys.argv[2:]]",
                    URI, *dbs], check=False)
    print(f"\n{'benchmark':<44} {'PoiKit':>9} {'peer':>9} {'ratio':>7}  peer / target")
    for x in results:
        verdict = "" if x["met"] is None else ("met" if x["met"] else "MISSED")
        print(f"{x['benchmark']:<44} {x['poikit']:>9} {x['peer_value']:>9} {x['ratio']:>7}  {x['peer']} {x['target'] or ''} {verdict}")
    print("\nNote: against SecantusDB the server dominates wall time (never benchmark the database through it);"
          " the client CPU rows are the fair comparison. The 1M-row memory check runs --dry-run: the whole"
          " pipeline but the writes, which would take hours through the stand-in server.")


if __name__ == "__main__":
    main()
