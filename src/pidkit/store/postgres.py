"""The store at scale: PostgreSQL through psycopg 3 and a :class:`psycopg_pool.ConnectionPool`.

Every operation borrows a pooled connection for one transaction.  Migrations take
``pg_advisory_xact_lock`` so several processes can start at once; minting locks the minter's row
(``UPDATE … RETURNING``), checks candidates by one primary-key probe each (:func:`_each_of`, in the
tables that can hold one: :meth:`SqlStore._taken`) and records them with ``COPY`` in the same
transaction.  Pool size: ``$PIDKIT_PG_POOL_MAX`` (default 10).  A schema other than
``public`` is chosen the libpq way: ``postgresql://…/db?options=-csearch_path%3Dmyschema``.

While the server is down an operation waits at most ``$PIDKIT_PG_TIMEOUT`` seconds (default 3) for a
pooled connection and then raises :class:`psycopg_pool.PoolTimeout` (the web service answers 503); the
pool reconnects by itself once the server is back.  Opening the store first makes one plain
connection, bounded by libpq's ``connect_timeout`` (default ``$PIDKIT_PG_TIMEOUT`` rounded up, at least
2 s; a ``connect_timeout`` in the URL wins): a server that is down, a database or role that does not
exist is one :class:`~pidkit.errors.StoreError` at once, not the pool's retries until its timeout.

Writes that decide whether an ARK is free (mint batches, bind, tombstone, holds, imports) take
``pg_advisory_xact_lock(NAAN_LOCK, hashtext(naan))`` first: under READ COMMITTED a minter that
checked ``bindings`` could otherwise mint an ARK tombstoned or bound in between.  The writes that
take several NAANs' locks in turn (imports, merge restores) take ``BULK_LOCK`` before them, one at a
time, so that no two of them deadlock.  The statement also
names the tables a first big import holds, so they are locked before the NAAN (:meth:`_lock_naan`).
(The key is the NAAN's alone, as every earlier version takes it: a process of an earlier version
writing beside this one during an upgrade still waits for the same lock.)

A resolver that asks :meth:`PostgresStore.naans_token` gets one more connection, in a thread of its
own, that listens (``LISTEN``) for migration 7's ``NOTIFY pidkit_naans`` (a NAAN added, a first binding
under a NAAN); a watcher that asks :meth:`PostgresStore.bindings_token` gets one that listens for
migration 10's ``NOTIFY pidkit_bindings`` (any committed change to the bindings).

Statements are never prepared server-side (see :attr:`PostgresStore._prepare_threshold`): every
execution is planned with its own parameters on the current statistics.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, Final

from ..errors import StoreError
from .base import SETTLE_WAIT
from .jsonl import ImportRow
from .keys import QUALIFIED_HIGH, QUALIFIED_LOW, ArkKey
from .records import UNPUBLISHED, Binding, WritesInFlightError
from .rows import BINDING_COLS, HISTORY_COLS, IMPORT_SETS, Table, binding_from_row
from .sql import _IMPORTED_TABLES, Cursor, SqlStore, _Merging, _Query, union_of
from .urls import redact_url

try:
    import psycopg
    import psycopg.errors
    import psycopg.sql
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - the postgres extra is not installed
    psycopg = None  # type: ignore[assignment]

# psycopg logs warnings when the server goes away mid-work (the pool dropping a closed connection, a COPY
# it cannot terminate): with no handler configured, Python's last-resort handler would print them to
# stderr beside the CLI's one-line error.  An application that configures logging (uvicorn, a service)
# still gets them through propagation.  "psycopg" covers "psycopg.pool".
logging.getLogger("psycopg").addHandler(logging.NullHandler())
_log = logging.getLogger("pidkit.store")

#: Advisory lock key serializing schema migrations ("pidkit" in ASCII).
MIGRATION_LOCK: Final = 0x706964_6B6974
#: First key of the two-key advisory lock of one store's schema (the second: the hash of its name).
SCHEMA_LOCK: Final = 0x736368  # "sch"
#: First key of the two-key advisory locks serializing writes per NAAN (the second: hashtext(naan)).
NAAN_LOCK: Final = 0x6E61616E  # "naan"
#: Advisory lock key serializing the writes that lock several NAANs in turn (imports, merge restores):
#: like :data:`NAAN_LOCK`, one for the database ("bulk" in ASCII).
BULK_LOCK: Final = 0x62756C6B
#: First key of the two-key advisory locks serializing the sign-in attempts of one account or address
#: (the second: hashtext of it): "sign" in ASCII.
SIGNIN_LOCK: Final = 0x7369676E
#: First key of the two-key advisory lock (the second: the hash of the store's schema's name) that every
#: write stamping a change holds shared from before it reads its stamp until it ends: taken in the
#: statement of the NAAN, bulk or schema lock, after that lock (target lists are evaluated in order), so
#: that a write still queued for its NAAN — behind an import of another store of the database, say —
#: is not yet among the writes :meth:`PostgresStore.settled_time` waits for ("stmp" in ASCII).
STAMP_LOCK: Final = 0x73746D70
#: The stamp lock as ``pg_advisory_xact_lock_shared``'s arguments (its key ``?``: :data:`STAMP_LOCK`).
_STAMP_KEY: Final = "?, hashtext(current_schema())"
#: :meth:`PostgresStore.settled_time`'s statement: the transactions holding this store's stamp lock
#: now (``pg_locks`` shows a two-key advisory lock's keys as ``classid``, ``objid`` — an ``oid``, the
#: second key's 32 bits unsigned — and ``objsubid`` 2), limited to those of ``ANY(?)`` when given.
_STAMP_HOLDERS: Final = (
    "SELECT DISTINCT virtualtransaction FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = ? AND objsubid = 2 AND objid::bigint = (hashtext(current_schema())::bigint & 4294967295) "
    "AND (?::text[] IS NULL OR virtualtransaction = ANY(?::text[]))"
)
#: :meth:`PostgresStore._lock_naan`'s statement.
_LOCK_NAAN: Final = (
    f"SELECT pg_advisory_xact_lock(?, hashtext(?)), pg_advisory_xact_lock_shared({_STAMP_KEY}) "
    f"WHERE NOT EXISTS (SELECT FROM {', '.join(_IMPORTED_TABLES)} LIMIT 0)"
)

_DEFAULT_POOL_MAX: Final = 10

#: Rows per ``COPY`` of a restore into an empty store (:meth:`PostgresStore._restore_table`): memory is
#: bounded by this, and the rows of one chunk are checked against the holds in one statement.
_RESTORE_CHUNK: Final = 2000

#: Seconds to wait for a pooled connection (and for the first one when opening).
DEFAULT_TIMEOUT: Final = 3.0
#: Seconds after which :meth:`PostgresStore.naans_token` changes even if nothing was heard.
NAANS_RECHECK: Final = 30.0
#: Characters of ancestors' keys above which a lookup sends cut lengths instead (PostgresStore._ark_rows).
DEEP_KEYS: Final = 16 * 1024


def _each_of(table: str, columns: str, scope: str, key: str, *, lock: str = "") -> str:
    """A statement reading ``columns`` of the rows of ``table`` whose ``key`` column is in the array of
    its first parameter (distinct values) and whose ``scope`` column equals its last, by one probe of
    the primary key ``(scope, key)`` per value: a nested loop over ``unnest``, locking each row found
    with ``lock`` (``" FOR UPDATE"``).  Parameters in ``columns`` come between the two.  ``LIMIT 1``
    (the key is unique in its scope) keeps the planner from flattening the subquery into a join, which
    it may then do by reading every row of the scope.

    Written ``scope = ? AND key = ANY(?)``, the statement is planned from the table's statistics, and
    a table without them (one that was empty when a big import or mint began: ``ANALYZE`` sees the new
    rows only after a commit, and autovacuum runs it only now and then) is reckoned to hold many rows
    per value: the planner then reads every row of the scope and filters them by the array, once per
    chunk, so the import or mint slowed as it grew (an import of 10,000,000 lines: 550 µs a line on
    average, 1,100 lines a second at the end; a mint of 1,200,000 ids: 12.5 µs an id at first, 35 at
    the end).  A probe per value costs the same whatever the statistics say.

    >>> statement = _each_of("bindings", "key", "kind", "key", lock=" FOR UPDATE")
    >>> for part in statement.split(" CROSS JOIN LATERAL "):
    ...     print(part)
    SELECT p.* FROM unnest(?::text[]) AS k(v)
    (SELECT key FROM bindings WHERE kind = ? AND key = k.v LIMIT 1 FOR UPDATE) AS p
    """
    return (
        "SELECT p.* FROM unnest(?::text[]) AS k(v) CROSS JOIN LATERAL "
        f"(SELECT {columns} FROM {table} WHERE {scope} = ? AND {key} = k.v LIMIT 1{lock}) AS p"
    )


def _id_or_qualified(table: str, column: str, scope: str) -> str:
    """A statement reading which ids (the array, its second parameter) are a row of ``table`` — ``column``
    equal to the prefix (its first parameter) followed by the id, within ``scope`` (parameters after) —
    or are qualified by one (``column`` from ``prefix + id + QUALIFIED_LOW`` up to ``prefix + id +
    QUALIFIED_HIGH``: :data:`~pidkit.store.keys.QUALIFIED_LOW`): one range of an index of ``column`` in
    code point order per id, from the id to the end of that range, in a nested loop over ``unnest``
    (``LIMIT 1``: never flattened into a join, as in :func:`_each_of`).  The range holds the id, the ids
    qualifying it, and the few longer Names that continue it with a character below ``'.'`` (``*``,
    ``+``, ``$``), which the last condition leaves out.  The bounds are made by the server (arrays of
    thousands of strings cost the client more than the reading).

    >>> print(_id_or_qualified("holds", "id", "naan = ?").split(" CROSS JOIN LATERAL ")[1][:78])
    (SELECT 1 FROM holds WHERE naan = ? AND id COLLATE "C" >= k.key AND id COLLATE
    """
    c = f'{column} COLLATE "C"'
    return (
        "SELECT k.v FROM (SELECT v, ? || v AS key FROM unnest(?::text[]) AS v) AS k CROSS JOIN LATERAL "
        f"(SELECT 1 FROM {table} WHERE {scope} AND {c} >= k.key AND {c} < k.key || '{QUALIFIED_HIGH}' "
        f"AND ({column} = k.key OR {c} >= k.key || '{QUALIFIED_LOW}') LIMIT 1) AS p"
    )


#: :func:`_id_or_qualified` of the ARK bindings (``bindings_key_c``, migration 6) and of the held ids
#: (``holds_id_c``, migration 11).
_BOUND_OR_QUALIFIED: Final = _id_or_qualified("bindings", "key", "kind = 'ark'")
_HELD_OR_QUALIFIED: Final = _id_or_qualified("holds", "id", "naan = ?")
#: The same of the published ARK bindings (:func:`~pidkit.store.records.published`): an id so given out
#: is never held.
_PUBLISHED_OR_QUALIFIED: Final = _id_or_qualified("bindings", "key", "kind = 'ark' AND status <> ?")


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database (``postgresql://`` URL)."""

    backend = "postgresql"
    #: Rows a write reads to decide are locked until it commits.
    _for_update = " FOR UPDATE"
    _code_point_order = ' COLLATE "C"'

    #: psycopg's ``prepare_threshold`` for the pooled connections: ``None``, never prepare.  A
    #: prepared statement's generic plan is made once per connection, on the statistics of that moment:
    #: made on an empty table (a fresh store) it kept using the ``bindings_by_naan`` index for key
    #: lookups after a 100,000-line import (resolve: 19/s instead of 1,950/s, get: 122/s instead of
    #: 2,380/s, same run).  Planning each statement costs less than that risk.
    _prepare_threshold: int | None = None
    _NAANS: Final = "pidkit_naans"  # migration 7: a NAAN added, a first binding under a NAAN
    _BINDINGS: Final = "pidkit_bindings"  # migration 10: any change to the bindings

    def __init__(self, url: str, *, max_size: int | None = None, timeout: float | None = None) -> None:
        if psycopg is None:  # pragma: no cover
            raise StoreError("PostgreSQL needs the postgres extra: pip install 'pidkit[postgres]'")
        super().__init__()
        self._unique_errors = (psycopg.errors.UniqueViolation,)
        self._db_errors = (psycopg.errors.IntegrityError, psycopg.errors.DataError)
        self._queries: dict[str, str] = {}
        size = max_size or int(_env_number("PIDKIT_PG_POOL_MAX", _DEFAULT_POOL_MAX, int))
        wait = timeout or _env_number("PIDKIT_PG_TIMEOUT", DEFAULT_TIMEOUT, float)
        connect = _connect_options(url, wait)
        _check_connection(url, connect)
        self._url, self._connect = url, connect
        self._listeners: dict[str, _ChangeListener] = {}  # by channel, started on first use
        self._listener_lock = threading.Lock()
        self._closed = False
        self._writes = 0  # write transactions committed (naans_token)
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=size,
            open=False,
            name="pidkit",
            timeout=wait,
            # autocommit: a write opens its own transaction (conn.transaction()); a single read is then
            # one round trip, and a connection never goes back to the pool inside a transaction
            kwargs={"prepare_threshold": self._prepare_threshold, "autocommit": True, **connect},
        )
        try:
            self._pool.open(wait=True, timeout=wait)
            self._migrate()
        except psycopg.Error as exc:
            self._pool.close()
            raise StoreError(f"cannot use PostgreSQL: {exc}") from None
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore(<{self._pool.name}>)"

    def close(self) -> None:
        """Close the pool (and stop listening for changes)."""
        with self._listener_lock:
            self._closed = True
            listeners, self._listeners = list(self._listeners.values()), {}
        for listener in listeners:
            listener.close()
        self._pool.close()

    def naans_token(self) -> tuple[int, int, int] | None:
        """In memory: how many notifications of a change to the NAANs served or bound under (migration 7's
        ``NOTIFY pidkit_naans`` for this store's schema) this store's listener has heard, how many write
        transactions this store object committed (its own writes count at once, before their notification
        comes back), and the current :data:`NAANS_RECHECK`-second period (so that a listener whose
        connection died silently — a dropped idle TCP connection, a pooler that does not pass
        notifications on — costs at most that much staleness).  ``None`` until the listener listens (it
        starts on the first call, in a thread with a connection of its own, and counts as listening once
        its own test notification came back) and while it has lost the server, or after :meth:`close`.
        A notification arrives when the change commits, so a copy of the sets is exact but for the
        moments the notification takes."""
        heard = self._heard(self._NAANS)
        if heard is None:
            return None
        return heard, self._writes, int(time.monotonic() // NAANS_RECHECK)

    def bindings_token(self) -> tuple[str, int, int] | tuple[str, tuple[int, ...]] | None:
        """``("heard", n, w)``: how many notifications of a committed change to this store's bindings
        (migration 10's ``NOTIFY pidkit_bindings`` for this store's schema) its listener has heard, and
        how many write transactions this store object committed — in memory; a change is seen the moment
        its notification arrives, a few milliseconds after its commit.  The first call starts the
        listener (a thread with a connection of its own) and waits for it up to
        :data:`_ChangeListener.PROBE_WAIT` seconds.  While it does not listen (the server was lost; a
        pooler that does not pass notifications on), ``("counted", …)``: the cumulative
        insert/update/delete counters of the ``bindings`` table (``pg_stat_get_tuples_*``, one read, no
        table scan), which the server publishes when a session goes idle, at most once a second — a
        burst of writes may take up to ``PGSTAT_IDLE_INTERVAL`` (10 s) to be seen.  ``None`` after
        :meth:`close`.  :class:`~pidkit.errors.StoreError` when the counters cannot be read."""
        first = self._BINDINGS not in self._listeners
        heard = self._heard(self._BINDINGS)
        deadline = time.monotonic() + _ChangeListener.PROBE_WAIT
        while first and heard is None and not self._closed and time.monotonic() < deadline:
            time.sleep(0.02)
            heard = self._heard(self._BINDINGS)
        if heard is not None:
            return "heard", heard, self._writes
        if self._closed:
            return None
        try:
            with self._single_read() as cur:
                cur.execute(
                    "SELECT pg_stat_get_tuples_inserted(t), pg_stat_get_tuples_updated(t), "
                    "pg_stat_get_tuples_deleted(t) FROM CAST('bindings' AS regclass) AS t"
                )
                row = cur.fetchone()
        except psycopg.Error as exc:
            raise StoreError(f"cannot use PostgreSQL: {_one_line(exc)}", text=redact_url(self._url)) from None
        return "counted", tuple(row or ())

    def _heard(self, channel: str) -> int | None:
        """The count of ``channel``'s listener (:meth:`_ChangeListener.heard`), started on first use."""
        listener = self._listeners.get(channel)
        if listener is None:
            with self._listener_lock:
                if self._closed:
                    return None
                listener = self._listeners.get(channel)
                if listener is None:
                    listener = _ChangeListener(self._url, self._connect, channel, self._notify)
                    self._listeners[channel] = listener
        return listener.heard()

    def _notify(self, channel: str, payload: str) -> None:
        """``NOTIFY`` ``channel`` with ``payload`` from a pooled connection (a listener's probe)."""
        with self._single_read() as cur:
            cur.execute("SELECT pg_notify(%s, %s)", (channel, payload))

    def _run_statements(self, cur: Cursor, statements: Sequence[str]) -> None:
        """Send a migration's statements in one round trip: a text of several statements and no
        parameters goes by the simple query protocol, which runs them in order in the open transaction
        and stops at the first that fails (a new store's 52 statements took 0.17-0.21 s one by one on a
        2-core machine, 0.11 s together).  Each ``;`` goes on a line of its own: a statement ending in
        a ``--`` comment would swallow one written after it on the same line."""
        if statements:
            cur.execute("\n;\n".join(statements))

    def _q(self, sql: str) -> str:
        query = self._queries.get(sql)
        if query is None:
            query = self._queries[sql] = sql.replace("?", "%s")
        return query

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Cursor]:
        with self._pool.connection() as conn:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
            if write:
                self._writes += 1  # committed (naans_token)

    @contextmanager
    def _single_read(self) -> Iterator[Cursor]:
        """One read statement in autocommit mode: one round trip (no BEGIN / COMMIT)."""
        with self._pool.connection() as conn, conn.cursor() as cur:
            yield cur

    def _ark_rows(self, wanted: Sequence[ArkKey]) -> list[Any]:
        """One statement for any number of ARKs: ``key = ANY(array)`` of every key, or for deep ARKs
        (more than :data:`DEEP_KEYS` characters of ancestors' keys) the ARKs' keys and the lengths of
        the ancestors' keys, which PostgreSQL cuts (``left``).  Every ancestor's key is a prefix of its
        ARK's key (``Ark.ancestors``: the normalized ARK cut before a structural character), so an ARK
        with n ancestors then sends O(n) bytes instead of the O(n²) of every ancestor's key (4 MB for
        a 4,000-character ARK of 2,000 components; measured: 135 ms of database time, 34 ms cut).  The
        plain array is kept for ordinary ARKs: the cut form costs ~0.4 ms more per statement."""
        keys = list(dict.fromkeys(k.key for k in wanted))
        if sum(len(a) for k in wanted for a in k.ancestors) <= DEEP_KEYS:
            keys = list(dict.fromkeys(key for k in wanted for key in (k.key, *k.ancestors)))
            with self._single_read() as cur:
                self._exec(cur, f"SELECT {BINDING_COLS} FROM bindings WHERE kind = 'ark' AND key = ANY(?)",
                           (keys,))  # fmt: skip
                return cur.fetchall()
        index = {key: i for i, key in enumerate(keys, 1)}
        refs: list[int] = []
        cuts: list[int] = []
        for k in wanted:
            i = index[k.key]
            for ancestor in k.ancestors:
                if k.key.startswith(ancestor):
                    refs.append(i)
                    cuts.append(len(ancestor))
                else:  # never so (see above); sent whole if it were
                    keys.append(ancestor)
        with self._single_read() as cur:
            self._exec(
                cur,
                f"SELECT {BINDING_COLS} FROM bindings WHERE kind = 'ark' AND key = ANY(ARRAY("
                "SELECT k FROM unnest(?::text[]) AS k UNION ALL "
                "SELECT left((?::text[])[c.i], c.n) FROM unnest(?::int[], ?::int[]) AS c(i, n)))",
                (keys, keys, refs, cuts),
            )
            return cur.fetchall()

    def _lock_migrations(self, cur: Cursor) -> None:
        """The database's migration lock (the key every version of pidkit takes), then the store's own
        (:meth:`_lock_schema`)."""
        self._exec(cur, "SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
        self._lock_schema(cur)

    def _lock_schema(self, cur: Cursor) -> None:
        """The store's own migration lock: :data:`SCHEMA_LOCK` and the hash of its schema's name.  A
        restore holds it, not the database's: a long restore held back the opening of every new store of
        the database (in the test suite, 12-second stalls).  With :data:`STAMP_LOCK` shared, as every
        write that stamps changes holds it (a restore's history rows)."""
        self._exec(cur, "SELECT pg_advisory_xact_lock(?, hashtext(current_schema())), "
                   f"pg_advisory_xact_lock_shared({_STAMP_KEY})", (SCHEMA_LOCK, STAMP_LOCK))  # fmt: skip

    def _has_table(self, cur: Cursor, name: str) -> bool:
        self._exec(cur, "SELECT to_regclass(?) IS NOT NULL", (name,))  # through the search_path
        return bool(cur.fetchone()[0])

    def _hold_mints(self, cur: Cursor) -> None:
        """``SHARE ROW EXCLUSIVE`` on ``minters``: a mint batch's first write (``_reserve``'s ``UPDATE``)
        waits for it; taken before the restore writes anything, so a batch already under way ends
        first and none can wait on a row of the restore."""
        self._exec(cur, "LOCK TABLE minters IN SHARE ROW EXCLUSIVE MODE")

    def _lock_signin(self, cur: Cursor, subject: str) -> None:
        """:data:`SIGNIN_LOCK` and the hash of ``subject``: a lock of its own, which waits for no table
        (a NAAN's lock statement waits for a first big import)."""
        self._exec(cur, "SELECT pg_advisory_xact_lock(?, hashtext(?))", (SIGNIN_LOCK, subject))

    def _lock_many_naans(self, cur: Cursor) -> None:
        """:data:`BULK_LOCK`, for the database as the NAAN locks are (two stores of one database share
        them): an import or merge restore waits for another to end before it takes a NAAN's lock.  With
        :data:`STAMP_LOCK` shared, taken before the write reads its stamp."""
        self._exec(cur, f"SELECT pg_advisory_xact_lock(?), pg_advisory_xact_lock_shared({_STAMP_KEY})",
                   (BULK_LOCK, STAMP_LOCK))  # fmt: skip

    def _lock_naan(self, cur: Cursor, naan: str) -> None:
        """The NAAN's advisory lock, in a statement that names the tables the first big import into an
        empty store holds exclusively (:data:`_IMPORTED_TABLES`, :meth:`_load_empty`): their shared locks
        are taken as it is parsed, before the advisory lock, so a write waits for such an import before
        it holds a NAAN that import may still need (the other order is a deadlock: each waits for the
        other).  The subquery reads no row.  With :data:`STAMP_LOCK` shared: every write that stamps a
        change (a bind, tombstone, deletion, hold, mint) takes its NAAN's lock (or its id's) before it
        reads its stamp (:meth:`SqlStore._locked_now`)."""
        self._exec(cur, _LOCK_NAAN, (NAAN_LOCK, naan, STAMP_LOCK))

    def settled_time(self, wait: float = SETTLE_WAIT) -> _dt.datetime:
        """The time read, then the transactions holding the stamp lock (:data:`STAMP_LOCK`) at that
        moment, and a wait for each of them to end (polled in ``pg_locks``, at most ``wait``).  A write
        stamped at or before the time held the lock then: it has ended, or it is one of those.  One that
        took the lock later stamps later.  Writes that begin meanwhile are not waited for, so a steady
        stream of short writes cannot keep it waiting.  (A pidkit from before this lock, writing beside
        this one during an upgrade, is not waited for.)"""
        settled = self._locked_now()
        deadline = time.monotonic() + wait
        pause = 0.002
        holders: list[str] | None = None
        while True:
            with self._single_read() as cur:
                self._exec(cur, _STAMP_HOLDERS, (STAMP_LOCK, holders, holders))
                holders = [str(row[0]) for row in cur.fetchall()]
            if not holders:
                return settled
            left = deadline - time.monotonic()
            if left <= 0:
                raise WritesInFlightError(f"writes to the store were still running after {wait:g} s (an "
                                          "import or a restore?); try again later")  # fmt: skip
            time.sleep(min(pause, left))
            pause = min(2 * pause, 0.05)

    def _taken_in(self, cur: Cursor, naan: str, ids: Sequence[str], tables: Sequence[str]) -> set[str]:
        prefix = f"ark:{naan}/"
        blades = list(ids)
        parts = {
            "minted": (_each_of("minted", "id", "naan", "id"), (blades, naan)),
            "holds": (_HELD_OR_QUALIFIED, ("", blades, naan)),
            "bindings": (_BOUND_OR_QUALIFIED, (prefix, blades)),
            "published": (_PUBLISHED_OR_QUALIFIED, (prefix, blades, UNPUBLISHED)),
        }  # fmt: skip
        self._exec(cur, *union_of(parts, tables))
        return {row[0] for row in cur.fetchall()}

    def minters_of(self, naan: str, ids: Sequence[str]) -> dict[str, str]:
        """One probe of the minted log's primary key per id (:func:`_each_of`: the ``IN`` list may read
        every row of the NAAN on stale statistics, once per chunk)."""
        with self._transaction(write=False) as cur:
            self._exec(cur, _each_of("minted", "id, minter", "naan", "id"), (list(dict.fromkeys(ids)), naan))
            return {str(ident): str(minter) for ident, minter in cur.fetchall()}

    def _import_state(self, cur: Cursor, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], Binding]:
        """One statement per id kind for a whole import chunk (the keys in one array: no statement of
        thousands of parameters to build and parse; :func:`_each_of`); the rows stay locked
        (``FOR UPDATE``, in key order) until the import ends."""
        by_kind: dict[str, list[str]] = {}
        for kind, key in sorted(pairs):
            by_kind.setdefault(kind, []).append(key)
        state: dict[tuple[str, str], Binding] = {}
        for kind, keys in by_kind.items():
            statement = _each_of("bindings", BINDING_COLS, "kind", "key", lock=" FOR UPDATE")
            self._exec(cur, statement, (keys, kind))
            for row in cur.fetchall():
                b = binding_from_row(row)
                state[(kind, b.key)] = b
        return state

    def _temp_table(self, cur: Cursor, name: str, columns: str) -> None:
        """Dropped at the transaction's end (``ON COMMIT DROP``; a rollback takes it back with the rest)."""
        cur.execute(f"CREATE TEMP TABLE {name} ({columns}) ON COMMIT DROP")

    def _drop_temp_table(self, cur: Cursor, name: str) -> None:
        """Nothing: the table goes at the commit (``ON COMMIT DROP``)."""

    def _keys_among(self, cur: Cursor, table: str, columns: str, kind: str, keys: Sequence[str]) -> list[Any]:
        """A probe of the primary key per key (:func:`_each_of`: the planner may lack statistics, as for a
        temporary table), locking nothing."""
        self._exec(cur, _each_of(table, columns, "kind", "key"), (list(dict.fromkeys(keys)), kind))
        return cur.fetchall()

    def _statuses(self, cur: Cursor, kind: str, keys: Sequence[str]) -> list[Any]:
        """One statement text for any chunk (:func:`_each_of`); the rows stay locked (``FOR
        UPDATE``) so the import's checks hold until it commits."""
        statement = _each_of("bindings", "key, status, naan", "kind", "key", lock=" FOR UPDATE")
        self._exec(cur, statement, (list(dict.fromkeys(keys)), kind))
        return cur.fetchall()

    def _import_write(
        self,
        cur: Cursor,
        writes: Sequence[tuple[int, ImportRow]],
        stored: Mapping[tuple[str, str], Binding],
        writing: ExitStack,
    ) -> None:
        """``COPY`` the rows into a temporary staging table, each marked new or not (``stored``, the
        lookup, lacks its key), then an ``INSERT … SELECT`` for each, as the base class does row by row:
        the new ones ``ON CONFLICT DO NOTHING`` (a key another writer bound since the lookup is never
        written over: the import is refused naming its line), the others ``ON CONFLICT DO UPDATE`` with
        the tombstone guard (``writes`` has one row per key, as one statement needs).  A streamed import
        calls this once per chunk in one transaction: the table is made by the first call, emptied by the
        next ones, and dropped at the commit or rollback.

        The ``INSERT … SELECT`` statements are sent in pipeline mode and left running on the server: the
        import reads and parses its next chunk meanwhile (a third of a line's time on the client, hidden
        behind the server's index updates), then closes ``writing``, which waits for them and checks how
        many rows each wrote.  (``COPY`` cannot run in a pipeline: the staging table is filled first.)"""
        if not writes or not isinstance(cur, psycopg.Cursor):
            super()._import_write(cur, writes, stored, writing)
            return
        staging = "pidkit_import (LIKE bindings, fresh boolean NOT NULL)"
        cur.execute(f"CREATE TEMP TABLE IF NOT EXISTS {staging} ON COMMIT DROP")
        cur.execute("TRUNCATE pidkit_import")
        new, known = self._new_and_known(writes, stored)
        with cur.copy(f"COPY pidkit_import ({BINDING_COLS}, fresh) FROM STDIN") as copy:
            for rows, fresh in ((new, True), (known, False)):
                for _, row in rows:
                    copy.write_row((*row.values, fresh))
        insert = f"INSERT INTO bindings ({BINDING_COLS}) SELECT {BINDING_COLS} FROM pidkit_import WHERE "
        upsert = f"NOT fresh ON CONFLICT (kind, key) DO UPDATE SET {IMPORT_SETS} " \
                 "WHERE bindings.status <> 'tombstoned'"  # fmt: skip
        sent: list[tuple[psycopg.Cursor[Any], list[tuple[int, ImportRow]], bool]] = []
        # Pushed first, so it runs last: the check, once the pipeline has ended (never while an error
        # unwinds: the transaction is rolled back then, and a failed pipeline has no row counts).
        writing.enter_context(self._check_written(cur, sent))
        conn = cur.connection
        writing.enter_context(conn.pipeline())
        for rows, sql, fresh in ((new, insert + "fresh ON CONFLICT DO NOTHING", True),
                                 (known, insert + upsert, False)):  # fmt: skip
            if rows:
                statement = conn.cursor()  # a cursor each: each its row count (closed by the check)
                sent.append((statement, rows, fresh))
                statement.execute(sql)

    @contextmanager
    def _check_written(
        self, cur: Cursor, sent: Sequence[tuple[psycopg.Cursor[Any], list[tuple[int, ImportRow]], bool]]
    ) -> Iterator[None]:
        """After the statements ``sent`` by :meth:`_import_write` have ended: refuse the import (naming
        the lines) if one of them wrote fewer rows than it was given.  Closes their cursors."""
        try:
            yield
            for statement, rows, fresh in sent:
                if statement.rowcount != len(rows):
                    self._import_refused(cur, rows, fresh=fresh)
        finally:
            for statement, _, _ in sent:
                statement.close()

    @contextmanager
    def _dump_reader(self) -> Iterator[_Query]:
        """One ``REPEATABLE READ`` read-only transaction (every query sees the same snapshot); each query
        streams through a server-side cursor, so memory stays flat however large the table."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            names = iter(range(1 << 62))

            def query(sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
                with conn.cursor(name=f"pidkit_dump_{next(names)}") as cur:
                    cur.itersize = 2000
                    cur.execute(self._q(sql) if params else sql, tuple(params))
                    yield from cur

            yield query

    def _insert_rows(self, cur: Cursor, table: Table, rows: Sequence[tuple[Any, ...]], merge: bool) -> int:
        """``COPY`` into the table (the fast path of a restore into an empty store); a merge inserts
        with ``ON CONFLICT DO NOTHING``."""
        if merge or not isinstance(cur, psycopg.Cursor):
            return super()._insert_rows(cur, table, rows, merge)
        with cur.copy(f"COPY {table.name} ({', '.join(table.columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return len(rows)

    def _restore_table(
        self, cur: Cursor, table: Table, rows: Iterator[tuple[int, tuple[Any, ...]]], merge: bool,
        merging: _Merging,
    ) -> int:
        """Into an empty store, each chunk of rows goes to the server as it is read: one ``COPY`` per
        chunk, written row by row as the dump is parsed, so the server inserts (and computes the
        full-text column) on the other core meanwhile instead of waiting for the whole chunk.  A chunk
        the server refuses is rolled back to its savepoint and done again by :meth:`_restore_chunk`,
        which names the line.  A merge inserts chunk by chunk (``ON CONFLICT DO NOTHING``)."""
        if merge or not isinstance(cur, psycopg.Cursor):
            return super()._restore_table(cur, table, rows, merge, merging)
        copy_sql = f"COPY {table.name} ({', '.join(table.columns)}) FROM STDIN"
        inserted, held = 0, self._may_be_held(cur, table)
        for first in rows:
            chunk = [first]
            cur.execute("SAVEPOINT pidkit_restore")
            try:
                with cur.copy(copy_sql) as copy:
                    copy.write_row(first[1])
                    for row in itertools.islice(rows, _RESTORE_CHUNK - 1):
                        chunk.append(row)  # before it is sent: the row the server refuses is in the chunk
                        copy.write_row(row[1])
            except psycopg.Error:
                cur.execute("ROLLBACK TO SAVEPOINT pidkit_restore")
                self._restore_chunk(cur, table, chunk, merge)  # raises, naming the line
                raise  # pragma: no cover - every row alone went in, so the chunk should have too
            cur.execute("RELEASE SAVEPOINT pidkit_restore")
            if held:
                self._refuse_held_published(cur, table, chunk)
            inserted += len(chunk)
        return inserted

    def _is_empty(self, cur: Cursor, table: str) -> bool:
        """Read in a savepoint rolled back at once, which takes back the shared lock the read took on the
        table: a load that goes on to drop the table's indexes (:meth:`_load_empty`) then takes its
        exclusive lock first-hand instead of upgrading a shared one — two imports that both found the
        store without bindings would otherwise each wait for the other's shared lock (a deadlock,
        which PostgreSQL breaks by failing one of them); now the second waits for the first."""
        cur.execute("SAVEPOINT pidkit_peek")
        try:
            return super()._is_empty(cur, table)
        finally:
            cur.execute("ROLLBACK TO SAVEPOINT pidkit_peek")
            cur.execute("RELEASE SAVEPOINT pidkit_peek")

    @contextmanager
    def _load_empty(self, cur: Cursor, tables: Sequence[str]) -> Iterator[None]:
        """Load the rows first and build the secondary indexes of ``tables`` after them, as
        ``pg_restore`` does: their indexes that no constraint owns (the full-text and trigram GIN
        indexes, the orderings for Find and the change feeds, …) are dropped in the transaction and made
        again from their own definitions at its end (a GIN index built once is far cheaper than one grown
        row by row).  Primary keys and unique constraints stay, so a duplicate row is still refused
        naming its line.  Transactional DDL: an error rolls it back with the rows.  Until the commit
        ``tables`` are locked (``DROP INDEX`` takes an exclusive lock): a server already running on the
        store without bindings waits for the restore or import instead of answering 404s.  The lock is
        taken before the indexes are read from the catalog: a second load waits for the first to commit,
        then reads the indexes the first made again (reading them while the first dropped them fails:
        "cache lookup failed").  A store that has bindings once they are locked (another writer bound one
        since the caller looked) keeps its indexes: the rows go in as into any store.  What the definition
        does not say (a tablespace, a comment, a statistics target set on an index by hand) is not made
        again; the role needs to own the tables (it made them: pidkit migrates its own store)."""
        names = psycopg.sql.SQL(", ").join(psycopg.sql.Identifier(t) for t in tables)
        cur.execute(psycopg.sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(names))
        if "bindings" in tables and not SqlStore._is_empty(self, cur, "bindings"):  # locked: no savepoint
            yield
            return
        self._exec(
            cur,
            "SELECT ic.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x "
            "JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_class tc ON tc.oid = x.indrelid "
            "WHERE tc.relnamespace = current_schema()::regnamespace AND tc.relname = ANY(?) "
            "AND NOT x.indisunique "  # a unique index refuses a duplicate row naming its line: it stays
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) ORDER BY 1",
            (list(tables),),
        )
        indexes: list[tuple[str, str]] = cur.fetchall()
        for name, _ in indexes:
            cur.execute(psycopg.sql.SQL("DROP INDEX {}").format(psycopg.sql.Identifier(name)))
        yield
        for _, definition in indexes:
            cur.execute(definition)  # pg_get_indexdef: the catalog's own text, schema-qualified

    def _insert_history(self, cur: Cursor, rows: Sequence[tuple[Any, ...]]) -> None:
        """``COPY`` history rows in (one round trip for an import's chunk)."""
        if len(rows) < 2 or not isinstance(cur, psycopg.Cursor):
            super()._insert_history(cur, rows)
            return
        with cur.copy(f"COPY history ({HISTORY_COLS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def _insert_minted(self, cur: Cursor, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
        if isinstance(cur, psycopg.Cursor):
            with cur.copy("COPY minted (naan, id, minter, position, minted_at) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)


class _ChangeListener:
    """``LISTEN`` to one channel (migration 7's, migration 10's) on a connection of its own, in a daemon
    thread, counting the notifications for the schema of its connection (the store's: ``search_path``
    from the URL) — :meth:`heard`, ``None`` while not listening.

    It counts as listening once a probe came back: a notification sent through ``send`` (the store's
    pool: *another* session, as every real change comes from), in a short thread of its own so that a
    slow send never holds the listening up; and it probes again every :data:`PROBE_EVERY` seconds.  A
    probe that was sent and is not back within :data:`PROBE_WAIT` seconds — a connection that died
    without an error (a dropped idle TCP connection), a pooler that does not pass notifications on
    (PgBouncer in transaction mode: a session's own notification would still come back to it) — ends
    the connection.  A probe that could not be sent (the pool busy or the server away) says nothing of
    the listening connection: it is sent again :data:`PROBE_WAIT` seconds later.  The count moves when a
    connection is lost and when one is made (a change may have gone unheard meanwhile).  A lost
    connection is made again after 1 second, then after twice as long each time up to 30; the first
    failure of a run is logged as a warning (the rest at debug level), never raised."""

    PROBE_EVERY: Final = 30.0
    PROBE_WAIT: Final = 5.0
    RETRY_MAX: Final = 30.0

    def __init__(
        self, url: str, connect: dict[str, Any], channel: str, send: Callable[[str, str], None]
    ) -> None:
        self._url, self._connect, self.channel, self._send = url, connect, channel, send
        self._heard = 0
        self._listening = False
        self._sent: tuple[str, float] | None = None  # the last probe sent, and when its send returned
        self._failing = False  # since the last warning, not listening
        self.backend_pid = 0  # of the listening connection (tests end it)
        self.probe_every, self.probe_wait = self.PROBE_EVERY, self.PROBE_WAIT  # tests shorten them
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name=f"pidkit-pg-{channel}", daemon=True)
        self._thread.start()

    def heard(self) -> int | None:
        """The count of notifications heard, or ``None`` while not listening."""
        return self._heard if self._listening else None

    def _listen(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, **self._connect) as conn:
                    self.backend_pid = conn.info.backend_pid
                    (schema,) = conn.execute("SELECT current_schema()").fetchone() or ("",)
                    conn.execute(psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(self.channel)))
                    self._hear(conn, schema)
            except Exception as exc:  # the server went away, the connection could not be made, a lost probe
                if not self._stop.is_set():
                    if self._listening:
                        delay = 1.0  # it had listened: a new run of failures
                    _log.log(logging.DEBUG if self._failing else logging.WARNING,
                             "pidkit: not listening to %s (%s); retrying", self.channel, _one_line(exc))
                    self._failing = True
            finally:
                self._listening = False
                self._heard += 1
            self._stop.wait(delay)
            delay = min(delay * 2, self.RETRY_MAX)

    def _hear(self, conn: Any, schema: str) -> None:
        """Count the notifications for ``schema`` on ``conn``, and probe, until stopped or a probe is lost."""
        probe, back = "", -math.inf
        sending: threading.Thread | None = None
        while not self._stop.is_set():
            now = time.monotonic()
            if not probe and now - back >= self.probe_every and (sending is None or not sending.is_alive()):
                probe = f"{schema}\x1fprobe:{id(self)}:{now}"  # never a schema's name
                sending = threading.Thread(target=self._send_probe, args=(probe,), daemon=True)
                sending.start()
            for note in conn.notifies(timeout=0.5):
                if note.payload == schema:
                    self._heard += 1
                elif probe and note.payload == probe:
                    probe, back = "", time.monotonic()
                    if not self._listening:
                        if self._failing:
                            _log.info("pidkit: listening to %s again", self.channel)
                            self._failing = False
                        self._heard += 1
                        self._listening = True
            if probe and sending is not None and not sending.is_alive():
                sent = self._sent
                if sent is None or sent[0] != probe:  # not sent: say nothing, send another one later
                    probe, back = "", time.monotonic() - self.probe_every + self.probe_wait
                elif time.monotonic() - sent[1] > self.probe_wait:
                    raise StoreError(f"no notification came back within {self.probe_wait:g} s")

    def _send_probe(self, probe: str) -> None:
        """Send ``probe`` (in a thread of its own); :attr:`_sent` says when it was, if it was."""
        try:
            self._send(self.channel, probe)
        except Exception as exc:  # the pool busy or closed, the server away
            _log.debug("pidkit: could not probe %s (%s)", self.channel, _one_line(exc))
            return
        self._sent = (probe, time.monotonic())

    def close(self) -> None:
        """Stop listening (within half a second, or once a connection being made gives up)."""
        self._stop.set()
        self._thread.join(timeout=2.0)


def _connect_options(url: str, wait: float) -> dict[str, Any]:
    """``connect_timeout`` for libpq (whole seconds, at least 2: libpq's minimum) unless the URL sets one.

    >>> _connect_options("postgresql://h/db", 2.5), _connect_options("postgresql://h/db?connect_timeout=9", 3)
    ({'connect_timeout': 3}, {})
    """
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreError(f"cannot use PostgreSQL: {_one_line(exc)}", text=redact_url(url)) from None
    return {} if "connect_timeout" in given else {"connect_timeout": max(2, math.ceil(wait))}


def _check_connection(url: str, options: dict[str, Any]) -> None:
    """One connection attempt: why the server cannot be used, as one :class:`StoreError` naming the URL
    (without its secrets)."""
    try:
        psycopg.connect(url, **options).close()
    except psycopg.Error as exc:
        raise StoreError(f"cannot use PostgreSQL: {_one_line(exc)}", text=redact_url(url)) from None


def _one_line(exc: Exception) -> str:
    """libpq's message on one line (it adds tab-indented hints on lines of their own), spaces collapsed.

    >>> _one_line(ValueError('failed: FATAL:  refused\\n\\tIs the server running?'))
    'failed: FATAL: refused; Is the server running?'
    """
    return "; ".join(" ".join(part.split()) for part in str(exc).splitlines() if part.strip())


def _env_number(name: str, default: float, kind: type[float] | type[int]) -> float:
    """A positive number from the environment, else ``default`` (a bad value: StoreError naming it)."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise StoreError(f"{name} must be a positive number", text=text) from None
    if value <= 0:
        raise StoreError(f"{name} must be a positive number", text=text)
    return value
