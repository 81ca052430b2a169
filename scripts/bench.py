#!/usr/bin/env python3
"""`make bench`: runs every benchmark of the project in one go and ends with one table.

Each bench script prints its own detailed table and appends result rows (JSON lines) to
$BENCH_RESULTS; this driver runs them in order, then prints
  benchmark | PoiKit | peer | ratio | target | met?
and writes the same rows to out/bench.json. Then every row beside the committed baseline
(Benchmarks/baseline.json, scripts/bench_baseline.py): a row more than 15 % worse than its
baseline ratio is flagged and the run fails, unless the commit that moves it on purpose records
the new ratio and why (`make bench-baseline REASON="..."`).
"""
import json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_baseline  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "out")
SUITES = [s for s in os.environ.get("BENCHES", "bench-images bench-formats bench-store bench-jobs bench-serve").split()]


def main():
    os.makedirs(OUT, exist_ok=True)
    results_path = os.path.join(OUT, "bench.jsonl")
    open(results_path, "w").close()
    env = dict(os.environ, BENCH_RESULTS=results_path)
    failed = []
    for suite in SUITES:
        print(f"\n######## make {suite}", flush=True)
        started = time.monotonic()
        if subprocess.run(["make", "--no-print-directory", suite], cwd=ROOT, env=env).returncode != 0:
            failed.append(suite)
        print(f"######## {suite}: {time.monotonic() - started:.0f} s", flush=True)

    rows = []
    with open(results_path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    with open(os.path.join(OUT, "bench.json"), "w") as f:
        json.dump({"rows": rows, "failed_suites": failed}, f, indent=2, ensure_ascii=False)

    w = max([len(r["benchmark"]) for r in rows] + [9])
    print(f"\n{'benchmark':<{w}} | {'PoiKit':>9} | {'peer':<28} | {'ratio':>6} | {'target':<7} | met?")
    print("-" * (w + 70))
    for r in rows:
        peer = f"{r['peer']} {r['peer_value']}"
        met = "-" if r.get("met") is None else ("yes" if r["met"] else "NO")
        print(f"{r['benchmark']:<{w}} | {r['poikit']:>9} | {peer:<28.28} | {r['ratio']:>6} | {r.get('target') or '-':<7} | {met}")
    print(f"\n{len(rows)} results in out/bench.json" + (f"; suites that failed: {', '.join(failed)}" if failed else ""))
    worse = bench_baseline.print_beside(rows, bench_baseline.load())
    if worse:
        print(f"\n{len(worse)} row(s) more than {bench_baseline.TOLERANCE:.0%} worse than Benchmarks/baseline.json: "
              "find out why, or record a move made on purpose with make bench-baseline REASON=\"...\"")
    return 1 if failed or worse else 0


if __name__ == "__main__":
    sys.exit(main())
