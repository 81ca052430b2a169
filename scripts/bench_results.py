"""Result rows for `make bench`'s final table: each bench script calls `emit` per comparison;
rows are appended as JSON lines to $BENCH_RESULTS (nothing happens when it is unset)."""
import json, os


def emit(benchmark, poikit, peer, peer_value, target=None, unit="s"):
    path = os.environ.get("BENCH_RESULTS")
    if not path:
        return
    ratio = poikit / peer_value if peer_value else None
    limit = None
    if target:
        limit = float(target.replace("<=", "").strip())
    row = {"benchmark": benchmark, "unit": unit, "poikit": round(poikit, 3), "peer": peer,
           "peer_value": round(peer_value, 3) if peer_value is not None else None,
           "ratio": round(ratio, 3) if ratio is not None else None, "target": target,
           "met": (ratio <= limit) if (limit is not None and ratio is not None) else None}
    with open(path, "a") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
