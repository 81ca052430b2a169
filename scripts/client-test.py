"""Checks each step the example client (tmt-app-steps) reported against the database and the
uploads folder: a step passes when it said `ok` and what it said is what was stored.
Usage: client-test.py MONGODB_URI DB STEPS_FILE UPLOADS_DIR PHOTO. Ends with `client-test: N passed, M failed`."""
import hashlib
import math
import os
import re
import sys

import pymongo
from bson import ObjectId

uri, db_name, steps_file, uploads, photo_path = sys.argv[1:6]
db = pymongo.MongoClient(uri)[db_name]
photo = open(photo_path, "rb").read()
BOX = {"location": {"$geoWithin": {"$box": [[-10, 35], [30, 60]]}}}


def stored_bytes(file_id):
    """The bytes of a file in the uploads folder (named by its id), or None."""
    names = [n for n in os.listdir(uploads) if n.startswith(str(file_id)) and not n.startswith(".")]
    return open(os.path.join(uploads, names[0]), "rb").read() if names else None


def check_upload(fields, original_name=None):
    file_id = ObjectId(fields["id"])
    doc = db.files.find_one({"_id": file_id})
    assert doc is not None, "no files document"
    assert doc.get("content-type") == "image/jpeg", f"content-type {doc.get('content-type')}"
    assert stored_bytes(file_id) == photo, "the stored bytes are not the photo"
    assert db.files.count_documents({"thumbnailOf": file_id}) >= 1, "no thumbnail document"
    if original_name is not None:
        assert doc.get("originalName") == original_name, f"the part's file name was not kept: {doc.get('originalName')!r}"


def check(name, fields):
    # The lists ran before the place made by `create` (which stays, for its own check): they saw
    # every place but that one.
    created = {"_id": {"$ne": ObjectId(created_id)}} if created_id else {}
    places = db.locations.count_documents(created)
    if name == "health":
        assert fields["ok"] == "true"
    elif name == "list":
        assert int(fields["count"]) == places, f"{fields['count']} listed, {places} stored"
    elif name in ("list-not-modified", "download-not-modified"):
        assert fields["status"] == "304"
    elif name == "box":
        listed = [i for i in fields["ids"].split(",") if i]
        stored = sorted(str(d["_id"]) for d in db.locations.find({"$and": [BOX, created]}, {"_id": 1}))
        assert listed == stored, f"{len(listed)} in the box, {len(stored)} stored there"
        assert listed, "no place in the box (the samples have European ones)"
    elif name == "pages":
        count, pages = int(fields["count"]), int(fields["pages"])
        assert count == places, f"{count} places over the pages, {places} stored"
        assert pages == max(1, math.ceil(places / 3)), f"{pages} pages of 3 for {places} places"
    elif name == "create" or name == "read":
        assert db.locations.find_one({"_id": ObjectId(fields["id"])}) is not None, "not stored"
    elif name == "replace":
        doc = db.locations.find_one({"_id": ObjectId(fields["id"])})
        assert doc is not None, "not stored"
        assert doc["name"] == fields["name"], f"stored name {doc['name']!r}"
        assert "updated_at" in doc and "placename" not in doc, "not replaced whole"
        assert doc["location"]["coordinates"] == [2.35, 48.85]
    elif name == "upload-raw":
        check_upload(fields)
    elif name == "upload-multipart":
        check_upload(fields, original_name="photo.jpg")
    elif name == "download":
        assert int(fields["bytes"]) == len(photo)
    elif name == "thumbnail":
        thumb = db.files.find_one({"thumbnailOf": ObjectId(fields["id"])})
        assert thumb is not None, "no thumbnail document"
        assert len(stored_bytes(thumb["_id"]) or b"") == int(fields["bytes"]), "not the stored thumbnail"
    elif name == "download-range":
        assert fields["status"] == "206" and fields["bytes"] == "100"
    elif name == "delete":
        assert db.locations.find_one({"_id": ObjectId(fields["id"])}) is None, "still stored"
    elif name == "delete-file":
        file_id = ObjectId(fields["id"])
        assert db.files.find_one({"_id": file_id}) is None, "files document still stored"
        assert db.files.count_documents({"thumbnailOf": file_id}) == 0, "its thumbnail is still stored"
        assert stored_bytes(file_id) is None, "its bytes are still in the uploads folder"
    else:
        raise AssertionError("a step this check does not know")


EXPECTED = ["health", "list", "list-not-modified", "box", "pages", "create", "read", "replace", "upload-raw",
            "upload-multipart", "download", "thumbnail", "download-not-modified", "download-range", "delete",
            "delete-file"]
lines = open(steps_file, encoding="utf-8").read().splitlines()
created_id = next((m.group(1) for m in (re.match(r"step create: ok id=([0-9a-f]{24})", l) for l in lines) if m), None)
passed = failed = 0
seen = set()
for line in lines:
    m = re.match(r"step (\S+): (ok|FAILED) ?(.*)$", line.rstrip("\n"))
    if not m:
        continue
    name, outcome, rest = m.groups()
    seen.add(name)
    if outcome != "ok":
        failed += 1
        print(f"client-test: {name}: FAILED in the client: {rest}")
        continue
    fields = dict(re.findall(r"(\w+)=(.*?)(?= \w+=|$)", rest))
    try:
        check(name, fields)
        passed += 1
        print(f"client-test: {name}: ok (checked in the database)")
    except (AssertionError, KeyError, ValueError) as e:
        failed += 1
        print(f"client-test: {name}: FAILED against the database: {e}")
for name in EXPECTED:
    if name not in seen:
        failed += 1
        print(f"client-test: {name}: FAILED: the client did not report it")
print(f"client-test: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
