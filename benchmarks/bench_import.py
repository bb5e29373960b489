"""``pidkit import`` of a big file, against a plain bulk load of the same rows (issue 18).

pidkit: ``pidkit import FILE --db URL`` run as a child process on a file on disk (1,000,000 lines,
``PIDKIT_BENCH_IMPORT_LINES`` to change it; 100,000 with ``quick``) into a fresh store: every line parsed
and checked, one ``import`` history row per binding, one all-or-nothing transaction.  Its peak RSS is the
child's own (``os.wait4``).  The lines are realistic: ARKs under three shoulders, targets, ERC, extra
metadata on a quarter of them.

Anchor, timed in the same run, round after round (interleaved): the same rows loaded the plain way into
a fresh store of the same schema, unchecked and without history — SQLite: one ``executemany`` of
``INSERT INTO bindings`` in one transaction; PostgreSQL: ``COPY bindings FROM STDIN``.  The rows are
generated as they are written (no file to read, no JSON to parse), so memory stays flat on both sides.

Goal (issue 18): ``pidkit import`` at ≥ 50,000 lines/s where the anchor does ≥ 100,000 rows/s, i.e. at most
twice the anchor's time per line, with ≤ 200 MB peak RSS.  The rows report the median of the rounds,
the spread (every round's rate) and the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks._harness import Result
from pidkit.store import open_store
from pidkit.store.rows import BINDING_COLS, BINDING_PARAMS

GOAL_LINES_PER_S = 50_000
GOAL_ANCHOR_ROWS_PER_S = 100_000
GOAL_PEAK_MB = 200
NAAN = "99999"
SHOULDERS = ("fk4", "b2", "x7")
STAMP = "2026-01-01T00:00:00.000000Z"


def _fields(i: int) -> tuple[str, str, str, str, dict[str, str]]:
    """``(text, shoulder, target, what, extra)`` of line ``i``."""
    shoulder = SHOULDERS[i % len(SHOULDERS)]
    extra = {"dc.subject": f"subject {i % 13}", "dc.type": "text"} if i % 4 == 0 else {}
    return f"ark:{NAAN}/{shoulder}{i:08x}", shoulder, f"https://example.org/items/{shoulder}/{i}", \
        f"Title number {i}", extra  # fmt: skip


def import_line(i: int) -> str:
    """Line ``i`` of the import file (an export line as a person or another system writes it)."""
    text, _, target, what, extra = _fields(i)
    obj: dict[str, Any] = {
        "text": text, "target": target,
        "erc": {"who": f"Author {i % 97}", "what": what, "when": "2024", "where": ""},
        "created": STAMP, "updated": STAMP,
    }  # fmt: skip
    if extra:
        obj["extra"] = extra
    return json.dumps(obj, ensure_ascii=False) + "\n"


def anchor_row(i: int) -> tuple[Any, ...]:
    """The ``bindings`` row that line ``i`` becomes (what the anchor loads)."""
    text, shoulder, target, what, extra = _fields(i)
    extra_text = json.dumps(extra, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (
        "ark", text, text, target, f"Author {i % 97}", what, "2024", "", "", "", "", "", 0, "public",
        NAAN, shoulder, None, None, None, extra_text, STAMP, STAMP,
    )  # fmt: skip


def _rows(n: int) -> Iterator[tuple[Any, ...]]:
    return (anchor_row(i) for i in range(n))


def _write_file(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fp:
        for i in range(n):
            fp.write(import_line(i))


def _fresh(url: str) -> None:
    """Create the store's schema at ``url`` (NAAN 99999 registered)."""
    with open_store(url) as store:
        store.add_naan(NAAN)


def cli_import(url: str, path: Path) -> tuple[float, float]:
    """``(seconds, peak RSS in MB)`` of ``pidkit import PATH --db URL`` as a child process."""
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pidkit", "import", str(path), "--db", url],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise RuntimeError(f"pidkit import failed: {err}")
    return elapsed, usage.ru_maxrss / 1024


def sqlite_anchor(path: Path, n: int) -> float:
    """Seconds to load the ``n`` rows into the store file at ``path`` with one ``executemany``."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = NORMAL")  # as the store runs (WAL, set by the store)
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS})", _rows(n))
        conn.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        conn.close()


def postgres_anchor(url: str, n: int) -> float:
    """Seconds to ``COPY`` the ``n`` rows into the store at ``url``."""
    import psycopg

    with psycopg.connect(url) as conn:
        start = time.perf_counter()
        with conn.cursor() as cur, cur.copy(f"COPY bindings ({BINDING_COLS}) FROM STDIN") as copy:
            for row in _rows(n):
                copy.write_row(row)
        conn.commit()
        return time.perf_counter() - start


def _schema_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def _with_schema(base: str, fn: Callable[[str], float]) -> float:
    import psycopg

    schema = f"pidkit_bench_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        url = _schema_url(base, schema)
        _fresh(url)
        return fn(url)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(n: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Per backend: the import's seconds and peak RSS, and the anchor's seconds, one of each per round,
    pidkit and anchor alternating."""
    base = os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    out: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.jsonl"
        _write_file(path, n)
        runs = iter(range(1 << 30))

        def sqlite_db() -> Path:
            db = Path(tmp) / f"s{next(runs)}.db"
            _fresh(f"sqlite:///{db}")
            return db

        def drop(db: Path) -> None:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)

        for _ in range(rounds):
            got = out.setdefault("SQLite", {"pidkit": [], "rss": [], "anchor": []})
            db = sqlite_db()
            took, rss = cli_import(f"sqlite:///{db}", path)
            got["pidkit"].append(took)
            got["rss"].append(rss)
            drop(db)
            db = sqlite_db()
            got["anchor"].append(sqlite_anchor(db, n))
            drop(db)
            if base:
                got = out.setdefault("PostgreSQL", {"pidkit": [], "rss": [], "anchor": []})
                rss_of: list[float] = []

                def pidkit(url: str, rss_of: list[float] = rss_of) -> float:
                    took, rss = cli_import(url, path)
                    rss_of.append(rss)
                    return took

                got["pidkit"].append(_with_schema(base, pidkit))
                got["rss"].append(rss_of[0])
                got["anchor"].append(_with_schema(base, lambda url: postgres_anchor(url, n)))
    return out


def _rates(n: int, seconds: list[float]) -> str:
    return ", ".join(f"{n / s:,.0f}" for s in seconds)


def run(quick: bool) -> list[Result]:
    """``pidkit import`` vs the plain bulk load, on SQLite and (when configured) PostgreSQL."""
    n = 100_000 if quick else int(os.environ.get("PIDKIT_BENCH_IMPORT_LINES", "1000000"))
    rounds = 2 if quick else 3
    before = _load()
    measured = measure(n, rounds)
    after = _load()
    results = []
    for backend, got in measured.items():
        pidkit_s = statistics.median(got["pidkit"]) / n
        anchor_s = statistics.median(got["anchor"]) / n
        peer = "executemany INSERT" if backend == "SQLite" else "COPY"
        results.append(
            Result(
                name=f"pidkit import {n:,} lines, {backend}",
                pidkit="pidkit import FILE (child process)",
                pidkit_s=pidkit_s,
                peer=f"{peer} of the same rows",
                peer_s=anchor_s,
                max_ratio=GOAL_ANCHOR_ROWS_PER_S / GOAL_LINES_PER_S,
                unit="line",
                note=(
                    f"median of {rounds} interleaved rounds; pidkit lines/s {_rates(n, got['pidkit'])}, "
                    f"anchor rows/s {_rates(n, got['anchor'])}; peak RSS {max(got['rss']):.0f} MB "
                    f"(goal <= {GOAL_PEAK_MB} MB); load average {before} before, {after} after"
                ),
            )
        )
    return results


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv[1:]):
        print(f"{r.name}: {1 / r.pidkit_s:,.0f} lines/s vs {r.peer} {1 / r.peer_s:,.0f} rows/s, "
              f"ratio {r.ratio:.2f} (goal <= {r.max_ratio:g}: {'ok' if r.ok else 'MISSED'}); {r.note}")
