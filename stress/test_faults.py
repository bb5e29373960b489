# ruff: noqa: S603, S607
"""Faults: ``kill -9`` of a bulk mint and of ``pidkit gedcom add-uids --in-place`` at random moments (20
times each), and a PostgreSQL restart under write load through ``pidkit serve``.

* Mint: after every kill the store opens, ``PRAGMA integrity_check`` is ok (SQLite), the minter's row
  count is a whole number of batches (a batch is all or nothing), never shrinks, and every id the killed
  process had printed (printed only after its commit) is in the store.  Minting goes on afterwards
  without a duplicate, and ``pidkit check`` (:meth:`Store.check`) finds no problem after every kill.
* GEDCOM: after every kill the file is byte-for-byte the old file, or the complete new file (the old
  bytes plus exactly one ``1 _UID`` line per record); ``FILE.bak``, when present, is the old file.
* PostgreSQL restart: while the database is down the server answers 503 (never 500, never hangs), it
  recovers by itself once the database is back, every write that got a 2xx is there afterwards, and
  ``pidkit check`` finds no problem.
"""

from __future__ import annotations

import contextlib
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from pidkit.store import open_store
from stress import _report
from stress.conftest import Servers, backend_of, drop_pg_schema, pg_schema_url

KILLS = 20
BATCH = 1000
NAAN = "99999"


def _mint_then_kill(url: str, delay: float) -> list[str]:
    """Start a big ``pidkit mint``, kill -9 it after ``delay`` s; return the complete lines it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pidkit", "mint", "m", "-n", "5000000", "--batch", str(BATCH), "--db", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.kill()
    out, _ = proc.communicate(timeout=60)
    lines = out.split(b"\n")
    return [line.decode() for line in lines[:-1]]  # the last piece may be a partial line


def _integrity(url: str) -> str:
    if not url.startswith("sqlite:"):
        return "ok"
    with sqlite3.connect(url[len("sqlite:///") :]) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def test_kill_9_bulk_mint(store_url: str, figures: _report.Figures) -> None:
    rng = random.Random(6)
    with open_store(store_url) as store:
        store.add_naan(NAAN, "stress", shoulders=["fk4"])
        store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=3)
    previous = 0
    acknowledged: set[str] = set()
    partial_batches = 0
    for _ in range(KILLS):
        printed = _mint_then_kill(store_url, rng.uniform(0.3, 2.5))
        acknowledged.update(printed)
        assert _integrity(store_url) == "ok"
        with open_store(store_url) as store:
            count = store.minted_count("m")
            partial_batches += count % BATCH != 0
            assert count >= previous
            previous = count
            assert store.get_minter("m").counter >= count
            assert store.check() == []  # pidkit check, after every kill
    from stress.test_concurrency import _minted_rows

    stored = {f"ark:{n}/{b}" for n, b, _ in _minted_rows(store_url, "m")}
    lost = len(acknowledged - stored)
    with open_store(store_url) as store:
        after = store.mint("m", 2 * BATCH, batch_size=BATCH)
        assert store.check() == []
    dup_after = len(set(after) & stored)
    figures.add(
        "faults",
        f"kill -9 during `pidkit mint` (batches of {BATCH}), {backend_of(store_url)}",
        {
            "kills": KILLS,
            "ids committed": len(stored),
            "ids acknowledged (printed)": len(acknowledged),
            "acknowledged but lost": lost,
            "partial batches": partial_batches,
            "duplicates when minting on": dup_after,
        },
    )
    assert lost == 0
    assert partial_batches == 0
    assert dup_after == 0
    assert len(stored) > 0, "the kills came before any commit: raise the delays"


# --- GEDCOM add-uids --in-place ---------------------------------------------------------------------

RECORDS = 60_000


def _big_gedcom(path: Path) -> bytes:
    parts = [b"0 HEAD\n1 SOUR stress\n1 GEDC\n2 VERS 5.5.1\n2 FORM LINEAGE-LINKED\n1 CHAR UTF-8\n"]
    for i in range(RECORDS):
        parts.append(
            f"0 @I{i}@ INDI\n1 NAME Person {i} /Stress/\n1 SEX U\n1 BIRT\n2 DATE 1 JAN {1800 + i % 200}\n"
            f"2 PLAC Town {i % 97}\n1 NOTE line one of a note\n2 CONT line two é\n".encode()
        )
    parts.append(b"0 TRLR\n")
    data = b"".join(parts)
    path.write_bytes(data)
    return data


_UID_LINE = re.compile(rb"^1 _UID [0-9A-F]{36}\r?\n", re.MULTILINE)


def test_kill_9_gedcom_add_uids_in_place(tmp_path: Path, figures: _report.Figures) -> None:
    rng = random.Random(9)
    ged = tmp_path / "tree.ged"
    old = _big_gedcom(ged)
    bak = Path(str(ged) + ".bak")
    # how long a full run takes, so kills land anywhere in it
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pidkit", "gedcom", "add-uids", str(ged), "--in-place"],
        capture_output=True,
        check=False,
    )
    full = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    new = ged.read_bytes()
    assert len(_UID_LINE.findall(new)) == RECORDS
    assert _UID_LINE.sub(b"", new) == old
    outcomes = {"old": 0, "new": 0}
    for _ in range(KILLS):
        ged.write_bytes(old)
        bak.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "pidkit", "gedcom", "add-uids", str(ged), "--in-place"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, full * 1.05))
        proc.kill()
        proc.wait(60)
        data = ged.read_bytes()
        if data == old:
            outcomes["old"] += 1
        else:
            assert len(_UID_LINE.findall(data)) == RECORDS, "a half-written file"
            assert _UID_LINE.sub(b"", data) == old, "a changed file that is not old + UID lines"
            outcomes["new"] += 1
        if bak.exists():
            assert bak.read_bytes() == old, "a backup that is not the old file"
    # a killed run cannot remove its temp file; the next run of the same target removes it (pidkit.atomic)
    leftovers = len(list(tmp_path.glob(".*.pidkit-*.tmp")))
    figures.add(
        "faults",
        f"kill -9 during `gedcom add-uids --in-place` ({len(old) / 1e6:.1f} MB, {RECORDS:,} records)",
        {
            "kills": KILLS,
            "old file": outcomes["old"],
            "new file": outcomes["new"],
            "half-written": 0,
            "full run s": full,
            "temp files left behind": leftovers,
        },
    )


# --- PostgreSQL restart under load --------------------------------------------------------------------

CLUSTER = ("15", "main")


def _pg(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "pg_ctlcluster",
            "--skip-systemctl-redirect",
            *CLUSTER,
            action,
            *(["-m", "fast"] if action == "stop" else []),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _pg_ready() -> bool:
    return subprocess.run(["pg_isready", "-h", "127.0.0.1", "-q"], check=False, timeout=30).returncode == 0


def _ensure_pg_running() -> None:
    deadline = time.monotonic() + 90
    while not _pg_ready():
        _pg("start")
        if time.monotonic() > deadline:
            raise RuntimeError("PostgreSQL did not come back")
        time.sleep(1)


def test_postgres_restart_under_load(postgres_url: str, serve: Servers, figures: _report.Figures) -> None:
    if not Path("/etc/postgresql", *CLUSTER).exists():
        pytest.skip("no local PostgreSQL cluster 15/main to restart")
    url, schema = pg_schema_url(postgres_url)
    try:
        with open_store(url) as store:
            store.add_naan(NAAN, "stress", shoulders=["fk4"])
            key = store.create_api_key(NAAN)[1]
        server = serve.start(url, env={"PIDKIT_STORE_RETRY": "1", "PIDKIT_PG_POOL_MAX": "8"})
        acked: dict[str, str] = {}
        statuses: dict[str, dict[int, int]] = {"before": {}, "down": {}, "after": {}}
        phase = ["before"]
        stop = threading.Event()
        lock = threading.Lock()
        hangs = [0]
        slowest: dict[str, float] = {"before": 0.0, "down": 0.0, "after": 0.0}

        def writer(n: int) -> None:
            with httpx.Client(base_url=server.base, timeout=15) as client:
                i = 0
                while not stop.is_set():
                    i += 1
                    ark = f"ark:{NAAN}/fk4w{n}n{i}"
                    target = f"https://example.org/{n}/{i}"
                    sent, sent_in = time.monotonic(), phase[0]
                    try:
                        r = client.put(
                            "/api/v1/bindings",
                            json={"ark": ark, "target": target},
                            headers={"authorization": f"Bearer {key}"},
                        )
                    except httpx.TimeoutException:
                        with lock:
                            hangs[0] += 1
                        continue
                    with lock:
                        slowest[sent_in] = max(slowest[sent_in], time.monotonic() - sent)
                        bucket = statuses[sent_in]
                        bucket[r.status_code] = bucket.get(r.status_code, 0) + 1
                        if r.status_code in (200, 201):
                            acked[ark] = target
                    if r.status_code == 503:
                        time.sleep(0.05)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(3)
            phase[0] = "down"
            down_at = time.monotonic()
            stopped = _pg("stop")
            assert stopped.returncode == 0, stopped.stderr
            time.sleep(4)
            started = _pg("start")
            assert started.returncode == 0, started.stderr
            up_at = time.monotonic()
            # recovered = the first 2xx write after the database is back
            recovered_after = None
            with httpx.Client(base_url=server.base, timeout=15) as probe:
                while time.monotonic() - up_at < 60:
                    r = probe.get("/api/v1/bindings", params={"ark": f"ark:{NAAN}/fk4w0n1"})
                    if r.status_code == 200:
                        recovered_after = time.monotonic() - up_at
                        break
                    time.sleep(0.1)
            phase[0] = "after"
            time.sleep(3)
        finally:
            stop.set()
            for t in threads:
                t.join(60)
            _ensure_pg_running()
        with open_store(url) as store:
            missing = [
                a for a, tgt in acked.items() if (b := store.get_binding(a)) is None or b.target != tgt
            ]
            problems = store.check()  # pidkit check, after the restart
        down = statuses["down"]
        figures.add(
            "faults",
            "PostgreSQL stopped 4 s and restarted under 4 writers (pidkit serve)",
            {
                "acknowledged writes": len(acked),
                "lost": len(missing),
                "statuses before": str(dict(sorted(statuses["before"].items()))),
                "statuses while down/restarting": str(dict(sorted(down.items()))),
                "statuses after": str(dict(sorted(statuses["after"].items()))),
                "recovered s after start": recovered_after if recovered_after is not None else "never",
                "client timeouts": hangs[0],
                "slowest s (before/down/after)": "/".join(f"{slowest[p]:.2f}" for p in statuses),
                "outage s": up_at - down_at,
            },
        )
        assert not missing, missing[:5]
        assert problems == [], problems
        assert all(s < 500 or s == 503 for ph in statuses.values() for s in ph), statuses
        assert down.get(503, 0) > 0, f"no 503 while the database was down: {down}"
        assert recovered_after is not None, "the server did not recover by itself"
        assert statuses["after"].get(201, 0) > 0, statuses["after"]
        assert set(statuses["after"]) <= {200, 201}, statuses["after"]
        assert hangs[0] == 0
    finally:
        with contextlib.suppress(RuntimeError):
            _ensure_pg_running()
        drop_pg_schema(postgres_url, schema)
