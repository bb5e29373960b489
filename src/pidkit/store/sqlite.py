"""The embedded store: one SQLite file in WAL mode.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so concurrent writers
from other processes wait ``busy_timeout`` instead of failing half-way); reads in deferred
transactions.  One connection per store object, guarded by a lock, so a store can be shared by the
threads of a web server.  ``synchronous=NORMAL`` with WAL: a committed transaction survives a killed
process (the guarantee minting relies on); only a power loss may lose the last commits.

>>> store = SqliteStore(":memory:")
>>> store.schema_version() >= 1
True
>>> store.close()
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from .sql import Cursor, SqlStore

#: How long a writer waits for another process's write lock (milliseconds).
BUSY_TIMEOUT_MS: Final = 30_000
#: Ids per ``IN (…)`` list when checking minted candidates (well under SQLite's variable limit).
_CHUNK: Final = 300


class SqliteStore(SqlStore):
    """A store in a SQLite file (or ``":memory:"``)."""

    _unique_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
            if path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
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
