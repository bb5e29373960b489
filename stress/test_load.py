# ruff: noqa: S603
"""Load: ``pidkit serve`` (one worker) under 64 concurrent connections from ``wrk`` for 60 s per backend
(20 s with ``STRESS_SHORT=1``): 80 % resolve, 10 % ``?info``, 10 % mint.  Errors (socket errors,
timeouts, any status but 302 / 200 / 201) must be 0; every 201 mint is one more id in the store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from pidkit.store import open_store
from stress import _report
from stress.conftest import SHORT, Servers, backend_of

SECONDS = 20 if SHORT else 60
CONNECTIONS = 64
BOUND = 2000
NAAN = "99999"
LUA = Path(__file__).resolve().parent / "load" / "mixed.lua"


def test_resolver_under_64_connections(
    store_url: str, serve: Servers, tmp_path: Path, figures: _report.Figures
) -> None:
    wrk = shutil.which("wrk")
    if wrk is None:
        if os.environ.get("CI"):
            pytest.fail("wrk is not installed under CI (make stress installs it with apt-get where it can)")
        pytest.skip("wrk is not installed (apt-get install wrk; make stress does this where it can)")
    with open_store(store_url) as store:
        store.add_naan(NAAN, "stress", shoulders=["fk4", "b7"])
        store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=5)
        for i in range(BOUND):
            store.bind(f"ark:{NAAN}/b7{i}", f"https://example.org/item/{i}")
        key = store.create_api_key(NAAN)[1]
    paths = tmp_path / "paths.txt"
    paths.write_text("".join(f"/ark:{NAAN}/b7{i}\n" for i in range(BOUND)))
    server = serve.start(store_url)
    # warm up: the first request opens the store (concurrent first requests get 503, see
    # test_cold_start_concurrent_first_requests)
    assert httpx.get(server.base.rstrip("/") + paths.read_text().split()[0], timeout=30).status_code == 302
    proc = subprocess.run(
        [wrk, "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "--timeout", "10s", "-s", str(LUA),
         server.base.rstrip("/"), "--", str(paths), key],
        capture_output=True, text=True, timeout=SECONDS + 120, check=False,
    )  # fmt: skip
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, proc.stdout + proc.stderr
    r = json.loads(line[len("RESULT ") :])
    errors = r["connect"] + r["read"] + r["write"] + r["timeout"] + r["unexpected"]
    seconds = r["duration_us"] / 1e6
    with open_store(store_url) as store:
        minted = store.minted_count("m")
    figures.add(
        "load",
        f"{backend_of(store_url)}, {CONNECTIONS} connections, {SECONDS} s (wrk, 1 server worker)",
        {
            "requests": r["requests"],
            "errors": errors,
            "requests/s": r["requests"] / seconds,
            "p50 ms": r["p50_us"] / 1000,
            "p99 ms": r["p99_us"] / 1000,
            "max ms": r["max_us"] / 1000,
            "302 / 200 / 201": f"{r['resolve']} / {r['info']} / {r['mint']}",
            "unexpected statuses (last seen)": f"{r['unexpected']} ({r['last_unexpected_status'] or '-'})",
            "ids minted / 201s": f"{minted} / {r['mint']}",
        },
    )
    assert errors == 0, json.dumps(r)
    assert r["resolve"] > 0 and r["info"] > 0 and r["mint"] > 0, r
    # wrk stops mid-request on some connections: a mint may have committed without its answer counted
    assert r["mint"] <= minted <= r["mint"] + CONNECTIONS


def test_cold_start_concurrent_first_requests(
    tmp_path: Path, serve: Servers, figures: _report.Figures
) -> None:
    """64 requests at once to a server that has not opened its store yet: each should be answered
    (302), none refused with 503 "the store is being opened"."""
    from concurrent.futures import ThreadPoolExecutor

    url = f"sqlite:///{tmp_path}/cold.db"
    with open_store(url) as store:
        store.add_naan(NAAN, "stress", shoulders=["b7"])
        store.bind(f"ark:{NAAN}/b70", "https://example.org/item/0")
    server = serve.start(url)
    with ThreadPoolExecutor(64) as pool:
        codes = list(pool.map(lambda _: httpx.get(f"{server.base}ark:{NAAN}/b70", timeout=30).status_code,
                              range(64)))  # fmt: skip
    refused = codes.count(503)
    figures.add(
        "load",
        "cold start: 64 concurrent first requests (SQLite)",
        {"requests": 64, "errors": refused, "status": "FINDING" if refused else "ok"},
    )
    # (was a finding: StoreHolder.get answered 503 while the first request opened the store; fixed)
    assert codes == [302] * 64
