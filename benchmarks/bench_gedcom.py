"""GEDCOM benchmark: ``pidkit gedcom audit``, ``add-uids`` and ``migrate`` on a 55 MB file vs. parsing alone
with peers, and vs. gedcomkit (a Rust core) reading and writing the same file.

The file is made by ``benchmarks/make_big_gedcom.py`` (royal92.ged replicated with renamed xrefs).  Each
job runs in its own subprocess, which reports its wall time and its peak RSS (``VmHWM`` of its own
address space), so the memory of one job never counts for another.  Goals: pidkit's audit and
add-uids each take at most half the time the ``gedcom7`` and ``python-gedcom`` packages need just to
parse the file, with pidkit's peak memory at most 100 MB (reported in the note).  ``migrate`` (both its
passes, the 5.5 → 7.0 conversion and the writing) has the memory goal too, and at most the time the
peers need to parse (it parses every line into structures as they do, then converts and writes them).

The anchors of issue 18 are gedcomkit's: ``audit`` at most 0.7 of ``Gedcom.parse`` (reading the file's
bytes included), ``add-uids`` (read, add, write) at most 1.0 of ``Gedcom.parse`` then ``to_bytes`` written
to a file, at most 100 MB.  pidkit's jobs and gedcomkit's alternate, round by round (the ratio of each
round is reported: the spread), and the load average is printed before and after.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks._harness import Result  # noqa: E402
from benchmarks.bench_resolver import _loadavg  # noqa: E402
from benchmarks.make_big_gedcom import make  # noqa: E402

MAX_RSS_MB = 100

_JOB = r"""
import json, sys, time
which, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if which == "audit":
    from pidkit.gedcom import GedcomReader, audit
    with GedcomReader.open(path) as reader:
        audit(reader)
elif which == "add-uids":
    from pidkit.gedcom import GedcomReader, add_uids, write_records
    with GedcomReader.open(path) as reader:
        report, records = add_uids(reader)
        write_records(out, reader.bom, records)
elif which == "migrate":
    from pidkit.gedcom import GedcomReader, index_file, migrate, write_records
    with GedcomReader.open(path) as reader:
        index = index_file(reader)
    with GedcomReader.open(path) as reader:
        report, records = migrate(reader, index)
        write_records(out, report.bom, records)
elif which in ("gedcomkit-parse", "gedcomkit-write"):
    import gedcomkit
    with open(path, "rb") as fh:
        doc = gedcomkit.Gedcom.parse(fh.read())
    if which == "gedcomkit-write":
        with open(out, "wb") as fh:
            fh.write(doc.to_bytes())
elif which == "gedcom7":
    import gedcom7
    with open(path, "rb") as fh:
        gedcom7.load(fh)
elif which == "python-gedcom":
    from gedcom.parser import Parser
    Parser().parse_file(path, strict=False)
elapsed = time.perf_counter() - t0
# Peak RSS of this process's own address space (VmHWM, kB).  Not ru_maxrss: Linux carries that across
# exec from the forked parent, so a big benchmark runner would show up as this job's peak.
with open("/proc/self/status") as fh:
    hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"seconds": elapsed, "rss_mb": hwm / 1024}))
"""


def _job(which: str, path: Path, out: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one job in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", _JOB, which, str(path), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return float(data["seconds"]), float(data["rss_mb"])


def _best(which: str, path: Path, out: Path, repeat: int) -> tuple[float, float]:
    runs = [_job(which, path, out) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def _peers(path: Path, out: Path, size_mb: float, jobs: dict[str, tuple[float, float]]) -> list[Result]:
    """The rows against the two pure-Python parsers (each run once: 20 s apiece)."""
    g7_s, g7_mb = _best("gedcom7", path, out, 1)
    pg_s, pg_mb = _best("python-gedcom", path, out, 1)
    results = []
    for name, goal in (("audit", 0.5), ("add-uids", 0.5), ("migrate", 1.0)):
        secs, mb = jobs[name]
        memory_ok = "ok" if mb <= MAX_RSS_MB else "**over**"
        for peer, peer_s, peer_mb in (("gedcom7 load", g7_s, g7_mb), ("python-gedcom parse", pg_s, pg_mb)):
            results.append(
                Result(
                    name=f"{name}, {size_mb:.0f} MB file",
                    pidkit=f"pidkit gedcom {name}",
                    pidkit_s=secs,
                    peer=peer,
                    peer_s=peer_s,
                    max_ratio=goal,
                    unit="file",
                    note=f"(peak RSS pidkit {mb:.0f} MB, goal ≤ {MAX_RSS_MB} MB: {memory_ok}; "
                    f"peer {peer_mb:.0f} MB)",
                )
            )
    return results


#: pidkit's job, gedcomkit's job it is measured against, the goal (a maximum ratio).
ANCHORED = (("audit", "gedcomkit-parse", 0.7), ("add-uids", "gedcomkit-write", 1.0))


def run(quick: bool) -> list[Result]:
    path = make()
    out = path.with_name("big-with-uids.ged")
    size_mb = path.stat().st_size / 1e6
    rounds = 1 if quick else 5
    load_before = _loadavg()
    print(f"load average before: {load_before}", flush=True)
    times: dict[str, list[tuple[float, float]]] = {}
    for _ in range(rounds):  # interleaved: each round runs every job once, pidkit's and gedcomkit's
        for which in ("audit", "gedcomkit-parse", "add-uids", "gedcomkit-write"):
            times.setdefault(which, []).append(_job(which, path, out))
    migrate = _best("migrate", path, path.with_name("big-7.ged"), 1 if quick else 2)
    best = {which: (min(t for t, _ in runs), max(mb for _, mb in runs)) for which, runs in times.items()}
    results = _peers(path, out, size_mb, {**best, "migrate": migrate})
    load_after = _loadavg()
    print(f"load average after: {load_after}", flush=True)
    for ours, theirs, goal in ANCHORED:
        (secs, mb), (peer_s, peer_mb) = best[ours], best[theirs]
        spread = ", ".join(f"{a[0] / b[0]:.2f}" for a, b in zip(times[ours], times[theirs], strict=True))
        memory_ok = "ok" if mb <= MAX_RSS_MB else "**over**"
        results.append(
            Result(
                name=f"{ours}, {size_mb:.0f} MB file",
                pidkit=f"pidkit gedcom {ours}",
                pidkit_s=secs,
                peer=f"gedcomkit {'parse' if theirs == 'gedcomkit-parse' else 'parse + to_bytes + write'}",
                peer_s=peer_s,
                max_ratio=goal,
                unit="file",
                note=f"(best of {rounds} interleaved rounds, ratio per round {spread}; peak RSS pidkit "
                f"{mb:.0f} MB, goal ≤ {MAX_RSS_MB} MB: {memory_ok}; gedcomkit {peer_mb:.0f} MB; "
                f"load average {load_before} before, {load_after} after)",
            )
        )
    return results


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        print(r, f"ratio={r.ratio:.3f}", "OK" if r.ok else "MISSED")
