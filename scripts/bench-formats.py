#!/usr/bin/env python3
"""Formats benchmark: `poi check` vs Python csv / json.load, `poi convert` vs ogr2ogr,
`poi check` of the 10x CSV gzip'd
vs `gzip -dc` of the same file alone (zlib's own inflate: the floor), and peak RSS on a
10x larger input. Run through `make bench-formats` (scripts/bench-formats.sh).

Inputs are generated deterministically into .bench/ (git-ignored): N rows of CSV and the same
places as a GeoJSON FeatureCollection, plus 10x versions for the memory check.
"""
import csv, json, os, random, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_results import PeakRSS, emit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, ".bench")
POI = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
PY = sys.executable
N = int(os.environ.get("BENCH_ROWS", "100000"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))

WORDS = ["Café", "Museum", "Tower", "Bridge", "Park", "Garden", "Old", "New", "Grand", "Little",
         "故宫", "المسجد", "Straße", "Église", "Plaza", "Market", "Station", "🗽", "Hall", "Gate"]
TAGS = ["museum", "cafe", "park", "history", "art", "food", "landmark", "bridge", "church", "shop"]


def generate(n, csv_path, geojson_path):
    if os.path.exists(csv_path) and os.path.exists(geojson_path):
        return
    rng = random.Random(4)
    tmp_csv, tmp_geo = csv_path + ".tmp", geojson_path + ".tmp"
    with open(tmp_csv, "w", newline="", encoding="utf-8") as c, open(tmp_geo, "w", encoding="utf-8") as g:
        w = csv.writer(c)
        w.writerow(["id", "name", "address", "lat", "lon", "description", "tags", "photo", "opening_hours"])
        g.write('{"type":"FeatureCollection","features":[\n')
        for i in range(n):
            name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + f" {i}"
            lat = round(rng.uniform(-90, 90), 7)
            lon = round(rng.uniform(-180, 180), 7)
            pid = f"p-{i}" if i % 2 == 0 else ""          # half the rows derive importKey by hash
            addr = f"{rng.randint(1, 999)} {rng.choice(WORDS)} Street, City {i % 1000}"
            desc = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            if i % 50 == 0:
                desc += ',\n"quoted" second line'
            tags = ";".join(rng.sample(TAGS, rng.randint(0, 3)))
            photo = f"images/{i}.jpg" if i % 3 == 0 else ""
            hours = "09:00-17:00" if i % 4 else ""
            w.writerow([pid, name, addr, f"{lat}", f"{lon}", desc, tags, photo, hours])
            props = {"name": name, "address": addr, "description": desc,
                     "categories": [t for t in tags.split(";") if t], "opening_hours": hours}
            if photo:
                props["image"] = photo
            feat = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]}, "properties": props}
            if pid:
                feat["id"] = pid
            g.write(("," if i else "") + json.dumps(feat, ensure_ascii=False) + "\n")
        g.write("]}\n")
    os.replace(tmp_csv, csv_path)
    os.replace(tmp_geo, geojson_path)


KEYED_ROWS = 253_678
KEYED_TASK = f"check CSV without id / by id, {KEYED_ROWS}"


def generate_keyed(n, with_id, path):
    """`poi check`'s key rule with and without an id column: the same n places, written once
    with an `id` column and once without (keys then derived from name and coordinates). Every
    200th row is an exact copy of an earlier one and every 1,000th another record at an earlier
    one's name and coordinates (and id), so both files have the same duplicates to find."""
    if os.path.exists(path):
        return
    rng = random.Random(44)
    rows = []
    for i in range(n):
        if i and i % 1000 == 0:
            j = rng.randrange(i)
            rows.append(rows[j][:4] + [f"another record of row {j}"] + rows[j][5:])
            continue
        if i and i % 200 == 0:
            rows.append(list(rows[rng.randrange(i)]))
            continue
        name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) + f" {i}"
        rows.append([f"p-{i}", name, f"{rng.uniform(-90, 90):.7f}", f"{rng.uniform(-180, 180):.7f}",
                     f"{rng.randint(1, 999)} Main Street", ";".join(rng.sample(TAGS, rng.randint(0, 3)))])
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        header = ["id", "name", "lat", "lon", "address", "tags"]
        w.writerow(header if with_id else header[1:])
        for r in rows:
            w.writerow(r if with_id else r[1:])
    os.replace(path + ".tmp", path)


def run(cmd, prepare=None, repeat=None):
    """Median-of-REPEAT wall seconds, peak RSS in MB and median CPU seconds (user+sys) of `cmd`.
    CPU time is printed too because wall time is noisy when other work shares the machine."""
    walls, cpus, rss = [], [], 0.0
    for _ in range(repeat or REPEAT):
        if prepare:
            prepare()
        peak = PeakRSS(cmd)
        t0 = time.perf_counter()
        p = subprocess.Popen(peak.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            sys.exit(f"failed ({code}): {' '.join(cmd)}")
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss = max(rss, peak.megabytes())
    return statistics.median(walls), rss, statistics.median(cpus)


def run_pair(ours, peer, prepare_peer=None, prepare_ours=None):
    """Both commands, alternating run by run, so a slow spell on the machine (another VM, a
    background job) hits both sides alike instead of one side's whole series."""
    a, b = [], []
    for _ in range(REPEAT):
        a.append(run(ours, prepare=prepare_ours, repeat=1))
        b.append(run(peer, prepare=prepare_peer, repeat=1))

    def summary(rs):
        return (statistics.median(r[0] for r in rs), max(r[1] for r in rs), statistics.median(r[2] for r in rs))
    return summary(a), summary(b)


def csvswift_baseline():
    """Builds scripts/bench-formats.csvswift (CSV.swift reading the same file) once; None when
    swift or the package cannot be built (the row is then left out)."""
    exe = os.path.join(BENCH, "csvswift-build", "release", "csvswift-count")
    if not os.access(exe, os.X_OK):
        r = subprocess.run(["swift", "build", "-c", "release", "--package-path",
                            os.path.join(ROOT, "scripts", "bench-formats.csvswift"),
                            "--scratch-path", os.path.join(BENCH, "csvswift-build")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            print("note: CSV.swift baseline did not build; row skipped")
            return None
    return exe


def main():
    if not os.access(POI, os.X_OK):
        sys.exit(f"{POI} not found: build it first (make build)")
    os.makedirs(BENCH, exist_ok=True)
    csv_s, geo_s = os.path.join(BENCH, f"places-{N}.csv"), os.path.join(BENCH, f"places-{N}.geojson")
    csv_l, geo_l = os.path.join(BENCH, f"places-{N * 10}.csv"), os.path.join(BENCH, f"places-{N * 10}.geojson")
    generate(N, csv_s, geo_s)
    generate(N * 10, csv_l, geo_l)

    py_csv = [PY, "-c", "import csv,sys\nn=0\nfor r in csv.reader(open(sys.argv[1],newline='',encoding='utf-8')): n+=1", csv_s]
    py_json = [PY, "-c", "import json,sys\nd=json.load(open(sys.argv[1],encoding='utf-8'))\nn=len(d['features'])", geo_s]
    rows = []

    def row(task, ours, peer, peer_name, target):
        t1, m1, c1 = ours
        if peer is None:
            rows.append((task, t1, m1, c1, peer_name, None, None, None, None, None, target))
            return
        t2, m2, c2 = peer
        rows.append((task, t1, m1, c1, peer_name, t2, m2, c2, t1 / t2, c1 / c2, target))

    ours_csv, py = run_pair([POI, "check", csv_s], py_csv)
    row("check CSV", ours_csv, py, "python csv", "<= 0.33")
    csvswift = csvswift_baseline()
    if csvswift:
        row("check CSV", ours_csv, run([csvswift, csv_s]), "CSV.swift (read)", "<= 1.0")
    row("check GeoJSON", *run_pair([POI, "check", geo_s], py_json), "python json.load", "<= 0.33")
    # A gzip'd dump costs about what zlib needs to inflate it (inflating runs on a
    # thread of its own beside parsing). The big CSV, gzip'd once by gzip itself (default level).
    # GNU gzip inflates with its own code, not zlib's, and writes what it inflates (to /dev/null):
    # the floor a user compares with; poi's inflate thread is zlib's. Measured on 2 cores
    # when gzip'd dumps were added: poi 0.73 s wall / 1.25 s CPU, gzip -dc 0.89 s: 0.83x wall.
    # The key rule without an id column (name + coordinates, hashed) costs at most 1.5x the same
    # check keyed by the id column: same places, same duplicates.
    keyed_id, keyed_derived = (os.path.join(BENCH, f"keyed-{KEYED_ROWS}-{kind}.csv") for kind in ("id", "no-id"))
    generate_keyed(KEYED_ROWS, True, keyed_id)
    generate_keyed(KEYED_ROWS, False, keyed_derived)
    row(KEYED_TASK, *run_pair([POI, "check", keyed_derived], [POI, "check", keyed_id]), "same, keyed by id", "<= 1.5")
    gz_l = csv_l + ".gz"
    if not os.path.exists(gz_l) or os.path.getmtime(gz_l) < os.path.getmtime(csv_l):
        with open(gz_l + ".tmp", "wb") as f:
            subprocess.run(["gzip", "-c", "-n", csv_l], stdout=f, check=True)
        os.replace(gz_l + ".tmp", gz_l)
    row(f"check CSV.gz {N * 10 // 1000}k", *run_pair([POI, "check", gz_l], ["gzip", "-dc", gz_l]), "gzip -dc (floor)", "<= 1.2")
    out = os.path.join(BENCH, "out.geojson")
    ogr = shutil.which("ogr2ogr")
    ours_conv_cmd = [POI, "convert", csv_s, "-o", out, "--quiet"]
    if ogr:
        ogr_out = os.path.join(BENCH, "ogr.geojson")
        # ogr2ogr refuses to overwrite: fresh output per run, for both. Replacing a 40 MB file
        # costs poi ~10 ms more (the old file's pages are dropped when the new one is renamed
        # over it), a cost ogr2ogr never pays here.
        def clean(path):
            return lambda: os.path.exists(path) and os.remove(path)
        ours_conv, peer = run_pair(ours_conv_cmd, [ogr, "-f", "GeoJSON", "-lco", "RFC7946=YES", "-oo", "X_POSSIBLE_NAMES=lon",
                                                    "-oo", "Y_POSSIBLE_NAMES=lat", ogr_out, csv_s],
                                   prepare_peer=clean(ogr_out), prepare_ours=clean(out))
        row("convert CSV->GeoJSON", ours_conv, peer, "ogr2ogr RFC7946", "<= 0.2")
    else:
        row("convert CSV->GeoJSON", run(ours_conv_cmd), None, "ogr2ogr (SKIPPED: gdal-bin not installed)", "")

    small_csv, large_csv = run([POI, "check", csv_s]), run([POI, "check", csv_l], repeat=1)
    small_geo, large_geo = run([POI, "check", geo_s]), run([POI, "check", geo_l], repeat=1)
    conv_large = run([POI, "convert", geo_l, "-o", out, "--quiet"], repeat=1)

    print(f"\nFormats benchmark: {N} places, median of {REPEAT} runs alternating with the peer's; wall s, CPU s (user+sys), peak RSS MB")
    print(f"{'task':<21} {'poi s':>6} {'cpu':>6} {'MB':>6}  {'peer':<17} {'peer s':>6} {'cpu':>6} {'MB':>6}"
          f"  {'wall x':>6} {'cpu x':>6}  target")
    for task, t1, m1, c1, peer, t2, m2, c2, ratio, cratio, target in rows:
        if t2 is None:
            print(f"{task:<21} {t1:6.3f} {c1:6.3f} {m1:6.1f}  {peer}")
        else:
            ok = "ok" if ratio <= float(target.split()[-1]) else "MISSED"
            print(f"{task:<21} {t1:6.3f} {c1:6.3f} {m1:6.1f}  {peer:<17} {t2:6.3f} {c2:6.3f} {m2:6.1f}"
                  f"  {ratio:6.2f} {cratio:6.2f}  wall {target} {ok}")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) * 0.5:
        print(f"(load average {load:.1f} on {os.cpu_count()} cores during the run: wall times are inflated)")
    print(f"\nMemory: 10x larger input ({N * 10} places) must raise peak RSS by < 20 MB")
    for name, s, l in [("check CSV", small_csv, large_csv), ("check GeoJSON", small_geo, large_geo)]:
        d = l[1] - s[1]
        print(f"  {name:<16} {s[1]:6.1f} MB -> {l[1]:6.1f} MB  (+{d:.1f} MB) {'ok' if d < 20 else 'MISSED'}"
              f"   time {s[0]:.3f}s -> {l[0]:.3f}s")
    print(f"  convert GeoJSON {N * 10}: {conv_large[0]:.3f}s, {conv_large[1]:.1f} MB")

    for task, t1, m1, c1, peer, t2, m2, c2, ratio, cratio, target in rows:
        if task == KEYED_TASK:
            # Its own row count, not N; and CPU seconds beside wall: the ratio of two runs of poi
            # alike, which a machine shared with other builds distorts less in CPU than in wall time.
            emit(f"{task} rows: wall s", t1, peer, t2, target)
            emit(f"{task} rows: CPU s", c1, peer, c2, target)
        elif t2 is not None:
            emit(f"{task} {N} rows: wall s", t1, peer, t2, target)
    for name, s, l in [("check CSV", small_csv, large_csv), ("check GeoJSON", small_geo, large_geo)]:
        emit(f"{name}: RSS growth on 10x input, MB", l[1] - s[1], "limit 20 MB", 20.0, "<= 1.0", unit="MB")


if __name__ == "__main__":
    main()
