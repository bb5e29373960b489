"""The embedded store: one SQLite file in WAL mode.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so concurrent writers
from other processes wait ``busy_timeout`` instead of failing half-way) on one write connection,
guarded by a lock, so a store can be shared by the threads of a web server.  Reads run in deferred
transactions on a connection of their own thread (WAL lets readers run beside each other and beside
the writer); :meth:`SqliteStore.close` closes them all.  A private database (``":memory:"``) cannot be
shared by connections: it keeps one connection for everything.

``synchronous=NORMAL`` with WAL: a committed transaction survives a killed process (the guarantee
minting relies on); only a power loss may lose the last commits.

**The file stays the file.**  The store remembers which file it opened (device and inode).  A file
deleted or replaced while the store is open (``rm``, ``mv other.db pidkit.db``, a restore copied over
it) would take every later write into a file nobody can open any more; so each transaction first
checks (one ``stat``) that the path still names that file, and a write checks again after its commit,
before it is acknowledged.  Otherwise :class:`StoreFileChangedError` (a ``sqlite3.OperationalError``:
the web service answers 503) and nothing is written.  *Back* means the same file at the path again —
moved back (``mv``), or a hard link to it; a copy, a restored backup or a new store is another file and
stays refused until the store is opened anew (``pidkit serve`` restarted).  A new empty file is never
opened in its place: read connections open the path with ``mode=rw`` (never created) and check it.

>>> store = SqliteStore(":memory:")
>>> store.schema_version() >= 1
True
>>> store.close()
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import random
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from ..errors import StoreError
from .base import SETTLE_WAIT
from .keys import QUALIFIED_HIGH, QUALIFIED_LOW
from .records import UNPUBLISHED, WritesInFlightError
from .sql import Cursor, SqlStore, union_of
from .walindex import WalHeader, find_wal_header

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


FileId = tuple[int, int]


class StoreFileChangedError(sqlite3.OperationalError, StoreError):
    """The store's file was deleted or replaced while the store was open: nothing is read or written
    until the same file is back at its path.  A ``sqlite3.OperationalError`` first (the web service
    answers 503, as for a locked database), and a :class:`~pidkit.errors.StoreError` (the CLI prints it
    as one line).

    >>> err = StoreFileChangedError("p.db")
    >>> isinstance(err, sqlite3.OperationalError), isinstance(err, StoreError)
    (True, True)
    >>> str(err)  # doctest: +ELLIPSIS
    "the store file was deleted or replaced while in use; ... in 'p.db'"
    """

    def __init__(self, path: str) -> None:
        StoreError.__init__(
            self,
            "the store file was deleted or replaced while in use; nothing is written until the same file "
            "is back (moved back), or the store is opened anew",
            text=path,
        )


def file_id(path: str) -> FileId | None:
    """``(device, inode)`` of the file at ``path``, or ``None`` when there is none.

    >>> file_id("/nonexistent/x.db") is None
    True
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


#: The trigger of migration 6 that indexes an inserted binding for Find (:meth:`SqliteStore._bulk_insert`).
_INSERT_TRIGGER: Final = "bindings_search_insert"
#: Migration 7's trigger that adds the NAAN of an inserted ARK binding to ``bound_naans``, and the NAAN of
#: a key as it takes it (:meth:`SqliteStore._bulk_insert` does the same for many rows at its end;
#: tests/test_web_registry.py checks that the trigger's text holds this expression).
_NAAN_TRIGGER: Final = "bindings_bound_naan"
_KEY_NAAN: Final = ("CASE WHEN instr(substr({key}, 5), '/') > 0 THEN substr({key}, 5, "
                    "instr(substr({key}, 5), '/') - 1) ELSE substr({key}, 5) END")  # fmt: skip
#: Migration 6's triggers that take a binding out of the index (or put it back) when it is updated or
#: deleted, with the row (``old`` or ``new``) whose rowid says whether it is indexed yet.
_ROW_TRIGGERS: Final = {
    "bindings_search_delete": "old", "bindings_search_unindex": "old", "bindings_search_reindex": "new",
}


#: FTS5's in-memory hash of pending terms (bytes) while :meth:`SqliteStore._bulk_insert` fills a full-text
#: index; FTS5's default is 1 MB (``FTS5_DEFAULT_HASHSIZE``).  Each time the hash fills, FTS5 writes a
#: segment, and the more segments, the more merging: filling both indexes for 100,000 bindings took
#: 13.6–16.1 µs a row at 1 MB and 11.4–12.5 at 16 MB (docs/performance-notes.md).  The fill's statement
#: holds at most this much more memory per index.
_BULK_FTS_HASH: Final = 16 * 1024 * 1024
#: FTS5's own default for ``hashsize``, what a table without the setting uses.
_FTS_DEFAULT_HASH: Final = 1024 * 1024


@contextmanager
def _fts_hash(cur: Cursor, table: str, size: int) -> Iterator[None]:
    """FTS5 table ``table``'s ``hashsize`` set to ``size`` inside (a setting FTS5 keeps in the table's
    ``%_config`` table, so it is part of the transaction), then back to what it was.  An SQLite whose FTS5
    does not know the setting is left as it is.

    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    >>> with _fts_hash(conn.cursor(), "t", 1 << 24):
    ...     conn.execute("SELECT v FROM t_config WHERE k = 'hashsize'").fetchone()
    (16777216,)
    >>> conn.execute("SELECT v FROM t_config WHERE k = 'hashsize'").fetchone()
    (1048576,)
    """
    cur.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'")
    found = cur.fetchone()
    before = int(found[0]) if found is not None else _FTS_DEFAULT_HASH
    setting = f"INSERT INTO {table} ({table}, rank) VALUES ('hashsize', ?)"
    try:
        cur.execute(setting, (size,))
    except sqlite3.OperationalError:  # an FTS5 without the setting: fill as it is
        yield
        return
    yield
    cur.execute(setting, (before,))


def _id_or_qualified(table: str, column: str, scope: str) -> str:
    """A statement reading which ids (``{ids}``, a ``VALUES`` list of parameters; the prefix is the
    parameter before them) are a row of ``table`` — ``column`` equal to the prefix followed by the id,
    within ``scope`` (its parameters after the ids) — or are qualified by one (``column`` from ``prefix +
    id + QUALIFIED_LOW`` up to ``prefix + id + QUALIFIED_HIGH``: :data:`~pidkit.store.keys.QUALIFIED_LOW`):
    one range of the primary key (code point order) per id, less the few longer Names that continue it
    with a character below ``'.'`` (``*``, ``+``, ``$``).

    >>> "id >= k.key AND id < k.key || '0'" in _id_or_qualified("holds", "id", "naan = ?")
    True
    """
    return (
        "SELECT k.v FROM (SELECT c.column1 AS v, pre.p || c.column1 AS key "
        "FROM (SELECT ? AS p) AS pre, (VALUES {ids}) AS c) AS k "
        f"WHERE EXISTS (SELECT 1 FROM {table} WHERE {scope} AND {column} >= k.key "
        f"AND {column} < k.key || '{QUALIFIED_HIGH}' AND ({column} = k.key OR {column} >= k.key || "
        f"'{QUALIFIED_LOW}'))"
    )


_BOUND_OR_QUALIFIED: Final = _id_or_qualified("bindings", "key", "kind = 'ark'")
_HELD_OR_QUALIFIED: Final = _id_or_qualified("holds", "id", "naan = ?")
#: The same of the published ARK bindings (:func:`~pidkit.store.records.published`): an id so given out
#: is never held.
_PUBLISHED_OR_QUALIFIED: Final = _id_or_qualified("bindings", "key", "kind = 'ark' AND status <> ?")


class SqliteStore(SqlStore):
    """A store in a SQLite file (or ``":memory:"``)."""

    _unique_errors = (sqlite3.IntegrityError,)
    _db_errors = (sqlite3.IntegrityError, sqlite3.DataError)
    backend = "sqlite"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        #: The file named once, as the working directory was when the store was opened.
        self._abspath = path if path in _PRIVATE_PATHS else os.path.abspath(path)
        self._lock = threading.RLock()
        self._private = path in _PRIVATE_PATHS
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()  # not the write lock: opening a reader never waits on a writer
        self._closed = False
        self._file: FileId | None = None  # set once the file is there (the first connection may create it)
        self._wal_retired = False
        #: The WAL-index header as this process maps it (:meth:`changes_token`), once found.
        self._wal_header: WalHeader | None = None
        self._conn = self._connect(create=True)
        try:
            if not self._private:
                self._file = file_id(self._abspath)
                _enter_wal(self._conn)
            self._migrate()
            if not self._private and self._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                self._wal_header = find_wal_header(self._abspath)  # mapped by the migration's reads
        except BaseException:
            self._conn.close()
            raise

    @contextmanager
    def _bulk_insert(self, cur: Cursor) -> Iterator[None]:
        """Fill the full-text index (migration 6) once for the bindings inserted inside, not row by row
        (a restore, a big import): about three times faster than the trigger; and the NAANs of the new
        ARK bindings (migration 7's ``bound_naans``) by one statement at the end, not a trigger per row.

        In this transaction the insert trigger is dropped and the triggers that unindex, reindex or
        delete a binding on an update are made to skip the rows inserted inside (rowids above the highest
        there was), which are not in the index yet (a ``'delete'`` of a row an external-content FTS5
        table never indexed would corrupt it; a reindex would index it twice); rows there before keep
        their triggers.  At the end the new rows are indexed, as they are then, by two statements and
        every trigger is made again from its own text — all or nothing with the rest of the transaction
        (an error rolls the DDL back with it).  Inside, no binding may be deleted (a new row could take
        the rowid of the highest one) — a restore and an import only insert and update."""
        names = (_INSERT_TRIGGER, *_ROW_TRIGGERS)
        cur.execute(f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
                    f"({', '.join('?' * (len(names) + 1))})", (*names, _NAAN_TRIGGER))  # fmt: skip
        found: dict[str, str] = dict(cur.fetchall())
        naan_trigger = found.pop(_NAAN_TRIGGER, None)  # migration 7's, where the store has it
        if set(found) != set(names):  # a store of an older schema being migrated: nothing to defer
            yield
            return
        cur.execute("SELECT coalesce(max(rowid), 0) FROM bindings")
        (highest,) = cur.fetchone()
        guarded = {}
        for name, side in _ROW_TRIGGERS.items():
            when = f" WHEN {side}.kind = 'ark' BEGIN "
            if found[name].count(when) != 1:  # not the text migration 6 made: keep the triggers as they are
                yield
                return
            guarded[name] = found[name].replace(when, f" WHEN {side}.kind = 'ark' AND {side}.rowid <= "
                                                      f"{int(highest):d} BEGIN ")  # fmt: skip
        for name in names:
            cur.execute(f"DROP TRIGGER {name}")
        for text in guarded.values():
            cur.execute(text)
        if naan_trigger is not None:
            cur.execute(f"DROP TRIGGER {_NAAN_TRIGGER}")
        yield
        for table, column in (("bindings_words", "doc"), ("bindings_grams", "target")):
            with _fts_hash(cur, table, _BULK_FTS_HASH):
                cur.execute(f"INSERT INTO {table} (rowid, {column}) SELECT rid, {column} "
                            "FROM bindings_search_doc WHERE rid > ?", (highest,))  # fmt: skip
        for name in names:
            cur.execute(f"DROP TRIGGER IF EXISTS {name}")
            cur.execute(found[name])
        if naan_trigger is not None:
            naan = _KEY_NAAN.format(key="key")
            cur.execute(f"INSERT OR IGNORE INTO bound_naans (naan) SELECT DISTINCT {naan} FROM bindings "
                        "WHERE kind = 'ark' AND rowid > ?", (highest,))  # fmt: skip
            cur.execute(naan_trigger)

    def _connect(self, *, create: bool = False) -> sqlite3.Connection:
        """A connection to the store's file; only the first one may create it (``mode=rwc``), the
        others open what is there (``mode=rw``) and must find the store's own file."""
        if self._private:
            target, uri = self.path, False
        else:
            self._check_file()
            mode = "rwc" if create else "rw"
            target, uri = f"file:{urllib.parse.quote(self._abspath)}?mode={mode}", True
        conn = sqlite3.connect(
            target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False, uri=uri
        )
        try:
            self._check_file()
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def _check_file(self) -> None:
        """Raise :class:`StoreFileChangedError` unless the path still names the file the store opened
        (one ``stat``; nothing to check for a private database or before the file exists)."""
        if self._file is None:
            return
        if file_id(self._abspath) == self._file:
            if self._wal_retired:  # the file is back
                self._wal_retired = False
            return
        self._retire_wal()
        raise StoreFileChangedError(self.path)

    def _retire_wal(self) -> None:
        """Once the path names another file (or none), make the WAL file left at ``<path>-wal`` harmless.

        SQLite does not checkpoint a moved or deleted database when it closes, and leaves its WAL file
        behind: whoever opens the path next (the replacement file, a new store) would replay our
        transactions into that other database.  So every committed transaction is checkpointed into the
        file the store opened (a file moved away is then complete by itself) and the WAL truncated to
        nothing (``wal_checkpoint(TRUNCATE)``, through the store's own descriptors), once per change.
        """
        with self._lock:
            if self._wal_retired or self._closed:
                return
            self._wal_retired = True
            with contextlib.suppress(sqlite3.Error):  # best effort: the refusal stands either way
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def close(self) -> None:
        """Close the write connection and every thread's read connection (first retiring the WAL file
        if the path no longer names the store's file: :meth:`_retire_wal`)."""
        if self._file is not None and not self._closed and file_id(self._abspath) != self._file:
            self._retire_wal()
        with self._lock, self._readers_lock:
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._conn.close()

    def naans_token(self) -> tuple[FileId | None, bytes | tuple[int, int]] | None:
        """The store file's identity (a restore that replaced it) and what says whether anybody
        committed since: the WAL-index header, which every commit of any connection — the store's own
        write connection, another process — rewrites, read from SQLite's own mapping of it
        (:mod:`pidkit.store.walindex`, about 50 ns); where that cannot be found, this thread's read
        connection and its ``PRAGMA data_version`` (SQLite's own comparison of the same header, about
        3 µs).  So it changes with every commit, not only the NAANs'.  ``None`` for a private in-memory
        store, whose one connection both reads and writes.

        Exact because the header cannot stop being the one SQLite writes while the store is open: its
        connections keep the database in WAL mode (another connection's ``PRAGMA journal_mode =
        DELETE`` is refused, "database is locked"), and the mapping stays while they are open — it is
        read under the lock :meth:`close` takes to close them.

        >>> import tempfile
        >>> with SqliteStore(f"{tempfile.mkdtemp()}/t.db") as s:
        ...     before = s.naans_token()
        ...     _ = s.add_naan("99999")
        ...     before != s.naans_token()
        True
        """
        if self._private:
            return None
        identity = file_id(self._abspath)
        header = self._wal_header
        if header is not None:
            with self._readers_lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
                return identity, header.read()
        conn = self._reader()
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        return identity, (id(conn), int(version))

    def changes_token(self) -> tuple[FileId | None, bytes | tuple[int, int]] | None:
        """:meth:`naans_token`'s value: the WAL-index header (or ``PRAGMA data_version``) changes with
        every commit of any connection, whatever it changed.

        >>> import tempfile
        >>> with SqliteStore(f"{tempfile.mkdtemp()}/t.db") as s:
        ...     _ = s.add_naan("99999")
        ...     before = s.changes_token()
        ...     _ = s.bind("ark:99999/x", "https://e.org/", force=True)
        ...     before != s.changes_token()
        True
        """
        return self.naans_token()

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
        """A transaction on the store's file (:meth:`_check_file` before it, and for a write after its
        commit too: a write that went to a file deleted meanwhile is never acknowledged)."""
        self._check_file()
        if write or self._private:
            with self._lock:
                yield from self._run(self._conn, "BEGIN IMMEDIATE" if write else "BEGIN")
                if write:
                    self._check_file()
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

    def files(self) -> tuple[str, ...]:
        """The database file and the ones SQLite keeps beside it (``-wal``, ``-shm``, ``-journal``),
        whether they exist now or not; none for a private database."""
        if self._private:
            return ()
        return (self._abspath, *(self._abspath + suffix for suffix in ("-wal", "-shm", "-journal")))

    def settled_time(self, wait: float = SETTLE_WAIT) -> _dt.datetime:
        """The database's write lock taken (``BEGIN IMMEDIATE`` on this thread's reader, waiting at most
        ``wait``), the time read while it is held, then given back: every writer stamps its change once
        it holds that lock (:meth:`SqlStore._locked_now`), so one that held it has committed, and one
        that did not will stamp later.  Not from inside a transaction of the calling thread."""
        self._check_file()
        busy = WritesInFlightError(f"a write held the store for more than {wait:g} s (an import or a "
                                   "restore?); try again later")  # fmt: skip
        if self._private:  # one connection, so a write holds self._lock throughout
            if not self._lock.acquire(timeout=wait):
                raise busy
            try:
                return self._locked_now()
            finally:
                self._lock.release()
        conn = self._reader()
        if conn.in_transaction:
            raise StoreError("settled_time() inside a read transaction of the same thread")
        conn.execute(f"PRAGMA busy_timeout = {max(1, round(wait * 1000)):d}")
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                    raise
                raise busy from None
            try:
                return self._locked_now()
            finally:
                conn.execute("ROLLBACK")  # before anything else: the lock is never kept
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")

    def _lock_migrations(self, cur: Cursor) -> None:
        """``BEGIN IMMEDIATE`` already holds the database's write lock."""

    def _has_table(self, cur: Cursor, name: str) -> bool:
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return cur.fetchone() is not None

    def _taken_in(self, cur: Cursor, naan: str, ids: Sequence[str], tables: Sequence[str]) -> set[str]:
        taken: set[str] = set()
        prefix = f"ark:{naan}/"
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            marks, values = ", ".join("?" * len(chunk)), ", ".join(["(?)"] * len(chunk))
            parts = {
                "minted": (f"SELECT id FROM minted WHERE naan = ? AND id IN ({marks})", (naan, *chunk)),
                "holds": (_HELD_OR_QUALIFIED.format(ids=values), ("", *chunk, naan)),
                "bindings": (_BOUND_OR_QUALIFIED.format(ids=values), (prefix, *chunk)),
                "published": (_PUBLISHED_OR_QUALIFIED.format(ids=values), (prefix, *chunk, UNPUBLISHED)),
            }  # fmt: skip
            cur.execute(*union_of(parts, tables))
            taken.update(row[0] for row in cur.fetchall())
        return taken

    def _insert_minted(self, cur: Cursor, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
        if isinstance(cur, sqlite3.Cursor):
            cur.executemany(
                "INSERT INTO minted (naan, id, minter, position, minted_at) VALUES (?, ?, ?, ?, ?)", rows
            )
