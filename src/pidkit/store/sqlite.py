"""The embedded store: one SQLite file in WAL mode.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so concurrent writers
from other processes wait ``busy_timeout`` instead of failing half-way) on one write connection,
guarded by a lock, so a store can be shared by the threads of a web server.  Reads run in deferred
transactions on a connection of their own thread (WAL lets readers run beside each other and beside
the writer); :meth:`SqliteStore.close` closes them all.  A private database (``":memory:"``) cannot be
shared by connections: it keeps one connection for everything.

``synchronous=NORMAL`` with WAL: a committed transaction survives a killed process (the guarantee
minting relies on); only a power loss may lose the last commits.

>>> store = SqliteStore(":memory:")
>>> store.schema_version() >= 1
True
>>> store.close()
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from .sql import Cursor, SqlStore

#: How long a writer waits for another process's write lock (milliseconds).
BUSY_TIMEOUT_MS: Final = 30_000
#: Ids per ``IN (…)`` list when checking minted candidates (well under SQLite's variable limit).
_CHUNK: Final = 300
#: Paths naming a database private to its connection (it cannot have per-thread readers).
_PRIVATE_PATHS: Final = frozenset({":memory:", ""})


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Switch ``conn``'s database to WAL mode, waiting out other processes doing the same.

    Converting a rollback-journal database to WAL takes a write lock, and SQLite answers "database is
    locked" at once, without calling the busy handler, when another connection holds the reserved lock
    (another process converting the same fresh file, or a writer in rollback mode).  So the conversion
    is retried, with a short random pause, until :data:`BUSY_TIMEOUT_MS` has passed.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause * random.uniform(0.5, 1.5))
        pause = min(pause * 2, 0.05)


class SqliteStore(SqlStore):
    """A store in a SQLite file (or ``":memory:"``)."""

    _unique_errors = (sqlite3.IntegrityError,)
    _db_errors = (sqlite3.IntegrityError, sqlite3.DataError)
    backend = "sqlite"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self._lock = threading.RLock()
        self._private = path in _PRIVATE_PATHS
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()  # not the write lock: opening a reader never waits on a writer
        self._closed = False
        self._conn = self._connect()
        try:
            if not self._private:
                _enter_wal(self._conn)
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def close(self) -> None:
        """Close the write connection and every thread's read connection."""
        with self._lock, self._readers_lock:
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._conn.close()

    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection (opened on first use)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._readers_lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
                conn = self._local.conn = self._connect()
                self._readers.append(conn)
        return conn

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Cursor]:
        if write or self._private:
            with self._lock:
                yield from self._run(self._conn, "BEGIN IMMEDIATE" if write else "BEGIN")
        else:
            yield from self._run(self._reader(), "BEGIN")

    @staticmethod
    def _run(conn: sqlite3.Connection, begin: str) -> Iterator[Cursor]:
        cur = conn.cursor()
        cur.execute(begin)
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")
        finally:
            cur.close()

    def _lock_migrations(self, cur: Cursor) -> None:
        """``BEGIN IMMEDIATE`` already holds the database's write lock."""

    def _taken(self, cur: Cursor, naan: str, ids: Sequence[str]) -> set[str]:
        taken: set[str] = set()
        prefix = f"ark:{naan}/"
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            cur.execute(
                f"SELECT id FROM minted WHERE naan = ? AND id IN ({marks}) "
                f"UNION ALL SELECT id FROM holds WHERE naan = ? AND id IN ({marks}) "
                f"UNION ALL SELECT substr(key, ?) FROM bindings WHERE kind = 'ark' AND key IN ({marks})",
                (naan, *chunk, naan, *chunk, len(prefix) + 1, *(prefix + c for c in chunk)),
            )
            taken.update(row[0] for row in cur.fetchall())
        return taken

    def _insert_minted(self, cur: Cursor, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
        if isinstance(cur, sqlite3.Cursor):
            cur.executemany(
                "INSERT INTO minted (naan, id, minter, position, minted_at) VALUES (?, ?, ?, ?, ?)", rows
            )
