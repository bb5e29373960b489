"""``pidkit dump`` / ``restore`` of a store of 1,000,000 rows (issue 13): each way at least 50,000 rows/s,
in constant memory.

The store is made by restoring a generated dump (one NAAN and minter, the minted log, bindings with
extra metadata, one history row per binding — 1,000,000 rows in all; 100,000 with ``--quick``), timed
(restore), then dumped (dump) to a file; the second dump must equal the first after the header.  Memory:
the peak of Python allocations (``tracemalloc``) while dumping and restoring a tenth of the rows and all
of them — constant memory means the two peaks are alike, not ten times apart.  SQLite in a temp file,
PostgreSQL in a fresh schema when ``PIDKIT_BENCH_POSTGRES_URL`` or ``PIDKIT_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks._harness import Result
from pidkit.store import open_store
from pidkit.store.dump import DumpHeader, header_line, row_line
from pidkit.store.migrations import LATEST
from pidkit.store.rows import TABLES

GOAL_ROWS_PER_S = 50_000
_T = {t.name: t for t in TABLES}
STAMP = "2026-01-01T00:00:00.000000Z"


def write_dump(path: Path, rows: int) -> int:
    """A dump of ``rows`` rows (about a third minted ids, a third bindings, a third history); returns the
    exact row count."""
    bindings = rows * 35 // 100
    minted = rows - 2 * bindings - 2
    counts = {"naans": 1, "minters": 1, "minted": minted, "bindings": bindings, "history": bindings}
    with path.open("w", encoding="utf-8") as fp:
        fp.write(header_line(DumpHeader("sqlite", LATEST, counts)))
        fp.write(row_line(_T["naans"], ("99999", "Bench", STAMP)))
        fp.write(row_line(_T["minters"], ("m", "99999", "b5.sdddddddd", 0, minted, STAMP)))
        for i in range(minted):
            fp.write(row_line(_T["minted"], ("99999", f"b5{i:09d}", "m", i, STAMP)))
        for i in range(bindings):
            key = f"ark:99999/fk4{i:09d}"
            fp.write(row_line(_T["bindings"], (
                "ark", key, key, f"https://example.org/{i}", "Who", f"What {i}", "2026", "", "", "", "", "",
                0, "public", "99999", "fk4", None, None, None, '{"dc.title":"T"}', STAMP, STAMP,
            )))  # fmt: skip
        after = json.dumps({"status": "public", "target": "https://example.org/"}, separators=(",", ":"))
        for i in range(bindings):
            fp.write(row_line(_T["history"], (
                f"h{i:012d}", STAMP, "cli:bench@host", "create", "ark", f"ark:99999/fk4{i:09d}", None, after,
            )))  # fmt: skip
    return sum(counts.values())


@contextmanager
def _fresh_urls() -> Iterator[Callable[[str], str]]:
    """A function giving fresh store URLs per backend name (``sqlite`` / ``postgresql``)."""
    base = os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        count = iter(range(1000))

        def new(backend: str) -> str:
            if backend == "sqlite":
                return f"sqlite:///{Path(tmp) / f'bench{next(count)}.db'}"
            import psycopg

            assert base is not None
            schema = f"pidkit_bench_{secrets.token_hex(6)}"
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}")
            schemas.append(schema)
            return f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}"

        try:
            yield new
        finally:
            if schemas and base:
                import psycopg

                with psycopg.connect(base, autocommit=True) as conn:
                    for schema in schemas:
                        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def round_trip(url: str, dump: Path, out: Path, *, traced: bool = False) -> tuple[float, float, int, int]:
    """Restore ``dump`` into the empty store at ``url``, then dump it to ``out``: ``(restore s, dump s,
    restore peak bytes, dump peak bytes)`` (peaks only when ``traced``)."""
    peaks = [0, 0]
    with open_store(url) as store:
        if traced:
            tracemalloc.start()
        t0 = time.perf_counter()
        with dump.open(encoding="utf-8", newline="\n") as fp:
            store.restore(fp)
        t1 = time.perf_counter()
        if traced:
            peaks[0] = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
        t2 = time.perf_counter()
        with out.open("w", encoding="utf-8") as fp:
            store.dump(fp)
        t3 = time.perf_counter()
        if traced:
            peaks[1] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return t1 - t0, t3 - t2, peaks[0], peaks[1]


def _same_after_header(a: Path, b: Path) -> bool:
    with a.open(encoding="utf-8") as fa, b.open(encoding="utf-8") as fb:
        next(fa), next(fb)
        return all(x == y for x, y in zip(fa, fb, strict=True))


def run(quick: bool) -> list[Result]:
    """Restore then dump 1,000,000 rows (100,000 with ``quick``) on each configured backend."""
    n = 100_000 if quick else 1_000_000
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp, _fresh_urls() as new:
        big, small = Path(tmp) / "big.jsonl", Path(tmp) / "small.jsonl"
        rows = write_dump(big, n)
        small_rows = write_dump(small, n // 10)
        backends = ["sqlite"] + (["postgresql"] if os.environ.get("PIDKIT_BENCH_POSTGRES_URL")
                                 or os.environ.get("PIDKIT_TEST_POSTGRES_URL") else [])  # fmt: skip
        for backend in backends:
            out = Path(tmp) / f"out-{backend}.jsonl"
            restore_s, dump_s, _, _ = round_trip(new(backend), big, out)
            if not _same_after_header(big, out):
                raise RuntimeError(f"{backend}: the restored store's dump differs from the dump restored")
            _, _, r_small, d_small = round_trip(new(backend), small, out, traced=True)
            _, _, r_big, d_big = round_trip(new(backend), big, out, traced=True)
            memory = (f"peak Python memory {small_rows:,} → {rows:,} rows: restore {r_small / 1e6:.1f} → "
                      f"{r_big / 1e6:.1f} MB, dump {d_small / 1e6:.1f} → {d_big / 1e6:.1f} MB")  # fmt: skip
            name = "SQLite" if backend == "sqlite" else "PostgreSQL"
            for what, seconds in (("restore", restore_s), ("dump", dump_s)):
                results.append(Result(
                    name=f"{what} {rows:,} rows, {name}",
                    pidkit=f"Store.{what} ({name})",
                    pidkit_s=seconds / rows,
                    peer=f"(goal {GOAL_ROWS_PER_S:,} rows/s)",
                    peer_s=1 / GOAL_ROWS_PER_S,
                    max_ratio=1.0,
                    unit="row",
                    note=memory,
                ))  # fmt: skip
    return results


if __name__ == "__main__":
    for r in run(quick=False):
        print(f"{r.name}: {1 / r.pidkit_s:,.0f} rows/s ({'ok' if r.ok else 'MISSED'}; {r.note})")
