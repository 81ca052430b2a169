#!/usr/bin/env python3
"""overlap-test: two or three cron runs of `poi` on the same database at the same time.

Cron does not know whether last hour's run is still going, so every job must tolerate a twin
(or a neighbour) working on the same database and the same file store. For each pair below,
and for two and three runs (the jobs alternate: A, B, A), a fresh database is filled, the runs
are started together, and once they are done the store is checked with pymongo:

    thumbnails x thumbnails   thumbnails --all --size 128x128, twice or three times
    thumbnails x import       thumbnails --size 128x128 beside an import of new places that
                              reuse stored photos (and bring new ones)
    gc --delete x import      gc --delete (cron's default --min-age) beside an import whose
                              photos match originals no place shows any more (gc garbage
                              two hours old, which the import must be able to link safely);
                              one gc starts as the import stores its first photo, not with it
    export x export           export -o the same file --with-images the same folder
    import x import           the same dump imported twice into an empty database

After each case: every run ended (none over TIMEOUT s) with an acceptable status; no place
links an imageId/thumbnailId whose files document or bytes are missing; no files document
or stored bytes nobody uses; each photo stored once (sha256) with exactly one thumbnail of it;
the exact place count; exports are GeoJSON with the exact number of features; and
`poi gc --verify --json` lists nothing. Every case runs with the uploads folder and with GridFS.

    .venv/bin/python scripts/overlap-test.py            # POI=... picks the binary
    CASES=import ... scripts/overlap-test.py            # only cases whose name contains a word
    VERBOSE=1 KEEP_DB=1 ...                             # each run's time and summary; keep the databases

Over 500 lines: the five job pairs share one harness (a fresh database per case, runs started
together, one consistency check of places, files and bytes afterwards).

Uses its own SecantusDB server (or MONGODB_URI, with databases of its own, dropped after).
Data and each run's output stay in .data/overlap/ (WORK=... elsewhere) for a look afterwards.
Prints `PASS name` or `FAIL name: reason` per case; exit status 1 when anything failed.
"""
import datetime
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # loading crash-test.py must not leave scripts/__pycache__/
_spec = importlib.util.spec_from_file_location("crash_test", os.path.join(ROOT, "scripts/crash-test.py"))
ct = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ct)

TIMEOUT = 120.0          # no run may take longer: a hang (a lock never released) is a failure
THUMB_SPEC = "128x128"   # another recipe than the import's default 256x256, so thumbnails has work
BASE_IMAGES = 40         # distinct photos of the base dump, each shown by PLACES_PER_IMAGE places
PLACES_PER_IMAGE = 3
NEW_IMAGES = 30          # photos the second import brings that the database has never seen
EXPORT_EXTRA = 8000      # image-less places, so that an export takes a second, not milliseconds
# gc garbage (an original and its thumbnail each) the concurrent import reuses by content, and
# garbage nobody reuses, which gc must delete. 2 x (3 + 2) files: within what gc --delete removes
# without --max-delete (10 % of the store, at least 10).
GC_REUSED = 3
GC_GARBAGE = 2


def poi_binary():
    """POI, else the release build (as the other suites)."""
    return os.environ.get("POI") or ct.poi_binary()


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Data: photos derived from Samples/images, and dumps naming them.


def make_images(folder, count):
    """`count` photos of distinct content made from the bundled samples (a small coloured square
    at a different spot in each, saved in the sample's own format): the store dedupes by sha256,
    so the ten samples alone would give ten originals and runs too short to overlap."""
    from PIL import Image, ImageDraw
    src = os.path.join(ROOT, "Samples/images")
    bases = []
    for name in sorted(os.listdir(src)):
        if name == "truncated.jpg":  # deliberately corrupt: it would make imports exit 1
            continue
        with Image.open(os.path.join(src, name)) as im:
            im.load()
            bases.append((name, im.copy()))
    os.makedirs(folder, exist_ok=True)
    names = []
    for i in range(count):
        name, im = bases[i % len(bases)]
        v = im.copy()
        x, y = (i * 37) % max(1, v.width - 8), (i * 53) % max(1, v.height - 8)
        colour = {"RGB": (i % 256, i * 7 % 256, i * 13 % 256), "RGBA": (i % 256, i * 7 % 256, i * 13 % 256, 255),
                  "L": i % 256}.get(v.mode, i % 64)
        ImageDraw.Draw(v).rectangle([x, y, x + 6, y + 6], fill=colour)
        stem, ext = os.path.splitext(name)
        out = f"{stem}-{i:03d}{ext}"
        if ext == ".jpg":
            v.save(os.path.join(folder, out), quality=85)
        else:
            v.save(os.path.join(folder, out), compress_level=1)
        names.append(out)
    return names


def write_csv(path, rows):
    """rows: (key, image file name or ''); coordinates and names follow from the key's position."""
    with open(path, "w") as f:
        f.write("id,name,lat,lon,tags,photo\n")
        for i, (key, image) in enumerate(rows):
            f.write(f"{key},Place {key},{(i % 160) - 80 + 0.5:.4f},{(i % 350) - 175 + 0.25:.4f},t{i % 5},{image}\n")


def oid_aged(seconds):
    """A fresh ObjectId whose timestamp lies `seconds` in the past: gc judges age by the id."""
    from bson import ObjectId
    return ObjectId(int(time.time() - seconds).to_bytes(4, "big") + os.urandom(8))


def plant_garbage(db, mode, uploads, image_path):
    """An original no place shows, with its 256x256 thumbnail, both two hours old, as the app's
    deletion of a place leaves them: what a cron `gc --delete` is there to remove. Written as
    PoiKit writes them (files document after the bytes; GridFS file id = document id)."""
    import io
    from PIL import Image
    data = open(image_path, "rb").read()
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        fmt, size = im.format, im.size
        alpha = im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info)
        thumb = im.convert("RGBA" if alpha else "RGB")
        thumb.thumbnail((256, 256))
    buf = io.BytesIO()
    if thumb.mode == "RGBA":
        thumb.save(buf, "PNG")
        tctype, text = "image/png", ".png"
    else:
        thumb.save(buf, "JPEG", quality=85)
        tctype, text = "image/jpeg", ".jpeg"
    tdata = buf.getvalue()
    ctype, ext = ("image/png", ".png") if fmt == "PNG" else ("image/jpeg", ".jpeg")
    created = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)
    oid, tid = oid_aged(7200), oid_aged(7200)
    docs = [(oid, data, ext, {"content-type": ctype, "role": "original", "width": size[0], "height": size[1],
                              "originalName": os.path.basename(image_path)}),
            (tid, tdata, text, {"content-type": tctype, "role": "thumbnail", "width": thumb.width,
                                "height": thumb.height, "thumbnailOf": oid, "spec": "256x256 inside auto q85"})]
    for _id, blob, e, fields in docs:
        if mode == "gridfs":
            import gridfs
            gridfs.GridFSBucket(db, chunk_size_bytes=255 * 1024).upload_from_stream_with_id(_id, str(_id) + e, blob)
        else:
            with open(os.path.join(uploads, str(_id) + e), "wb") as f:
                f.write(blob)
        db.files.insert_one({"_id": _id, "content-type": fields.pop("content-type"), "ext": e, "created_at": created,
                             "length": len(blob), "sha256": hashlib.sha256(blob).hexdigest(), **fields})
    return str(oid), str(tid)


# ---------------------------------------------------------------------------------------------
# Runs


class Run:
    """One poi process of a case; its output goes to files (pipes could fill and block it)."""

    def __init__(self, folder, index, argv, start_when=None):
        self.argv = [poi_binary()] + argv
        self.start_when = start_when  # None: at once; else a predicate polled until it holds
        self.out_path = os.path.join(folder, f"run{index}.out")
        self.err_path = os.path.join(folder, f"run{index}.err")
        self.code = self.started = self.ended = None
        self.proc = None

    def start(self):
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.started = time.time()
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    @property
    def out(self):
        return open(self.out_path).read()

    @property
    def err(self):
        return open(self.err_path).read()

    def summary(self):
        try:
            return json.loads(self.out)
        except ValueError:
            return {}

    def seconds(self):
        return (self.ended or time.time()) - self.started


def run_together(ctx, runs):
    """Starts every run at once and waits; returns the problems (hangs). A run past TIMEOUT is
    killed (by its own pid) so that one hang does not stop the whole suite."""
    ctx["runs"] = runs
    for r in runs:
        if r.start_when is None:
            r.start()
    problems = []
    while any(r.ended is None for r in runs):
        for r in runs:
            if r.proc is None:
                # Started late all the same once the others are done: the overlap check says so.
                if r.start_when() or all(o.ended for o in runs if o.proc):
                    r.start()
            elif r.ended is None and r.proc.poll() is not None:
                r.ended, r.code = time.time(), r.proc.returncode
            elif r.ended is None and r.seconds() > TIMEOUT:
                r.proc.kill()
                r.proc.wait()
                r.ended, r.code = time.time(), None
                problems.append(f"{' '.join(r.argv[1:3])} still running after {TIMEOUT:.0f}s (killed)")
        time.sleep(0.02)
    # A run that overlapped no other tested nothing: say so rather than pass.
    alone = [i for i, r in enumerate(runs)
             if not any(o is not r and o.started < r.ended and r.started < o.ended for o in runs)]
    if alone:
        problems.append(f"run(s) {alone} overlapped no other: " +
                        ", ".join(f"+{r.started - min(o.started for o in runs):.2f}s for {r.seconds():.2f}s" for r in runs))
    return problems


def poi(argv):
    p = subprocess.run([poi_binary()] + argv, capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------------
# Checks (each returns a list of problems, empty when all is well)


def store_state(db, mode, uploads):
    """Everything the checks compare: files documents, stored bytes by id, places' links."""
    files = {str(f["_id"]): f for f in db.files.find()}
    stored, strays = {}, []
    if mode == "gridfs":
        for g in db["fs.files"].find({}, {"length": 1, "chunkSize": 1}):
            chunks = db["fs.chunks"].count_documents({"files_id": g["_id"]})
            stored[str(g["_id"])] = (g["length"], chunks == -(-g["length"] // g["chunkSize"]))
        known = [g["_id"] for g in db["fs.files"].find({}, {"_id": 1})]
        strays += [f"chunks of {i}" for i in db["fs.chunks"].distinct("files_id", {"files_id": {"$nin": known}})]
    else:
        for name in os.listdir(uploads) if os.path.isdir(uploads) else []:
            if name.startswith("."):
                strays.append(f"temporary file {name}")
                continue
            stored[name[:24]] = (os.path.getsize(os.path.join(uploads, name)), True)
            if name[:24] not in files or files[name[:24]]["ext"] != name[24:]:
                strays.append(f"bytes without a document {name}")
    if mode == "gridfs":
        strays += [f"GridFS file without a document {i}" for i in stored if i not in files]
    places = list(db.locations.find({}, {"importKey": 1, "imageId": 1, "thumbnailId": 1, "imageError": 1}))
    return files, stored, strays, places


def link_problems(db, mode, uploads, expected_places, expected_sha=None, spec=None):
    """No dangling link, nothing unused, one copy of each photo with one thumbnail, exact counts.
    expected_sha: importKey -> sha256 of the photo the dump names (the place must show that
    very content); spec: the recipe every thumbnail must have been made with."""
    files, stored, strays, places = store_state(db, mode, uploads)
    problems = list(strays)
    if len(places) != expected_places:
        problems.append(f"{len(places)} places, expected {expected_places}")
    keys = [p.get("importKey") for p in places]
    if len(set(keys)) != len(keys):
        problems.append(f"{len(keys) - len(set(keys))} duplicate importKeys")

    def bytes_problem(fid):
        f = files[fid]
        if fid not in stored:
            return "bytes missing"
        if stored[fid][0] != f.get("length") or not stored[fid][1]:
            return f"bytes damaged ({stored[fid][0]} of {f.get('length')})"
        return None

    dangling, wrong = [], []
    used = set()
    for p in places:
        key, img, th = p.get("importKey"), p.get("imageId"), p.get("thumbnailId")
        if expected_sha is not None and key in expected_sha and p.get("imageError"):
            wrong.append(f"{key}: imageError {p['imageError']!r}")
        if img is None:
            if th is not None:
                dangling.append(f"{key}: thumbnailId {th} without imageId")
            continue
        used.update([img, th])
        if img not in files:
            dangling.append(f"{key}: imageId {img} has no files document")
        elif bytes_problem(img):
            dangling.append(f"{key}: imageId {img}: {bytes_problem(img)}")
        elif expected_sha is not None and key in expected_sha and files[img].get("sha256") != expected_sha[key]:
            wrong.append(f"{key}: imageId {img} is not the photo its row names")
        if th is None:
            dangling.append(f"{key}: imageId {img} without thumbnailId")
        elif th not in files:
            dangling.append(f"{key}: thumbnailId {th} has no files document")
        elif bytes_problem(th):
            dangling.append(f"{key}: thumbnailId {th}: {bytes_problem(th)}")
        elif str(files[th].get("thumbnailOf")) != img:
            dangling.append(f"{key}: thumbnailId {th} is a thumbnail of {files[th].get('thumbnailOf')}, not of {img}")
    if expected_sha is not None:
        missing = sorted(set(expected_sha) - {p.get("importKey") for p in places if p.get("imageId")})
        if missing:
            wrong.append(f"{len(missing)} places that name a photo have none, e.g. {missing[:3]}")
    problems += [f"{len(dangling)} dangling links, e.g. {dangling[:3]}"] if dangling else []
    problems += [f"{len(wrong)} wrong photos, e.g. {wrong[:3]}"] if wrong else []

    originals = {i: f for i, f in files.items() if f.get("role") != "thumbnail"}
    thumbs = {i: f for i, f in files.items() if f.get("role") == "thumbnail"}
    by_sha = {}
    for i, f in originals.items():
        by_sha.setdefault(f.get("sha256"), []).append(i)
    twice = {s[:12]: ids for s, ids in by_sha.items() if len(ids) > 1}
    if twice:
        problems.append(f"{len(twice)} photos stored more than once (sha256 prefix: ids), e.g. {dict(list(twice.items())[:2])}")
    unused_orig = sorted(set(originals) - used)
    if unused_orig:
        problems.append(f"{len(unused_orig)} originals no place shows, e.g. {unused_orig[:3]}")
    per_original = {}
    for i, f in thumbs.items():
        per_original.setdefault(str(f.get("thumbnailOf")), []).append(i)
    extra = {o: ids for o, ids in per_original.items() if len(ids) > 1}
    if extra:
        problems.append(f"{len(extra)} originals with more than one thumbnail, e.g. {dict(list(extra.items())[:2])}")
    unused_th = sorted(set(thumbs) - used)
    if unused_th:
        problems.append(f"{len(unused_th)} thumbnails no place shows, e.g. {unused_th[:3]}")
    without = sorted(set(originals) - set(per_original))
    if without:
        problems.append(f"{len(without)} originals without a thumbnail, e.g. {without[:3]}")
    if spec:
        other = sorted({f.get("spec") for f in thumbs.values() if not str(f.get("spec", "")).startswith(spec)})
        if other:
            problems.append(f"thumbnails made with {other}, expected {spec}")
    return problems


def gc_problems(common):
    """`poi gc --verify` afterwards: a dry run that must list nothing at all."""
    code, out, err = poi(["gc", "--verify", "--json"] + common)
    try:
        report = json.loads(out)
    except ValueError:
        return [f"gc --verify --json printed no report (exit {code}): {err.strip()[-200:]}"]
    found = {k: v for k, v in report.items() if isinstance(v, list) and v and k != "kept"}
    problems = [f"gc --verify lists {k}: {len(v)}, e.g. {v[:3]}" for k, v in found.items()]
    if code != 0 and not problems:
        problems.append(f"gc --verify exit {code}")
    return problems


def status_problems(runs, allowed=None):
    """Every run exit 0, unless `allowed(run)` says why another status is right for it."""
    problems = []
    for i, r in enumerate(runs):
        if r.code is None:
            continue  # reported as a hang
        why = allowed(r) if allowed else None
        if r.code != 0 and not why:
            last = ([line for line in r.err.splitlines() if line.strip()] or [""])[-1]
            problems.append(f"run {i} ({r.argv[1]}) exit {r.code}: {last[:250]}")
    return problems


# ---------------------------------------------------------------------------------------------
# Cases


class Suite:
    def __init__(self, uri, work, images):
        import pymongo
        self.uri, self.work, self.images = uri, work, images
        self.client = pymongo.MongoClient(uri)
        self.sha = {n: sha256_file(os.path.join(images, n)) for n in os.listdir(images)}
        self.failed = self.passed = 0
        self.exports = {}
        # By content: an import works through a window's new photos in sha256 order, so the
        # photos gc x import plants as garbage and the import reuses are those that sort first:
        # the import looks them up before it stores anything (see gc_import).
        names = sorted(os.listdir(images), key=self.sha.get)
        self.gc_images, names = names[:GC_REUSED + GC_GARBAGE], names[GC_REUSED + GC_GARBAGE:]
        self.base_images = names[:BASE_IMAGES]
        self.new_images = names[BASE_IMAGES:BASE_IMAGES + NEW_IMAGES]
        # The base dump: each photo shown by several places, as on a real site.
        self.base_rows = [(f"b{i}", self.base_images[i % BASE_IMAGES]) for i in range(BASE_IMAGES * PLACES_PER_IMAGE)]
        self.base_csv = os.path.join(work, "base.csv")
        write_csv(self.base_csv, self.base_rows)

    def expected_sha(self, rows):
        return {k: self.sha[img] for k, img in rows if img}

    def case(self, name, mode, body):
        """Fresh database and file store; body(ctx) returns the problems."""
        label = f"{name} [{mode}]"
        slug = re.sub(r"[^A-Za-z0-9]+", "_", label.replace("×", "x")).strip("_")
        folder = os.path.join(self.work, slug)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        dbname = "ov_" + slug
        self.client.drop_database(dbname)
        uploads = os.path.join(folder, "uploads")
        common = ["--uri", self.uri, "--db", dbname] + (["--gridfs"] if mode == "gridfs" else ["--uploads", uploads])
        ctx = dict(folder=folder, db=self.client[dbname], mode=mode, uploads=uploads, common=common)
        started = time.time()
        try:
            problems = body(ctx)
        except Exception as e:  # noqa: BLE001 - a crash of the check is reported as the case's failure
            problems = [f"test error: {type(e).__name__}: {e}"]
        if problems:
            self.failed += 1
            print(f"FAIL {label}: " + " | ".join(problems))
        else:
            self.passed += 1
            print(f"PASS {label}")
        if os.environ.get("VERBOSE"):
            print(f"    case took {time.time() - started:.1f}s")
            runs = [r for r in ctx.get("runs", []) if r.started]
            for i, r in enumerate(runs):
                print(f"    run {i}: {' '.join(r.argv[1:2])} exit {r.code} in {r.seconds():.2f}s "
                      f"(started +{r.started - min(o.started for o in runs):.2f}s) {r.out.strip()[:300]}")
        sys.stdout.flush()
        if not os.environ.get("KEEP_DB"):
            self.client.drop_database(dbname)

    def base_import(self, ctx):
        code, out, err = poi(["import", self.base_csv, "--images-dir", self.images, "--quiet"] + ctx["common"])
        if code != 0:
            raise RuntimeError(f"setup import exit {code}: {err.strip()[-300:]}")

    # thumbnails × thumbnails: every run remakes every thumbnail; afterwards each place shows a
    # 128x128 thumbnail of its own photo and each photo has exactly that one.
    def thumbnails_thumbnails(self, n):
        def body(ctx):
            self.base_import(ctx)
            runs = [Run(ctx["folder"], i, ["thumbnails", "--all", "--size", THUMB_SPEC, "--json"] + ctx["common"])
                    for i in range(n)]
            problems = run_together(ctx, runs) + status_problems(runs)
            problems += link_problems(ctx["db"], ctx["mode"], ctx["uploads"], len(self.base_rows),
                                      self.expected_sha(self.base_rows), spec=THUMB_SPEC)
            return problems + gc_problems(ctx["common"])
        return body

    # thumbnails × import: the import links new places to stored photos (found by content,
    # with the thumbnail it finds) while thumbnails replaces those very thumbnails.
    def thumbnails_import(self, n):
        def body(ctx):
            self.base_import(ctx)
            rows = [(f"n{i}", self.base_images[i % BASE_IMAGES]) for i in range(2 * BASE_IMAGES)]
            rows += [(f"m{i}", self.new_images[i % NEW_IMAGES]) for i in range(2 * NEW_IMAGES)]
            csv = os.path.join(ctx["folder"], "more.csv")
            write_csv(csv, rows)
            argv = {0: ["thumbnails", "--size", THUMB_SPEC, "--json"] + ctx["common"],
                    1: ["import", csv, "--images-dir", self.images, "--json"] + ctx["common"]}
            runs = [Run(ctx["folder"], i, argv[i % 2]) for i in range(n)]
            problems = run_together(ctx, runs) + status_problems(runs)
            problems += link_problems(ctx["db"], ctx["mode"], ctx["uploads"], len(self.base_rows) + len(rows),
                                      self.expected_sha(self.base_rows + rows))
            return problems + gc_problems(ctx["common"])
        return body

    # gc --delete × import: two-hour-old garbage (an original and its thumbnail no place shows)
    # whose photos the import names again. gc must not delete what the import links meanwhile,
    # and must delete the rest.
    def gc_import(self, n):
        def body(ctx):
            self.base_import(ctx)
            from bson import ObjectId
            planted = {img: plant_garbage(ctx["db"], ctx["mode"], ctx["uploads"], os.path.join(self.images, img))
                       for img in self.gc_images}
            reused, garbage = self.gc_images[:GC_REUSED], self.gc_images[GC_REUSED:]
            rows = [(f"g{i}", reused[i % GC_REUSED]) for i in range(2 * GC_REUSED)]
            rows += [(f"n{i}", self.base_images[i % BASE_IMAGES]) for i in range(BASE_IMAGES)]
            rows += [(f"m{i}", self.new_images[i % NEW_IMAGES]) for i in range(2 * NEW_IMAGES)]
            csv = os.path.join(ctx["folder"], "more.csv")
            write_csv(csv, rows)
            gc = ["gc", "--delete", "--json"] + ctx["common"]
            before = ctx["db"].files.count_documents({})
            # The import looks each photo up by content, then stores the new ones, and writes
            # the window's places only once all its photos are stored: between the lookup of a
            # reused photo and the write of its places lies the risk. A gc started with the
            # import is done before that (the import's start-up takes as long as a whole gc),
            # so one gc starts once the import stores its first photo (the reused photos, first
            # by sha256, are looked up; their places not written); with three runs, another
            # starts together with the import.
            in_window = Run(ctx["folder"], 0, gc, start_when=lambda: ctx["db"].files.count_documents({}) > before)
            runs = [in_window, Run(ctx["folder"], 1, ["import", csv, "--images-dir", self.images, "--json"] + ctx["common"])]
            runs += [Run(ctx["folder"], 2, gc)] if n == 3 else []

            def allowed(r):
                # gc --delete exits 1 when it kept something: acceptable only when all it kept
                # is the running import's fresh files (young), files a place now references, or
                # files the import found by content (marked reused).
                if r.argv[1] != "gc" or r.code != 1:
                    return None
                rep = r.summary()
                ok = all("younger than the minimum age" in k or "a place references it" in k
                         or "an import found it by its content lately" in k for k in rep.get("kept", []))
                return ok and not rep.get("danglingReferences") and not rep.get("damagedBytes") and not rep.get("refused")
            problems = run_together(ctx, runs) + status_problems(runs, allowed)
            gone = [ids for img in garbage for ids in planted[img]]
            left = [i for i in gone if ctx["db"].files.count_documents({"_id": ObjectId(i)})]
            if left:
                problems.append(f"gc --delete left {len(left)} of {len(gone)} garbage files: {left}")
            problems += link_problems(ctx["db"], ctx["mode"], ctx["uploads"], len(self.base_rows) + len(rows),
                                      self.expected_sha(self.base_rows + rows))
            return problems + gc_problems(ctx["common"])
        return body

    def export_fixture(self, mode):
        """The database the export cases share (an export writes nothing, which they check):
        SecantusDB maintains the places' indexes slowly, so thousands of places cost seconds."""
        if mode not in self.exports:
            folder = os.path.join(self.work, f"export-fixture-{mode}")
            os.makedirs(folder, exist_ok=True)
            dbname = f"ov_export_fixture_{mode}"
            self.client.drop_database(dbname)
            uploads = os.path.join(folder, "uploads")
            common = ["--uri", self.uri, "--db", dbname] + (["--gridfs"] if mode == "gridfs" else ["--uploads", uploads])
            fixture = dict(folder=folder, db=self.client[dbname], mode=mode, uploads=uploads, common=common)
            ct.insert_places(fixture["db"], EXPORT_EXTRA, name="Plain", key="plain")  # before poi makes the indexes: faster
            self.base_import(fixture)
            self.exports[mode] = fixture
        return self.exports[mode]

    # export × export: the same -o file and --with-images folder; readers of the file must see
    # one whole export, never a mix or a temporary name left behind.
    def export_export(self, n):
        def body(ctx):
            fixture = self.export_fixture(ctx["mode"])
            total = fixture["db"].locations.count_documents({})
            out_dir = os.path.join(ctx["folder"], "export")
            os.makedirs(out_dir)
            out, images = os.path.join(out_dir, "places.geojson"), os.path.join(out_dir, "images")
            runs = [Run(ctx["folder"], i, ["export", "-o", out, "--with-images", images, "--json"] + fixture["common"])
                    for i in range(n)]
            files_before = fixture["db"].files.count_documents({})
            problems = run_together(ctx, runs) + status_problems(runs)
            for i, r in enumerate(runs):
                if r.code == 0 and r.summary().get("features") != total:
                    problems.append(f"run {i} says {r.summary().get('features')} features, expected {total}")
            problems += export_problems(fixture["db"], out, images, total)
            problems += [f"{x} in the export folder" for x in os.listdir(out_dir) if x not in ("places.geojson", "images")]
            if fixture["db"].files.count_documents({}) != files_before:
                problems.append("export changed the files collection")
            problems += link_problems(fixture["db"], fixture["mode"], fixture["uploads"], total,
                                      self.expected_sha(self.base_rows))
            return problems + gc_problems(fixture["common"])
        return body

    # import × import: the same dump into an empty database; each place and each photo once.
    def import_import(self, n):
        def body(ctx):
            runs = [Run(ctx["folder"], i, ["import", self.base_csv, "--images-dir", self.images, "--json"] + ctx["common"])
                    for i in range(n)]
            problems = run_together(ctx, runs) + status_problems(runs)
            sums = [r.summary() for r in runs if r.code == 0]
            inserted = sum(s.get("inserted", 0) for s in sums)
            if len(sums) == n and inserted != len(self.base_rows):
                problems.append(f"the runs inserted {inserted} places together "
                                f"({[s.get('inserted') for s in sums]}), expected {len(self.base_rows)}")
            stored = sum(s.get("imagesStored", 0) for s in sums)
            if len(sums) == n and stored != BASE_IMAGES:
                problems.append(f"the runs stored {stored} photos together "
                                f"({[s.get('imagesStored') for s in sums]}), expected {BASE_IMAGES}")
            problems += link_problems(ctx["db"], ctx["mode"], ctx["uploads"], len(self.base_rows),
                                      self.expected_sha(self.base_rows))
            return problems + gc_problems(ctx["common"])
        return body


def export_problems(db, out, images, total):
    """The -o file is one whole FeatureCollection of every place; every image it names is there
    with the original's content; no temporary file is left in the images folder."""
    try:
        doc = json.load(open(out))
    except (OSError, ValueError) as e:
        return [f"export is not valid JSON: {e}"]
    problems = []
    feats = doc.get("features") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("type") != "FeatureCollection" or not isinstance(feats, list):
        return ["export is not a FeatureCollection"]
    if len(feats) != total:
        problems.append(f"export has {len(feats)} features, expected {total}")
    ids = [f.get("id") for f in feats]
    if len(set(ids)) != len(ids):
        problems.append(f"{len(ids) - len(set(ids))} duplicate feature ids in the export")
    if set(ids) != {str(p["_id"]) for p in db.locations.find({}, {"_id": 1})}:
        problems.append("export's feature ids are not the places' ids")
    shas = {str(f["_id"]): f.get("sha256") for f in db.files.find({}, {"sha256": 1})}
    bad, named = [], set()
    for f in feats:
        props = f.get("properties") or {}
        if f.get("geometry", {}).get("type") != "Point":
            bad.append(f"{f.get('id')}: geometry {f.get('geometry')}")
        if "imageId" not in props:
            continue
        path = props.get("image")
        if not path:
            bad.append(f"{props.get('importKey')}: no image path")
            continue
        full = os.path.join(os.path.dirname(out), path)
        named.add(os.path.basename(full))
        if not os.path.isfile(full):
            bad.append(f"{props.get('importKey')}: {path} missing")
        elif sha256_file(full) != shas.get(props["imageId"]):
            bad.append(f"{props.get('importKey')}: {path} is not the stored original")
    if bad:
        problems.append(f"{len(bad)} bad features, e.g. {bad[:3]}")
    extra = sorted(set(os.listdir(images)) - named) if os.path.isdir(images) else []
    if extra:
        problems.append(f"{len(extra)} files in the images folder no feature names, e.g. {extra[:3]}")
    return problems


def main():
    if not os.access(poi_binary(), os.X_OK):
        print(f"overlap-test: no poi binary at {poi_binary()} (POI=...)")
        return 2
    work = os.environ.get("WORK") or os.path.join(ROOT, ".data/overlap")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.time()
    images = os.path.join(work, "images")
    make_images(images, BASE_IMAGES + NEW_IMAGES + GC_REUSED + GC_GARBAGE)
    server = None
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        # A replica-set primary, as production runs: retryable writes and transactions exist.
        server = ct.Server(os.path.join(work, "server"), replica_set=True)
        server.start()
        uri = server.uri + "/?replicaSet=secantus"
    print(f"overlap-test: {poi_binary()} against {uri}")
    sys.stdout.flush()
    suite = Suite(uri, work, images)
    wanted = os.environ.get("CASES", "").split()
    try:
        for mode in ("uploads", "gridfs"):
            for name, make in (("thumbnails×thumbnails", suite.thumbnails_thumbnails),
                               ("thumbnails×import", suite.thumbnails_import),
                               ("gc-delete×import", suite.gc_import),
                               ("export×export", suite.export_export),
                               ("import×import", suite.import_import)):
                for n in (2, 3):
                    label = f"{name} ×{n}"
                    if wanted and not any(w in f"{label} [{mode}]" for w in wanted):
                        continue
                    suite.case(label, mode, make(n))
    finally:
        if not os.environ.get("KEEP_DB"):
            for fixture in suite.exports.values():
                suite.client.drop_database(fixture["db"].name)
        if server:
            server.stop()
    print(f"overlap-test: {suite.passed} passed, {suite.failed} failed in {time.time() - t0:.0f}s")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
