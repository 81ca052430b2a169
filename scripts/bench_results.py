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


class PeakRSS:
    """A command wrapped so that its peak resident memory is its own.

    The rusage of a child (`os.wait4`) cannot say it: Linux carries the forking process's resident
    size into the child's `ru_maxrss` across fork and exec, so every command a 136 MB harness
    starts reported at least 136 MB, and a memory row could not fail. GNU time (Debian's `time`,
    installed by `make setup`) forks from a process of a megabyte or two and reports its child's.

        peak = PeakRSS(cmd); subprocess.Popen(peak.command, ...); ...; peak.megabytes()
    """

    def __init__(self, cmd):
        import tempfile
        fd, self.path = tempfile.mkstemp(prefix="peak-rss-")
        os.close(fd)
        self.command = ["/usr/bin/time", "-f", "%M", "-o", self.path] + list(cmd)

    def megabytes(self):
        """The command's peak RSS in MB (GNU time's %M is KiB); the file is removed."""
        try:
            with open(self.path) as f:
                lines = [line for line in f.read().splitlines() if line.strip()]
            # GNU time writes "Command exited with non-zero status N" first when it fails.
            return int(lines[-1]) / 1024.0
        finally:
            os.unlink(self.path)
