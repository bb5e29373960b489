"""GEDCOM benchmark: ``pidkit gedcom audit``, ``add-uids`` and ``migrate`` on a 55 MB file vs. parsing alone
with peers.

The file is made by ``benchmarks/make_big_gedcom.py`` (royal92.ged replicated with renamed xrefs).  Each
job runs in its own subprocess, which reports its wall time and its peak RSS (``VmHWM`` of its own
address space), so the memory of one job never counts for another.  Goals: pidkit's audit and
add-uids each take at most half the time the ``gedcom7`` and ``python-gedcom`` packages need just to
parse the file, with pidkit's peak memory at most 100 MB (reported in the note).  ``migrate`` (both its
passes, the 5.5 → 7.0 conversion and the writing) has the memory goal too, and at most the time the
peers need to parse (it parses every line into structures as they do, then converts and writes them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks._harness import Result  # noqa: E402
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


def run(quick: bool) -> list[Result]:
    path = make()
    out = path.with_name("big-with-uids.ged")
    size_mb = path.stat().st_size / 1e6
    repeat = 1 if quick else 2
    audit_s, audit_mb = _best("audit", path, out, repeat)
    add_s, add_mb = _best("add-uids", path, out, repeat)
    migrate_s, migrate_mb = _best("migrate", path, path.with_name("big-7.ged"), repeat)
    g7_s, g7_mb = _best("gedcom7", path, out, 1)
    pg_s, pg_mb = _best("python-gedcom", path, out, 1)
    results = []
    for name, secs, mb, goal in (
        ("audit", audit_s, audit_mb, 0.5),
        ("add-uids", add_s, add_mb, 0.5),
        ("migrate", migrate_s, migrate_mb, 1.0),
    ):
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


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        print(r, f"ratio={r.ratio:.3f}", "OK" if r.ok else "MISSED")
