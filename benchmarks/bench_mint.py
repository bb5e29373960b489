"""Bulk minting committed to the store: 100,000 check-charactered ARKs (``fk4.reedeedk``).

Goal (issue 3): at least 20,000 ids/s committed to SQLite.  The "peer" is the goal itself.  Each run
mints into a fresh store (a temp file; a fresh PostgreSQL schema when ``PIDKIT_BENCH_POSTGRES_URL`` or
``PIDKIT_TEST_POSTGRES_URL`` is set), batches of 10,000 ids, one transaction per batch.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from benchmarks._harness import Result, once
from pidkit.store import open_store

GOAL_IDS_PER_S = 20_000
TEMPLATE = "fk4.reedeedk"


def _mint_fresh(url: str, n: int) -> None:
    with open_store(url) as store:
        store.add_naan("99999")
        store.create_minter("bench", naan="99999", template=TEMPLATE, seed=1)
        ids = store.mint("bench", n)
        if len(ids) != n:
            raise RuntimeError("short mint")


def _sqlite(n: int, repeat: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        runs = iter(range(1_000_000))

        def one() -> None:
            path = Path(tmp) / f"bench{next(runs)}.db"
            _mint_fresh(f"sqlite:///{path}", n)

        return once(one, repeat=repeat)


def _postgres(base: str, n: int, repeat: int) -> float:
    import psycopg

    schemas: list[str] = []

    def one() -> None:
        schema = f"pidkit_bench_{secrets.token_hex(6)}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        schemas.append(schema)
        sep = "&" if "?" in base else "?"
        _mint_fresh(f"{base}{sep}options=-csearch_path%3D{schema}", n)

    try:
        return once(one, repeat=repeat)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            for schema in schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run(quick: bool) -> list[Result]:
    """Mint 100,000 ids (20,000 with ``quick``) into SQLite, and into PostgreSQL when configured."""
    n = 20_000 if quick else 100_000
    repeat = 1 if quick else 3
    goal = f"(goal {GOAL_IDS_PER_S:,} ids/s)"
    results = [
        Result(
            name=f"mint {n:,} ARKs ({TEMPLATE}) committed, SQLite",
            pidkit="Store.mint (SQLite, WAL)",
            pidkit_s=_sqlite(n, repeat) / n,
            peer=goal,
            peer_s=1 / GOAL_IDS_PER_S,
            max_ratio=1.0,
            unit="id",
            note="includes open + migrate of a fresh file; batches of 10,000, one transaction each",
        )
    ]
    base = os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    if base:
        results.append(
            Result(
                name=f"mint {n:,} ARKs ({TEMPLATE}) committed, PostgreSQL",
                pidkit="Store.mint (PostgreSQL, COPY)",
                pidkit_s=_postgres(base, n, repeat) / n,
                peer=goal,
                peer_s=1 / GOAL_IDS_PER_S,
                max_ratio=1.0,
                unit="id",
                note="local server; the 20,000 ids/s goal is stated for SQLite, PostgreSQL reported",
            )
        )
    return results


if __name__ == "__main__":
    for r in run(quick=False):
        print(f"{r.name}: {1 / r.pidkit_s:,.0f} ids/s (ratio {r.ratio:.2f}, {'ok' if r.ok else 'MISSED'})")
