#!/usr/bin/env python3
"""make crash-test: kill -9 `poi import` and `poi thumbnails --all` at seeded random moments,
rerun after each kill, then check that nothing was lost, duplicated or left dangling.

    ROWS=20000 KILLS=10 SEED=... IMAGES=300 make crash-test      # full
    ROWS=2000 KILLS=4 make crash-test                            # short (CI)

Runs the release binary (POI=... to override) against a SecantusDB server of its own (or
MONGODB_URI when set, with a database of its own). Generated data lives in .data/crash/.
Ends with `crash-test: N passed, M failed`; exit status 1 when anything failed.
"""
import hashlib
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = os.path.join(ROOT, ".venv/bin/python")


class Checks:
    """Counts PASS/FAIL lines and prints the summary the Makefile target ends with."""

    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, ok, label, detail=""):
        if ok:
            self.passed += 1
            print(f"  PASS {label}")
        else:
            self.failed += 1
            print(f"  FAIL {label}{': ' + str(detail) if detail != '' else ''}")
        sys.stdout.flush()
        return ok

    def skip(self, label, reason):
        print(f"  SKIPPED {label}: {reason}")

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


class Server:
    """A SecantusDB server of our own on a free port, stoppable and restartable (same data)."""

    def __init__(self, data_dir, replica_set=False, test_commands=False, tls=None, ping_uri=None):
        # replica_set: the primary of the one-member set `secantus` (retryable writes, elections'
        # error codes); test_commands: the `failCommand` fail point the drivers' tests use;
        # tls: (certificate, key) files it serves TLS with; ping_uri: how start() knows it is up
        # (with TLS and users, a plain ping would not do).
        self.topology = [] if replica_set else ["--standalone"]
        self.topology += ["--enable-test-commands"] if test_commands else []
        if tls:
            self.topology += ["--tls-cert-file", tls[0], "--tls-key-file", tls[1]]
        self.ping_uri = ping_uri
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        self.config = os.path.join(data_dir, "empty.toml")
        open(self.config, "w").close()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.uri = f"mongodb://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, extra=()):
        log = open(os.path.join(self.data_dir, "server.log"), "ab")
        self.proc = subprocess.Popen(
            [os.path.join(ROOT, ".venv/bin/secantusd-py"), "--host", "127.0.0.1", "--port", str(self.port),
             "--storage-path", os.path.join(self.data_dir, "db"), "--config", self.config] + self.topology + list(extra),
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        import pymongo
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                pymongo.MongoClient(self.ping_uri or self.uri, serverSelectionTimeoutMS=300).admin.command("ping")
                return
            except Exception:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
        raise SystemExit(f"SecantusDB did not start on {self.uri}; see {self.data_dir}/server.log")

    def stop(self, hard=False):
        """Stops the server we started (by its pid only)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def poi_binary():
    return os.environ.get("POI") or os.path.join(ROOT, ".build/release/poi")


def run_poi(args, timeout=600, **kw):
    p = subprocess.run([poi_binary()] + args, capture_output=True, text=True, timeout=timeout, **kw)
    return p.returncode, p.stdout, p.stderr


def make_images(folder, count, rng):
    """`count` distinct small photos (JPEG and some PNG), each different content (sha256)."""
    from PIL import Image, ImageDraw
    os.makedirs(folder, exist_ok=True)
    names = []
    for i in range(count):
        w, h = rng.randint(80, 420), rng.randint(80, 420)
        img = Image.new("RGB", (w, h), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        d = ImageDraw.Draw(img)
        for _ in range(6):
            x0, y0 = rng.randrange(w), rng.randrange(h)
            d.rectangle([x0, y0, x0 + rng.randint(5, 60), y0 + rng.randint(5, 60)],
                        fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        d.text((5, 5), f"img {i}", fill=(255, 255, 255))
        name = f"img{i:04d}.png" if i % 7 == 0 else f"img{i:04d}.jpg"
        img.save(os.path.join(folder, name), quality=85) if name.endswith(".jpg") else img.save(os.path.join(folder, name))
        names.append(name)
    return names


def insert_places(db, n, name="Place", key="place"):
    """n image-less places written directly with pymongo, in PoiKit's layout: a poi import of
    that many would take the suites half a minute."""
    import datetime
    now = datetime.datetime.now(datetime.timezone.utc)
    docs = [{"name": f"{name} {i}", "placename": "", "details": "x" * 200, "categories": ["a", "b"],
             "location": {"type": "Point", "coordinates": [(i % 360) - 180 + 0.5, (i % 170) - 85 + 0.5]},
             "importKey": f"{key}-{i}", "created_at": now, "updated_at": now} for i in range(n)]
    for i in range(0, n, 5000):
        db.locations.insert_many(docs[i:i + 5000])


def make_csv(path, rows, images, rng):
    """CSV with `rows` records: about 1.5% invalid (no name, latitude out of range, bad number),
    about 1% valid rows naming an image that does not exist (imported without an image).
    Returns (valid rows, valid rows that must end with an image)."""
    valid = with_image = 0
    with open(path, "w", newline="") as f:
        f.write("id,name,lat,lon,description,tags,photo\n")
        for i in range(rows):
            name, lat, lon = f"Place {i}", f"{rng.uniform(-80, 80):.6f}", f"{rng.uniform(-179, 179):.6f}"
            photo = images[rng.randrange(len(images))] if rng.random() < 0.6 else ""
            r = rng.random()
            bad = True
            if r < 0.005:
                name = ""
            elif r < 0.010:
                lat = "95.5"
            elif r < 0.015:
                lon = "east"
            else:
                bad = False
            if not bad and photo and rng.random() < 0.01:
                photo = "missing/nothing-here.jpg"
            if not bad:
                valid += 1
                if photo and not photo.startswith("missing/"):
                    with_image += 1
            tags = ";".join(rng.sample(["museum", "park", "cafe", "bridge", "church", "shop"], rng.randint(0, 3)))
            f.write(f"crash-{i},{name},{lat},{lon},\"Row {i}, generated\",{tags},{photo}\n")
    return valid, with_image


def killed_runs(label, argv, kills, rng, estimate, checks):
    """Runs argv `kills` times, each killed with SIGKILL after a random delay in
    [0.05, 1.0] × estimate seconds (adapted to how long runs really take)."""
    landed = 0
    for k in range(kills):
        delay = rng.uniform(0.05, 1.0) * estimate
        started = time.time()
        p = subprocess.Popen([poi_binary()] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(delay)
            took = time.time() - started
            print(f"  {label} kill {k + 1}/{kills}: finished (exit {p.returncode}) in {took:.1f}s before the kill at {delay:.1f}s")
            estimate = max(0.5, took)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            landed += 1
            print(f"  {label} kill {k + 1}/{kills}: kill -9 after {delay:.2f}s")
    return landed


def verify_store(db, uploads, thumb_spec=None, max_side=None):
    """Every imageId/thumbnailId resolves to a files document whose bytes exist, match its
    length and sha256, and decode. Returns a list of problems (empty when all is well)."""
    from bson import ObjectId
    from PIL import Image
    problems, seen = [], {}

    def check_file(hex_id, role, original=None):
        if hex_id in seen:
            return seen[hex_id]
        f = db.files.find_one({"_id": ObjectId(hex_id)})
        err = None
        if f is None:
            err = "no files document"
        elif f.get("role") != role:
            err = f"role {f.get('role')} != {role}"
        elif original and str(f.get("thumbnailOf")) != original:
            err = f"thumbnailOf {f.get('thumbnailOf')} != {original}"
        elif thumb_spec and role == "thumbnail" and not str(f.get("spec", "")).startswith(thumb_spec):
            err = f"spec {f.get('spec')} is not {thumb_spec}"
        else:
            path = os.path.join(uploads, hex_id + f["ext"])
            try:
                data = open(path, "rb").read()
            except OSError as e:
                err = f"bytes missing: {e}"
            else:
                if len(data) != f.get("length") or hashlib.sha256(data).hexdigest() != f.get("sha256"):
                    err = "length/sha256 differ from the files document"
                else:
                    try:
                        im = Image.open(io.BytesIO(data))
                        im.load()
                        if max_side and role == "thumbnail" and max(im.size) > max_side:
                            err = f"thumbnail {im.size} larger than {max_side}"
                    except Exception as e:
                        err = f"does not decode: {e}"
        seen[hex_id] = err
        return err

    for p in db.locations.find({}, {"imageId": 1, "thumbnailId": 1, "importKey": 1}):
        if "imageId" in p:
            e = check_file(p["imageId"], "original")
            if e:
                problems.append(f"{p['importKey']}: imageId {p['imageId']}: {e}")
            if "thumbnailId" not in p:
                problems.append(f"{p['importKey']}: imageId without thumbnailId")
            else:
                e = check_file(p["thumbnailId"], "thumbnail", original=p["imageId"])
                if e:
                    problems.append(f"{p['importKey']}: thumbnailId {p['thumbnailId']}: {e}")
        elif "thumbnailId" in p:
            problems.append(f"{p['importKey']}: thumbnailId without imageId")
    return problems


def gc_phase(label, common, checks):
    """gc may only find what an interrupted write leaves (bytes without a document, temporary
    files); gc --delete removes it; a second gc finds nothing."""
    allowed = {"bytesWithoutDocument", "staleTemporaryFiles"}
    code, out, err = run_poi(["gc", "--json"] + common)
    try:
        report = json.loads(out)
    except ValueError:
        checks.check(False, f"{label}: poi gc --json prints a report", f"exit {code}: {out} {err}")
        return
    found = {k: v for k, v in report.items() if isinstance(v, list) and v and k != "kept"}
    print(f"  {label}: gc dry run found {dict((k, len(v)) for k, v in found.items())} (exit {code})")
    checks.check(set(found) <= allowed, f"{label}: gc finds only leftovers of interrupted writes",
                 {k: v[:5] for k, v in found.items() if k not in allowed})
    checks.check(code == (1 if found else 0), f"{label}: gc dry-run exit status is {1 if found else 0}", code)
    # Bytes under a final name must be whole even when no document points at them: they are
    # written to a temp name, fsynced and renamed, so a kill can only leave temp files or
    # complete images. A partial image here means a write went straight to its final name.
    from PIL import Image
    uploads = common[common.index("--uploads") + 1] if "--uploads" in common else None
    partial = []
    for name in report.get("bytesWithoutDocument", []) if uploads else []:
        try:
            with Image.open(os.path.join(uploads, name)) as im:
                im.load()
        except Exception as e:  # noqa: BLE001 - any failure to decode is the finding
            partial.append(f"{name}: {e}")
    checks.check(not partial, f"{label}: stray bytes under final names are complete images", partial[:5])
    if found:
        # --min-age 0: nothing else runs now, and the leftovers are seconds old.
        code, out, err = run_poi(["gc", "--delete", "--min-age", "0", "--json"] + common)
        checks.check(code == 0, f"{label}: gc --delete removes them", f"exit {code}: {out} {err}")
    code, out, err = run_poi(["gc"] + common)
    checks.check(code == 0 and "consistent" in out, f"{label}: gc afterwards finds nothing", f"exit {code}: {out} {err}")


def main():
    rows = int(os.environ.get("ROWS", "20000"))
    kills = int(os.environ.get("KILLS", "10"))
    images_n = int(os.environ.get("IMAGES", str(max(20, min(300, rows // 60)))))
    seed = int(os.environ.get("SEED") or random.SystemRandom().randrange(1, 2**31))
    print(f"crash-test: ROWS={rows} KILLS={kills} IMAGES={images_n} SEED={seed} (rerun with SEED={seed} to repeat)")
    rng = random.Random(seed)
    checks = Checks("crash-test")
    if not os.access(poi_binary(), os.X_OK):
        print(f"crash-test: no poi binary at {poi_binary()} (make build)")
        return 2

    work = os.path.join(ROOT, ".data/crash")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.time()
    names = make_images(os.path.join(work, "images"), images_n, rng)
    csv_path = os.path.join(work, "places.csv")
    valid, with_image = make_csv(csv_path, rows, names, rng)
    print(f"  generated {rows} rows ({valid} valid, {with_image} with an image) and {images_n} images in {time.time() - t0:.1f}s")

    server = None
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        server = Server(os.path.join(work, "server"))
        server.start()
        uri = server.uri
    dbname = f"poikit_crash_{seed}"
    import pymongo
    client = pymongo.MongoClient(uri)
    client.drop_database(dbname)
    db = client[dbname]
    uploads = os.path.join(work, "uploads")
    common = ["--uri", uri, "--db", dbname, "--uploads", uploads]
    try:
        # Phase 1: import, killed K times, then one full run.
        imp = ["import", csv_path, "--images-dir", os.path.join(work, "images"), "--quiet", "--jobs", "4"] + common
        estimate = max(2.0, rows / 600.0)  # SecantusDB: ~600 rows/s with images; adapted after a run finishes
        t1 = time.time()
        landed = killed_runs("import", imp, kills, rng, estimate, checks)
        code, out, err = run_poi(imp + ["--json"])
        print(f"  import: {landed} kills landed; final run exit {code} in {time.time() - t1:.1f}s total")
        summary = json.loads(out) if out.strip().startswith("{") else {}
        checks.check(code == 1 and summary.get("rowsRead") == rows and summary.get("rejected") == rows - valid,
                     "import: final run reads every row and rejects exactly the bad ones",
                     f"exit {code}, rowsRead {summary.get('rowsRead')}, rejected {summary.get('rejected')}; {err[-500:]}")
        n = db.locations.count_documents({})
        checks.check(n == valid, f"import: place count == valid rows ({valid})", n)
        dups = list(db.locations.aggregate([{"$group": {"_id": "$importKey", "n": {"$sum": 1}}}, {"$match": {"n": {"$gt": 1}}}]))
        checks.check(not dups, "import: no duplicate importKey", dups[:5])
        n_img = db.locations.count_documents({"imageId": {"$exists": True}})
        checks.check(n_img == with_image, f"import: places with an image == rows naming an existing image ({with_image})", n_img)
        problems = verify_store(db, uploads)
        checks.check(not problems, "import: every imageId/thumbnailId resolves to a files document whose bytes match and decode",
                     problems[:5])
        originals = db.files.count_documents({"role": "original"})
        checks.check(originals == len(set(f.get("sha256") for f in db.files.find({"role": "original"}, {"sha256": 1}))),
                     "import: each photo stored once (distinct sha256 among originals)", originals)
        gc_phase("import", common, checks)

        # Phase 2: thumbnails --all with a new recipe, killed K times, then a final run.
        th = ["thumbnails", "--size", "96x96", "--quiet", "--jobs", "4"] + common
        t2 = time.time()
        landed = killed_runs("thumbnails", th + ["--all"], kills, rng, max(1.0, images_n / 40.0), checks)
        code, out, err = run_poi(th + ["--json"])
        print(f"  thumbnails: {landed} kills landed; final run exit {code} in {time.time() - t2:.1f}s total")
        checks.check(code == 0, "thumbnails: final run completes", f"exit {code}: {err[-500:]}")
        problems = verify_store(db, uploads, thumb_spec="96x96", max_side=96)
        checks.check(not problems, "thumbnails: every place shows a 96x96 thumbnail of its own image that decodes", problems[:5])
        per_original = list(db.files.aggregate([{"$match": {"role": "thumbnail"}},
                                                {"$group": {"_id": "$thumbnailOf", "n": {"$sum": 1}}},
                                                {"$match": {"n": {"$gt": 1}}}]))
        checks.check(not per_original, "thumbnails: one thumbnail per original (old ones deleted)", per_original[:5])
        checks.check(db.locations.count_documents({}) == valid, "thumbnails: place count unchanged")
        gc_phase("thumbnails", common, checks)
    finally:
        try:
            client.drop_database(dbname)
        except Exception:
            pass
        if server:
            server.stop()
    print(f"  total {time.time() - t0:.1f}s")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
