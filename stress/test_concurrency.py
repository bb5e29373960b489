# ruff: noqa: S603
"""Concurrency: 8 processes minting 100,000 ids from ONE minter (SQLite and PostgreSQL), and TID clocks
used from 8 threads.

Definitions checked for minting:

* **duplicate**: an id reported by two processes, or twice by one;
* **gap**: an id a process reported as minted (``pidkit mint`` prints a batch only after its commit)
  that is not in the store's ``minted`` table, or a row of the table (for that minter) that no process
  reported.  The union of all reports must equal the table exactly, and hold exactly 100,000 ids.
"""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from pidkit import TidClock
from pidkit.store import open_store
from stress import _report
from stress.conftest import backend_of

PROCESSES = 8
TOTAL = 100_000
BATCH = 250
NAAN = "99999"


def _minted_rows(url: str, minter: str) -> list[tuple[str, str, int]]:
    """(naan, id, position) of every row of ``minted`` for ``minter``, straight from the database."""
    sql = "SELECT naan, id, position FROM minted WHERE minter = "
    if url.startswith("sqlite:"):
        with sqlite3.connect(url[len("sqlite:///") :]) as conn:
            return [tuple(r) for r in conn.execute(sql + "?", (minter,))]
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sql + "%s", (minter,))]


def test_eight_processes_one_minter_no_duplicates_no_gaps(
    store_url: str, tmp_path: Path, figures: _report.Figures
) -> None:
    with open_store(store_url) as store:
        store.add_naan(NAAN, "stress", shoulders=["fk4"])
        store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=11)
    per = TOTAL // PROCESSES
    outs = [tmp_path / f"out{i}.txt" for i in range(PROCESSES)]
    start = time.perf_counter()
    procs = []
    for out in outs:
        with out.open("w") as fh:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "pidkit",
                        "mint",
                        "m",
                        "-n",
                        str(per),
                        "--batch",
                        str(BATCH),
                        "--db",
                        store_url,
                    ],
                    stdout=fh,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
    errors = []
    for p in procs:
        _, err = p.communicate(timeout=900)
        if p.returncode != 0:
            errors.append(err)
    seconds = time.perf_counter() - start
    assert not errors, errors

    reports = [out.read_text().split() for out in outs]
    reported = [ark for rep in reports for ark in rep]
    unique = set(reported)
    rows = _minted_rows(store_url, "m")
    table = {f"ark:{naan}/{blade}" for naan, blade, _ in rows}
    positions = [pos for _, _, pos in rows]
    duplicates = len(reported) - len(unique)
    reported_not_stored = len(unique - table)
    stored_not_reported = len(table - unique)
    figures.add(
        "concurrency",
        f"8 processes × {per:,} ids, one minter, {backend_of(store_url)}",
        {
            "ids reported": len(reported),
            "rows in minted": len(rows),
            "duplicates": duplicates,
            "gaps (reported, not stored)": reported_not_stored,
            "gaps (stored, not reported)": stored_not_reported,
            "seconds": seconds,
            "ids/s": len(reported) / seconds,
        },
    )
    assert [len(r) for r in reports] == [per] * PROCESSES
    assert duplicates == 0
    assert reported_not_stored == 0
    assert stored_not_reported == 0
    assert len(table) == len(rows) == TOTAL
    assert len(set(positions)) == len(positions), "two ids recorded at one minter position"
    with open_store(store_url) as store:
        assert store.get_minter("m").counter >= TOTAL
        assert store.minted_count("m") == TOTAL


THREADS = 8
PER_THREAD = 50_000


def _run_threads(target: list[list[str]], make: list[object]) -> float:
    barrier = threading.Barrier(THREADS)

    def work(i: int) -> None:
        clock = make[i]
        assert isinstance(clock, TidClock)
        barrier.wait()
        out = target[i]
        for j in range(PER_THREAD):
            if j % 1000 == 0:
                out.extend(clock.next_many(10))
            else:
                out.append(clock.next_str())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def _strictly_increasing(seq: list[str]) -> bool:
    return all(a < b for a, b in itertools.pairwise(seq))


def test_tid_clock_shared_by_8_threads(figures: _report.Figures) -> None:
    clock = TidClock()
    outs: list[list[str]] = [[] for _ in range(THREADS)]
    seconds = _run_threads(outs, [clock] * THREADS)
    everything = [t for out in outs for t in out]
    repeats = len(everything) - len(set(everything))
    not_increasing = sum(not _strictly_increasing(out) for out in outs)
    figures.add(
        "concurrency",
        "TidClock shared by 8 threads",
        {
            "TIDs": len(everything),
            "repeats": repeats,
            "threads not strictly increasing": not_increasing,
            "seconds": seconds,
        },
    )
    assert repeats == 0
    assert not_increasing == 0
    assert len({t[-2:] for t in everything}) == 1, "one clock id"


def test_tid_clocks_one_per_thread(figures: _report.Figures) -> None:
    clocks: list[object] = [TidClock(i) for i in range(THREADS)]
    outs: list[list[str]] = [[] for _ in range(THREADS)]
    seconds = _run_threads(outs, clocks)
    everything = [t for out in outs for t in out]
    repeats = len(everything) - len(set(everything))
    not_increasing = sum(not _strictly_increasing(out) for out in outs)
    figures.add(
        "concurrency",
        "8 TidClocks (clock ids 0-7), one per thread",
        {
            "TIDs": len(everything),
            "repeats": repeats,
            "threads not strictly increasing": not_increasing,
            "seconds": seconds,
        },
    )
    assert repeats == 0
    assert not_increasing == 0
