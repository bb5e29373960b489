# ruff: noqa: S603, S607
"""A PostgreSQL restart during ``pidkit restore`` (issue 13): the restore is one transaction, so the store
is left empty (the old state) or fully restored (the new one) — never a part — ``pidkit check`` passes,
and the restore can be run again.

The server is a private cluster this test creates (``initdb`` in a temporary directory, its own port) and
stops with ``pg_ctl stop -m immediate`` — a crash, no shutdown checkpoint — half-way through a restore,
then starts again.  The shared server of the other suites is never touched (``test_faults.py`` restarts
that one once, under load, through ``pidkit serve``).  Needs root (the server runs as ``postgres``) and the
PostgreSQL 15 binaries.
"""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pidkit.store import open_store

PG_BIN = Path("/usr/lib/postgresql/15/bin")
N = 100_000


def _as_postgres(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], capture_output=True, text=True,
                          timeout=180, check=True)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Cluster:
    """A private PostgreSQL cluster: start, crash (immediate stop), URL of a new database."""

    def __init__(self, root: Path) -> None:
        self.root, self.data, self.port = root, root / "data", _free_port()
        _as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.databases = 0

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w",
                     "-o", options, "start")  # fmt: skip

    def crash(self) -> None:
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def new_url(self) -> str:
        import psycopg

        self.databases += 1
        name = f"restore{self.databases}"
        server = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0 or not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip("needs root, runuser and the PostgreSQL 15 binaries for a private cluster")
    root = Path(tempfile.mkdtemp(prefix="pidkit-pg-"))
    pg = pwd.getpwnam("postgres")
    os.chown(root, pg.pw_uid, pg.pw_gid)
    c = Cluster(root)
    c.start()
    try:
        yield c
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(c.data), "-m",
                        "immediate", "stop"], capture_output=True, timeout=60, check=False)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def _pidkit(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PIDKIT_DATABASE_URL", "PIDKIT_PG_TIMEOUT")}
    return subprocess.Popen([sys.executable, "-m", "pidkit", *args], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


def _rows(url: str) -> tuple[list[str], list[str]]:
    """The store's dump after the header, and ``pidkit check``'s problems."""
    out = io.StringIO()
    with open_store(url) as s:
        s.dump(out)
        problems = s.check()
    return out.getvalue().splitlines()[1:], problems


def test_postgres_restart_during_restore(cluster: Cluster, tmp_path: Path) -> None:
    dump = tmp_path / "store.jsonl"
    with open_store(f"sqlite:///{tmp_path / 'source.db'}") as source:
        source.add_naan("99999", "Test")
        lines = (json.dumps({"text": f"ark:99999/fk4r{i}", "target": f"https://example.org/{i}"})
                 for i in range(N))
        source.import_jsonl(lines)
        with dump.open("w", encoding="utf-8") as fp:
            source.dump(fp)
    expected = dump.read_text(encoding="utf-8").splitlines()[1:]

    full = cluster.new_url()
    start = time.monotonic()
    done = _pidkit("restore", str(dump), "--db", full)
    assert done.communicate(timeout=600)[1].startswith("restored") and done.returncode == 0
    took = time.monotonic() - start
    assert _rows(full) == (expected, [])

    target = cluster.new_url()
    open_store(target).close()  # the old state: an empty store
    proc = _pidkit("restore", str(dump), "--db", target)
    time.sleep(took / 2)
    cluster.crash()
    _, err = proc.communicate(timeout=300)
    cluster.start()
    assert "Traceback" not in err
    if proc.returncode != 0:
        assert err.startswith("pidkit: error: ") and len(err.splitlines()) == 1, err
    rows, problems = _rows(target)
    assert problems == []  # pidkit check
    assert rows in ([], expected)  # the old state or the new one
    assert proc.returncode != 0 or rows == expected
    if not rows:  # the restore runs again, to the end
        again = _pidkit("restore", str(dump), "--db", target)
        assert again.communicate(timeout=600)[1].startswith("restored") and again.returncode == 0
        assert _rows(target) == (expected, [])
