#!/usr/bin/env python3
"""`make bench-serve`: `poi serve` beside the tutorial's Express server and nginx
(sendfile on, the machine's limit for static bytes) on loopback, same database, same files.

(a) GET /files/:id of a 5 MB and of a 16 MB photo   (b) GET /files/:id of a thumbnail (~6 kB)
(c) GET /locations?query=<box> over 10k places   (d) POST /files of a 5 MB JPEG (+ thumbnail)
(e) GET /locations (1,000 places) with and without gzip: bytes, req/s, CPU per request
(f) GET /locations answered 304 (If-None-Match), against the reference's own 304s
and poi serve's resident memory idle, 5 s after the upload burst, and at its peak while 64 clients
download the largest photo (its high-water mark). Photos and thumbnails must reach 0.9x nginx's
rate (s/req ratio <= 1.111). Beside them, the thumbnail is also answered by a bare SwiftNIO
HTTP/1 server holding it in memory (Benchmarks/NIOFloor, built here): the stack's own floor, so a
gap to nginx can be split into poi's part and SwiftNIO's.

wrk -t2 -c16, bounded runs (DURATION= seconds, default 5). Needs wrk and nginx-light (Debian);
the reference needs nodejs node-express node-mongodb; a missing peer is reported and skipped.
Runs under `scripts/db.sh with` (MONGODB_URI). Corpus and uploads live in .bench/serve/.
"""
import json, os, random, re, shutil, signal, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_results import emit  # noqa: E402
from loopback import free_port, stop, wait_http  # noqa: E402

POI = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
URI = os.environ["MONGODB_URI"]
DB = "poikit_bench_serve"
WORK = os.path.join(ROOT, ".bench/serve")
UPLOADS = os.path.join(WORK, "uploads")
DURATION = int(os.environ.get("DURATION", "5"))
REFERENCE = os.environ.get("TMT_REFERENCE") or next(
    (p for p in [os.path.join(ROOT, "../shared/reference/tmt-server/index.js"),
                 os.path.join(ROOT, "../../shared/reference/tmt-server/index.js")] if os.path.exists(p)), None)


def resident_mb(pid):
    """VmRSS of a process, in MB."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) / 1024


def make_corpus():
    """A 5 MB JPEG photo-like image (noise keeps it big), its thumbnail, and 10k places."""
    from PIL import Image
    import pymongo
    os.makedirs(WORK, exist_ok=True)
    shutil.rmtree(UPLOADS, ignore_errors=True)
    os.makedirs(UPLOADS)
    photo = os.path.join(WORK, "photo.jpg")
    if not os.path.exists(photo):
        rnd = random.Random(14)
        w, h = 2600, 1950
        img = Image.effect_noise((w, h), 64).convert("RGB")
        img = Image.merge("RGB", [img.getchannel(0), img.getchannel(0).rotate(90, expand=False), img.getchannel(0).transpose(Image.FLIP_LEFT_RIGHT)])
        img.save(photo, quality=95)
    client = pymongo.MongoClient(URI)
    client.drop_database(DB)
    db = client[DB]
    rnd = random.Random(7)
    db.locations.insert_many([{"name": f"Place {i}", "placename": f"Street {i}",
                               "location": {"type": "Point", "coordinates": [rnd.uniform(-10, 30), rnd.uniform(35, 60)]},
                               "categories": [rnd.choice(["museum", "park", "cafe", "church"])], "details": "x" * 80}
                              for i in range(10_000)])
    db.locations.create_index([("location", "2dsphere")])
    # A 16 MB photo, the size of a modern phone's, for the big-download row.
    big = os.path.join(WORK, "photo16.jpg")
    if not os.path.exists(big):
        img = Image.effect_noise((4640, 3480), 64).convert("RGB")
        img = Image.merge("RGB", [img.getchannel(0), img.getchannel(0).transpose(Image.FLIP_TOP_BOTTOM),
                                  img.getchannel(0).transpose(Image.FLIP_LEFT_RIGHT)])
        img.save(big, quality=95)
    return photo, os.path.getsize(photo), big


def nio_floor():
    """The bare SwiftNIO server's binary, built in release (None, with the reason printed, if not)."""
    scratch = os.path.join(ROOT, "Benchmarks/.build")
    r = subprocess.run(["swift", "build", "-c", "release", "--package-path", os.path.join(ROOT, "Benchmarks"),
                        "--scratch-path", scratch, "--product", "poi-bench-nio-floor"], capture_output=True, text=True)
    if r.returncode != 0:
        print("bench-serve: bare SwiftNIO SKIPPED: it did not build:\n" + r.stderr[-2000:])
        return None
    return os.path.join(scratch, "release", "poi-bench-nio-floor")


def wrk(url, connections=16, script=None, duration=DURATION, headers=()):
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "10s"]
    for h in headers:
        cmd += ["-H", h]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def latency(pct):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return None
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = re.search(r"(\d+) requests in", out)
    return {"rps": rps, "p50": latency(50), "p99": latency(99), "non2xx": int(errors.group(1)) if errors else 0,
            "requests": int(total.group(1)) if total else 0}


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def curl_bytes(url, headers=()):
    """Bytes on the wire of one response's body, and its ETag."""
    args = ["curl", "-s", "-o", "/dev/null", "-D", "-", "-w", "\n%{size_download}"]
    for h in headers:
        args += ["-H", h]
    out = subprocess.run(args + [url], capture_output=True, text=True).stdout
    etag = re.search(r"^etag:\s*(.+?)\s*$", out, re.M | re.I)
    return int(out.strip().rsplit("\n", 1)[-1]), etag.group(1) if etag else None


def main():
    for tool in ["wrk"]:
        if not shutil.which(tool):
            print(f"bench-serve: SKIPPED: {tool} is not installed (apt-get install wrk nginx-light)")
            return 0
    photo, photo_size, big_photo = make_corpus()
    floor = nio_floor()
    scratch = tempfile.mkdtemp(prefix="bench-serve-")
    procs = {}
    try:
        port = free_port()
        log = open(os.path.join(scratch, "poi.log"), "w")
        procs["poi serve"] = subprocess.Popen([POI, "serve", "--uri", URI, "--db", DB, "--uploads", UPLOADS, "--port", str(port)],
                                              stdout=subprocess.DEVNULL, stderr=log)
        servers = {"poi serve": f"http://127.0.0.1:{port}"}
        wait_http(servers["poi serve"] + "/", procs["poi serve"])
        # Upload the photo through poi serve (it makes the thumbnail): the same files for everyone.
        out = subprocess.run(["curl", "-s", "-H", "Content-Type: image/jpeg", "--data-binary", "@" + photo,
                              servers["poi serve"] + "/files"], capture_output=True, text=True).stdout
        photo_id = json.loads(out)["_id"]
        out = subprocess.run(["curl", "-s", "-H", "Content-Type: image/jpeg", "--data-binary", "@" + big_photo,
                              servers["poi serve"] + "/files"], capture_output=True, text=True).stdout
        big_id = json.loads(out)["_id"]
        time.sleep(1)
        idle_mb = resident_mb(procs["poi serve"].pid)
        import pymongo
        db = pymongo.MongoClient(URI)[DB]
        thumb = db.files.find_one({"thumbnailOf": __import__("bson").ObjectId(photo_id)})
        thumb_id = str(thumb["_id"])

        node = shutil.which("node") or shutil.which("nodejs")
        if node and REFERENCE and os.path.exists("/usr/share/nodejs/express") and os.path.exists("/usr/share/nodejs/mongodb"):
            rport = free_port()
            env = dict(os.environ, NODE_PATH="/usr/share/nodejs", MONGO_URL=URI, DB=DB, PORT=str(rport), UPLOADS=UPLOADS)
            procs["reference"] = subprocess.Popen([node, REFERENCE], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            servers["reference"] = f"http://127.0.0.1:{rport}"
            wait_http(servers["reference"] + "/", procs["reference"])
        else:
            print("bench-serve: reference SKIPPED: needs node, node-express, node-mongodb and ../shared/reference/tmt-server")
        nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        if nginx:
            nport = free_port()
            conf = os.path.join(scratch, "nginx.conf")
            with open(conf, "w") as f:
                f.write(f"""daemon off; worker_processes 2; pid {scratch}/nginx.pid; error_log {scratch}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; types {{ image/jpeg jpeg; image/png png; }}
  client_body_temp_path {scratch}/body; proxy_temp_path {scratch}/proxy; fastcgi_temp_path {scratch}/fcgi;
  uwsgi_temp_path {scratch}/uwsgi; scgi_temp_path {scratch}/scgi;
  server {{ listen 127.0.0.1:{nport}; location /files/ {{ alias {UPLOADS}/; }} location / {{ return 200; }} }} }}
""")
            procs["nginx"] = subprocess.Popen([nginx, "-c", conf, "-p", scratch], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            servers["nginx"] = f"http://127.0.0.1:{nport}"
            wait_http(servers["nginx"] + "/", procs["nginx"])
        else:
            print("bench-serve: nginx SKIPPED: apt-get install nginx-light")

        photo_doc = db.files.find_one({"_id": __import__("bson").ObjectId(photo_id)})
        big_doc = db.files.find_one({"_id": __import__("bson").ObjectId(big_id)})
        if floor:
            fport = free_port()
            procs["bare SwiftNIO"] = subprocess.Popen([floor, os.path.join(UPLOADS, thumb_id + thumb["ext"]), str(fport)],
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            servers["bare SwiftNIO"] = f"http://127.0.0.1:{fport}"
            wait_http(servers["bare SwiftNIO"] + "/", procs["bare SwiftNIO"])
        box = json.dumps({"location": {"$geoWithin": {"$box": [[0, 45], [5, 50]]}}}, separators=(",", ":"))
        from urllib.parse import quote
        results = {}
        cases = [
            ("a", f"GET /files/:id, {photo_size / 1e6:.1f} MB photo", {"poi serve": f"/files/{photo_id}", "reference": f"/files/{photo_id}",
                                                                       "nginx": f"/files/{photo_id}{photo_doc['ext']}"}),
            ("a16", f"GET /files/:id, {os.path.getsize(big_photo) / 1e6:.1f} MB photo", {"poi serve": f"/files/{big_id}",
                                                                                 "nginx": f"/files/{big_id}{big_doc['ext']}"}),
            ("b", f"GET /files/:id, {thumb['length'] / 1e3:.1f} kB thumbnail", {"poi serve": f"/files/{thumb_id}", "reference": f"/files/{thumb_id}",
                                                                                "nginx": f"/files/{thumb_id}{thumb['ext']}",
                                                                                "bare SwiftNIO": "/"}),
            ("c", "GET /locations?query=<box> over 10k places", {"poi serve": f"/locations?query={quote(box)}", "reference": f"/locations?query={quote(box)}"}),
        ]
        print(f"\nbench-serve: wrk -t2 -c16 -d{DURATION}s on loopback, same database and files")
        print(f"{'case':<44} {'server':<10} {'req/s':>10} {'p50 ms':>9} {'p99 ms':>9}")
        for key, label, paths in cases:
            for name, path in paths.items():
                if name not in servers:
                    continue
                # The box query is bound by the database (one query takes ~0.5 s on the embedded
                # test server, which answers one at a time): few connections, a longer run, and a
                # pause after it so queued queries do not slow the next case.
                if key == "c":
                    r = wrk(servers[name] + path, connections=2, duration=max(DURATION, 10))
                    time.sleep(3)
                else:
                    r = wrk(servers[name] + path)
                results[(key, name)] = r
                bad = f"  ({r['non2xx']} non-2xx)" if r["non2xx"] else ""
                print(f"{label:<44} {name:<10} {r['rps']:>10.0f} {r['p50'] or 0:>9.2f} {r['p99'] or 0:>9.2f}{bad}", flush=True)

        # (e) GET /locations (1,000 places: the --max-results cap) with and without gzip: bytes
        # on the wire, req/s and poi serve's CPU per request; (f) a 304 revalidation's req/s.
        plain_bytes, etag = curl_bytes(servers["poi serve"] + "/locations")
        gzip_bytes, _ = curl_bytes(servers["poi serve"] + "/locations", ["Accept-Encoding: gzip"])
        print(f"GET /locations (1,000 places): {plain_bytes} bytes, {gzip_bytes} with Accept-Encoding: gzip "
              f"({plain_bytes / max(gzip_bytes, 1):.1f}x fewer)")
        for label, headers in [("identity", ()), ("gzip", ("Accept-Encoding: gzip",))]:
            before = cpu_seconds(procs["poi serve"].pid)
            r = wrk(servers["poi serve"] + "/locations", connections=4, headers=headers)
            used = cpu_seconds(procs["poi serve"].pid) - before
            r["cpu_ms"] = 1000 * used / max(r["requests"], 1)
            results[("e-" + label, "poi serve")] = r
            print(f"{'GET /locations, ' + label:<44} {'poi serve':<10} {r['rps']:>10.0f} {r['p50'] or 0:>9.2f} {r['p99'] or 0:>9.2f}"
                  f"  CPU {r['cpu_ms']:.2f} ms/request", flush=True)
        for name in ["poi serve", "reference"]:
            if name not in servers:
                continue
            _, tag = curl_bytes(servers[name] + "/locations")
            if not tag:
                print(f"bench-serve: {name} sends no ETag on /locations; 304 case skipped")
                continue
            r = wrk(servers[name] + "/locations", connections=16, headers=(f"If-None-Match: {tag}",))
            results[("f", name)] = r
            print(f"{'GET /locations, If-None-Match (304)':<44} {name:<10} {r['rps']:>10.0f} {r['p50'] or 0:>9.2f} {r['p99'] or 0:>9.2f}", flush=True)

        # (d) uploads: every request a different image (a counter after the JPEG's end), so no
        # server can answer from a dedup; fewer connections and a shorter run (5 MB each).
        lua = os.path.join(scratch, "post.lua")
        with open(lua, "w") as f:
            f.write(f"""local f = io.open("{photo}", "rb"); local body = f:read("*a"); f:close()
local n = 0
request = function() n = n + 1
  return wrk.format("POST", "/files", {{["Content-Type"] = "image/jpeg"}}, body .. "poikit-bench-" .. tostring(n) .. "-" .. tostring(math.random(1e9))) end
""")
        for name in ["poi serve", "reference"]:
            if name in servers:
                r = wrk(servers[name] + "/files", connections=4, script=lua, duration=max(5, DURATION))
                results[("d", name)] = r
                print(f"{'POST /files, 5 MB JPEG (+ thumbnail for poi)':<44} {name:<10} {r['rps']:>10.1f} {r['p50'] or 0:>9.2f} {r['p99'] or 0:>9.2f}", flush=True)

        # Memory comes back after the upload burst (within 30 MB of idle, 5 s later).
        after_burst_mb = None
        if ("d", "poi serve") in results:
            time.sleep(5)
            after_burst_mb = resident_mb(procs["poi serve"].pid)
            print(f"poi serve resident memory: {idle_mb:.0f} MB idle, {after_burst_mb:.0f} MB 5 s after the upload burst "
                  f"(target: within 30 MB of idle)", flush=True)
            emit("serve RSS 5 s after uploads, above idle (MB)", after_burst_mb - idle_mb, "target", 30, "<=1.0", unit="MB")

        # Peak RSS under 64 concurrent downloads of the largest photo.
        r = wrk(servers["poi serve"] + f"/files/{big_id}", connections=64)
        with open(f"/proc/{procs['poi serve'].pid}/status") as f:
            hwm = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) / 1024
        print(f"poi serve peak RSS with 64 clients downloading the photo: {hwm:.0f} MB (target <= 150), {r['rps']:.0f} req/s")

        for key, what, target in [("a", "serve GET photo (s/req, vs reference)", "<=0.333"),
                                  # (the reference is not asked for the 16 MB photo: its nginx row is the one that counts)
                                  ("a16", "serve GET 16 MB photo (s/req, vs reference)", None),
                                  ("b", "serve GET thumbnail (s/req, vs reference)", "<=0.1"),
                                  ("c", "serve box query (s/req, vs reference)", "<=1.0"),
                                  ("d", "serve POST 5 MB (s/req, vs reference)", None)]:
            if results.get((key, "poi serve"), {}).get("rps") and results.get((key, "reference"), {}).get("rps"):
                emit(what, 1 / results[(key, "poi serve")]["rps"], "reference", 1 / results[(key, "reference")]["rps"], target, unit="s/req")
            if results.get((key, "poi serve"), {}).get("rps") and results.get((key, "nginx"), {}).get("rps"):
                emit(what.replace("vs reference", "vs nginx"), 1 / results[(key, "poi serve")]["rps"], "nginx sendfile",
                     1 / results[(key, "nginx")]["rps"], "<=1.111" if key in ("a", "a16", "b") else None, unit="s/req")
        floor_b, poi_b, nginx_b = (results.get(("b", n), {}).get("rps") for n in ("bare SwiftNIO", "poi serve", "nginx"))
        if floor_b and poi_b:
            emit("serve GET thumbnail (s/req, vs bare SwiftNIO)", 1 / poi_b, "bare SwiftNIO", 1 / floor_b, None, unit="s/req")
        if floor_b and nginx_b:
            emit("bare SwiftNIO GET thumbnail (s/req, vs nginx)", 1 / floor_b, "nginx sendfile", 1 / nginx_b, None, unit="s/req")
        emit("serve peak RSS, 64 downloads (MB)", hwm, "target", 150, "<=1.0", unit="MB")
        emit("serve /locations gzip (bytes, vs identity)", gzip_bytes, "identity", plain_bytes, "<=0.2", unit="bytes")
        ident, gz = results.get(("e-identity", "poi serve")), results.get(("e-gzip", "poi serve"))
        # CPU time comes in 10 ms ticks (/proc/PID/stat): over the two or three requests a run
        # completes when the stand-in database takes 2 s per /locations, the ratio is the ticks'
        # noise (35/21 in one run, 45/20 and 40/17.5 in the next two, same binary). No row then.
        if ident and gz and min(ident["requests"], gz["requests"]) >= 20:
            emit("serve /locations gzip CPU (ms/req, vs identity)", gz["cpu_ms"], "identity", ident["cpu_ms"], None, unit="ms")
        elif ident and gz:
            print(f"serve /locations gzip CPU: not measured: {ident['requests']} and {gz['requests']} requests in the runs "
                  "(at least 20 each are needed for 10 ms CPU ticks to mean anything)")
        # A case with no complete request in its run (rps 0: a slow server) has no ratio to give.
        if results.get(("f", "poi serve"), {}).get("rps") and results.get(("f", "reference"), {}).get("rps"):
            emit("serve 304 revalidation (s/req, vs reference)", 1 / results[("f", "poi serve")]["rps"], "reference",
                 1 / results[("f", "reference")]["rps"], "<=1.0", unit="s/req")
    finally:
        for p in procs.values():
            stop(p)
        try:
            import pymongo
            pymongo.MongoClient(URI).drop_database(DB)
        except Exception:
            pass
        shutil.rmtree(UPLOADS, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
