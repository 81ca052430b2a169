"""The committed baseline of `make bench` and `make bench-smoke`: Benchmarks/baseline.json.

Each row of a bench is a ratio to a peer measured in the same run (PoiKit's cost over the peer's:
seconds per request, wall or CPU seconds, megabytes), so lower is better and the ratio, unlike
the raw figures, survives a busier or a faster machine fairly well. The baseline keeps, per row
(benchmark and peer), the ratio last accepted, the machine it was measured on, when, and why it
moved. A run prints every row beside it and flags a row more than TOLERANCE worse: a loss such as
downloads falling from 1.2x to 0.34x nginx's rate cannot pass unseen again.

A commit that moves a row on purpose records the new ratio with its reason:
    make bench-baseline REASON="why the row moved"    (rows of the last out/bench.json)
"""
import datetime, json, os, platform

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "Benchmarks", "baseline.json")
# A row flagged worse is more than 15 % above its baseline ratio.
TOLERANCE = 0.15


def key(row):
    """Rows are named by benchmark and peer: one benchmark is compared with several peers."""
    return f"{row['benchmark']} | {row['peer']}"


def machine():
    """The CPU model and core count, which is what a ratio to a peer still depends on."""
    model = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def load():
    if not os.path.exists(BASELINE):
        return {}
    with open(BASELINE) as f:
        return json.load(f).get("rows", {})


def verdict(row, base):
    """'worse' when the row's ratio is more than TOLERANCE above its baseline, 'new' without one."""
    if base is None or base.get("ratio") in (None, 0):
        return "new"
    if row.get("ratio") is None:
        return "no ratio"
    return "WORSE" if row["ratio"] > base["ratio"] * (1 + TOLERANCE) else "ok"


def print_beside(rows, baseline):
    """Every row beside its baseline; returns the rows flagged worse."""
    worse = []
    w = max([len(key(r)) for r in rows] + [9])
    print(f"\n{'benchmark | peer':<{w}} | {'ratio':>7} | {'baseline':>8} | {'change':>7} | verdict (> {TOLERANCE:.0%} worse is flagged)")
    print("-" * (w + 60))
    for r in rows:
        base = baseline.get(key(r))
        v = verdict(r, base)
        change = "-"
        if v in ("ok", "WORSE"):
            change = f"{(r['ratio'] / base['ratio'] - 1) * 100:+.0f}%"
        ratio = "-" if r.get("ratio") is None else r["ratio"]
        print(f"{key(r):<{w}} | {ratio:>7} | {base['ratio'] if base else '-':>8} | {change:>7} | {v}")
        if v == "WORSE":
            worse.append(r)
    return worse


def update(rows, reason):
    """Records `rows` as the new baseline of their keys, with `reason` and this machine."""
    data = {"tolerance": TOLERANCE, "rows": {}}
    if os.path.exists(BASELINE):
        with open(BASELINE) as f:
            data = json.load(f)
    today = datetime.date.today().isoformat()
    for r in rows:
        if r.get("ratio") is None:
            continue
        data["rows"][key(r)] = {"ratio": r["ratio"], "poikit": r["poikit"], "peer_value": r["peer_value"],
                                "unit": r.get("unit"), "measured": today, "machine": machine(), "reason": reason}
    data["rows"] = dict(sorted(data["rows"].items()))
    with open(BASELINE, "w") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    # make bench-baseline REASON="..." [FROM=out/bench-smoke.json]: the rows of the last run become
    # the baseline of their keys (rows of other benches keep theirs).
    import sys
    reason = os.environ.get("REASON", "").strip()
    source = os.environ.get("FROM") or os.path.join(ROOT, "out", "bench.json")
    if not reason:
        sys.exit('bench-baseline: say why the rows moved: make bench-baseline REASON="..."')
    with open(source) as f:
        rows = json.load(f)["rows"]
    update(rows, reason)
    print(f"bench-baseline: {len(rows)} rows of {os.path.relpath(source, ROOT)} recorded in {os.path.relpath(BASELINE, ROOT)}")
