"""Bulk minting committed to the store: 100,000 check-charactered ARKs (``fk4.reedeedk``).

Goal (issue 3): at least 20,000 ids/s committed to SQLite.  The "peer" is the goal itself.  Also:
importing 100,000 JSON Lines bindings (``Store.import_jsonl``, one transaction) at at least 10,000
lines/s on both backends, and lookups (``Store.resolve``) from 8 threads sharing one SQLite store while
another thread imports (reads must not wait for the write transaction).  Each run works on a fresh
store (a temp file; a fresh PostgreSQL schema when ``PIDKIT_BENCH_POSTGRES_URL`` or
``PIDKIT_TEST_POSTGRES_URL`` is set); minting in batches of 10,000 ids, one transaction per batch.

``pidkit import`` of a big file (issue 18) is measured in ``benchmarks/bench_import.py``.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._harness import Result, once
from pidkit.store import open_store

GOAL_IDS_PER_S = 20_000
GOAL_IMPORT_LINES_PER_S = 10_000
TEMPLATE = "fk4.reedeedk"


def _mint_fresh(url: str, n: int) -> None:
    with open_store(url) as store:
        store.add_naan("99999")
        store.create_minter("bench", naan="99999", template=TEMPLATE, seed=1)
        ids = store.mint("bench", n)
        if len(ids) != n:
            raise RuntimeError("short mint")


def _import_fresh(url: str, lines: list[str]) -> None:
    with open_store(url) as store:
        store.add_naan("99999")
        report = store.import_jsonl(lines)
        if report.created != len(lines):
            raise RuntimeError("short import")


def _import_lines(n: int) -> list[str]:
    return [
        json.dumps({"text": f"ark:99999/fk4i{i}", "target": f"https://example.org/i/{i}"}) for i in range(n)
    ]


def _sqlite(fill: Callable[[str], None], repeat: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        runs = iter(range(1_000_000))

        def one() -> None:
            path = Path(tmp) / f"bench{next(runs)}.db"
            fill(f"sqlite:///{path}")

        return once(one, repeat=repeat)


def _postgres(base: str, fill: Callable[[str], None], repeat: int) -> float:
    import psycopg

    schemas: list[str] = []

    def one() -> None:
        schema = f"pidkit_bench_{secrets.token_hex(6)}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        schemas.append(schema)
        sep = "&" if "?" in base else "?"
        fill(f"{base}{sep}options=-csearch_path%3D{schema}")

    try:
        return once(one, repeat=repeat)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            for schema in schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def threaded_lookups(threads: int = 8, per_thread: int = 2_000) -> tuple[float, float]:
    """``(lookups/s, worst lookup in s)`` of ``threads`` threads resolving ARKs in one SQLite store
    while another thread imports 30,000 lines into it."""
    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/t.db") as store:
        store.add_naan("99999")
        store.import_jsonl(_import_lines(20_000))
        more = [line.replace("fk4i", "fk4j") for line in _import_lines(30_000)]
        worst = [0.0]

        def lookups(k: int) -> None:
            for i in range(per_thread):
                t = time.perf_counter()
                store.resolve(f"ark:99999/fk4i{(i * 31 + k) % 20_000}")
                worst[0] = max(worst[0], time.perf_counter() - t)

        writer = threading.Thread(target=store.import_jsonl, args=(more,))
        readers = [threading.Thread(target=lookups, args=(k,)) for k in range(threads)]
        start = time.perf_counter()
        writer.start()
        for r in readers:
            r.start()
        for r in readers:
            r.join()
        elapsed = time.perf_counter() - start
        writer.join()
    return threads * per_thread / elapsed, worst[0]


def run(quick: bool) -> list[Result]:
    """Mint 100,000 ids (20,000 with ``quick``) and import as many lines, into SQLite and into
    PostgreSQL when configured."""
    n = 20_000 if quick else 100_000
    repeat = 1 if quick else 3
    lines = _import_lines(n)
    goal = f"(goal {GOAL_IDS_PER_S:,} ids/s)"
    import_goal = f"(goal {GOAL_IMPORT_LINES_PER_S:,} lines/s)"

    def mint(url: str) -> None:
        _mint_fresh(url, n)

    def load(url: str) -> None:
        _import_fresh(url, lines)

    results = [
        Result(
            name=f"mint {n:,} ARKs ({TEMPLATE}) committed, SQLite",
            pidkit="Store.mint (SQLite, WAL)",
            pidkit_s=_sqlite(mint, repeat) / n,
            peer=goal,
            peer_s=1 / GOAL_IDS_PER_S,
            max_ratio=1.0,
            unit="id",
            note="includes open + migrate of a fresh file; batches of 10,000, one transaction each",
        ),
        Result(
            name=f"import {n:,} bindings (JSON Lines), SQLite",
            pidkit="Store.import_jsonl (SQLite)",
            pidkit_s=_sqlite(load, repeat) / n,
            peer=import_goal,
            peer_s=1 / GOAL_IMPORT_LINES_PER_S,
            max_ratio=1.0,
            unit="line",
            note="fresh file; every line parsed and checked, one all-or-nothing transaction",
        ),
    ]
    base = os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    if base:
        results.append(
            Result(
                name=f"mint {n:,} ARKs ({TEMPLATE}) committed, PostgreSQL",
                pidkit="Store.mint (PostgreSQL, COPY)",
                pidkit_s=_postgres(base, mint, repeat) / n,
                peer=goal,
                peer_s=1 / GOAL_IDS_PER_S,
                max_ratio=1.0,
                unit="id",
                note="local server; the 20,000 ids/s goal is stated for SQLite, PostgreSQL reported",
            )
        )
        results.append(
            Result(
                name=f"import {n:,} bindings (JSON Lines), PostgreSQL",
                pidkit="Store.import_jsonl (PostgreSQL)",
                pidkit_s=_postgres(base, load, repeat) / n,
                peer=import_goal,
                peer_s=1 / GOAL_IMPORT_LINES_PER_S,
                max_ratio=1.0,
                unit="line",
                note="fresh schema (the case that was quadratic); keys looked up and written per 1,000",
            )
        )
    return results


if __name__ == "__main__":
    for r in run(quick=False):
        print(
            f"{r.name}: {1 / r.pidkit_s:,.0f} {r.unit}s/s (ratio {r.ratio:.2f}, {'ok' if r.ok else 'MISSED'})"
        )
    rate, worst = threaded_lookups()
    print(f"8 threads resolving during an import, SQLite: {rate:,.0f} lookups/s, worst {worst * 1000:.0f} ms")
