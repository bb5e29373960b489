"""The SQLite store's changes token read from the WAL-index header (``pidkit.store.walindex``, issue 18).

The resolver asks the token before every request it answers from memory, so it must change exactly
when SQLite's own ``PRAGMA data_version`` would (any commit, by any connection or process), and reading
it must never disturb SQLite: the ``-shm`` file is never opened (closing a descriptor of it would drop
this process's POSIX locks on it), and the header is never read once the store has closed.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from pidkit.store import walindex
from pidkit.store.sqlite import SqliteStore
from pidkit.store.walindex import WAL_HEADER_BYTES, shared_mapping

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the header is found through /proc/self/maps")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with closing(SqliteStore(str(tmp_path / "s.db"))) as opened:
        opened.add_naan("99999", "test", shoulders=["fk4"])
        yield opened


def _in_another_process(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_header_read_is_the_files_first_bytes(store: SqliteStore) -> None:
    header = store._wal_header
    assert header is not None
    on_disk = _in_another_process(
        "import sys; print(open(sys.argv[1], 'rb').read(48).hex())", store.path + "-shm"
    )
    assert header.read().hex() == on_disk
    assert len(header.read()) == WAL_HEADER_BYTES


def test_the_token_changes_exactly_when_data_version_does(store: SqliteStore) -> None:
    watcher = sqlite3.connect(store.path, isolation_level=None)  # SQLite's own answer, for comparison
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("CREATE TABLE scratch (x)")

    def version() -> int:
        return int(watcher.execute("PRAGMA data_version").fetchone()[0])

    def rolled_back() -> None:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO scratch VALUES (1)")
        other.execute("ROLLBACK")

    steps: list[tuple[str, Callable[[], object]]] = [
        ("bind", lambda: store.bind("ark:99999/fk4a", "https://e.org/a", force=True)),
        ("read", lambda: store.resolve("ark:99999/fk4a")),
        ("another connection's insert",
         lambda: other.execute("INSERT INTO scratch VALUES (2)")),
        ("rolled back", rolled_back),
        ("another process's insert", lambda: _in_another_process(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('INSERT INTO scratch VALUES (3)')",
            store.path)),
        ("read by another connection", lambda: other.execute("SELECT COUNT(*) FROM bindings").fetchall()),
    ]

    def checkpoint(mode: str) -> Callable[[], object]:
        return lambda: other.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()

    modes = ("PASSIVE", "FULL", "RESTART", "TRUNCATE")
    steps += [(f"checkpoint {mode}", checkpoint(mode)) for mode in modes]
    steps.append(("bind after them", lambda: store.bind("ark:99999/fk4b", "https://e.org/b", force=True)))
    token, seen = store.changes_token(), version()
    changes = 0
    for name, step in steps * 2:
        step()
        now, now_seen = store.changes_token(), version()
        assert (now != token) == (now_seen != seen), name
        changes += now != token
        token, seen = now, now_seen
    assert changes >= 8  # every commit above, twice
    watcher.close()
    other.close()


def test_reading_the_header_leaves_sqlites_locks_in_place(store: SqliteStore) -> None:
    """SQLite holds a shared lock on byte 128 of the ``-shm`` file while it has the database open (its
    "dead man switch"); had the file been opened and closed here, this process's locks would be gone."""
    store.changes_token()
    probe = (
        "import fcntl, os, struct, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "lock = struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 128, 1, 0)\n"
        "kind, _, _, _, pid = struct.unpack('hhqqi4x', fcntl.fcntl(fd, fcntl.F_GETLK, lock))\n"
        "print(kind == fcntl.F_RDLCK, pid)\n"
    )
    assert _in_another_process(probe, store.path + "-shm") == f"True {os.getpid()}"


def test_the_database_stays_in_wal_mode_while_the_store_is_open(tmp_path: Path) -> None:
    """What makes the header the whole truth: nobody can take the database out of WAL mode (where
    commits would stop rewriting it) while the store has it open."""
    path = str(tmp_path / "s.db")
    switch = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0.1)\n"
        "try: print(c.execute('PRAGMA journal_mode = DELETE').fetchone()[0])\n"
        "except sqlite3.OperationalError as exc: print(exc)\n"
    )
    with closing(SqliteStore(path)) as opened:
        opened.changes_token()
        assert _in_another_process(switch, path) == "database is locked"
        assert opened.changes_token() is not None
    assert _in_another_process(switch, path) == "delete"  # once closed, it can


def test_a_closed_store_reads_no_header(tmp_path: Path) -> None:
    opened = SqliteStore(str(tmp_path / "s.db"))
    assert opened._wal_header is not None
    opened.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened.changes_token()


def test_without_the_mapping_the_token_is_data_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pidkit.store.sqlite.find_wal_header", lambda path: None)
    with closing(SqliteStore(str(tmp_path / "s.db"))) as opened:
        assert opened._wal_header is None
        opened.add_naan("99999", "test", shoulders=["fk4"])
        before = opened.changes_token()
        assert isinstance(before, tuple) and isinstance(before[1], tuple)  # (read connection, data_version)
        assert opened.changes_token() == before
        with closing(SqliteStore(opened.path)) as other:
            other.bind("ark:99999/fk4a", "https://e.org/a", force=True)
        assert opened.changes_token() != before


def test_a_store_out_of_wal_mode_looks_for_no_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pidkit.store.sqlite._enter_wal", lambda conn: None)  # as where WAL is refused
    asked: list[str] = []
    monkeypatch.setattr("pidkit.store.sqlite.find_wal_header", lambda path: asked.append(path))
    with closing(SqliteStore(str(tmp_path / "s.db"))) as opened:
        assert opened._wal_header is None and asked == []
        assert opened.changes_token() is not None


# --- finding the mapping -------------------------------------------------------------------------------
def _maps(tmp_path: Path, target: Path, lines: list[str]) -> str:
    st = os.stat(target)
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"
    listing = tmp_path / "maps"
    listing.write_text("".join(line.format(dev=dev, ino=st.st_ino, path=target) + "\n" for line in lines))
    return str(listing)


def test_the_mapping_found_is_the_one_shared_mapping_of_the_files_start(tmp_path: Path) -> None:
    target = tmp_path / "x-shm"
    target.write_bytes(bytes(32768))
    found = _maps(tmp_path, target, [
        "7f0000000000-7f0000001000 r-xp 00000000 {dev} {ino}                    {path}",  # private
        "7f0000002000-7f0000003000 rw-s 00008000 {dev} {ino}                    {path}",  # not its start
        "7f0000004000-7f000000c000 rw-s 00000000 {dev} {ino}                    {path}",
        "7f0000010000-7f0000018000 rw-s 00000000 {dev} 1                    /elsewhere",  # another file
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]",
        "not a line of the listing at all",
        "zz-7f01 rw-s 00000000 {dev} {ino}                    {path}",  # not an address
    ])  # fmt: skip
    assert shared_mapping(str(target), maps=found) == 0x7F0000004000


def test_two_mappings_or_none_find_nothing(tmp_path: Path) -> None:
    target = tmp_path / "x-shm"
    target.write_bytes(bytes(32768))
    line = "7f0000004000-7f000000c000 rw-s 00000000 {dev} {ino}                    {path}"
    twice = [line, line.replace("4000-", "5000-")]
    assert shared_mapping(str(target), maps=_maps(tmp_path, target, twice)) is None
    assert shared_mapping(str(target), maps=_maps(tmp_path, target, [])) is None
    short = "7f0000004000-7f0000004010 rw-s 00000000 {dev} {ino}                    {path}"  # 16 bytes
    assert shared_mapping(str(target), maps=_maps(tmp_path, target, [short])) is None
    assert shared_mapping(str(target), maps=str(tmp_path / "no-such-listing")) is None


def test_a_file_sqlite_does_not_map_has_no_header(tmp_path: Path) -> None:
    stale = tmp_path / "gone.db-shm"
    stale.write_bytes(struct.pack("<I", 3007000) + bytes(32764))  # a -shm file left behind, unmapped
    assert walindex.find_wal_header(str(tmp_path / "gone.db")) is None
