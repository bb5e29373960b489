"""The back office's Find at 1,000,000 bindings (issue 14): a search and a page of results in under 100 ms,
on SQLite and on PostgreSQL.

The store: 1,000,000 ARK bindings (100,000 with ``--quick``) with generated, seeded metadata — titles,
creators, dates, places, a subject in the extra metadata, targets on a few hosts, the four statuses,
creation and update times spread over 2015–2025 — under two NAANs (99999: about 70 %, shoulders fk4 and
b5; 12345: the rest).  It is made once by restoring a generated dump (the store's bulk path, which keeps
the full-text index in step as it inserts) and cached: SQLite in ``benchmarks/.cache/`` (git-ignored),
PostgreSQL in the schema ``pidkit_bench_search_N_vSCHEMA`` of ``PIDKIT_BENCH_POSTGRES_URL`` or
``PIDKIT_TEST_POSTGRES_URL`` (kept; dropped and rebuilt when incomplete).

Each timed request is ``GET /office/find?…`` through the app (starlette's TestClient, signed in as a
user of NAAN 99999): the search, the count and the rendered page of 50 results.  Cases: an ARK prefix,
an exact ARK as a resolver URL, a target substring, two metadata words, a status with a date range
sorted by update time, a page late in the key order.  Each is repeated; median and p95 are reported, and
the goal is p95 < 100 ms.

Run alone: ``python -m benchmarks.bench_search [--quick]`` (``PYTHONPATH=src``).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from benchmarks._harness import Result
from pidkit.codecs import BETANUMERIC
from pidkit.store import Store, open_store
from pidkit.store.dump import DumpHeader, header_line, row_line
from pidkit.store.migrations import LATEST
from pidkit.store.rows import TABLES

CACHE: Final = Path(__file__).resolve().parent / ".cache"
GOAL_S: Final = 0.100
REPEATS: Final = 21
SEED: Final = 20261125
STAMP: Final = "2015-01-01T00:00:00.000000Z"
PASSWORD: Final = "bench search password"
_T: Final = {t.name: t for t in TABLES}

_TITLE = ("Harbour", "Photograph", "Letter", "Map", "Survey", "Diary", "Portrait", "Ledger", "Census",
          "Minutes", "Herbarium", "Specimen", "Manuscript", "Sketch", "Lecture", "Report", "Atlas",
          "Sermon", "Notebook", "Broadside")  # fmt: skip
_OF = ("of the", "from the", "about the", "for the", "near the")
_SUBJECT = ("river", "mill", "railway", "cathedral", "market", "lighthouse", "orchard", "quarry", "bridge",
            "school", "garrison", "vineyard", "observatory", "canal", "foundry", "abbey")  # fmt: skip
_PLACE = ("Lyon", "Porto", "Gdańsk", "Bristol", "Ghent", "Turku", "Bergen", "Trieste", "Cork", "Leiden",
          "Aarhus", "Bilbao", "Riga", "Brno", "Lund", "Graz")  # fmt: skip
_NAMES = ("Adams", "Bernard", "Costa", "Dubois", "Eriksen", "Fischer", "García", "Horvat", "Ivanova",
          "Jensen", "Kowalski", "Laurent", "Moreau", "Novak", "Olsen", "Petrov", "Quinn", "Rossi",
          "Schmidt", "Tanaka", "Ulrich", "Virtanen", "Weber", "Young", "Zhang")  # fmt: skip
_HOSTS = ("https://archive.example.org/records/", "https://museum.example.net/collections/maps/",
          "https://library.example.edu/items/", "https://data.example.com/objects/")  # fmt: skip
_SUBJECTS = ("Maritime history", "Botany", "Urban planning", "Music", "Cartography", "Genealogy",
             "Architecture", "Agriculture")  # fmt: skip


def _blade(i: int) -> str:
    """A NOID-like 7-character betanumeric name for ``i`` (a bijection on 0..29**7-1)."""
    n, out = (i * 7_919 + 104_729) % 29**7, []
    for _ in range(7):
        n, r = divmod(n, 29)
        out.append(BETANUMERIC[r])
    return "".join(out)


def _key(i: int, n: int) -> tuple[str, str, str]:
    """``(key, naan, shoulder)`` of binding ``i`` of ``n``."""
    if i < n * 7 // 10:
        naan, shoulder = "99999", ("fk4" if i % 3 else "b5")
    else:
        naan, shoulder = "12345", "x7"
    return f"ark:{naan}/{shoulder}{_blade(i)}", naan, shoulder


def _time(rng: random.Random, low: float) -> tuple[float, str]:
    t = rng.uniform(low, 1_767_225_599.0)  # until 2025-12-31
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"
    return t, stamp


def write_dump(path: Path, n: int) -> None:
    """A dump of two NAANs, their shoulders and ``n`` ARK bindings with seeded metadata."""
    rng = random.Random(SEED)
    counts = {"naans": 2, "shoulders": 3, "bindings": n}
    with path.open("w", encoding="utf-8") as fp:
        fp.write(header_line(DumpHeader("sqlite", LATEST, counts)))
        fp.write(row_line(_T["naans"], ("12345", "Bench B", STAMP)))
        fp.write(row_line(_T["naans"], ("99999", "Bench A", STAMP)))
        fp.write(row_line(_T["shoulders"], ("12345", "x7", STAMP)))
        fp.write(row_line(_T["shoulders"], ("99999", "b5", STAMP)))
        fp.write(row_line(_T["shoulders"], ("99999", "fk4", STAMP)))
        rows = sorted((_key(i, n), i) for i in range(n))
        for (key, naan, shoulder), i in rows:
            created_t, created = _time(rng, 1_420_070_400.0)  # from 2015-01-01
            _, updated = _time(rng, created_t) if rng.random() < 0.4 else (created_t, created)
            roll = rng.random()
            status = ("public" if roll < 0.85 else "reserved" if roll < 0.93 else "unavailable"
                      if roll < 0.98 else "tombstoned")  # fmt: skip
            target = None if status == "reserved" else f"{rng.choice(_HOSTS)}{i:07d}"
            what = f"{rng.choice(_TITLE)} {rng.choice(_OF)} {rng.choice(_SUBJECT)}, {rng.choice(_PLACE)}"
            who = f"{rng.choice(_NAMES)}, {rng.choice('ABCDEFGHJKLMNPRST')}."
            extra = json.dumps({"dc.subject": rng.choice(_SUBJECTS)}, separators=(",", ":"))
            fp.write(row_line(_T["bindings"], (
                "ark", key, key, target, who, what, str(rng.randint(1850, 2020)), rng.choice(_PLACE),
                "", "", "", "", 0, status, naan, shoulder,
                "superseded" if status == "tombstoned" else None,
                updated if status == "tombstoned" else None,
                "under review" if status == "unavailable" else None, extra, created, updated,
            )))  # fmt: skip


def _postgres_base() -> str | None:
    return os.environ.get("PIDKIT_BENCH_POSTGRES_URL") or os.environ.get("PIDKIT_TEST_POSTGRES_URL")


def _complete(store: Store, n: int) -> bool:
    """True if ``store`` is a finished build of ``n`` bindings (the bench user is made last)."""
    from pidkit.errors import NotFoundError

    try:
        store.get_user("bench")
    except NotFoundError:
        return False
    return store.schema_version() == LATEST


def _fill(store: Store, n: int) -> None:
    dump = CACHE / f"search-{n}.jsonl"
    if not dump.exists():
        print(f"  writing a dump of {n:,} bindings …", flush=True)
        write_dump(dump.with_suffix(".part"), n)
        dump.with_suffix(".part").rename(dump)
    print(f"  restoring {n:,} bindings into {store.backend} …", flush=True)
    t0 = time.perf_counter()
    with dump.open(encoding="utf-8") as fp:
        store.restore(fp)
    store.add_user("bench", PASSWORD, naan="99999")
    print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)


def store_url(backend: str, n: int) -> str:
    """The URL of the cached store of ``n`` bindings on ``backend``, built first when it is missing."""
    CACHE.mkdir(exist_ok=True)
    if backend == "sqlite":
        path = CACHE / f"search-{n}-v{LATEST}.db"
        url = f"sqlite:///{path}"
        if path.exists():
            with open_store(url) as store:
                if _complete(store, n):
                    return url
            path.unlink()
        part = path.with_suffix(".part")
        part.unlink(missing_ok=True)
        with open_store(f"sqlite:///{part}") as store:
            _fill(store, n)
        part.rename(path)
        return url
    import psycopg

    base = _postgres_base()
    assert base is not None
    schema = f"pidkit_bench_search_{n}_v{LATEST}"
    url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}"
    with psycopg.connect(base, autocommit=True) as conn:
        there = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        if there:
            with open_store(url) as store:
                if _complete(store, n):
                    return url
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    with open_store(url) as store:
        _fill(store, n)
        with psycopg.connect(base, autocommit=True) as conn:  # what autovacuum does after a bulk load
            conn.execute(f"VACUUM ANALYZE {schema}.bindings")
    return url


def _late_key(store: Store, n: int) -> str:
    """A key of NAAN 99999 about nine tenths of the way through its key order."""
    keys = sorted(_key(i, n)[0] for i in range(n * 7 // 10))
    return keys[len(keys) * 9 // 10]


def cases(late: str) -> list[tuple[str, dict[str, str]]]:
    """The timed searches: ``(name, query string)``."""
    return [
        ("ARK prefix", {"ark": "ark:/99999/fk4-b"}),
        ("exact ARK (resolver URL)", {"ark": "https://n2t.net/ark:/99999/" + late.split("/", 1)[1]}),
        ("target substring", {"target": "collections/maps/00012"}),
        ("two metadata words", {"text": "lighthouse Bergen"}),
        ("status + date range", {"status": "reserved", "on": "updated", "from": "2020-03-01",
                                 "until": "2020-06-30", "sort": "updated", "order": "desc"}),
        ("late page (key order)", {"after": late}),
    ]  # fmt: skip


def _timed(backend: str, url: str, n: int) -> Iterator[Result]:
    from fastapi.testclient import TestClient

    from pidkit.web import create_app
    from pidkit.web.sessions import cookie_value

    name = "SQLite" if backend == "sqlite" else "PostgreSQL"
    with open_store(url) as store:
        late = _late_key(store, n)
        _, _, token = store.sign_in("bench", PASSWORD, address="127.0.0.1")
        with TestClient(create_app(store), follow_redirects=False) as client:
            client.cookies.set("pidkit_session", cookie_value(store.cookie_key(), token), path="/office")
            for what, query in cases(late):
                times: list[float] = []
                shown = 0
                for _ in range(REPEATS):
                    t0 = time.perf_counter()
                    r = client.get("/office/find", params=query)
                    times.append(time.perf_counter() - t0)
                    if r.status_code != 200 or "Results" not in r.text:
                        raise RuntimeError(f"{name} {what}: HTTP {r.status_code}: {r.text[:300]}")
                    shown = r.text.count('<tr><td><a class="mono"')
                times.sort()
                median, p95 = statistics.median(times), times[min(len(times) - 1, len(times) * 95 // 100)]
                yield Result(
                    name=f"Find: {what}, {n:,} bindings, {name}",
                    pidkit=f"GET /office/find ({name})",
                    pidkit_s=p95,
                    peer=f"(goal {GOAL_S * 1e3:.0f} ms)",
                    peer_s=GOAL_S,
                    max_ratio=1.0,
                    unit="request (p95)",
                    note=f"median {median * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms over {REPEATS}; "
                         f"{shown} rows on the page",
                )  # fmt: skip


def run(quick: bool) -> list[Result]:
    """Build (once) and time the searches on SQLite and, when configured, PostgreSQL."""
    n = 100_000 if quick else 1_000_000
    backends = ["sqlite"] + (["postgresql"] if _postgres_base() else [])
    results: list[Result] = []
    for backend in backends:
        url = store_url(backend, n)
        results += _timed(backend, url, n)
    return results


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        print(f"{r.name}: {r.note} ({'ok' if r.ok else 'MISSED'})")
