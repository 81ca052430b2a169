#!/usr/bin/env python3
"""make fault-test: the database or the disk fails under a running `poi`.

  1. server stopped mid-import -> exit 3 within --server-timeout (plus slack), message names
     host:port; server restarted -> a rerun completes with exact counts.
  2. server stopped mid-export -> exit 3, the previous output file is byte-identical, no temp
     file is left beside it.
  3. uploads not writable: a full tmpfs, an immutable folder (chattr +i: root ignores chmod),
     a file where the folder should be -> exit 3, a clear message, nothing partial under a
     final name, no files document pointing at missing bytes.
  5. an election under `poi serve` (NotWritablePrimary on every read and write for a while):
     each request answers 503 within 2 s (+slack) with Retry-After and a message naming the
     election, never "cannot reach"; reads answer 200 again within seconds once it is over.
  4. a write-concern error (the `failCommand` fail point, on a replica-set primary) on one
     insert of a GridFS import of photos bigger than a chunk, and of an uploads-folder import
     -> exit 3 within seconds naming the write concern (libmongoc's upload loop once made it
     run for ever), nothing dangling; a rerun completes with exact counts.

  6. production: a replica-set primary over TLS with SCRAM users (a password holding @ : /):
     import, export, thumbnails, gc, doctor and serve work and never print the password; an
     import across a 3 s election window stores every place once (or exits 3 and its rerun
     does); a wrong CA, a wrong password, no user and a missing tls=true each get a message
     naming it, exit 3.

Over 500 lines: the six fault families above share one harness (their own server, its
restarts, the consistency check of files and bytes), and each is one function of it.

Uses its own SecantusDB server (it has to stop and restart it). ROWS=... resizes the import.
Ends with `fault-test: N passed, M failed`; exit status 1 when anything failed.
"""
import hashlib
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # loading crash-test.py must not leave scripts/__pycache__/
_spec = importlib.util.spec_from_file_location("crash_test", os.path.join(ROOT, "scripts/crash-test.py"))
ct = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ct)

TIMEOUT = 3.0   # --server-timeout given to poi
SLACK = 7.0     # process start, the batch in flight, retry backoff


def wait_for(predicate, limit, step=0.05):
    deadline = time.time() + limit
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def file_consistency(db, uploads):
    """Problems between uploads/ and `files`: partial or unknown bytes under a final name,
    leftover temp files, documents without bytes."""
    from bson import ObjectId
    problems = []
    names = os.listdir(uploads) if os.path.isdir(uploads) else []
    for name in names:
        if name.startswith("."):
            problems.append(f"temporary file left: {name}")
            continue
        try:
            f = db.files.find_one({"_id": ObjectId(name[:24])})
        except Exception:
            f = None
        data = open(os.path.join(uploads, name), "rb").read()
        if f is None:
            # Bytes without a document are allowed (gc finds them) but must be complete files.
            if not (data.startswith(b"\xff\xd8") and data.rstrip(b"\0").endswith(b"\xff\xd9")) and not data.startswith(b"\x89PNG"):
                problems.append(f"partial bytes without a document: {name}")
        elif len(data) != f.get("length") or hashlib.sha256(data).hexdigest() != f.get("sha256"):
            problems.append(f"bytes of {name} differ from its files document")
    for f in db.files.find({}, {"ext": 1}):
        if str(f["_id"]) + f["ext"] not in names:
            problems.append(f"files document {f['_id']} has no bytes")
    for p in db.locations.find({"imageId": {"$exists": True}}, {"imageId": 1, "thumbnailId": 1}):
        for k in ("imageId", "thumbnailId"):
            if k in p and db.files.count_documents({"_id": ObjectId(p[k])}) == 0:
                problems.append(f"place {p['_id']} {k} {p[k]} has no files document")
    return problems


def main():
    rows = int(os.environ.get("ROWS", "3000"))
    seed = int(os.environ.get("SEED") or random.SystemRandom().randrange(1, 2**31))
    rng = random.Random(seed)
    print(f"fault-test: ROWS={rows} SEED={seed}")
    checks = ct.Checks("fault-test")
    if not os.access(ct.poi_binary(), os.X_OK):
        print(f"fault-test: no poi binary at {ct.poi_binary()} (make build)")
        return 2
    work = os.path.join(ROOT, ".data/fault")
    for m in list(mounts_under(work)):
        subprocess.run(["umount", m])
    if os.path.isdir(work):
        subprocess.run(["chattr", "-R", "-i", work], stderr=subprocess.DEVNULL)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.time()
    images = ct.make_images(os.path.join(work, "images"), 40, rng)
    csv_path = os.path.join(work, "places.csv")
    valid, with_image = ct.make_csv(csv_path, rows, images, rng)
    server = ct.Server(os.path.join(work, "server"))
    server.start()
    import pymongo
    client = pymongo.MongoClient(server.uri)
    hostport = f"127.0.0.1:{server.port}"
    try:
        # ONLY=replica-set runs the replica-set cases alone (write concern, the fail-point
        # matrix, elections under serve), for working on them.
        if os.environ.get("ONLY") != "replica-set":
            server_stopped_mid_import(server, client, hostport, csv_path, work, rows, valid, with_image, checks)
            server_stopped_mid_export(server, client, hostport, work, checks)
            uploads_not_writable(server, client, work, checks)
        write_concern_errors(work, rng, checks)
        if os.environ.get("ONLY") != "replica-set":
            production_setup(work, rng, checks)
    finally:
        server.stop()
        for m in list(mounts_under(work)):
            subprocess.run(["umount", m])
    print(f"  total {time.time() - t0:.1f}s")
    return checks.finish()


def server_stopped_mid_import(server, client, hostport, csv_path, work, rows, valid, with_image, checks):
    print("server stopped mid-import")
    db = client["fault_import"]
    uploads = os.path.join(work, "uploads-import")
    # --retry-for 2: a server that is gone is reported once the retries are spent (the default
    # rides out a minute of elections).
    common = ["--uri", server.uri, "--db", "fault_import", "--uploads", uploads, "--server-timeout", str(TIMEOUT),
              "--retry-for", "2"]
    imp = ["import", csv_path, "--images-dir", os.path.join(work, "images"), "--quiet", "--batch-size", "100"] + common
    p = subprocess.Popen([ct.poi_binary()] + imp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    landed = wait_for(lambda: db.locations.estimated_document_count() >= 100 or p.poll() is not None, 120)
    if p.poll() is not None or not landed:
        p.kill()
        checks.check(False, "import still running when the server is stopped (raise ROWS)", p.poll())
        return
    stopped_at = time.time()
    server.stop(hard=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT + SLACK + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    took = time.time() - stopped_at
    print(f"  poi exited {p.returncode} {took:.1f}s after the server stopped; stderr: {err.strip()[-300:]}")
    checks.check(p.returncode == 3, "import: exit 3 when the server goes away", p.returncode)
    checks.check(took <= TIMEOUT + SLACK, f"import: gives up within --server-timeout {TIMEOUT:g}s (+{SLACK:g}s slack)", f"{took:.1f}s")
    checks.check(hostport in err, f"import: the message names the server {hostport}", err.strip()[-300:])
    server.start()
    code, out, err = ct.run_poi(imp + ["--json"])
    s = json.loads(out) if out.strip().startswith("{") else {}
    checks.check(code == 1 and s.get("rejected") == rows - valid, "import rerun after restart completes (exit 1: the bad rows)",
                 f"exit {code}: {err[-300:]}")
    n = db.locations.count_documents({})
    checks.check(n == valid, f"import rerun: place count == valid rows ({valid})", n)
    dups = list(db.locations.aggregate([{"$group": {"_id": "$importKey", "n": {"$sum": 1}}}, {"$match": {"n": {"$gt": 1}}}]))
    checks.check(not dups, "import rerun: no duplicate importKey", dups[:3])
    n_img = db.locations.count_documents({"imageId": {"$exists": True}})
    checks.check(n_img == with_image, f"import rerun: places with an image == {with_image}", n_img)
    problems = ct.verify_store(db, uploads)
    checks.check(not problems, "import rerun: every image reference resolves and decodes", problems[:3])


def write_concern_errors(work, rng, checks):
    print("write-concern error on one insert (replica-set primary, failCommand)")
    server = ct.Server(os.path.join(work, "server-rs"), replica_set=True, test_commands=True)
    server.start()
    try:
        import pymongo
        uri = server.uri + "/?replicaSet=secantus"
        client = pymongo.MongoClient(uri)
        # Photos over GridFS's 255 KiB chunk: the upload writes several chunks.
        from PIL import Image
        folder = os.path.join(work, "big-images")
        os.makedirs(folder, exist_ok=True)
        rows = ["id,name,lat,lon,image"]
        for i in range(12):
            path = os.path.join(folder, f"p{i}.jpg")
            Image.effect_noise((900, 700), 40 + i).convert("RGB").save(path, quality=95)
            rows.append(f"w{i},Photo {i},{i},{i},p{i}.jpg")
        rows += [f"w{i},Place {i},{i % 80},{i % 170}," for i in range(12, 60)]
        csv_path = os.path.join(work, "wce.csv")
        open(csv_path, "w").write("\n".join(rows) + "\n")
        for store, name in ((["--gridfs"], "wce_gridfs"), (["--uploads", os.path.join(work, "uploads-wce")], "wce_uploads")):
            label = "gridfs" if store == ["--gridfs"] else "uploads"
            client.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 1},
                                  "data": {"failCommands": ["insert"],
                                           "writeConcernError": {"code": 64, "errmsg": "waiting for replication timed out"}}})
            args = ["import", csv_path, "--images-dir", folder, "--uri", uri, "--db", name, "--quiet",
                    "--server-timeout", str(TIMEOUT)] + store
            started = time.time()
            try:
                code, out, err = ct.run_poi(args, timeout=60)
            except subprocess.TimeoutExpired:
                code, err = None, "still running after 60 s"
            took = time.time() - started
            client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
            print(f"  {label}: poi exited {code} after {took:.1f}s; stderr: {err.strip()[-200:]}")
            checks.check(code == 3, f"write concern ({label}): exit 3, never a hang", code)
            checks.check("write concern error 64" in err and "may or may not be durable" in err and "run it again" in err,
                         f"write concern ({label}): the message says what happened", err.strip()[-200:])
            code, out, err = ct.run_poi(args + ["--json"], timeout=120)
            s = json.loads(out) if out.strip().startswith("{") else {}
            db = client[name]
            checks.check(code == 0 and db.locations.count_documents({}) == 60,
                         f"write concern ({label}): the rerun completes, 60 places", f"exit {code}, {err[-200:]}")
            with_image = db.locations.count_documents({"imageId": {"$exists": True}})
            checks.check(with_image == 12, f"write concern ({label}): 12 places with their photo", with_image)
            code, out, err = ct.run_poi(["gc", "--uri", uri, "--db", name] + store, timeout=120)
            checks.check(code == 0 and "consistent" in out + err, f"write concern ({label}): poi gc finds nothing to collect",
                         (out + err).strip()[-300:])
        fail_point_matrix(client, uri, work, checks)
        election_under_serve(client, uri, work, checks)
    finally:
        server.stop()


# The transient errors of the drivers' retryable-writes spec that an election or a restart gives
# (code, name); each is injected for a window (a number of failed commands) into an import's
# inserts and an export's reads.
TRANSIENT = [(10107, "NotWritablePrimary"), (189, "PrimarySteppedDown"), (91, "ShutdownInProgress"),
             (11600, "InterruptedAtShutdown"), (13435, "NotPrimaryNoSecondaryOk"), (6, "HostUnreachable")]


def fail_point_matrix(client, uri, work, checks):
    """Each transient code, a dropped connection and a blocked one, against import and export:
    exit 0 with the exact database or file within the bound, or exit 3 naming the error; a
    retryable write-concern error after the insert was applied counts the places as inserted."""
    print("fail-point matrix (import and export, each transient code for a window)")
    for name in client.list_database_names():
        if name.startswith("matrix_"):
            client.drop_database(name)
    rows = ["id,name,lat,lon"] + [f"m{i},Matrix {i},{i % 80},{i % 170}" for i in range(40)]
    csv_path = os.path.join(work, "matrix.csv")
    open(csv_path, "w").write("\n".join(rows) + "\n")

    def fail(commands, times, **data):
        client.admin.command({"configureFailPoint": "failCommand", "mode": {"times": times},
                              "data": dict({"failCommands": commands}, **data)})

    def off():
        client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})

    def run(args, bound):
        started = time.time()
        try:
            code, out, err = ct.run_poi(args, timeout=bound)
        except subprocess.TimeoutExpired:
            code, out, err = None, "", f"still running after {bound} s"
        took = time.time() - started
        # What each run did, for the record: the command, its exit status and time.
        print(f"    poi {args[0]} ({args[args.index('--db') + 1]}): exit {code} in {took:.1f}s")
        return code, out, err, took

    faults = [(f"{name} ({code}) x3", {"errorCode": code}) for code, name in TRANSIENT]
    faults.append(("closeConnection x2", {"closeConnection": True}))
    for label, data in faults:
        times = 2 if "closeConnection" in data else 3
        db = "matrix_" + label.split(" ")[0].lower()
        fail(["insert"], times, **data)
        code, out, err, took = run(["import", csv_path, "--uri", uri, "--db", db, "--json", "--retry-for", "20"], 60)
        off()
        s = json.loads(out) if out.strip().startswith("{") else {}
        count = client[db].locations.count_documents({})
        checks.check(code == 0 and count == 40 and s.get("inserted") == 40 and s.get("unchanged") == 0,
                     f"matrix import, {label}: exit 0, 40 places, counted inserted", f"exit {code} in {took:.1f}s, "
                     f"{count} stored, summary { {k: s.get(k) for k in ('inserted', 'updated', 'unchanged')} }, {err.strip()[-200:]}")
        out_path = os.path.join(work, f"{db}.geojson")
        fail(["find", "aggregate", "getMore"], times, **data)
        code, out, err, took = run(["export", "--uri", uri, "--db", db, "-o", out_path, "--json", "--retry-for", "20"], 60)
        off()
        features = len(json.load(open(out_path))["features"]) if code == 0 and os.path.exists(out_path) else None
        checks.check(code == 0 and features == 40, f"matrix export, {label}: exit 0, 40 features",
                     f"exit {code} in {took:.1f}s, {features} features, {err.strip()[-200:]}")

    # Past the bound: a code that never stops, exit 3 naming it and how long it tried.
    fail(["insert"], 1000, errorCode=10107)
    code, out, err, took = run(["import", csv_path, "--uri", uri, "--db", "matrix_bound", "--retry-for", "3"], 60)
    off()
    checks.check(code == 3 and took < 15 and "NotWritablePrimary" in err and "s of retries" in err,
                 "matrix: NotWritablePrimary past --retry-for 3 exits 3 naming it", f"exit {code} in {took:.1f}s: {err.strip()[-240:]}")
    checks.check(client["matrix_bound"].locations.count_documents({}) == 0, "matrix: nothing half-written past the bound",
                 client["matrix_bound"].locations.count_documents({}))

    # A read the server holds for 8 s: the export waits it out (the socket timeout, 300 s, is
    # what bounds a server that never answers) and writes everything.
    blocked = os.path.join(work, "blocked.geojson")
    fail(["find", "aggregate"], 1, blockConnection=True, blockTimeMS=8000)
    code, out, err, took = run(["export", "--uri", uri, "--db", "matrix_closeconnection", "-o", blocked, "--retry-for", "0"], 60)
    off()
    features = len(json.load(open(blocked))["features"]) if code == 0 and os.path.exists(blocked) else None
    checks.check(code == 0 and features == 40 and 7 < took < 20, "matrix: an export held 8 s by the server waits and writes all",
                 f"exit {code} in {took:.1f}s, {features} features: {err.strip()[-200:]}")

    # gc --delete losing its connection twice while it deletes: retried as a whole, every
    # garbage file goes, and the count says all of them.
    import bson, datetime
    gcdb = client["matrix_gc"]
    gcdb.drop_collection("files")
    gcdb.files.insert_many([{"_id": bson.ObjectId(), "content-type": "image/png", "ext": ".png", "role": "original",
                             "created_at": datetime.datetime(2020, 1, 1)} for _ in range(6)])
    folder = os.path.join(work, "uploads-matrix-gc")
    os.makedirs(folder, exist_ok=True)
    fail(["delete"], 2, closeConnection=True)
    code, out, err, took = run(["gc", "--delete", "--min-age", "0", "--max-delete", "all", "--json", "--uri", uri,
                                "--db", "matrix_gc", "--uploads", folder, "--retry-for", "20"], 60)
    off()
    s = json.loads(out) if out.strip().startswith("{") else {}
    left = gcdb.files.count_documents({})
    checks.check(code == 0 and left == 0 and s.get("deleted") == 6, "matrix: gc --delete over two dropped connections deletes all 6",
                 f"exit {code} in {took:.1f}s, {left} left, deleted {s.get('deleted')}, {err.strip()[-200:]}")

    # The insert applied, then a retryable write-concern error: sent again, refused as a
    # duplicate, found as this run's own insert: 40 inserted, not 40 unchanged.
    # retryWrites=false: with libmongoc's own retry the server answers the resent insert from its
    # retryable-write record, and PoiKit's retry (a duplicate of its own insert) is never reached.
    fail(["insert"], 1, writeConcernError={"code": 91, "errmsg": "Replication is being shut down",
                                           "errorLabels": ["RetryableWriteError"]})
    code, out, err, took = run(["import", csv_path, "--uri", uri + "&retryWrites=false", "--db", "matrix_wce_retry",
                                "--json"], 60)
    off()
    s = json.loads(out) if out.strip().startswith("{") else {}
    count = client["matrix_wce_retry"].locations.count_documents({})
    checks.check(code == 0 and count == 40 and s.get("inserted") == 40 and s.get("unchanged") == 0,
                 "matrix: a retried insert the server had applied is counted inserted", f"exit {code}, {count} stored, "
                 f"{ {k: s.get(k) for k in ('inserted', 'updated', 'unchanged')} }, {err.strip()[-200:]}")


def election_under_serve(client, uri, work, checks):
    import socket
    import urllib.error
    import urllib.request
    print("an election under poi serve (failCommand NotWritablePrimary)")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = open(os.path.join(work, "serve-election.log"), "w")
    p = subprocess.Popen([ct.poi_binary(), "serve", "--uri", uri, "--db", "election", "--uploads",
                          os.path.join(work, "uploads-election"), "--port", str(port)], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"

    def get(path):
        started = time.time()
        try:
            with urllib.request.urlopen(base + path, timeout=30) as r:
                return r.status, dict(r.headers), r.read().decode(), time.time() - started
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode(), time.time() - started
        except OSError as e:  # not listening yet, or gone
            return 0, {}, str(e), time.time() - started

    try:
        up = wait_for(lambda: get("/healthz")[0] == 200 if p.poll() is None else True, 20, step=0.2)
        checks.check(up and p.poll() is None, "election: poi serve starts", p.poll())
        client.admin.command({"configureFailPoint": "failCommand", "mode": "alwaysOn",
                              "data": {"failCommands": ["find", "aggregate", "insert", "update", "count"],
                                       "errorCode": 10107, "errorLabels": ["RetryableWriteError"]}})
        answers = [get("/locations") for _ in range(3)]
        client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
        for status, headers, body, took in answers:
            print(f"  during: {status} in {took:.1f}s, Retry-After {headers.get('Retry-After')}: {body[:120]}")
        checks.check(all(a[0] == 503 for a in answers), "election: reads answer 503", [a[0] for a in answers])
        checks.check(all(a[3] <= 2 + 1.5 for a in answers), "election: each within 2 s (+1.5 s slack)",
                     [round(a[3], 1) for a in answers])
        checks.check(all(a[1].get("Retry-After") for a in answers), "election: Retry-After on each 503")
        checks.check(all("no primary" in a[2] and "cannot reach" not in a[2] for a in answers),
                     "election: the message names the election, not reachability", answers[-1][2][:200])
        back = wait_for(lambda: get("/locations")[0] == 200, 5, step=0.2)
        checks.check(back, "election: reads answer 200 within 5 s once it is over")
        # Each transient code of an election or a restart, and a dropped connection: a 503 with
        # Retry-After within the bound, never "cannot reach" for a server that answered (but
        # HostUnreachable, which says just that), and reads back within 3 s once it is over.
        for code, name in TRANSIENT + [(None, "closeConnection")]:
            data = {"closeConnection": True} if code is None else {"errorCode": code}
            client.admin.command({"configureFailPoint": "failCommand", "mode": "alwaysOn",
                                  "data": dict({"failCommands": ["find", "aggregate", "count"]}, **data)})
            status, headers, body, took = get("/locations")
            client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
            started = time.time()
            back = wait_for(lambda: get("/locations")[0] == 200, 3, step=0.1)
            print(f"  {name}: {status} in {took:.1f}s, Retry-After {headers.get('Retry-After')}, back in "
                  f"{time.time() - started:.1f}s: {body[:100]}")
            checks.check(status == 503 and headers.get("Retry-After") and took <= 3.5,
                         f"serve, {name}: 503 with Retry-After within the bound", f"{status} in {took:.1f}s {headers}")
            if code not in (6, None):
                checks.check("cannot reach" not in body, f"serve, {name}: not called unreachable", body[:200])
            checks.check(back, f"serve, {name}: reads answer 200 within 3 s once it is over")
    finally:
        p.terminate()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def make_certificates(folder):
    """A test CA, a server certificate it signs (localhost and 127.0.0.1), and an unrelated CA."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=folder)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=PoiKit test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(folder, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
        "-days", "2", "-extfile", "san.ext")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=Other CA")
    # Signed by the right CA, for another host name: what a URI naming the wrong host meets.
    with open(os.path.join(folder, "wrong-host.ext"), "w") as f:
        f.write("subjectAltName=DNS:example.invalid\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "wrong-host.pem",
        "-days", "2", "-extfile", "wrong-host.ext")
    return {name: os.path.join(folder, name) for name in ["ca.pem", "server.pem", "server.key", "other-ca.pem", "wrong-host.pem"]}


def production_setup(work, rng, checks):
    """Every job and `poi serve` against a replica-set primary over TLS with a SCRAM user whose
    password holds @ : /, as production runs; an election window during an import;
    and the diagnoses of a wrong CA, password, missing user and missing tls=true."""
    import threading
    import urllib.parse
    import urllib.request
    import pymongo
    print("production setup: replica-set primary, TLS, SCRAM users")
    if not shutil.which("openssl"):
        checks.skip("production setup", "openssl is not installed")
        return
    folder = os.path.join(work, "prod")
    os.makedirs(folder)
    certs = make_certificates(folder)
    server = ct.Server(os.path.join(folder, "server"), replica_set=True, test_commands=True,
                       tls=(certs["server.pem"], certs["server.key"]))
    tls = f"tls=true&tlsCAFile={certs['ca.pem']}&replicaSet=secantus"
    server.ping_uri = f"mongodb://127.0.0.1:{server.port}/?{tls}"
    server.start()
    # Users first, then the restart with --auth (how SecantusDB, like mongod, is provisioned).
    setup = pymongo.MongoClient(server.ping_uri)
    setup.admin.command("createUser", "root", pwd="rootpw", roles=["root"])
    password = "p@ss:/w0rd"
    setup.admin.command("createUser", "app", pwd=password,
                        roles=[{"role": "readWrite", "db": "prod"}, {"role": "dbAdmin", "db": "prod"}])
    setup.close()
    server.stop()
    server.ping_uri = f"mongodb://root:rootpw@127.0.0.1:{server.port}/?{tls}&authSource=admin"
    server.start(extra=["--auth"])
    root = pymongo.MongoClient(server.ping_uri)
    quoted = urllib.parse.quote(password, safe="")
    uri = f"mongodb://app:{quoted}@127.0.0.1:{server.port}/prod?{tls}&authSource=admin"
    samples = os.path.join(folder, "Samples")
    shutil.copytree(os.path.join(ROOT, "Samples"), samples, ignore=shutil.ignore_patterns("*.rejects.*"))
    db = root["prod"]
    common = ["--uri", uri, "--gridfs", "--server-timeout", str(TIMEOUT)]
    try:
        def leaked(*texts):
            return any(password in t or quoted in t for t in texts)

        code, out, err = ct.run_poi(["import", os.path.join(samples, "places.csv"), os.path.join(samples, "landmarks.geojson"),
                                     "--json", "--quiet"] + common, timeout=120)
        summary = json.loads(out) if out.strip().startswith("{") else {}
        places = db.locations.count_documents({})
        checks.check(code == 1 and summary.get("inserted") == places and places > 0,
                     f"production: import over TLS + SCRAM stores {places} places (exit 1: the samples' rejects)",
                     f"exit {code}, {summary}, {err[-300:]}")
        checks.check(not leaked(out, err), "production: the password is never printed")
        export = os.path.join(folder, "prod.geojson")
        code, out, err = ct.run_poi(["export", "-o", export, "--quiet"] + common, timeout=120)
        features = len(json.load(open(export))["features"]) if code == 0 else -1
        checks.check(code == 0 and features == places, f"production: export writes the {places} places", f"exit {code}, {features}, {err[-200:]}")
        code, out, err = ct.run_poi(["thumbnails", "--all", "--quiet"] + common, timeout=300)
        checks.check(code == 0, "production: thumbnails --all", err[-300:])
        code, out, err = ct.run_poi(["gc"] + common, timeout=120)
        checks.check(code == 0 and "consistent" in out + err, "production: gc finds nothing to collect", (out + err)[-300:])
        code, out, err = ct.run_poi(["doctor", "--uri", uri], timeout=60)
        want = ["replica set secantus", "TLS            on", "user 'app' (authSource admin", "authenticated as app@admin",
                "retryable writes yes"]
        checks.check(code == 0 and all(w in out for w in want) and not leaked(out, err),
                     "production: doctor names the replica set, TLS, the user and retryable writes", out[-600:] + err[-200:])

        # poi serve over the same URI.
        import socket
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        log = open(os.path.join(folder, "serve.log"), "w")
        p = subprocess.Popen([ct.poi_binary(), "serve", "--uri", uri, "--gridfs", "--port", str(port)], stdout=log, stderr=log)
        try:
            def get(path):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                        return r.status, r.read()
                except Exception as e:
                    return getattr(e, "code", 0), b""
            up = wait_for(lambda: get("/healthz")[0] == 200 or p.poll() is not None, 20, 0.2)
            status, body = get("/locations")
            served = len(json.loads(body)) if status == 200 else -1
            checks.check(up and status == 200 and served == places, f"production: poi serve answers /locations with {places} places",
                         f"{status}, {served}")
        finally:
            p.terminate()
            p.wait(30)
        checks.check(not leaked(open(os.path.join(folder, "serve.log")).read()), "production: serve's log never prints the password")

        # An election window (NotWritablePrimary on every write for 3 s) during an import.
        rows = ["id,name,lat,lon"] + [f"e{i},Election {i},{(i % 170) - 85},{(i % 350) - 175}" for i in range(3000)]
        election_csv = os.path.join(folder, "election.csv")
        open(election_csv, "w").write("\n".join(rows) + "\n")
        before = db.locations.count_documents({})
        began = time.time()
        proc = subprocess.Popen([ct.poi_binary(), "import", election_csv, "--quiet", "--batch-size", "100"] + common,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        root.admin.command({"configureFailPoint": "failCommand", "mode": "alwaysOn",
                            "data": {"failCommands": ["insert", "update"], "errorCode": 10107,
                                     "errorLabels": ["RetryableWriteError"]}})
        time.sleep(3)
        root.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        added = db.locations.count_documents({}) - before
        took = time.time() - began
        print(f"  election import: exit {proc.returncode} after {took:.1f}s, {added} places; {err.strip()[-200:]}")
        if took < 3.3:
            checks.skip("production: an import across an election", f"the import ended after {took:.1f}s, before the window closed")
        elif proc.returncode == 0:
            checks.check(added == 3000, "production: an import across a 3 s election stores every place exactly once", added)
        else:
            checks.check(proc.returncode == 3, "production: an import that outlasts its retries exits 3", proc.returncode)
            code, out, err = ct.run_poi(["import", election_csv, "--quiet"] + common, timeout=120)
            added = db.locations.count_documents({}) - before
            checks.check(code == 0 and added == 3000, "production: its rerun completes exactly", f"exit {code}, {added}")

        # Connections dropped during GridFS uploads (every insert after the 4th, for 2 s): libmongoc
        # once closed an upload whose last chunk was lost and stored it as whole; each upload is
        # now counted, retried, and the run leaves no damaged file.
        from PIL import Image
        gfolder = os.path.join(folder, "gridfs-drop")
        os.makedirs(gfolder)
        rows = ["id,name,lat,lon,image"]
        for i in range(5):
            Image.effect_noise((700, 700), 60 + i).convert("RGB").save(os.path.join(gfolder, f"big{i}.png"))
            rows.append(f"g{i},Big {i},1.{i},2.{i},big{i}.png")
        open(os.path.join(gfolder, "big.csv"), "w").write("\n".join(rows) + "\n")
        root.admin.command({"configureFailPoint": "failCommand", "mode": {"skip": 4},
                            "data": {"failCommands": ["insert"], "closeConnection": True}})
        timer = threading.Timer(2.0, lambda: root.admin.command({"configureFailPoint": "failCommand", "mode": "off"}))
        timer.start()
        code, out, err = ct.run_poi(["import", os.path.join(gfolder, "big.csv"), "--quiet", "--jobs", "1"] + common, timeout=120)
        timer.join()
        checks.check(code == 0, "production: a GridFS import across dropped connections finishes", f"exit {code}: {err[-300:]}")
        code, out, err = ct.run_poi(["gc", "--verify", "--json"] + common, timeout=120)
        report = json.loads(out) if out.strip().startswith("{") else {}
        checks.check(code == 0 and report.get("damagedBytes") == [] and report.get("unreferencedFiles") == [],
                     "production: no GridFS file was stored short of a chunk", f"exit {code}: {report.get('damagedBytes')} {err[-200:]}")

        # An export whose queries lose their connection (three times): started again, whole.
        root.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 3},
                            "data": {"failCommands": ["find", "aggregate", "count"], "closeConnection": True}})
        code, out, err = ct.run_poi(["export", "-o", export, "--quiet"] + common, timeout=120)
        root.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
        features = len(json.load(open(export))["features"]) if code == 0 else -1
        total = db.locations.count_documents({})
        checks.check(code == 0 and features == total, f"production: an export across dropped connections writes all {total} places",
                     f"exit {code}, {features}, {err[-200:]}")

        # Diagnoses: each names what to fix, exit 3, no password.
        cases = [("a CA that did not sign the server's certificate", uri.replace(certs["ca.pem"], certs["other-ca.pem"]),
                  ["TLS connection to MongoDB", "certificate verify failed"]),
                 ("a wrong password", uri.replace(quoted, "wrong"), ["authentication", "user 'app' (authSource admin"]),
                 ("no user", f"mongodb://127.0.0.1:{server.port}/prod?{tls}", ["names no user"]),
                 ("no tls=true", f"mongodb://app:{quoted}@127.0.0.1:{server.port}/prod?replicaSet=secantus&authSource=admin",
                  ["add tls=true"]),
                 ("a CA file that does not exist", uri.replace(certs["ca.pem"], os.path.join(folder, "missing.pem")),
                  ["TLS connection to MongoDB", "readable PEM files"])]
        for label, bad, words in cases:
            code, out, err = ct.run_poi(["export", "-o", os.path.join(folder, "bad.geojson"), "--uri", bad, "--server-timeout", "3"], timeout=60)
            checks.check(code == 3 and all(w in err for w in words) and not leaked(out, err),
                         f"production: {label} is named as such (exit 3)", f"exit {code}: {err.strip()[-300:]}")
        # A certificate for another host name, on a server of its own.
        other = ct.Server(os.path.join(folder, "server-wrong-host"), tls=(certs["wrong-host.pem"], certs["server.key"]))
        other.ping_uri = f"mongodb://127.0.0.1:{other.port}/?tls=true&tlsCAFile={certs['ca.pem']}&tlsAllowInvalidHostnames=true"
        other.start()
        try:
            code, out, err = ct.run_poi(["export", "-o", os.path.join(folder, "bad.geojson"), "--server-timeout", "3", "--uri",
                                         f"mongodb://127.0.0.1:{other.port}/prod?tls=true&tlsCAFile={certs['ca.pem']}"], timeout=60)
            checks.check(code == 3 and "does not name the host" in err, "production: a certificate for another host is named as such (exit 3)",
                         f"exit {code}: {err.strip()[-300:]}")
        finally:
            other.stop()
    finally:
        server.stop()


def server_stopped_mid_export(server, client, hostport, work, checks):
    print("server stopped mid-export")
    db = client["fault_export"]
    db.drop_collection("locations")
    ct.insert_places(db, 60000, name="Export", key="exp")
    out_path = os.path.join(work, "export", "places.geojson")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    # --retry-for 2: an export to a file starts again after a lost connection; a server that
    # stays gone is reported once that is spent.
    common = ["--uri", server.uri, "--db", "fault_export", "--server-timeout", str(TIMEOUT), "--retry-for", "2"]
    t = time.time()
    code, out, err = ct.run_poi(["export", "-o", out_path, "--quiet"] + common)
    full = time.time() - t
    checks.check(code == 0, f"export: a first full export succeeds ({full:.1f}s)", err[-300:])
    before = hashlib.sha256(open(out_path, "rb").read()).hexdigest()
    p = subprocess.Popen([ct.poi_binary(), "export", "-o", out_path, "--quiet"] + common,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    temp_seen = wait_for(lambda: any(n.startswith(".places.geojson.tmp-") and os.path.getsize(os.path.join(os.path.dirname(out_path), n)) > 0
                                     for n in os.listdir(os.path.dirname(out_path))) or p.poll() is not None, 60, 0.01)
    if p.poll() is not None:
        checks.skip("export stopped mid-stream", f"the export finished ({full:.1f}s) before the server could be stopped")
        server.stop(hard=True)
        server.start()
        return
    server.stop(hard=True)
    stopped_at = time.time()
    out, err = p.communicate(timeout=TIMEOUT + SLACK + 30)
    took = time.time() - stopped_at
    print(f"  poi exited {p.returncode} {took:.1f}s after the server stopped (temp file seen: {temp_seen}); stderr: {err.strip()[-300:]}")
    checks.check(p.returncode == 3, "export: exit 3 when the server goes away mid-stream", p.returncode)
    checks.check(hostport in err, f"export: the message names the server {hostport}", err.strip()[-300:])
    after = hashlib.sha256(open(out_path, "rb").read()).hexdigest()
    checks.check(after == before, "export: the previous output file is byte-identical")
    left = [n for n in os.listdir(os.path.dirname(out_path)) if n != "places.geojson"]
    checks.check(not left, "export: no temporary file left beside it", left)
    server.start()


def mounts_under(path):
    try:
        for line in open("/proc/mounts"):
            m = line.split()[1]
            if m.startswith(path):
                yield m
    except OSError:
        return


def uploads_not_writable(server, client, work, checks):
    print("uploads not writable")
    images = os.path.join(work, "images")
    # A small CSV whose images need more room than the tmpfs has.
    csv_path = os.path.join(work, "disk.csv")
    names = sorted(os.listdir(images))
    with open(csv_path, "w") as f:
        f.write("id,name,lat,lon,photo\n")
        for i, n in enumerate(names):
            f.write(f"disk-{i},Disk {i},{10 + i * 0.01},{20 + i * 0.01},{n}\n")

    def attempt(label, uploads, reason_words, dbname):
        db = client[dbname]
        client.drop_database(dbname)
        code, out, err = ct.run_poi(["import", csv_path, "--images-dir", images, "--quiet", "--uri", server.uri,
                                     "--db", dbname, "--uploads", uploads, "--server-timeout", str(TIMEOUT), "--jobs", "2"])
        print(f"  {label}: exit {code}; stderr: {err.strip()[-300:]}")
        checks.check(code == 3, f"{label}: exit 3", code)
        checks.check(uploads in err and any(w in err for w in reason_words), f"{label}: message names the folder and the reason",
                     err.strip()[-300:])
        if os.path.isdir(uploads):
            problems = file_consistency(db, uploads)
            checks.check(not problems, f"{label}: nothing partial under a final name, no document without bytes", problems[:3])

    # 1. A full tmpfs (needs mount permission).
    full = os.path.join(work, "uploads-full")
    os.makedirs(full)
    size = sum(os.path.getsize(os.path.join(images, n)) for n in names)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={max(64 * 1024, size // 4)}", "tmpfs", full], capture_output=True, text=True)
    if r.returncode != 0:
        checks.skip("uploads on a full disk", f"cannot mount a tmpfs here: {r.stderr.strip()}")
    else:
        try:
            attempt("full disk", full, ["No space left"], "fault_full")
        finally:
            subprocess.run(["umount", full])

    # 2. An immutable folder: root bypasses permission bits, not the immutable attribute.
    ro = os.path.join(work, "uploads-ro")
    os.makedirs(ro)
    r = subprocess.run(["chattr", "+i", ro], capture_output=True, text=True)
    if r.returncode != 0:
        checks.skip("read-only uploads folder", f"chattr +i is not supported here: {r.stderr.strip()}")
    else:
        try:
            attempt("read-only folder", ro, ["Operation not permitted", "Permission denied", "Read-only"], "fault_ro")
        finally:
            subprocess.run(["chattr", "-i", ro])

    # 3. A file where the folder should be.
    blocker = os.path.join(work, "uploads-file")
    open(blocker, "w").write("not a folder")
    attempt("a file where the folder should be", blocker, ["cannot create the uploads folder", "Not a directory", "not a folder"],
            "fault_file")
    checks.check(open(blocker).read() == "not a folder", "a file where the folder should be: left untouched")


if __name__ == "__main__":
    sys.exit(main())
