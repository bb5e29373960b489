# ruff: noqa: S603
"""Fixtures of the stress suite (``make stress``): test data, PostgreSQL, fresh stores, a real
``pidkit serve`` process, and the figures every test records for ``docs/reliability.md``.

``STRESS_SHORT=1`` shortens the long items (load: 20 s per backend instead of 60 s; fewer fuzzing
examples) so the suite fits in CI next to ``make test``.  Without PostgreSQL
(``PIDKIT_TEST_POSTGRES_URL`` unset) the PostgreSQL items are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from stress import _report

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
#: ``STRESS_SHORT=1``: the CI-sized run.
SHORT = os.environ.get("STRESS_SHORT", "") not in ("", "0")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: vectors and GEDCOM files (copied from tests/conftest.py)."""
    return DATA


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL (``PIDKIT_TEST_POSTGRES_URL``); skipped without it, failed under CI."""
    url = os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("PIDKIT_TEST_POSTGRES_URL is not set under CI: PostgreSQL stress items must run")
        pytest.skip("PIDKIT_TEST_POSTGRES_URL not set (export it to run the PostgreSQL stress items)")
    return url


def pg_schema_url(base: str) -> tuple[str, str]:
    """A fresh schema in the PostgreSQL database at ``base``: (URL selecting it, schema name)."""
    import psycopg

    schema = f"stress_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}", schema


def drop_pg_schema(base: str, schema: str) -> None:
    """Drop a schema made by :func:`pg_schema_url` (best effort if PostgreSQL is down)."""
    import psycopg

    try:
        with psycopg.connect(base, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    except psycopg.OperationalError:
        pass


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store URL on each backend (SQLite file in tmp_path; PostgreSQL fresh schema)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/stress.db"
        return
    base: str = request.getfixturevalue("postgres_url")
    url, schema = pg_schema_url(base)
    try:
        yield url
    finally:
        drop_pg_schema(base, schema)


def backend_of(url: str) -> str:
    """``sqlite`` or ``postgres``."""
    return "sqlite" if url.startswith("sqlite:") else "postgres"


def pidkit(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m pidkit ARGS`` (the real entry point) and return the finished process."""
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@dataclass
class Server:
    """A running ``pidkit serve`` process."""

    base: str
    proc: subprocess.Popen[str]


_URL_LINE = re.compile(r"listening on (http://\S+/)")


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Servers:
    """Starts ``pidkit serve --db URL`` processes (127.0.0.1, a free port) and stops them all."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, url: str, *extra: str, env: dict[str, str] | None = None) -> Server:
        """Start a server on ``url`` and wait until it answers."""
        full_env = {**os.environ, **(env or {}), "PIDKIT_DATABASE_URL": url}
        cmd = [sys.executable, "-m", "pidkit", "serve", "--db", url, "--host", "127.0.0.1",
               "--port", str(free_port()), "--log-level", "warning", *extra]  # fmt: skip
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=full_env
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            m = _URL_LINE.search(line)
            if m:
                # keep reading its output so a chatty server never blocks on a full pipe
                threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
                _wait_listening(m.group(1))
                return Server(m.group(1), proc)
        proc.kill()
        raise RuntimeError("pidkit serve did not start:\n" + "".join(seen))

    def stop_all(self) -> None:
        """Terminate every server started (kill after 10 s)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


@pytest.fixture
def serve() -> Iterator[Servers]:
    """A :class:`Servers`; every process it started is stopped at the end of the test."""
    servers = Servers()
    try:
        yield servers
    finally:
        servers.stop_all()


def _drain(stream: IO[str]) -> None:
    with contextlib.suppress(ValueError, OSError):
        for _ in stream:
            pass


def _wait_listening(base: str) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(base + ".well-known/ark", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{base} never answered")


@pytest.fixture(scope="session")
def figures() -> Iterator[_report.Figures]:
    """The figures of this run; written to stress/results.json and docs/reliability.md at the end."""
    figs = _report.Figures(short=SHORT)
    yield figs
    figs.save()


#: Not a test module: the atheris harness runs as a subprocess (and needs atheris to import).
collect_ignore = ["atheris_fuzz.py"]
