#!/usr/bin/env python3
"""The pymongo peer of poi-bench-store: the same N place documents, the same protocol (read the
stored digests of a batch, then an unordered bulk of update-pipeline upserts by importKey, with a
SHA-256 digest of the encoded fields), then a full cursor read. One JSON line per phase with wall
time and this process's user+sys CPU for that phase only."""
import argparse, datetime, hashlib, json, os, resource, sys, time

import bson
import pymongo
from pymongo import UpdateOne


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(phase, count, body):
    w0, c0 = time.monotonic(), cpu()
    result = body()
    print(json.dumps({"client": "pymongo", "phase": phase, "count": count,
                      "wall": time.monotonic() - w0, "cpu": cpu() - c0}), flush=True)
    return result


def place(i):
    key = f"bench:{i}"
    return key, {
        "importKey": key,
        "name": f"Place {i}",
        "placename": f"{i} High Street, Springfield",
        "location": {"type": "Point", "coordinates": [(i % 36000) / 100 - 180, (i % 17000) / 100 - 85]},
        "details": f"A benchmark place with a short description, number {i}.",
        "categories": [f"cat{i % 10}", f"cat{i % 7 + 10}"],
        "extra": {"rating": i % 5, "website": f"https://example.com/p/{i}"},
        "source": {"file": "bench.csv", "line": i + 2},
    }


def pipeline(key, fields, digest, now):
    return [{"$replaceWith": {"$mergeObjects": ["$$ROOT", {"$literal": fields}, {
        "importKey": {"$literal": key},
        "contentHash": digest,
        "created_at": {"$ifNull": ["$created_at", {"$literal": now}]},
        "updated_at": {"$cond": [{"$eq": ["$contentHash", digest]}, "$updated_at", {"$literal": now}]},
    }]}}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", default=os.environ.get("MONGODB_URI", "mongodb://127.0.0.1:27017"))
    ap.add_argument("--db", default="poikit_bench")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=1000)
    a = ap.parse_args()
    client = pymongo.MongoClient(a.uri)
    coll = client[a.db]["bench_pymongo"]
    coll.drop()
    coll.create_index("importKey", unique=True, sparse=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def write():
        inserted = 0
        for start in range(0, a.count, a.batch):
            batch = [place(i) for i in range(start, min(start + a.batch, a.count))]
            digests = [hashlib.sha256(bson.encode(f)).hexdigest()[:32] for _, f in batch]
            stored = {d["importKey"]: d.get("contentHash") for d in
                      coll.find({"importKey": {"$in": [k for k, _ in batch]}}, {"importKey": 1, "contentHash": 1, "_id": 0})}
            ops = [UpdateOne({"importKey": k}, pipeline(k, f, h, now), upsert=True)
                   for (k, f), h in zip(batch, digests) if stored.get(k) != h]
            if ops:
                inserted += coll.bulk_write(ops, ordered=False).upserted_count
        assert inserted == a.count, (inserted, a.count)

    def read():
        n = fields = 0
        for doc in coll.find({}, batch_size=a.batch):
            n += 1
            for v in doc.values():
                if isinstance(v, dict):
                    fields += len(v)
                fields += 1
        assert n == a.count, (n, a.count)

    measure("write", a.count, write)
    measure("read", a.count, read)
    coll.drop()


if __name__ == "__main__":
    sys.exit(main())
