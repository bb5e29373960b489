"""Scale (issue 18): stores of 100,000, 1,000,000 and 10,000,000 ARK bindings on both backends, side by
side — how import, size on disk, resolution and the server's memory grow with the number of bindings.

For each size N and backend the store is made by ``pidkit import`` of a generated JSON Lines file (the
lines of ``bench_import``: three shoulders, ERC, extra metadata on a quarter) as a child process, timed,
its peak RSS from ``os.wait4``.  Files and stores are cached between runs under ``benchmarks/.cache/scale/``
(SQLite files; PostgreSQL schemas ``pidkit_scale_<N>`` in the benchmark database), with the import's
figures beside them: a cached store reports the figures of the run that made it (and says so).  Then
``pidkit serve`` (2 workers) on each store answers ``wrk`` (64 connections, keep-alive on, random paths
among 200,000 of the store's ARKs), interleaved: every round serves every size once, in turn, each store
read into memory first (:func:`prewarm`); the median round is reported with the RSS of the server's
processes (master and workers) after the load.

Goals (issue 18): resolution at 10,000,000 bindings at least 0.95 of the rate at 100,000 (reported for
every size, against 100,000 in the same run); import at least 50,000 lines/s with a peak RSS of at most
200 MB.  ``PIDKIT_BENCH_SCALE_SIZES`` (e.g. ``100000,1000000``) chooses the sizes; ``--quick`` runs
100,000 only; ``PIDKIT_BENCH_SCALE_BUILD=0`` measures only the stores already built (a 10,000,000-line
import takes 17 minutes on SQLite here and 92 on PostgreSQL).  PostgreSQL only when
``PIDKIT_BENCH_POSTGRES_URL`` (or ``PIDKIT_TEST_POSTGRES_URL``) is set; ``PIDKIT_BENCH_SCALE_BACKENDS``
(``sqlite``, ``postgresql`` or both, comma-separated) measures only those.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import bench_resolver as br  # noqa: E402
from benchmarks._harness import Result  # noqa: E402
from benchmarks.bench_import import GOAL_PEAK_MB, SHOULDERS, cli_import, import_line  # noqa: E402
from pidkit.store import open_store  # noqa: E402

CACHE: Final = HERE / ".cache" / "scale"
SIZES: Final = (100_000, 1_000_000, 10_000_000)
BASE: Final = 100_000  # the size every other size's resolution is compared with
GOAL_LINES_PER_S: Final = 50_000
GOAL_RESOLVE: Final = 0.95  # the rate at N over the rate at BASE
PATHS: Final = 200_000  # random request paths per store (wrk holds them in memory)
WARMUP_S: Final = 3.0
MEASURE_S: Final = 6.0
ROUNDS: Final = 3


@dataclass(frozen=True)
class Built:
    """A store of ``lines`` bindings: its URL and how its import went (``cached``: an earlier run's)."""

    backend: str
    lines: int
    url: str
    seconds: float
    rss_mb: float
    when: str
    cached: bool


def _sizes(quick: bool) -> list[int]:
    given = os.environ.get("PIDKIT_BENCH_SCALE_SIZES")
    if given:
        return sorted({int(s.replace("_", "")) for s in given.split(",") if s.strip()})
    return [BASE] if quick else list(SIZES)


def _backends() -> list[str]:
    """The backends to measure: SQLite, and PostgreSQL when a server is given; ``PIDKIT_BENCH_SCALE_BACKENDS``
    narrows them."""
    found = ["sqlite"] + (["postgresql"] if _postgres_base() else [])
    given = os.environ.get("PIDKIT_BENCH_SCALE_BACKENDS")
    if not given:
        return found
    wanted = {b.strip() for b in given.split(",") if b.strip()}
    if unknown := wanted - {"sqlite", "postgresql"}:
        raise br.SkipError(f"PIDKIT_BENCH_SCALE_BACKENDS: unknown backend(s) {', '.join(sorted(unknown))}")
    if "postgresql" in wanted and "postgresql" not in found:
        raise br.SkipError("PIDKIT_BENCH_SCALE_BACKENDS: postgresql, but PIDKIT_BENCH_POSTGRES_URL is unset")
    return [b for b in found if b in wanted]


def _postgres_base() -> str | None:
    return os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")


def _import_file(n: int) -> Path:
    """The JSON Lines file of ``n`` bindings (made once, atomically)."""
    path = CACHE / f"import-{n}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fp:
            for i in range(n):
                fp.write(import_line(i))
        os.replace(tmp, path)
    return path


def _paths_file(n: int) -> Path:
    """Random request paths among the ``n`` bindings (seeded)."""
    path = CACHE / f"paths-{n}.txt"
    if not path.exists():
        rng = random.Random(br.SEED)
        picks = rng.sample(range(n), min(PATHS, n))
        tmp = path.with_name(path.name + ".tmp")
        lines = (f"/ark:{br.NAAN}/{SHOULDERS[i % len(SHOULDERS)]}{i:08x}\n" for i in picks)
        tmp.write_text("".join(lines), encoding="utf-8")
        os.replace(tmp, path)
    return path


def _url(backend: str, n: int) -> str:
    if backend == "sqlite":
        return f"sqlite:///{CACHE / f'store-{n}.db'}"
    base = _postgres_base()
    assert base is not None
    return f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3Dpidkit_scale_{n}"


def _drop(backend: str, n: int) -> None:
    """Remove the store of ``n`` bindings (SQLite files; PostgreSQL: recreate its empty schema)."""
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm", "-journal"):
            (CACHE / f"store-{n}.db{suffix}").unlink(missing_ok=True)
        return
    import psycopg

    base = _postgres_base()
    assert base is not None
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS pidkit_scale_{n} CASCADE")
        conn.execute(f"CREATE SCHEMA pidkit_scale_{n}")


def _present(backend: str, n: int) -> bool:
    """Whether the cached store is still there (its file, or its schema's bindings table)."""
    if backend == "sqlite":
        return (CACHE / f"store-{n}.db").exists()
    import psycopg

    base = _postgres_base()
    assert base is not None
    with psycopg.connect(base) as conn:
        return conn.execute("SELECT to_regclass(%s)", (f"pidkit_scale_{n}.bindings",)).fetchone() != (None,)


def _cached(backend: str, n: int) -> bool:
    """Whether the store of ``n`` bindings on ``backend`` was built by an earlier run and is still there."""
    return (CACHE / f"store-{backend}-{n}.json").exists() and _present(backend, n)


def build(backend: str, n: int) -> Built:
    """The store of ``n`` bindings on ``backend``: the cached one when its import finished, else a new
    one imported now."""
    marker = CACHE / f"store-{backend}-{n}.json"
    url = _url(backend, n)
    if _cached(backend, n):
        figures = json.loads(marker.read_text(encoding="utf-8"))
        return Built(backend, n, url, figures["seconds"], figures["rss_mb"], figures["when"], cached=True)
    path = _import_file(n)
    _drop(backend, n)
    with open_store(url) as store:
        store.add_naan(br.NAAN)
    br._log(f"importing {n:,} lines into {backend}")
    seconds, rss_mb = cli_import(url, path)
    if backend != "sqlite":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE bindings")
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    marker.write_text(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "when": when}), encoding="utf-8")
    return Built(backend, n, url, seconds, rss_mb, when, cached=False)


def size_bytes(built: Built) -> int:
    """The store's size on disk: the SQLite file and its WAL, or every table, index and TOAST of the
    PostgreSQL schema."""
    if built.backend == "sqlite":
        path = CACHE / f"store-{built.lines}.db"
        return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    import psycopg

    with psycopg.connect(built.url) as conn:
        row = conn.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm')"
        ).fetchone()
    return int(row[0]) if row else 0


def _group_rss_mb(pgid: int) -> float:
    """The resident memory of every process in the process group ``pgid`` (the server and its workers)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            statm = Path(f"/proc/{entry}/statm").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:  # field 5 of stat: the process group
            total += int(statm.split()[1]) * page
    return total / 2**20


def prewarm(built: Built) -> None:
    """Bring the store into memory before it is served, as a running service has it: the SQLite file read
    through the page cache; PostgreSQL's ``bindings`` table and its indexes by ``pg_prewarm`` (when the
    extension can be made).  Without it the stores evict each other between rounds (10,000,000 bindings
    are 14 GB on SQLite) and a round measures the disk: 1,000,000 bindings resolved 6× slower than
    100,000 when cold, at the same speed once the file was in memory."""
    if built.backend == "sqlite":
        path = CACHE / f"store-{built.lines}.db"
        for part in (path, path.with_name(path.name + "-wal")):
            if part.exists():
                with part.open("rb") as fh:
                    while fh.read(1 << 24):
                        pass
        return
    import psycopg

    with psycopg.connect(built.url, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm WITH SCHEMA public")
        except psycopg.Error as exc:
            br._log(f"pg_prewarm unavailable ({exc}): PostgreSQL is served as its cache holds it")
            return
        found = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension "
                             "WHERE extname = 'pg_prewarm'").fetchone()  # fmt: skip
        assert found is not None
        call = psycopg.sql.SQL("SELECT {}.pg_prewarm(%s::regclass)").format(psycopg.sql.Identifier(found[0]))
        for (name,) in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid "
            "WHERE x.indrelid = 'bindings'::regclass UNION ALL SELECT 'bindings'"
        ).fetchall():
            conn.execute(call, (name,))


@dataclass(frozen=True)
class Served:
    """One round of load on one store: the load and the server's resident memory after it."""

    load: br.Load
    rss_mb: float


def serve_round(built: Built, settings: br.Settings) -> Served:
    """``pidkit serve`` on the store, warmed up, then one measured ``wrk`` run."""
    port = br.free_port()
    probe = br.Binding(f"{SHOULDERS[0]}{0:08x}", "")
    paths = _paths_file(built.lines)
    prewarm(built)
    # The workers' redirect cache off: what is measured is the store's own read at each size (with it,
    # a 100,000-binding store would be answered from memory and 10,000,000 mostly not).
    with br.server(f"pidkit-scale-{built.backend}-{built.lines}", br.pidkit_argv(port),
                   br.pidkit_env(built.url, resolve_cache=0), port, probe) as proc:  # fmt: skip
        status, location = br._get(port, probe.path)
        if status != 302 or location != f"https://example.org/items/{SHOULDERS[0]}/0":
            raise br.SkipError(f"GET {probe.path} gave {status} {location!r}")
        br.measure(settings, port, paths, [], True, WARMUP_S)
        load = br.measure(settings, port, paths, [], True, MEASURE_S)
        return Served(load, _group_rss_mb(proc.pid))


def run(quick: bool) -> list[Result]:
    """Build (or reuse) every store, then serve them in interleaved rounds; the rows of issue 18."""
    sizes = _sizes(quick)
    backends = _backends()
    wrk = br.ensure_wrk()
    if wrk is None:
        raise br.SkipError("wrk is needed (Debian's wrk package)")
    settings = br.Settings(warmup=WARMUP_S, measure=MEASURE_S, rounds=1 if quick else ROUNDS, wrk=wrk)
    if os.environ.get("PIDKIT_BENCH_SCALE_BUILD") == "0":  # measure only the stores already built
        keys = [(b, n) for b in backends for n in sizes if _cached(b, n)]
        for b, n in sorted({(b, n) for b in backends for n in sizes} - set(keys)):
            br._log(f"not built (PIDKIT_BENCH_SCALE_BUILD=0): {b} {n:,}")
    else:
        keys = [(b, n) for b in backends for n in sizes]
    built = {(b, n): build(b, n) for b, n in keys}
    rounds: dict[tuple[str, int], list[Served]] = {key: [] for key in built}
    for r in range(settings.rounds):
        for key, store in built.items():
            served = serve_round(store, settings)
            rounds[key].append(served)
            br._log(f"round {r + 1}: {key[0]} {key[1]:,}: {served.load.rps:,.0f} req/s, "
                    f"p99 {served.load.p99 * 1e3:.1f} ms, errors {served.load.errors}, "
                    f"server RSS {served.rss_mb:.0f} MB")  # fmt: skip
    results: list[Result] = []
    for backend in backends:
        name = "SQLite" if backend == "sqlite" else "PostgreSQL"
        measured = [n for n in sizes if (backend, n) in built]
        median = {n: statistics.median_low(s.load.rps for s in rounds[(backend, n)]) for n in measured}
        for n in measured:
            store = built[(backend, n)]
            mid = next(s for s in rounds[(backend, n)] if s.load.rps == median[n])
            per_binding = size_bytes(store) / n
            made = f"cached import of {store.when}" if store.cached else f"imported {store.when}"
            note = (f"{made}; peak RSS {store.rss_mb:.0f} MB (goal ≤ {GOAL_PEAK_MB} MB); "
                    f"{per_binding:,.0f} bytes per binding on disk; resolve {mid.load.rps:,.0f} req/s "
                    f"(rounds {', '.join(f'{s.load.rps:,.0f}' for s in rounds[(backend, n)])}), "
                    f"p99 {mid.load.p99 * 1e3:.1f} ms, errors {mid.load.errors}; "
                    f"pidkit serve RSS {mid.rss_mb:.0f} MB")  # fmt: skip
            results.append(Result(
                name=f"import {n:,} lines, {name}", pidkit=f"pidkit import ({name})",
                pidkit_s=store.seconds / n, peer=f"(goal {GOAL_LINES_PER_S:,} lines/s)",
                peer_s=1 / GOAL_LINES_PER_S, max_ratio=1.0, unit="line", note=note,
            ))  # fmt: skip
            if n != BASE and BASE in median:
                results.append(Result(
                    name=f"resolve at {n:,} bindings vs {BASE:,}, {name}",
                    pidkit=f"pidkit serve, {n:,} bindings", pidkit_s=1 / median[n],
                    peer=f"pidkit serve, {BASE:,} bindings (same run)", peer_s=1 / median[BASE],
                    max_ratio=1 / GOAL_RESOLVE, unit="request",
                    note=f"{median[n]:,.0f} vs {median[BASE]:,.0f} req/s (median of {settings.rounds})",
                ))  # fmt: skip
    return results


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        verdict = "ok" if r.ok else "MISSED"
        print(f"{r.name}: ratio {r.ratio:.3f} (goal ≤ {r.max_ratio:.3f}) {verdict}; {r.note}")
