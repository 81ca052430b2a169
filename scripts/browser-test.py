#!/usr/bin/env python3
"""`make browser-test`: GET /map of `poi serve` in a real browser (Debian's chromium, driven by
Selenium through chromium-driver) over the imported samples.

Checks: the page loads with no console error; the markers in view are exactly the database's
places in the same box (and with a category); zooming out clusters them; a popup's thumbnail
loads; a hostile name shows as text and runs nothing; the page only reads (with --write-token
set); with the tile host unreachable the markers still show; a view holding more than
--map-max-places says so; without Leaflet installed the page and /assets say why.
Everything runs on loopback: the base map comes from a tile server this script runs, and the
browser's proxy is a closed loopback port, so nothing can reach an outside host.
Saves a screenshot of the samples' map to out/browser-test/map.png.
Needs MONGODB_URI (run it through scripts/db.sh). Prints SKIPPED with the reason when there is
no browser. Ends with `browser-test: N passed, M failed`.
"""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
import zlib
import struct
from loopback import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POI = os.environ.get("POI", os.path.join(ROOT, ".build/debug/poi"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
OUT = os.path.join(ROOT, "out", "browser-test")
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_DETAILS = "<script>document.title='pwned'</script><b>bold?</b>"
WAIT = 30  # seconds for any one page state


def skipped(reason):
    print(f"SKIPPED browser-test: {reason}")
    print("browser-test: 0 passed, 0 failed (skipped)")
    sys.exit(0)


def grid_png(width, height, rgb, line_rgb):
    """A plain PNG tile with a line along its top and left edges (the tile grid shows in the
    screenshot), made here so the test needs no image files and no outside host."""
    line = b"\x00" + bytes(line_rgb) * width
    row = b"\x00" + bytes(line_rgb) + bytes(rgb) * (width - 1)
    raw = line + row * (height - 1)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class TileServer:
    """Answers every /z/x/y.png with a light tile, counting the requests: the base map's stand-in."""

    def __init__(self):
        tile = grid_png(256, 256, (232, 238, 226), (200, 210, 196))
        counter = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                counter.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(tile)))
                self.end_headers()
                self.wfile.write(tile)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


class Serve:
    """A `poi serve` process over the test database, on a free loopback port."""

    def __init__(self, label, db, uploads, extra):
        self.port = free_port()
        self.log_path = os.path.join(OUT, f"serve-{label}.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([POI, "serve", "--port", str(self.port), "--db", db, "--uploads", uploads] + extra,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1).read()
                return
            except Exception:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        raise RuntimeError(f"poi serve ({label}) did not start: " + open(self.log_path).read()[-2000:])

    def get(self, path, headers=None):
        request = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def requests_logged(self):
        self.log.flush()
        lines = open(self.log_path).read().splitlines()
        return [l for l in lines if re.match(r"^(GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS) ", l)]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800",
                 # Nothing may leave the machine: every request that is not to loopback goes to a
                 # closed loopback port (Chromium sends loopback past the proxy), and Chromium's own
                 # background traffic is off.
                 "--proxy-server=http://127.0.0.1:9", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", "--no-first-run", "--disable-extensions",
                 "--disable-features=OptimizationHints,MediaRouter,Translate", "--hide-scrollbars"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def wait_for(driver, script, what, timeout=None):
    timeout = timeout or WAIT
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_ready(driver, previous_generation=None):
    """Waits until the page has shown the places of the current view."""
    time.sleep(0.8)  # the page waits 250 ms after a move before it asks (more on a busy machine)
    wait_for(driver, "return document.body.dataset.state === 'ready' || document.body.dataset.state === 'error'",
             "the page to load the view")
    state = driver.execute_script("return document.body.dataset.state")
    if state != "ready":
        raise AssertionError("the page says: " + driver.execute_script(
            "return document.getElementById('count').textContent + ' ' + document.getElementById('note').textContent"))


def set_view(driver, zoom, lat, lon):
    driver.execute_script("poiMap.map.setView([arguments[0], arguments[1]], arguments[2], {animate: false})", lat, lon, zoom)
    wait_ready(driver)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def database_count(db, bounds, category=None):
    query = {"location": {"$geoWithin": {"$box": [[bounds["west"], bounds["south"]], [bounds["east"], bounds["north"]]]}}}
    if category:
        query["categories"] = category
    return db.locations.count_documents(query)


VIEW_BOUNDS = """
const b = poiMap.map.getBounds();
const r = v => Math.round(v * 1e6) / 1e6;
return {west: r(b.getWest()), south: r(Math.max(-90, b.getSouth())), east: r(b.getEast()), north: r(Math.min(90, b.getNorth()))};
"""

FIND_MARKER = """
const marker = poiMap.cluster.getLayers().find(m => m.options.title === arguments[0]);
return marker ? [marker.getLatLng().lat, marker.getLatLng().lng] : null;
"""


def open_popup(driver, title):
    """Zooms in on the marker titled `title` until it stands alone, then opens its popup. (Each
    move loads the view again, with new markers: the marker is looked up after the move.)"""
    where = driver.execute_script(FIND_MARKER, title)
    assert where, f"no marker titled {title!r}"
    set_view(driver, 18, where[0], where[1])
    opened = driver.execute_script("""
        const marker = poiMap.cluster.getLayers().find(m => m.options.title === arguments[0]);
        if (!marker || !marker._icon) return false;
        marker.openPopup();
        return true;""", title)
    assert opened, f"the marker titled {title!r} is not shown alone at zoom 18"


def main():
    if not os.path.exists(CHROMIUM) or not os.path.exists(CHROMEDRIVER):
        skipped(f"no browser: {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        skipped("selenium is not installed in .venv (make setup)")
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        print("browser-test: MONGODB_URI is not set (run: scripts/db.sh with .venv/bin/python scripts/browser-test.py)")
        sys.exit(2)
    if not os.access(POI, os.X_OK):
        print(f"browser-test: {POI} is missing (make build-debug)")
        sys.exit(2)
    # Selenium must never fetch a driver or a browser from the network.
    os.environ["SE_OFFLINE"] = "true"
    import pymongo
    from selenium.common.exceptions import NoAlertPresentException

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    work = tempfile.mkdtemp(prefix="poi-browser-test-")
    uploads = os.path.join(work, "uploads")
    os.makedirs(uploads)
    db_name = f"poikit_browser_test_{os.getpid()}"
    client = pymongo.MongoClient(uri)
    db = client[db_name]
    env = dict(os.environ)
    imported = subprocess.run([POI, "import", "Samples/places.csv", "Samples/landmarks.geojson", "--db", db_name,
                               "--uploads", uploads, "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True)
    if imported.returncode > 1:  # 1: finished with the samples' deliberate rejects
        print("browser-test: poi import failed:\n" + imported.stdout + imported.stderr)
        sys.exit(1)
    # A place whose name and details are markup, beside Big Ben.
    db.locations.insert_one({"name": HOSTILE_NAME, "placename": "<i>Westminster</i>", "details": HOSTILE_DETAILS,
                             "categories": ["<b>hostile</b>"],
                             "location": {"type": "Point", "coordinates": [-0.1262, 51.5012]}})

    tiles = TileServer()
    closed_port = free_port()  # nothing listens here: the unreachable tile host
    servers, results = [], []
    main_server = Serve("main", db_name, uploads, ["--write-token", "browser-test-secret",
                                                   "--map-tiles", f"http://127.0.0.1:{tiles.port}/{{z}}/{{x}}/{{y}}.png",
                                                   "--map-attribution", "Test tiles (loopback)"])
    servers.append(main_server)
    driver = None

    def check(name, function):
        try:
            function()
            results.append((name, True))
            print(f"PASS {name}")
        except Exception as error:
            results.append((name, False))
            print(f"FAIL {name}: {error}")
            if not isinstance(error, AssertionError):
                traceback.print_exc()

    try:
        driver = browser()
        driver.set_script_timeout(WAIT)
        base = main_server.base

        def page_loads_without_console_errors():
            driver.get(base + "/map#11/51.505/-0.11")
            wait_ready(driver)
            errors = console_errors(driver)
            assert errors == [], f"console errors: {errors}"
            status, headers, _ = main_server.get("/map")
            csp = headers.get("Content-Security-Policy", "")
            assert status == 200, status
            assert csp == ("default-src 'none'; script-src 'self'; style-src 'self'; "
                           f"img-src 'self' data: http://127.0.0.1:{tiles.port}; connect-src 'self'; base-uri 'none'; "
                           "form-action 'none'; frame-ancestors 'none'"), csp
            assert tiles.requests > 0, "no tile was asked for"
        check("the page loads with no console error, under its Content-Security-Policy", page_loads_without_console_errors)

        def markers_match_database():
            for zoom, lat, lon in [(11, 51.505, -0.11), (5, 48.0, 8.0), (3, 30.0, 10.0)]:
                set_view(driver, zoom, lat, lon)
                bounds = driver.execute_script(VIEW_BOUNDS)
                expected = database_count(db, bounds)
                shown = int(driver.execute_script("return document.body.dataset.places"))
                layers = driver.execute_script("return poiMap.cluster.getLayers().length")
                count_text = driver.execute_script("return document.getElementById('count').textContent")
                assert expected > 0, f"no sample place in {bounds}"
                assert shown == expected == layers, f"zoom {zoom}: the page shows {shown} ({layers} markers), the database has {expected} in {bounds}"
                assert count_text == f"{expected} places in view", count_text
        check("the markers in view are the database's places in the same box", markers_match_database)

        def category_filter():
            set_view(driver, 5, 48.0, 8.0)
            field = driver.find_element("id", "category")
            field.clear()
            field.send_keys("museum")
            driver.execute_script("document.getElementById('category').dispatchEvent(new Event('change'))")
            wait_for(driver, "return document.body.dataset.state === 'ready' && "
                             "document.getElementById('count').textContent !== ''", "the filtered view")
            wait_ready(driver)
            bounds = driver.execute_script(VIEW_BOUNDS)
            expected = database_count(db, bounds, "museum")
            shown = int(driver.execute_script("return document.body.dataset.places"))
            assert 0 < expected < database_count(db, bounds), "the samples' view needs museums and other places"
            assert shown == expected, f"category museum: the page shows {shown}, the database has {expected}"
            field.clear()
            driver.execute_script("document.getElementById('category').dispatchEvent(new Event('change'))")
            wait_ready(driver)
        check("a category shows only its places", category_filter)

        def zooming_out_clusters():
            set_view(driver, 12, 51.505, -0.11)
            singles_close = driver.execute_script("return document.querySelectorAll('.leaflet-marker-icon:not(.marker-cluster)').length")
            set_view(driver, 2, 30.0, 10.0)
            clusters = driver.execute_script("return document.querySelectorAll('.marker-cluster').length")
            singles = driver.execute_script("return document.querySelectorAll('.leaflet-marker-icon:not(.marker-cluster)').length")
            total = int(driver.execute_script("return document.body.dataset.places"))
            assert singles_close > 1, f"zoomed in on London, {singles_close} single markers"
            assert clusters > 0, "no cluster at zoom 2"
            assert singles + clusters < total, f"{singles} markers and {clusters} clusters for {total} places"
            # A cluster's number is what it holds: the numbers and the single markers add up.
            held = driver.execute_script(
                "return Array.from(document.querySelectorAll('.marker-cluster span')).reduce((s, e) => s + parseInt(e.textContent, 10), 0)")
            assert held + singles == total, f"clusters hold {held}, {singles} single, {total} places"
        check("zooming out clusters the markers", zooming_out_clusters)

        def popup_thumbnail_loads():
            set_view(driver, 11, 51.505, -0.11)
            open_popup(driver, "Big Ben")
            wait_for(driver, "const i = document.querySelector('.poi-popup img.thumbnail'); return i && i.complete && i.naturalWidth > 0",
                     "the thumbnail to load")
            name = driver.execute_script("return document.querySelector('.poi-popup h3').textContent")
            src = driver.execute_script("return document.querySelector('.poi-popup img.thumbnail').getAttribute('src')")
            link = driver.execute_script("return document.querySelector('.poi-popup a.json').getAttribute('href')")
            place = db.locations.find_one({"name": "Big Ben"})
            assert name == "Big Ben", name
            assert src == f"/files/{place['imageId']}/thumbnail", src
            assert link == f"/locations/{place['_id']}", link
            status, _, body = main_server.get(link, {"Accept": "application/json"})
            assert status == 200 and json.loads(body)["name"] == "Big Ben", (status, body[:200])
            # A move loads the view again; the places still in it keep their markers, and the
            # open popup stays open.
            driver.execute_script("poiMap.map.panBy([60, 40], {animate: false})")
            wait_ready(driver)
            assert driver.execute_script("return document.querySelector('.poi-popup h3').textContent") == "Big Ben", \
                "the popup closed when the map moved"
            driver.save_screenshot(os.path.join(OUT, "popup.png"))
            driver.execute_script("poiMap.map.closePopup()")
        check("a popup's thumbnail loads, it links to the place's JSON, and it stays open when the map moves", popup_thumbnail_loads)

        def hostile_name_is_text():
            set_view(driver, 11, 51.505, -0.11)
            open_popup(driver, HOSTILE_NAME)
            wait_for(driver, "return document.querySelector('.poi-popup h3')", "the popup")
            texts = driver.execute_script("""const p = document.querySelector('.poi-popup');
                return [p.querySelector('h3').textContent, p.querySelector('.details').textContent,
                        p.querySelector('.placename').textContent, p.querySelector('.categories').textContent]""")
            assert texts == [HOSTILE_NAME, HOSTILE_DETAILS, "<i>Westminster</i>", "Categories: <b>hostile</b>"], texts
            assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"], .poi-popup script, .poi-popup b, .poi-popup i').length") == 0
            assert driver.title == "Places on a map · poi serve", driver.title
            try:
                alert = driver.switch_to.alert
                text = alert.text
                alert.dismiss()
                raise AssertionError(f"a script ran: alert {text!r}")
            except NoAlertPresentException:
                pass
            # The category list holds it as an option's value, not markup.
            options = driver.execute_script("return Array.from(document.querySelectorAll('#categories option')).map(o => o.value)")
            assert "<b>hostile</b>" in options, options
            driver.execute_script("poiMap.map.closePopup()")
        check("a hostile name shows as text and no script runs", hostile_name_is_text)

        def page_only_reads():
            lines = main_server.requests_logged()
            page = [l for l in lines if not l.startswith("GET /healthz")]
            writes = [l for l in page if not l.startswith(("GET ", "HEAD "))]
            # An access-log line: METHOD PATH STATUS BYTES TIME.
            refused = [l for l in page if re.match(r"^\S+ \S+ (401|403|5\d\d) ", l)]
            assert any(l.startswith("GET /locations?query") for l in page), "the page asked for no places"
            assert writes == [] and refused == [], f"writes {writes}, refused {refused}"
        check("the page only reads, and reads with --write-token set", page_only_reads)

        def samples_screenshot():
            driver.set_window_size(1200, 700)
            set_view(driver, 2, 25.0, 15.0)
            time.sleep(0.5)
            driver.save_screenshot(os.path.join(OUT, "map.png"))
            assert os.path.getsize(os.path.join(OUT, "map.png")) > 10_000
        check("a screenshot of the samples' map is saved (out/browser-test/map.png)", samples_screenshot)

        # The tile host unreachable, and a cap of 5 places per view.
        capped = Serve("unreachable-tiles", db_name, uploads, ["--map-tiles", f"http://127.0.0.1:{closed_port}/{{z}}/{{x}}/{{y}}.png",
                                                                "--map-max-places", "5"])
        servers.append(capped)

        def markers_without_tiles():
            driver.get(capped.base + "/map#11/51.505/-0.11")
            wait_ready(driver)
            icons = driver.execute_script("return document.querySelectorAll('.leaflet-marker-icon').length")
            assert icons > 0, "no marker shows"
            wait_for(driver, "return document.getElementById('tiles-note')", "the note that the base map cannot load")
        check("with the tile host unreachable, the markers still show", markers_without_tiles)

        def cap_is_said():
            set_view(driver, 2, 25.0, 15.0)
            count = driver.execute_script("return document.getElementById('count').textContent")
            note = driver.execute_script("return document.getElementById('note').textContent")
            places = driver.execute_script("return [document.body.dataset.places, document.body.dataset.more]")
            assert count == "More than 5 places in view", count
            assert note.startswith("Showing the first 5 "), note
            assert places == ["5", "true"], places
        check("a view holding more than --map-max-places says so", cap_is_said)

        no_base_map = Serve("no-base-map", db_name, uploads, ["--map-tiles", "none"])
        servers.append(no_base_map)

        def markers_without_base_map():
            driver.get_log("browser")  # the unreachable tiles' errors before this are not this page's
            driver.get(no_base_map.base + "/map#11/51.505/-0.11")
            wait_ready(driver)
            icons = driver.execute_script("return document.querySelectorAll('.leaflet-marker-icon').length")
            tiles_shown = driver.execute_script("return document.querySelectorAll('.leaflet-tile').length")
            assert icons > 0 and tiles_shown == 0, f"{icons} markers, {tiles_shown} tiles"
            errors = console_errors(driver)
            assert errors == [], f"console errors: {errors}"
        check("with --map-tiles none, the markers show on a plain background with no console error", markers_without_base_map)

        no_leaflet = Serve("no-leaflet", db_name, uploads, ["--assets", os.path.join(work, "no-such-folder"), "--map-tiles", "none"])
        servers.append(no_leaflet)

        def missing_leaflet_is_explained():
            status, headers, body = no_leaflet.get("/assets/leaflet/leaflet.min.js")
            message = json.loads(body)["error"]
            assert status == 404 and "apt-get install libjs-leaflet libjs-leaflet.markercluster" in message, (status, body)
            driver.get(no_leaflet.base + "/map")
            wait_for(driver, "return document.body.dataset.state === 'error'", "the page to give up")
            problem = driver.execute_script("return document.getElementById('problem').textContent")
            assert problem == message, problem
        check("without Leaflet, the page and /assets/leaflet/ say how to install it", missing_leaflet_is_explained)
    except Exception as error:
        results.append(("the browser test ran", False))
        print(f"FAIL the browser test ran: {error}")
        traceback.print_exc()
    finally:
        if driver:
            driver.quit()
        for s in servers:
            s.stop()
        tiles.stop()
        client.drop_database(db_name)
        shutil.rmtree(work, ignore_errors=True)

    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"browser-test: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
