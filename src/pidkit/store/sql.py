"""The SQL implementation of :class:`~pidkit.store.base.Store` shared by both backends.

The SQL is written once, with ``?`` placeholders (the PostgreSQL backend rewrites them to ``%s``);
every value is a parameter, identifiers come only from constants.  A backend supplies a transaction
context (:meth:`SqlStore._transaction`: SQLite ``BEGIN IMMEDIATE`` for writes, a pooled PostgreSQL
connection), the migration lock, and two bulk helpers used by minting.

>>> from pidkit.store import open_store
>>> with open_store("sqlite:///:memory:") as s:
...     key, secret = s.create_api_key("99999", label="demo")
...     s.verify_api_key(secret) == key, s.verify_api_key(secret + "x")
(True, None)
"""

from __future__ import annotations

import abc
import dataclasses
import datetime as _dt
import functools
import hashlib
import hmac
import itertools
import re
import secrets
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import IO, Any, Final, NamedTuple, Protocol, TypeVar

from ..ark.noid import Template
from ..codecs import iso_z
from ..errors import ConflictError, ExhaustedError, NotFoundError, PidkitError, StoreError
from .accounts import SqlAccounts
from .base import DEFAULT_BATCH, IMPORTED, Store
from .changes import BindingChange, apply_change, changed_fields, extra_from_text, new_binding
from .dump import DumpHeader, check_readable, header_line, parse_header, read_rows, row_line
from .jsonl import ImportRow, UpdateRow, binding_line, parse_import_line, parse_update_line
from .keys import (
    QUALIFIED_HIGH,
    QUALIFIED_LOW,
    ArkKey,
    IdMaker,
    ark_key,
    canonical,
    check_char_problem,
    check_naan,
    check_shoulder,
    make_minter,
    passthrough_suffix,
    readings,
    template_prefix,
)
from .keys import blade as blade_of
from .migrations import LATEST, VERSIONS
from .migrations import load as load_migrations
from .overview import SqlOverview
from .records import (
    KINDS,
    STATUSES,
    UNPUBLISHED,
    AlreadyBoundError,
    ApiKey,
    Binding,
    ChangedMeanwhileError,
    ErcChange,
    HistoryEntry,
    ImportRejectedError,
    ImportReport,
    MinterInfo,
    Naan,
    NotOwnerError,
    Override,
    Principal,
    Recorded,
    Resolution,
    RestoreReport,
    Status,
    binding_version,
    check_extra_name,
    check_text,
    published,
    refuse_reserving_again,
)
from .rows import (
    API_KEY_COLS,
    BINDING_COLS,
    BINDING_COLUMNS,
    BINDING_PARAMS,
    FIRST_TID,
    HISTORY_COLS,
    HISTORY_COLUMNS,
    IMPORT_SETS,
    MINTER_COLS,
    TABLES,
    USER_COLS,
    Table,
    api_key_from_row,
    binding_from_row,
    binding_values,
    created_history_json,
    history_from_row,
    history_id,
    history_ids,
    history_json,
    minter_from_row,
    parse_recorded_position,
    recorded_position,
    recorded_time,
    stored_time,
    tid_bound,
    time_from_stored,
    user_from_row,
)
from .search import SqlSearch

#: Version of the schema this code expects (the highest migration shipped).
_SCHEMA_VERSION_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)"
)


#: What a chunk's insert returns (:meth:`SqlStore._restore_chunk_by`).
_Inserted = TypeVar("_Inserted")

#: Secret format: ``pk_<keyid>_<random>``; key id 16 hex digits, random 32 bytes (base64url).
_KEY_ID_BYTES: Final = 8
_SECRET_BYTES: Final = 32
_SECRET = re.compile(r"pk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")

#: Keys per lookup statement (imports, ``resolve_many``) and rows per ``executemany`` when importing.
_CHUNK: Final = 1000
#: Values per statement at the most (SQLite's limit since 3.32 is 32,766; PostgreSQL's 65,535).
_MAX_PARAMETERS: Final = 32_000
#: A scope (NAAN, shoulder) of fewer ARK bindings is listed by recorded change from its own bindings
#: (:meth:`SqlStore.list_recorded`): a page then costs the scope's size instead of a walk of the history.
_SMALL_SCOPE: Final = 20_000
#: The most history rows :meth:`SqlStore.list_recorded` reads in one batch of a larger scope.
_MAX_BATCH: Final = 4096
#: A merge restore's temporary table of the binding keys of its dump: the line of each, and whether the
#: store kept its own binding of the key (:meth:`SqlStore._merge_bindings`).
_MERGED: Final = "pidkit_merged"
#: A restore's temporary table of the bindings its dump gives no history (:meth:`SqlStore._adopt`).
_ADOPTED: Final = "pidkit_adopted"


def _recorded(row: Sequence[Any]) -> Recorded:
    """A row of :meth:`SqlStore.list_recorded`: the newest history row's id and ``at``, then the binding."""
    history_id, at = row[0], row[1]
    binding = binding_from_row(row[2:])
    return Recorded(binding, recorded_time(history_id, at), recorded_position(history_id, at))


def _time_window(
    at: str, tie: str, since: _dt.datetime | None, until: _dt.datetime | None, after: tuple[str, str] | None
) -> tuple[list[str], list[Any]]:
    """SQL conditions, and their parameters, for rows whose time column ``at`` is in ``since`` …
    ``until`` (both inclusive) and that come after ``after`` (a stored time and a ``tie`` value: keyset
    pagination in ``(at, tie)`` order)."""
    clauses: list[str] = []
    params: list[Any] = []
    if since is not None:
        clauses.append(f"{at} >= ?")
        params.append(stored_time(since))
    if until is not None:
        clauses.append(f"{at} <= ?")
        params.append(stored_time(until))
    if after is not None:  # a row value: an index on (…, at, tie) seeks to it, however many rows tie
        clauses.append(f"({at}, {tie}) > (?, ?)")
        params += [after[0], after[1]]
    return clauses, params


def _recorded_part(
    part: str, at_after: str | None, id_after: str, since: _dt.datetime | None, until: _dt.datetime | None,
    code_point_order: str,
) -> tuple[list[str], list[Any], str]:
    """The conditions on a history row ``h`` of one part of :meth:`SqlStore.list_recorded` past the
    position ``(at_after, id_after)`` and within ``since`` … ``until``, their parameters, and the part's
    order: part ``a``, migration 3's rows, by ``at`` and id (its ids compared in code point order:
    ``code_point_order`` is the backend's ``COLLATE`` for it); part ``b``, the TID rows, by id (TIDs are
    in one order in every collation)."""
    if part == "a":
        position = None if at_after is None else (at_after, id_after)
        window, params = _time_window("h.at", f"h.id{code_point_order}", since, until, position)
        return ["h.kind = 'ark'", f"h.id < '{FIRST_TID}'", *window], params, f"h.at, h.id{code_point_order}"
    lowest = max(id_after, FIRST_TID if since is None else tid_bound(since, end=False))
    clauses, params = ["h.id > ?" if id_after >= lowest else "h.id >= ?"], [lowest]
    if until is not None:
        clauses.append("h.id <= ?")
        params.append(tid_bound(until, end=True))
    return clauses, params, "h.id"


@dataclasses.dataclass
class _Merging:
    """What a merge restore carries from chunk to chunk: who merges (its history rows' principal) and the
    NAANs it holds locked (in its order)."""

    who: str
    locked: set[str] = dataclasses.field(default_factory=set)


#: The tables whose rows belong to one binding (its ``kind`` and ``key``): a merge does not add the dump's
#: rows of a binding it kept as the store's.
_OF_A_BINDING: Final = frozenset({"history", "overrides"})

#: Lines per chunk of a streamed import (:meth:`SqlStore.import_jsonl`): memory is bounded by this.
_IMPORT_CHUNK: Final = 5000
#: The tables an import writes rows into: into a store without bindings, a big import loads them as a
#: restore loads an empty store (:meth:`SqlStore._load_empty`).
_IMPORTED_TABLES: Final = ("bindings", "history")
_ALL_TABLES: Final = tuple(t.name for t in TABLES)


#: The parameters of :func:`_shows_published`: a history row's JSON is written compact with sorted
#: keys, so a status reads ``"status":"public"``.
_PUBLISHED_MARKS: Final = tuple(f'%"status":"{s}"%' for s in STATUSES if published(s))


def _shows_published(column: str) -> str:
    """SQL: the history row's ``column`` (``h.before``, ``h.after``) shows its binding published
    (:func:`published`), with the parameters :data:`_PUBLISHED_MARKS`.

    >>> _shows_published("h.after")
    '(h.after LIKE ? OR h.after LIKE ? OR h.after LIKE ?)'
    """
    return "(" + " OR ".join(f"{column} LIKE ?" for _ in _PUBLISHED_MARKS) + ")"


def _ark_naans(table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]]) -> set[str]:
    """The NAANs that the dump rows ``rows`` (``(line number, values)``) of ``table`` hold or bind ARKs
    under: a ``holds`` row's, an ARK binding's; none for another table.

    >>> holds = next(t for t in TABLES if t.name == "holds")
    >>> sorted(_ark_naans(holds, [(2, ("99999", "fk4x", "2026-01-01T00:00:00Z"))]))
    ['99999']
    """
    if table.name not in ("holds", "bindings"):
        return set()
    naan = table.columns.index("naan")
    if table.name == "holds":
        return {str(v[naan]) for _, v in rows}
    kind = table.columns.index("kind")
    return {str(v[naan]) for _, v in rows if v[kind] == "ark" and v[naan] is not None}


class _Query(Protocol):
    """Runs one statement (``?`` placeholders, its parameters) of a snapshot and streams its rows
    (:meth:`SqlStore._dump_reader`)."""

    def __call__(self, sql: str, params: Sequence[Any] = ...) -> Iterator[Any]: ...


class _DryRunDoneError(Exception):
    """Ends a dry-run import's transaction (rolled back) carrying what it would have written."""

    def __init__(self, report: ImportReport) -> None:
        super().__init__("dry run")
        self.report = report


class _ImportChunk(NamedTuple):
    """What one chunk of an import wrote: the stored bindings before it, its rows (one per key, with the
    line number of the last line of that key), and how many keys were new or already there."""

    original: dict[tuple[str, str], Binding]
    writes: dict[tuple[str, str], tuple[int, ImportRow]]
    created: int
    updated: int


class _ArkAdmission:
    """The rule an ARK binding must pass to be written without ``force``: its NAAN is registered in this
    store, and no minter of that NAAN with a check-character (``k``) template mints on its Name with a
    wrong check character.  What a NAAN has is read once per transaction (an import reads it per NAAN,
    not per line)."""

    __slots__ = ("_cur", "_rules", "_store", "refused")

    def __init__(self, store: SqlStore, cur: Cursor) -> None:
        self._store, self._cur = store, cur
        self._rules: dict[str, tuple[bool, list[tuple[str, str]]]] = {}
        self.refused: list[int] = []  # the lines of an import refused by this rule

    def refusal(self, text: str, naan: str) -> str | None:
        """Why binding the ARK ``text`` under ``naan`` needs ``force``, or ``None``."""
        rules = self._rules.get(naan)
        if rules is None:
            registered, minters = self._store._naan_rules(self._cur, naan)
            checked = [(name, template) for name, template in minters if Template.parse(template).has_check]
            rules = self._rules[naan] = (registered, checked)
        registered, checked = rules
        if not registered:
            return f"NAAN {naan} is not registered in this store"
        for name, template in checked:
            problem = check_char_problem(text, template)
            if problem is not None:
                return f"{problem} (minter {name})"
        return None


def _numbered_chunks(lines: Iterable[str], size: int) -> Iterator[list[tuple[int, str]]]:
    """The lines numbered from 1, ``size`` at a time (the last chunk shorter; none for no lines).

    >>> list(_numbered_chunks(["a", "b", "c"], 2))
    [[(1, 'a'), (2, 'b')], [(3, 'c')]]
    """
    chunk: list[tuple[int, str]] = []
    for item in enumerate(lines, 1):
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


#: Retries of a mint batch that lost a race on the ``minted`` key to another minter (PostgreSQL).
_MINT_RETRIES: Final = 5


#: A row of a dump as :func:`~pidkit.store.dump.read_rows` gives it: ``(line number, table, values)``.
_DumpRow = tuple[int, str, tuple[Any, ...]]


class _TableRows:
    """The rows of one table of a dump as ``(line number, values)``, read one at a time from
    :func:`~pidkit.store.dump.read_rows`, from ``first`` up to the first row of another table, which is
    kept (:attr:`next_row`; ``None`` at the end of the dump); :attr:`count`: the rows given so far."""

    __slots__ = ("_name", "_rows", "count", "next_row")

    def __init__(self, first: _DumpRow, rows: Iterator[_DumpRow]) -> None:
        self._name = first[1]
        self._rows = rows
        self.next_row: _DumpRow | None = first
        self.count = 0

    def __iter__(self) -> Iterator[tuple[int, tuple[Any, ...]]]:
        return self

    def __next__(self) -> tuple[int, tuple[Any, ...]]:
        row = self.next_row
        if row is None or row[1] != self._name:
            raise StopIteration
        self.next_row = next(self._rows, None)
        self.count += 1
        return row[0], row[2]


class Cursor(Protocol):
    """The DB-API cursor subset the store uses."""

    @property
    def rowcount(self) -> int: ...  # pragma: no cover - protocol

    def execute(self, query: Any, params: Any = ..., /) -> Any: ...  # pragma: no cover - protocol

    def fetchone(self) -> Any: ...  # pragma: no cover - protocol

    def fetchall(self) -> list[Any]: ...  # pragma: no cover - protocol

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...  # pragma: no cover - protocol

    def executemany(self, query: Any, params_seq: Any, /) -> Any: ...  # pragma: no cover - protocol


def union_of(parts: Mapping[str, tuple[str, Sequence[Any]]], names: Sequence[str]) -> tuple[str, list[Any]]:
    """The statement reading the ``parts`` (``name -> (SELECT, its parameters)``) named in ``names``, in
    that order, as one ``UNION ALL``, and its parameters.

    >>> union_of({"a": ("SELECT ?", [1]), "b": ("SELECT ?, ?", [2, 3])}, ["b", "a"])
    ('SELECT ?, ? UNION ALL SELECT ?', [2, 3, 1])
    """
    return " UNION ALL ".join(parts[n][0] for n in names), [p for n in names for p in parts[n][1]]


def now() -> str:
    """The current UTC time as stored (ISO 8601, microseconds, ``Z``).

    >>> now().endswith("Z")
    True
    """
    return iso_z(_dt.datetime.now(_dt.UTC))


def _lookup(value: str) -> str:
    """An id to look up: NUL (never stored, refused by PostgreSQL) is refused naming its position."""
    at = value.find("\x00")
    if at >= 0:
        raise StoreError("NUL character in id", text=value, position=at + 1)
    return value


def _resolution(ark: str, k: ArkKey, found: Mapping[str, Binding]) -> Resolution | None:
    """The store's resolution rule for ``ark`` (key ``k``) among the bindings ``found`` by key: the exact
    binding, else the longest bound public ancestor that allows passthrough, with the rest as suffix."""
    exact = found.get(k.key)
    if exact is not None:
        return Resolution(exact)
    for ancestor in k.ancestors:
        b = found.get(ancestor)
        if b is not None and b.passthrough and b.status == "public" and k.key.startswith(ancestor):
            return Resolution(b, passthrough_suffix(ark, k.naan, k.key[len(ancestor) :]))
    return None


#: Whether any id is held under the NAAN of its one parameter (an expression).
_HAS_HOLDS: Final = "EXISTS (SELECT 1 FROM holds WHERE naan = ?)"

def _cannot_hold(key: str, bound: str, status: str) -> str:
    """Why the ARK ``key`` is not held: the ARK ``bound`` — itself, or one qualifying it — is bound
    ``status``, published (:func:`~pidkit.store.records.published`).

    >>> _cannot_hold("ark:99999/fk4x", "ark:99999/fk4x.v2", "public")
    'ark:99999/fk4x is given out: ark:99999/fk4x.v2, which qualifies it, is bound public (a hold is for an id never given out)'
    """  # noqa: E501
    if bound == key:
        return f"{key} is bound {status}: it was given out, and a hold is for an id never given out"
    return (f"{key} is given out: {bound}, which qualifies it, is bound {status} (a hold is for an id "
            "never given out)")  # fmt: skip


def _other(held: str, key: str) -> str | None:
    """``held`` unless it is ``key`` itself (:func:`_held_refusal` names an ARK ``key`` qualifies).

    >>> _other("ark:99999/x", "ark:99999/x/c"), _other("ark:99999/x", "ark:99999/x")
    ('ark:99999/x', None)
    """
    return None if held == key else held


def _held_refusal(status: str, held: str | None = None) -> str:
    """Why a held ARK — or one qualifying the held ARK ``held`` (draft-kunze-ark-40 §2.5: it is
    contained in it) — is not bound ``status`` (published), after its key: the one wording of the rule
    every write checks (bind, tombstone, import, restore) and :meth:`SqlStore.check` reports.

    >>> _held_refusal("unavailable").partition(" (")[0]
    'is held: it is never bound unavailable'
    >>> _held_refusal("public", "ark:99999/fk4x").partition(" (")[0]
    'qualifies ark:99999/fk4x, which is held: it is never bound public'
    """
    what = "is held" if held is None else f"qualifies {held}, which is held"
    return (f"{what}: it is never bound {status} (a held id, deleted while reserved or held from "
            "minting, was never given out, nor were the ARKs qualifying it: they may only be bound "
            "reserved)")  # fmt: skip


def _and_ancestors(key: str) -> tuple[str, ...]:
    """The ARK ``key`` and the ARKs that contain it (draft-kunze-ark-40 §2.5), ``key`` first: a hold of
    any of them covers ``key``.

    >>> _and_ancestors("ark:99999/fk4x.v2/c")
    ('ark:99999/fk4x/c.v2', 'ark:99999/fk4x/c', 'ark:99999/fk4x')
    """
    k = ark_key(key)
    return (k.key, *k.ancestors)


def _held_key(keys: Sequence[str], held: Container[str]) -> str | None:
    """The first of ``keys`` (:func:`_and_ancestors`) among the ``held`` keys, or ``None``.

    >>> _held_key(_and_ancestors("ark:99999/fk4x/c"), {"ark:99999/fk4x"}), _held_key(("ark:9/x",), ())
    ('ark:99999/fk4x', None)
    """
    return next((k for k in keys if k in held), None)


#: A well-formed ``api_keys.secret_hash``: SHA-256, 64 lowercase hex digits (``pidkit check``).
_HASH = re.compile(r"[0-9a-f]{64}")


_LOCAL: list[Principal] = []


def local_principal() -> Principal:
    """The principal of changes made without one: this process's user and host (``cli:user@host``)."""
    if not _LOCAL:
        _LOCAL.append(Principal.local())
    return _LOCAL[0]


def _hash_secret(secret: str) -> str:
    """SHA-256 of a high-entropy secret (no stretching needed: it is 256 random bits)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SqlStore(SqlAccounts, SqlOverview, SqlSearch, Store):
    """The shared SQL implementation; subclasses provide the connection handling."""

    def __init__(self) -> None:
        self._makers: dict[tuple[str, str, int], IdMaker] = {}

    # -- backend hooks ------------------------------------------------------------------------------
    @abc.abstractmethod
    def _transaction(self, *, write: bool) -> AbstractContextManager[Cursor]:
        """A cursor inside one transaction (committed on success, rolled back on error)."""

    def _single_read(self) -> AbstractContextManager[Cursor]:
        """A cursor for ONE read-only statement (a single statement is atomic by itself).  Backends may
        skip the explicit transaction: PostgreSQL then needs one round trip instead of three (the hot
        path of the resolver)."""
        return self._transaction(write=False)

    @abc.abstractmethod
    def _lock_migrations(self, cur: Cursor) -> None:
        """Serialize migrations across processes inside the current transaction (and hold off what
        :meth:`_lock_schema` holds off)."""

    def _lock_schema(self, cur: Cursor) -> None:
        """Keep this store's schema from being migrated until the current transaction ends (a restore),
        without holding back the migrations of other stores of the database; a backend whose write
        transactions are already serial (SQLite) leaves it empty."""

    @abc.abstractmethod
    def _taken_in(self, cur: Cursor, naan: str, ids: Sequence[str], tables: Sequence[str]) -> set[str]:
        """Which of ``ids`` the ``tables`` (among ``minted``, ``holds``, ``bindings``, and ``published``:
        the bindings of a status :func:`published`) hold under ``naan`` (``bindings``: as the key
        ``ark:NAAN/id``), or, in all but ``minted``, hold an ARK qualifying
        (:data:`~pidkit.store.keys.QUALIFIED_LOW`); :meth:`_taken` says which tables."""

    def _taken(self, cur: Cursor, naan: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are minted, held or bound (as ``ark:NAAN/id``) under ``naan``, or given out
        with a held or bound ARK that qualifies them (``X.v2``, ``X/c``: draft-kunze-ark-40 §2.5).

        Only the tables that can hold one are read: ``holds`` when the NAAN has a hold
        (:meth:`_has_holds`), ``bindings`` when it is among the bound NAANs (migration 7's
        ``bound_naans``: a NAAN is added with the first binding under it and never removed) — a mint
        under a NAAN with neither reads ``minted`` alone.  Asked under the NAAN's lock
        (:meth:`_lock_naan`), which every write that holds or binds under it takes first (a merge
        restore, which binds and holds whatever its dump has, takes it before its check, and holds the
        mints back from its start: :meth:`_hold_mints`), so what is read stays true until the mint
        commits."""
        self._exec(cur, f"SELECT {_HAS_HOLDS}, EXISTS (SELECT 1 FROM bound_naans WHERE naan = ?)",
                   [naan, naan])  # fmt: skip
        held, bound = cur.fetchone()
        tables = ["minted", *(["holds"] if held else []), *(["bindings"] if bound else [])]
        return self._taken_in(cur, naan, ids, tables) if ids else set()

    def _has_holds(self, cur: Cursor, naan: str) -> bool:
        """Whether any id is held under ``naan``."""
        self._exec(cur, f"SELECT {_HAS_HOLDS}", [naan])
        return bool(cur.fetchone()[0])

    def _hold_mints(self, cur: Cursor) -> None:
        """Make every mint batch that has not reserved its ids yet wait until the current transaction
        ends (a merge restore: it binds and holds ids under any NAAN, which a mint beside it could
        otherwise not see until the commit); a backend whose write transactions are already serial
        (SQLite) leaves it empty."""

    def _lock_signin(self, cur: Cursor, subject: str) -> None:
        """Serialize, within the current transaction, the sign-in attempts of one ``subject`` (an account,
        an address) while their count is read and their row written
        (:meth:`~pidkit.store.accounts.SqlAccounts._check_password`); a backend whose write transactions
        are already serial (SQLite) leaves it empty."""

    def _lock_many_naans(self, cur: Cursor) -> None:
        """Serialize, within the current transaction, the writes that take the locks of several NAANs
        one chunk at a time as they read them (an import, a merge restore): two of them could each hold
        a NAAN the other waits for (a deadlock the database breaks by failing one).  Taken before any
        NAAN's lock; a write of one NAAN (a mint, bind, tombstone, hold) does not take it.  A backend
        whose write transactions are already serial (SQLite) leaves it empty."""

    def _lock_naan(self, cur: Cursor, naan: str) -> None:
        """Serialize, within the current transaction, every write that decides whether an ARK under
        ``naan`` is free (mint batches, bind, tombstone, hold, import); a backend whose write
        transactions are already serial (SQLite ``BEGIN IMMEDIATE``) leaves it empty."""

    @abc.abstractmethod
    def _insert_minted(self, cur: Cursor, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
        """Insert ``(naan, id, minter, position, minted_at)`` rows into ``minted``."""

    #: Exceptions meaning "a UNIQUE key was violated".
    _unique_errors: tuple[type[BaseException], ...] = ()
    #: Exceptions meaning "the database refused a statement" (a constraint, a type).
    _db_errors: tuple[type[BaseException], ...] = ()
    #: The backend's name in a dump header.
    backend: str = "sql"

    def _q(self, sql: str) -> str:
        """The backend's spelling of ``sql`` (placeholders)."""
        return sql

    def _exec(self, cur: Cursor, sql: str, params: Sequence[Any] = ()) -> Any:
        return cur.execute(self._q(sql), tuple(params))

    # -- migrations ---------------------------------------------------------------------------------
    def _migrate(self) -> None:
        """Apply the migrations this database lacks, all in ONE locked transaction (an old store is
        upgraded completely or not at all); a store of a newer schema than this code knows is refused.

        A store that has every migration is only read first (:meth:`_schema_current`), without the
        lock or a write transaction: opening it never waits for a writer (SQLite's write lock, held by
        a long import, made every open wait 30 s and fail "database is locked") nor holds the opening
        of other stores of the database back (PostgreSQL's migration lock is the database's)."""
        if self._schema_current():
            return
        with self._transaction(write=True) as cur:
            self._lock_migrations(cur)
            self._exec(cur, _SCHEMA_VERSION_DDL)
            self._exec(cur, "SELECT version FROM schema_version")
            applied = {int(row[0]) for row in cur.fetchall()}
            newest = max(applied, default=0)
            if newest > LATEST:
                raise StoreError(
                    f"this store has schema version {newest}, newer than this pidkit knows ({LATEST}): "
                    "it was written by a newer pidkit; upgrade pidkit to use it (nothing was changed)"
                )
            self.migrated_from = newest
            for migration in load_migrations():
                if migration.version in applied:
                    continue
                self._run_statements(cur, migration.for_backend(self.backend))
                self._exec(
                    cur,
                    "INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)",
                    (migration.version, migration.name, now()),
                )

    def _run_statements(self, cur: Cursor, statements: Sequence[str]) -> None:
        """Run a migration's statements, in order, in the transaction of ``cur`` (a backend may send
        them together)."""
        for statement in statements:
            self._exec(cur, statement)

    def _schema_current(self) -> bool:
        """Whether the store has every migration this code ships and no newer one (then
        :attr:`migrated_from` is its version); read in a read-only transaction."""
        with self._transaction(write=False) as cur:
            if not self._has_table(cur, "schema_version"):
                return False
            self._exec(cur, "SELECT version FROM schema_version")
            applied = {int(row[0]) for row in cur.fetchall()}
        if applied != VERSIONS:
            return False
        self.migrated_from = max(applied)
        return True

    @abc.abstractmethod
    def _has_table(self, cur: Cursor, name: str) -> bool:
        """Whether the store's schema has a table ``name``."""

    # -- history ------------------------------------------------------------------------------------
    def _record(
        self,
        cur: Cursor,
        principal: Principal | None,
        operation: str,
        kind: str,
        key: str,
        before: Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
        at: str | None = None,
    ) -> None:
        """Append one history row, in the transaction of the change it records."""
        self._insert_history(cur, [(
            history_id(), at or now(), str(principal or local_principal()), operation, kind, key,
            history_json(before), history_json(after),
        )])  # fmt: skip

    def _insert_history(self, cur: Cursor, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert ``history`` rows (:data:`HISTORY_COLUMNS` order)."""
        marks = ", ".join("?" * len(HISTORY_COLUMNS))
        cur.executemany(self._q(f"INSERT INTO history ({HISTORY_COLS}) VALUES ({marks})"), rows)

    def history(self, kind: str, value: str) -> list[HistoryEntry]:
        """Every change of the id ``value`` read as ``kind`` (or of the minter, NAAN or API key named
        ``value`` for kinds ``minter``, ``naan``, ``api_key``), oldest first."""
        key = canonical(kind, _lookup(value)) if kind in KINDS else check_text(value, "key")
        with self._transaction(write=False) as cur:
            self._exec(
                cur,
                f"SELECT {HISTORY_COLS} FROM history WHERE kind = ? AND key = ? ORDER BY at, id",
                (kind, key),
            )
            return [history_from_row(row) for row in cur.fetchall()]

    def schema_version(self) -> int:
        """The highest migration applied."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT MAX(version) FROM schema_version")
            row = cur.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- NAANs --------------------------------------------------------------------------------------
    def _naan(self, cur: Cursor, naan: str) -> Naan:
        self._exec(cur, "SELECT naan, name, created FROM naans WHERE naan = ?", (naan,))
        row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown NAAN", text=naan)
        self._exec(cur, "SELECT shoulder FROM shoulders WHERE naan = ? ORDER BY shoulder", (naan,))
        shoulders = tuple(r[0] for r in cur.fetchall())
        return Naan(row[0], row[1], shoulders, time_from_stored(row[2]))

    def _add_shoulder(self, cur: Cursor, naan: str, shoulder: str, principal: Principal | None) -> None:
        self._exec(
            cur,
            "INSERT INTO shoulders (naan, shoulder, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING "
            "RETURNING shoulder",
            (naan, check_shoulder(shoulder), now()),
        )
        if cur.fetchone() is not None:
            self._record(cur, principal, "shoulder.add", "naan", naan, None, {"shoulder": shoulder})

    def add_naan(
        self, naan: str, name: str = "", *, shoulders: Iterable[str] = (), principal: Principal | None = None
    ) -> Naan:
        """Register a NAAN with its shoulders."""
        check_naan(naan)
        wanted = [check_shoulder(s) for s in shoulders]
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "INSERT INTO naans (naan, name, created) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING RETURNING naan",
                (naan, name, now()),
            )
            if cur.fetchone() is None:
                raise ConflictError("NAAN already registered", text=naan)
            self._record(cur, principal, "naan.add", "naan", naan, None, {"name": name})
            for shoulder in wanted:
                self._add_shoulder(cur, naan, shoulder, principal)
            return self._naan(cur, naan)

    def add_shoulder(self, naan: str, shoulder: str, *, principal: Principal | None = None) -> Naan:
        """Add a shoulder to a registered NAAN."""
        with self._transaction(write=True) as cur:
            self._naan(cur, naan)
            self._add_shoulder(cur, naan, shoulder, principal)
            return self._naan(cur, naan)

    def get_naan(self, naan: str) -> Naan:
        """The NAAN record."""
        with self._transaction(write=False) as cur:
            return self._naan(cur, naan)

    def list_naans(self) -> list[Naan]:
        """Every NAAN."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT naan FROM naans ORDER BY naan")
            return [self._naan(cur, row[0]) for row in cur.fetchall()]

    def naan_names(self) -> frozenset[str]:
        """The NAANs this store serves (one statement)."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT naan FROM naans")
            return frozenset(row[0] for row in cur.fetchall())

    def bound_naans(self) -> frozenset[str]:
        """The NAANs under which this store holds an ARK binding (one statement; migration 7's table,
        kept by a trigger)."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT naan FROM bound_naans")
            return frozenset(row[0] for row in cur.fetchall())

    # -- minters ------------------------------------------------------------------------------------
    def create_minter(
        self, name: str, *, naan: str, template: str, seed: int | None = None,
        principal: Principal | None = None,
    ) -> MinterInfo:
        """Create a named minter."""
        if not name.strip() or name != name.strip():
            raise StoreError("a minter name must be non-empty without surrounding spaces", text=name)
        prefix = template_prefix(template)
        if seed is None:
            seed = secrets.randbits(63)  # fits a signed BIGINT
        with self._transaction(write=True) as cur:
            self._naan(cur, naan)
            if prefix:
                self._add_shoulder(cur, naan, prefix, principal)
            self._exec(
                cur,
                f"INSERT INTO minters ({MINTER_COLS}) VALUES (?, ?, ?, ?, 0, ?) "
                f"ON CONFLICT DO NOTHING RETURNING {MINTER_COLS}",
                (name, naan, template, seed, now()),
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("a minter with this name exists", text=name)
            info = minter_from_row(row)
            self._record(cur, principal, "minter.create", "minter", name, None,
                         {"naan": naan, "template": template, "seed": info.seed, "counter": 0})
            return info

    def _get_minter(self, cur: Cursor, name: str) -> MinterInfo:
        self._exec(cur, f"SELECT {MINTER_COLS} FROM minters WHERE name = ?", (name,))
        row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown minter", text=name)
        return minter_from_row(row)

    def get_minter(self, name: str) -> MinterInfo:
        """The minter's state."""
        with self._transaction(write=False) as cur:
            return self._get_minter(cur, name)

    def list_minters(self) -> list[MinterInfo]:
        """Every minter."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {MINTER_COLS} FROM minters ORDER BY name")
            return [minter_from_row(row) for row in cur.fetchall()]

    def _maker(self, info: MinterInfo) -> IdMaker:
        key = (info.template, info.naan, info.seed)
        maker = self._makers.get(key)
        if maker is None:
            maker = self._makers[key] = make_minter(info.template, info.naan, info.seed)
        return maker

    def _reserve(self, cur: Cursor, name: str, count: int) -> tuple[MinterInfo, int]:
        """Advance the minter's counter by ``count`` (locking its row); return the state and the start."""
        self._exec(
            cur,
            f"UPDATE minters SET counter = counter + ? WHERE name = ? RETURNING {MINTER_COLS}",
            (count, name),
        )
        row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown minter", text=name)
        info = minter_from_row(row)
        return info, info.counter - count

    def _mint_batch(self, name: str, size: int, principal: Principal | None = None) -> list[str]:
        """One transaction: reserve positions, skip taken ids, record ``size`` minted ids (and one
        history row for the batch)."""
        with self._transaction(write=True) as cur:
            chosen: list[tuple[str, str, str, int]] = []
            need = size
            info: MinterInfo | None = None
            first: int | None = None
            while need:
                info, start = self._reserve(cur, name, need)
                if first is None:
                    first = start
                self._lock_naan(cur, info.naan)  # before the check: no bind/tombstone/hold in between
                maker = self._maker(info)
                if maker.exhausted(start + need - 1):
                    raise ExhaustedError(
                        f"minter has too few ids left for {size} more (template {info.template})",
                        text=name,
                    )
                candidates = [(maker.mint_at(pos), pos) for pos in range(start, start + need)]
                taken = self._taken(cur, info.naan, [c[0] for c in candidates])
                seen: set[str] = set()
                for blade, pos in candidates:
                    if blade in taken or blade in seen:
                        continue
                    seen.add(blade)
                    chosen.append((info.naan, blade, name, pos))
                need = size - len(chosen)
            if info is None:
                return []
            stamp = iso_z(self._locked_now())  # once the minter's row and its NAAN are locked
            self._insert_minted(cur, [(*row, stamp) for row in chosen])
            naan = info.naan
            self._record(cur, principal, "mint", "minter", name, {"counter": first},
                         {"counter": info.counter, "minted": len(chosen),
                          "first": f"ark:{naan}/{chosen[0][1]}", "last": f"ark:{naan}/{chosen[-1][1]}"},
                         stamp)  # fmt: skip
            return [f"ark:{naan}/{row[1]}" for row in chosen]

    def mint_batches(
        self, minter: str, n: int, *, batch_size: int = DEFAULT_BATCH, principal: Principal | None = None
    ) -> Iterator[list[str]]:
        """Mint ``n`` ids, one transaction per batch."""
        if n < 0:
            raise StoreError(f"cannot mint a negative number of ids ({n})")
        if batch_size < 1:
            raise StoreError(f"batch size must be positive ({batch_size})")
        self.get_minter(minter)  # unknown minter: fail before yielding anything
        left = n
        while left > 0:
            size = min(batch_size, left)
            batch = self._mint_with_retry(minter, size, principal)
            left -= size
            yield batch

    def _mint_with_retry(self, minter: str, size: int, principal: Principal | None) -> list[str]:
        for attempt in range(_MINT_RETRIES):
            try:
                return self._mint_batch(minter, size, principal)
            except self._unique_errors:
                if attempt == _MINT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def add_hold(self, minter_or_naan: str, *ids: str, principal: Principal | None = None) -> int:
        """Hold ids so they are never minted."""
        with self._transaction(write=True) as cur:
            self._exec(cur, "SELECT naan FROM minters WHERE name = ?", (minter_or_naan,))
            row = cur.fetchone()
            naan = str(row[0]) if row is not None else self._naan(cur, minter_or_naan).naan
            self._lock_naan(cur, naan)
            added = 0
            stamp = now()
            for text in ids:
                blade = blade_of(naan, text)
                bound = self._published_at_or_under(cur, naan, blade)
                if bound is not None:
                    raise StoreError(_cannot_hold(f"ark:{naan}/{blade}", *bound), text=text)
                self._exec(
                    cur,
                    "INSERT INTO holds (naan, id, created) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING RETURNING id",
                    (naan, blade, stamp),
                )
                if cur.fetchone() is not None:
                    added += 1
                    self._record(cur, principal, "hold", "ark", f"ark:{naan}/{blade}", None, {"held": True},
                                 stamp)
            return added

    def minted_count(self, minter: str | None = None) -> int:
        """How many ids were minted."""
        with self._transaction(write=False) as cur:
            if minter is None:
                self._exec(cur, "SELECT COUNT(*) FROM minted")
            else:
                self._exec(cur, "SELECT COUNT(*) FROM minted WHERE minter = ?", (minter,))
            row = cur.fetchone()
        return int(row[0])

    def minters_of(self, naan: str, ids: Sequence[str]) -> dict[str, str]:
        """The minted-log rows of ``ids`` under ``naan`` (a chunk of ids per statement)."""
        found: dict[str, str] = {}
        with self._transaction(write=False) as cur:
            for i in range(0, len(ids), _CHUNK):
                chunk = ids[i : i + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                self._exec(cur, f"SELECT id, minter FROM minted WHERE naan = ? AND id IN ({marks})",
                           (naan, *chunk))  # fmt: skip
                found.update((str(ident), str(minter)) for ident, minter in cur.fetchall())
        return found

    # -- bindings -----------------------------------------------------------------------------------
    @staticmethod
    def _locked_now() -> _dt.datetime:
        """The time of a change, read once the write holds its lock (the id's NAAN, or SQLite's one
        writer): taken before, a change that waited for the lock behind another one was stamped
        earlier than the change it followed, so its history row sorted before that one's and its
        ``updated`` went back in time — and a harvest reading ``updated >= from`` missed it for good."""
        return _dt.datetime.now(_dt.UTC)

    def _current(self, cur: Cursor, kind: str, key: str) -> Binding | None:
        """The stored binding of ``(kind, key)``, locked until the transaction ends where the backend
        locks rows (:attr:`_for_update`)."""
        self._exec(
            cur,
            f"SELECT {BINDING_COLS} FROM bindings WHERE kind = ? AND key = ?{self._for_update}",
            (kind, key),
        )
        row = cur.fetchone()
        return None if row is None else binding_from_row(row)

    #: What a backend appends to a SELECT to lock the rows it reads (PostgreSQL: `` FOR UPDATE``).
    _for_update: str = ""
    #: What a backend appends to a key column so that it compares and sorts in code point order, the
    #: one order of keys on every backend (a Find, a list, the changes feed and their cursors): SQLite's
    #: BINARY is that order already; PostgreSQL's database collation need not be (``COLLATE "C"``).
    _code_point_order: str = ""

    def _held(self, cur: Cursor, naan: str | None, key: str) -> str | None:
        """The held ARK among ``key`` (under ``naan``) and the ARKs it qualifies, ``key`` first, or
        ``None``: a held ARK is never minted nor published, and neither is an ARK it contains."""
        if naan is None:
            return None
        found = self._held_among(cur, naan, [(0, key)])
        return found[0][2] if found else None

    def _published_at_or_under(self, cur: Cursor, naan: str, blade: str) -> tuple[str, str] | None:
        """The key and status of a published ARK binding (:func:`published`) of ``ark:NAAN/blade`` or of
        an ARK qualifying it (one range of keys in code point order: :data:`QUALIFIED_LOW`), else
        ``None``."""
        key, c = f"ark:{naan}/{blade}", f"key{self._code_point_order}"
        self._exec(
            cur,
            f"SELECT key, status FROM bindings WHERE kind = 'ark' AND status <> ? AND {c} >= ? AND {c} < ? "
            f"AND (key = ? OR {c} >= ?) ORDER BY {c} LIMIT 1",
            (UNPUBLISHED, key, key + QUALIFIED_HIGH, key, key + QUALIFIED_LOW),
        )
        row = cur.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def _write_binding(self, cur: Cursor, b: Binding) -> Binding:
        """Write the whole row of ``b`` (insert or replace; a tombstoned row is never replaced)."""
        self._exec(
            cur,
            f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
            f"ON CONFLICT (kind, key) DO UPDATE SET {IMPORT_SETS} WHERE bindings.status <> 'tombstoned' "
            f"RETURNING {BINDING_COLS}",
            binding_values(b),
        )
        row = cur.fetchone()
        if row is None:
            raise ConflictError("tombstoned: this id is withdrawn and is never bound again", text=b.text)
        return binding_from_row(row)

    def _change(
        self,
        kind: str,
        key: str,
        text: str,
        change: BindingChange,
        *,
        naan: str | None,
        shoulder: str | None,
        force: bool = False,
        principal: Principal | None = None,
        only_new: bool = False,
        if_version: str | None = None,
    ) -> Binding:
        """Create or partially update one binding (see :meth:`Store.bind`): in one write transaction,
        the stored row is read (and locked), :func:`~pidkit.store.changes.apply_change` decides the new
        one, which is written with its history row — so concurrent changes of other fields are never
        lost.  A change that changes nothing writes nothing.  Its time (``updated``, the history row's)
        is read once the id's lock is held (:meth:`_locked_now`)."""
        start = new_binding(kind, key, text, naan, shoulder)
        with self._transaction(write=True) as cur:
            refusal = None
            if kind == "ark" and naan is not None:
                self._lock_naan(cur, naan)
                refusal = self._ark_refusal(cur, text, naan)
                if refusal is not None and not force:
                    raise StoreError(f"{refusal} (bind with force to override; it is recorded)", text=text)
            else:
                self._lock_naan(cur, f"{kind}:{key}")  # serializes changes of this id
            stamp = self._locked_now()
            before = self._current(cur, kind, key)
            if only_new and before is not None:
                raise AlreadyBoundError("already bound (a create never changes an existing binding)",
                                        text=text)
            if if_version is not None and (before is None or binding_version(before) != if_version):
                raise ChangedMeanwhileError("changed since it was read (or deleted): nothing written",
                                            text=text)
            after = apply_change(before, start, change, stamp)
            refuse_reserving_again(before.status if before else None, after.status, text)
            if before is not None and after == dataclasses.replace(before, updated=stamp):
                return before
            if published(after.status) and kind == "ark" and (held := self._held(cur, naan, key)):
                raise StoreError(f"this ARK {_held_refusal(after.status, _other(held, key))}", text=text)
            bound = self._write_binding(cur, after)
            if refusal is not None:
                self._exec(
                    cur,
                    "INSERT INTO overrides (kind, key, reason, at) VALUES (?, ?, ?, ?)",
                    (kind, key, refusal, stored_time(stamp)),
                )
            operation = "create" if before is None else "update"
            if before is not None and before.status != after.status:
                operation = "status"
            old, new = changed_fields(before, bound)
            self._record(cur, principal, operation, kind, key, old, new, stored_time(stamp))
        return bound

    def _ark_refusal(self, cur: Cursor, text: str, naan: str) -> str | None:
        """Why binding the ARK ``text`` under ``naan`` needs ``force``, or ``None``
        (:meth:`_ArkAdmission.refusal`, the one rule)."""
        return _ArkAdmission(self, cur).refusal(text, naan)

    def _naan_rules(self, cur: Cursor, naan: str) -> tuple[bool, list[tuple[str, str]]]:
        """Whether ``naan`` is registered here, and its minters' ``(name, template)`` by name."""
        self._exec(cur, "SELECT 1 FROM naans WHERE naan = ?", (naan,))
        if cur.fetchone() is None:
            return False, []
        self._exec(cur, "SELECT name, template FROM minters WHERE naan = ? ORDER BY name", (naan,))
        return True, [(name, template) for name, template in cur.fetchall()]

    def list_overrides(self, ark: str | None = None) -> list[Override]:
        """Bindings made with ``force``, oldest first (keys of one time in code point order)."""
        sql = "SELECT kind, key, reason, at FROM overrides"
        params: tuple[str, ...] = ()
        if ark is not None:
            sql += " WHERE kind = 'ark' AND key = ?"
            params = (ark_key(_lookup(ark)).key,)
        with self._transaction(write=False) as cur:
            self._exec(cur, sql + f" ORDER BY at, key{self._code_point_order}", params)
            return [Override(r[0], r[1], r[2], time_from_stored(r[3])) for r in cur.fetchall()]

    def bind(
        self,
        ark: str,
        target: str | None = None,
        *,
        erc: ErcChange | None = None,
        support: ErcChange | None = None,
        passthrough: bool | None = None,
        status: Status | None = None,
        force: bool = False,
        reason: str | None = None,
        extra: Mapping[str, str | None] | None = None,
        principal: Principal | None = None,
    ) -> Binding:
        """Create or partially update an ARK binding."""
        change = BindingChange(target=target, erc=erc, support=support, passthrough=passthrough,
                               status=status, reason=reason, extra=extra)  # fmt: skip
        return self.change("ark", ark, change, force=force, principal=principal)

    def change(
        self,
        kind: str,
        value: str,
        change: BindingChange,
        *,
        force: bool = False,
        principal: Principal | None = None,
        only_new: bool = False,
        if_version: str | None = None,
    ) -> Binding:
        """Apply a partial change to the binding of ``value`` read as ``kind``."""
        if kind == "ark":
            k = ark_key(_lookup(value))
            return self._change("ark", k.key, value, change, naan=k.naan, shoulder=k.shoulder, force=force,
                                principal=principal, only_new=only_new, if_version=if_version)  # fmt: skip
        key = canonical(kind, _lookup(value))
        return self._change(kind, key, value, change, naan=None, shoulder=None, principal=principal,
                            only_new=only_new, if_version=if_version)  # fmt: skip

    def bind_id(
        self,
        kind: str,
        value: str,
        target: str | None = None,
        *,
        erc: ErcChange | None = None,
        support: ErcChange | None = None,
        status: Status | None = None,
        reason: str | None = None,
        extra: Mapping[str, str | None] | None = None,
        principal: Principal | None = None,
    ) -> Binding:
        """Create or partially update the binding of another kind of id."""
        change = BindingChange(target=target, erc=erc, support=support, status=status, reason=reason,
                               extra=extra)  # fmt: skip
        return self.change(kind, value, change, principal=principal)

    def delete(self, kind: str, value: str, *, principal: Principal | None = None) -> Binding:
        """Delete a reserved binding that was never published (EZID: "a reserved identifier may be
        deleted"); an ARK stays held, so it is never minted again."""
        if kind == "ark":
            k = ark_key(_lookup(value))
            key, naan = k.key, k.naan
        else:
            key, naan = canonical(kind, _lookup(value)), None
        with self._transaction(write=True) as cur:
            self._lock_naan(cur, naan if naan is not None else f"{kind}:{key}")
            before = self._current(cur, kind, key)
            if before is None:
                raise NotFoundError("not bound", text=value)
            if published(before.status) or self._was_published(cur, kind, key):
                raise ConflictError(
                    "only a reserved binding that was never published can be deleted "
                    f"(this one is {before.status}"
                    + (", and was published" if not published(before.status) else "")
                    + "): make it unavailable, or tombstone it",
                    text=value,
                )
            blade = key[len(f"ark:{naan}/") :] if naan is not None else ""
            bound = self._published_at_or_under(cur, naan, blade) if naan is not None else None
            if bound is not None:  # the hold the deletion leaves would be on an id given out
                raise ConflictError(f"{_cannot_hold(key, *bound)}: a deleted id is held, so this reserved "
                                    "binding is kept", text=value)  # fmt: skip
            self._exec(cur, "DELETE FROM bindings WHERE kind = ? AND key = ?", (kind, key))
            stamp = now()
            if naan is not None:
                self._exec(
                    cur,
                    "INSERT INTO holds (naan, id, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    (naan, blade, stamp),
                )
            self._record(cur, principal, "delete", kind, key, *changed_fields(before, None), stamp)
        return before

    def _was_published(self, cur: Cursor, kind: str, key: str) -> bool:
        """True if the history shows the binding published (:func:`published`: public, unavailable) at
        some time (:func:`_shows_published`)."""
        shown = _shows_published("h.after")
        sql = f"SELECT 1 FROM history h WHERE h.kind = ? AND h.key = ? AND {shown} LIMIT 1"
        self._exec(cur, sql, (kind, key, *_PUBLISHED_MARKS))
        return cur.fetchone() is not None

    def _select_keys(self, cur: Cursor, pairs: Sequence[tuple[str, str]]) -> list[Binding]:
        if not pairs:
            return []
        where = " OR ".join("(kind = ? AND key = ?)" for _ in pairs)
        params = [v for pair in pairs for v in pair]
        self._exec(cur, f"SELECT {BINDING_COLS} FROM bindings WHERE {where}", params)
        return [binding_from_row(row) for row in cur.fetchall()]

    def get_binding(self, ark: str) -> Binding | None:
        """The binding of an ARK."""
        return self.get_id("ark", ark)

    def get_id(self, kind: str, value: str) -> Binding | None:
        """The binding of ``value`` as ``kind``."""
        key = canonical(kind, _lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, [(kind, key)])
        return found[0] if found else None

    def find_ids(self, value: str) -> list[Binding]:
        """Every binding ``value`` names under any kind."""
        pairs = readings(_lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, pairs)
        order = {kind: i for i, kind in enumerate(KINDS)}
        return sorted(found, key=lambda b: order.get(b.kind, len(order)))

    def resolve(self, ark: str) -> Resolution | None:
        """Exact binding, else the longest public passthrough ancestor with the suffix."""
        return self.resolve_many([ark])[0]

    def resolve_many(self, arks: Sequence[str]) -> list[Resolution | None]:
        """:meth:`resolve` of each ARK with one read of every key (each ARK and its ancestors)."""
        wanted = [(ark, ark_key(_lookup(ark))) for ark in arks]
        if not wanted:
            return []
        found = {b.key: b for b in map(binding_from_row, self._ark_rows([k for _, k in wanted]))}
        return [_resolution(ark, k, found) for ark, k in wanted]

    def _ark_rows(self, wanted: Sequence[ArkKey]) -> list[Any]:
        """The stored ARK rows among ``wanted`` and their ancestors: one statement for up to
        :data:`_CHUNK` keys (``IN (?, …)``), else one per chunk inside one read transaction."""
        keys = list(dict.fromkeys(key for k in wanted for key in (k.key, *k.ancestors)))
        chunks = [keys[i : i + _CHUNK] for i in range(0, len(keys), _CHUNK)]
        rows: list[Any] = []
        with self._single_read() if len(chunks) == 1 else self._transaction(write=False) as cur:
            for chunk in chunks:
                marks = ", ".join("?" * len(chunk))
                sql = f"SELECT {BINDING_COLS} FROM bindings WHERE kind = 'ark' AND key IN ({marks})"
                self._exec(cur, sql, chunk)
                rows += cur.fetchall()
        return rows

    def tombstone(self, ark: str, reason: str, *, principal: Principal | None = None) -> Binding:
        """Withdraw an ARK for good."""
        if not reason.strip():
            raise StoreError("a tombstone needs a reason", text=ark)
        k = ark_key(ark)
        with self._transaction(write=True) as cur:
            self._lock_naan(cur, k.naan)
            stamp = self._locked_now()
            values = binding_values(Binding(
                "ark", k.key, ark, None, status="tombstoned", naan=k.naan, shoulder=k.shoulder,
                tombstone_reason=reason, tombstoned_at=stamp, created=stamp, updated=stamp,
            ))  # fmt: skip
            before = self._current(cur, "ark", k.key)
            held = None if before is not None and before.is_tombstoned else self._held(cur, k.naan, k.key)
            if held is not None:
                raise StoreError(f"this ARK {_held_refusal('tombstoned', _other(held, k.key))}", text=ark)
            self._exec(
                cur,
                f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
                "ON CONFLICT (kind, key) DO UPDATE SET status = excluded.status, "
                "tombstone_reason = excluded.tombstone_reason, tombstoned_at = excluded.tombstoned_at, "
                "reason = excluded.reason, updated = excluded.updated WHERE bindings.status <> 'tombstoned' "
                f"RETURNING {BINDING_COLS}",
                values,
            )
            row = cur.fetchone()
            if row is not None:
                after = binding_from_row(row)
                self._record(cur, principal, "tombstone", "ark", k.key, *changed_fields(before, after),
                             stored_time(stamp))
                return after
            found = self._select_keys(cur, [("ark", k.key)])
        return found[0]

    def list_bindings(
        self,
        naan: str | None = None,
        *,
        shoulder: str | None = None,
        kind: str = "ark",
        after: str | None = None,
        limit: int = 100,
    ) -> list[Binding]:
        """One page of bindings in key order."""
        if limit < 1:
            raise StoreError(f"limit must be positive ({limit})")
        clauses = ["kind = ?"]
        params: list[Any] = [kind]
        if naan is not None:
            clauses.append("naan = ?")
            params.append(naan)
        if shoulder is not None:
            clauses.append("shoulder = ?")
            params.append(shoulder)
        key = f"key{self._code_point_order}"
        if after is not None:
            clauses.append(f"{key} > ?")
            params.append(check_text(after, "after"))
        params.append(limit)
        with self._transaction(write=False) as cur:
            self._exec(
                cur,
                f"SELECT {BINDING_COLS} FROM bindings WHERE {' AND '.join(clauses)} ORDER BY {key} LIMIT ?",
                params,
            )
            return [binding_from_row(row) for row in cur.fetchall()]

    def list_changed(
        self,
        *,
        naan: str | None = None,
        shoulder: str | None = None,
        since: _dt.datetime | None = None,
        until: _dt.datetime | None = None,
        after: tuple[_dt.datetime, str] | None = None,
        statuses: Sequence[str] = STATUSES,
        limit: int = 100,
    ) -> list[Binding]:
        """One page of ARK bindings in ``(updated, key)`` order (see :meth:`Store.list_changed`).  Times
        are stored as fixed-width ISO 8601 text (:func:`~pidkit.store.rows.stored_time`), so text order
        is time order on both backends."""
        if limit < 1:
            raise StoreError(f"limit must be positive ({limit})")
        if not statuses:
            return []
        clauses = ["kind = 'ark'", f"status IN ({', '.join('?' * len(statuses))})"]
        params: list[Any] = list(statuses)
        for column, value in (("naan", naan), ("shoulder", shoulder)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(check_text(value, column))
        position = None if after is None else (stored_time(after[0]) or "", check_text(after[1], "after"))
        tie = f"key{self._code_point_order}"
        window, window_params = _time_window("updated", tie, since, until, position)
        clauses += window
        params += window_params
        params.append(limit)
        with self._transaction(write=False) as cur:
            self._exec(
                cur,
                f"SELECT {BINDING_COLS} FROM bindings WHERE {' AND '.join(clauses)} "
                f"ORDER BY updated, key{self._code_point_order} LIMIT ?",
                params,
            )
            return [binding_from_row(row) for row in cur.fetchall()]

    def list_recorded(
        self,
        *,
        naan: str | None = None,
        shoulder: str | None = None,
        since: _dt.datetime | None = None,
        until: _dt.datetime | None = None,
        after: str | None = None,
        statuses: Sequence[str] = STATUSES,
        limit: int = 100,
    ) -> list[Recorded]:
        """One page of ARK bindings in the order of their newest history row (see
        :meth:`Store.list_recorded`).  Two parts: the bindings whose newest row is one of migration 3's
        ``0:KIND:KEY`` rows, by their ``at`` and id (migration 14's index ``history_adopted``); then the
        rest, by their rows' TID (the primary key), whose time is the change's
        (:func:`~pidkit.store.rows.recorded_time`).

        A scope of fewer than :data:`_SMALL_SCOPE` bindings of a NAAN (and shoulder) is read from its
        bindings (``bindings_by_naan``) and sorted: a page costs the scope's size.  Anything larger is
        walked in the history's order a batch at a time (growing to :data:`_MAX_BATCH` rows while the
        page is not full): one statement reads the batch's ids and keys in the index of that order (so
        that no planner reads more, whatever its statistics), the rows whose key is not under the
        scope's prefix are passed over (an ARK's key begins with its NAAN and shoulder), and a second
        keeps the other rows that are the newest of an ARK binding in scope — their bindings read by
        primary key, the scope compared as an expression no index serves, so that a planner without
        statistics (a store just filled) never starts from every binding of the NAAN."""
        if limit < 1:
            raise StoreError(f"limit must be positive ({limit})")
        part, at_after, id_after = parse_recorded_position(after) if after is not None else ("a", None, "")
        if not statuses:
            return []
        scope = [(c, check_text(v, c)) for c, v in (("naan", naan), ("shoulder", shoulder)) if v is not None]
        columns = ", ".join(f"b.{c}" for c in BINDING_COLUMNS)
        newest = ("NOT EXISTS (SELECT 1 FROM history l WHERE l.kind = h.kind AND l.key = h.key "
                  "AND l.id > h.id)")  # fmt: skip
        statuses_in = f"b.status IN ({', '.join('?' * len(statuses))})"
        values = [v for _, v in scope]
        by_index = [f"b.{c} = ?" for c, _ in scope]  # the scope, as bindings_by_naan serves it
        by_value = [f"(b.{c} || '') = ?" for c, _ in scope]  # and as no index serves it
        # An ARK's key begins with its NAAN and shoulder: a history row of another is passed over unread.
        prefix = "ark:" if naan is None else f"ark:{naan}/{shoulder or ''}"
        found: list[Recorded] = []
        size = min(max(2 * limit, 64), _MAX_BATCH)  # history rows per batch
        with self._transaction(write=False) as cur:
            small = naan is not None and self._scope_size(cur, scope) < _SMALL_SCOPE
            while len(found) < limit:
                clauses, params, order = _recorded_part(part, at_after, id_after, since, until,
                                                        self._code_point_order)  # fmt: skip
                want = limit - len(found)
                if small:
                    where = " AND ".join([*by_index, statuses_in, *clauses, newest])
                    self._exec(cur, f"SELECT h.id, h.at, {columns} FROM bindings b JOIN history h ON "
                                    f"h.kind = b.kind AND h.key = b.key WHERE b.kind = 'ark' AND {where} "
                                    f"ORDER BY {order} LIMIT ?",
                               [*values, *statuses, *params, want])  # fmt: skip
                    rows = cur.fetchall()
                    found += map(_recorded, rows)
                    read_all = len(rows) < want
                else:
                    # The batch: the part's next `size` rows, read in the order of the part's index (a
                    # statement no planner answers otherwise); then, of those under the scope's prefix,
                    # the rows that are the newest of an ARK binding in scope.
                    within = " AND ".join(clauses)
                    sql = f"SELECT h.id, h.at, h.key FROM history h WHERE {within} ORDER BY {order} LIMIT ?"
                    self._exec(cur, sql, [*params, size])
                    batch = cur.fetchall()
                    read_all = len(batch) < size
                    ids = [i for i, _, key in batch if key.startswith(prefix)]
                    if ids:
                        where = " AND ".join([*by_value, statuses_in, newest])
                        marks = ", ".join("?" * len(ids))
                        sql = (f"WITH c AS MATERIALIZED (SELECT id, at, kind, key FROM history WHERE id IN "
                               f"({marks})) SELECT h.id, h.at, {columns} FROM c h CROSS JOIN bindings b "
                               f"WHERE h.kind = 'ark' AND b.kind = h.kind AND b.key = h.key AND {where} "
                               f"ORDER BY {order} LIMIT ?")  # fmt: skip
                        self._exec(cur, sql, [*ids, *values, *statuses, want])
                        found += map(_recorded, cur.fetchall())
                    if batch:
                        id_after, at_after, _ = batch[-1]
                    if len(found) < limit:  # the page is not full: read on, more at once
                        size = min(2 * size, _MAX_BATCH)
                if len(found) >= limit or not read_all:
                    continue
                if part == "b":
                    break
                part, at_after, id_after = "b", None, ""
        return found[:limit]

    def _scope_size(self, cur: Cursor, scope: Sequence[tuple[str, str]]) -> int:
        """How many ARK bindings ``scope`` (``(column, value)`` of naan and shoulder) holds, counted up
        to :data:`_SMALL_SCOPE` (``bindings_by_naan``: no row is read)."""
        where = " AND ".join(f"{c} = ?" for c, _ in scope)
        self._exec(cur, f"SELECT count(*) FROM (SELECT 1 FROM bindings WHERE kind = 'ark' AND {where} "
                        "LIMIT ?) s", [*(v for _, v in scope), _SMALL_SCOPE])  # fmt: skip
        row = cur.fetchone()
        return int(row[0]) if row else 0

    def earliest_recorded(self) -> _dt.datetime | None:
        """The earlier of migration 3's first ARK row (``history_adopted``) and the first TID row."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT at, id FROM history WHERE kind = 'ark' AND id < '{FIRST_TID}' "
                            "ORDER BY at LIMIT 1")  # fmt: skip
            first = [cur.fetchone()]
            self._exec(cur, f"SELECT at, id FROM history WHERE id >= '{FIRST_TID}' ORDER BY id LIMIT 1")
            first.append(cur.fetchone())
        return min((recorded_time(row[1], row[0]) for row in first if row is not None), default=None)

    def recorded_at(self, binding: Binding) -> _dt.datetime | None:
        """The time of the newest history row of ``binding`` (see :meth:`Store.recorded_at`)."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT id, at FROM history WHERE kind = ? AND key = ? ORDER BY id DESC LIMIT 1",
                       (binding.kind, binding.key))  # fmt: skip
            row = cur.fetchone()
        return None if row is None else recorded_time(row[0], row[1])

    def export_jsonl(self, fp: IO[str]) -> int:
        """Write every binding as one JSON object per line."""
        count = 0
        for kind in KINDS:
            after: str | None = None
            while True:
                page = self.list_bindings(kind=kind, after=after, limit=1000)
                for b in page:
                    fp.write(binding_line(b))
                count += len(page)
                if len(page) < 1000:
                    break
                after = page[-1].key
        return count

    def import_jsonl(
        self,
        fp: Iterable[str],
        *,
        owner: str | None = None,
        update: bool = False,
        principal: Principal | None = None,
        dry_run: bool = False,
        force: bool = False,
        max_problems: int | None = None,
    ) -> ImportReport:
        """Read an export back, all or nothing (``owner``, ``update``, ``dry_run``, ``force``,
        ``max_problems``: see :meth:`Store.import_jsonl`).

        Streamed: the lines are read, checked and written :data:`_IMPORT_CHUNK` at a time inside ONE
        transaction, so memory does not grow with the file.  Each chunk looks up what the store holds
        (earlier chunks included: a later line sees an earlier one), applies its lines in order and
        writes them (:meth:`_import_chunk`).  After the first bad line nothing more is written but every
        remaining line is still parsed, so every unreadable line is reported; then the transaction is
        rolled back — nothing of the import stays."""
        if max_problems is not None and max_problems < 1:  # at least the first: the import's refusal
            raise StoreError(f"max_problems must be positive ({max_problems})")
        who = str(principal or local_principal())
        try:
            return self._import_lines(fp, update, owner, who, dry_run, force, max_problems)
        except _DryRunDoneError as done:  # every write of the dry run rolled back with its transaction
            return done.report

    def _import_lines(
        self, fp: Iterable[str], update: bool, owner: str | None, who: str, dry_run: bool, force: bool,
        max_problems: int | None,
    ) -> ImportReport:
        """:meth:`import_jsonl`'s one transaction (a dry run ends it with :class:`_DryRunDoneError`).  Its
        one time — the history rows', and ``created``/``updated`` of the lines without them — is read
        once the transaction began, which on SQLite is once it holds the write lock
        (:meth:`_locked_now`)."""
        problems: list[tuple[int, str]] = []
        dropped = 0  # bad lines past the first max_problems (each chunk's lines follow the last one's)

        def bound() -> None:
            nonlocal dropped
            if max_problems is not None and len(problems) > max_problems:
                problems.sort()
                dropped += len(problems) - max_problems
                del problems[max_problems:]

        lines = created = updated = 0
        history: list[tuple[Any, ...]] = []  # the last chunk's history rows, written once its write ended
        # ``writing``: the last chunk's write while the server may still be running it (a backend may leave
        # it there: PostgreSQL's pipeline); closed before the import's next statement, so the next chunk
        # is read and parsed meanwhile.  Innermost: on an error it ends before the transaction does.
        with self._transaction(write=True) as cur, ExitStack() as bulk, ExitStack() as writing:
            self._lock_many_naans(cur)
            stamp = self._locked_now()
            at = stored_time(stamp)
            # lines without created/updated get the import's own time (one stamp, formatted once)
            parse: Callable[[str], ImportRow | UpdateRow] = (
                parse_update_line if update else functools.partial(parse_import_line, now=stamp)
            )

            def settle() -> None:
                """Wait for the last chunk's write (a refused line is raised here), then add its history."""
                nonlocal history
                writing.close()
                if history:
                    self._insert_history(cur, history)  # one executemany / COPY per chunk of the import
                    history = []

            locked: set[str] = set()
            admission = _ArkAdmission(self, cur)
            for chunk in _numbered_chunks(fp, _IMPORT_CHUNK):
                if lines == 0 and len(chunk) == _IMPORT_CHUNK:  # a big import: index its new rows at the end
                    # (a dry run writes nothing that stays: it never holds the tables from readers)
                    empty = not dry_run and self._is_empty(cur, "bindings")
                    load = self._load_empty(cur, _IMPORTED_TABLES) if empty else self._bulk_insert(cur)
                    bulk.enter_context(load)
                rows: list[tuple[int, ImportRow | UpdateRow]] = []
                for number, line in chunk:
                    if not line.strip():
                        continue
                    try:
                        rows.append((number, parse(line)))
                    except PidkitError as exc:
                        problems.append((number, str(exc)))
                lines = chunk[-1][0]
                settle()
                if problems:
                    bound()
                    continue  # nothing more is written; the rest is only read, for its bad lines
                naans = sorted({row.naan for _, row in rows if row.kind == "ark" and row.naan} - locked)
                for naan in naans:
                    self._lock_naan(cur, naan)  # in one order within a chunk
                locked.update(naans)
                done = self._import_chunk(cur, rows, owner, stamp, problems, admission, writing, force=force)
                created += done.created
                updated += done.updated
                if not problems:
                    history = self._import_history(at, who, done)  # made while the server writes
            settle()
            if problems:
                bound()
                raise ImportRejectedError(sorted(problems), overridable=admission.refused,
                                          count=len(problems) + dropped)  # fmt: skip
            if dry_run:
                raise _DryRunDoneError(ImportReport(lines, created, updated))
        return ImportReport(lines, created, updated)

    def _import_chunk(
        self,
        cur: Cursor,
        rows: Sequence[tuple[int, ImportRow | UpdateRow]],
        owner: str | None,
        stamp: _dt.datetime,
        problems: list[tuple[int, str]],
        admission: _ArkAdmission,
        writing: ExitStack,
        *,
        force: bool,
    ) -> _ImportChunk:
        """Apply one chunk of parsed lines in order and write it unless a line is refused (appended to
        ``problems``); return what it wrote, over what, and the counts.  A new ARK binding must pass
        ``admission`` (its NAAN registered, its check character right: the rule :meth:`bind` applies);
        ``force`` writes it anyway and records the override.  The bindings are written last, by
        :meth:`_import_write`, which may leave its end on ``writing``."""
        # What the store holds now (earlier chunks of this import included), a statement per _CHUNK
        # keys; then updated as the lines are applied in order, so a later line sees an earlier one (a
        # key imported twice is created once, then updated).
        stored = self._import_state(cur, {(row.kind, row.key) for _, row in rows})
        state: dict[tuple[str, str], Binding | ImportRow] = dict(stored)  # a row's binding: when needed
        writes: dict[tuple[str, str], tuple[int, ImportRow]] = {}
        overrides: list[tuple[str, str, str, str | None]] = []
        created = updated = 0
        for number, given in rows:
            pair = (given.kind, given.key)
            seen = state.get(pair)
            existing = seen.binding if isinstance(seen, ImportRow) else seen
            foreign = existing is not None and existing.naan != owner
            if owner is not None and given.kind != "ark" and foreign:
                raise NotOwnerError(
                    f"{given.kind} {given.key} was not bound by NAAN {owner}; only its owner changes it",
                    line=number,
                )
            if isinstance(given, UpdateRow):
                try:
                    after = apply_change(existing, given.start, given.change, stamp)
                except PidkitError as exc:
                    problems.append((number, str(exc)))
                    continue
                row = ImportRow.of(after)
            else:
                row = given
                if existing is not None and existing.status == "tombstoned":
                    if row.status != "tombstoned":
                        problems.append((number, f"{row.key} is tombstoned in the store; not rebound"))
                    continue
            try:
                refuse_reserving_again(existing.status if existing else None, row.status, row.key)
            except ConflictError as exc:
                problems.append((number, str(exc)))
                continue
            if owner is not None and row.kind != "ark":
                row = ImportRow.of(dataclasses.replace(row.binding, naan=owner))
            if existing is None and row.kind == "ark" and row.naan is not None:
                refusal = admission.refusal(row.key, row.naan)
                if refusal is not None and not force:
                    problems.append((number, refusal))
                    admission.refused.append(number)
                    continue
                if refusal is not None:
                    overrides.append((row.kind, row.key, refusal, stored_time(stamp)))
            writes[pair] = (number, row)  # an import restores every column: the last line wins
            state[pair] = row
            if existing is None:
                created += 1
            else:
                updated += 1
        problems += self._held_published(cur, list(writes.values()))
        if not problems:
            if overrides:
                cur.executemany(self._q("INSERT INTO overrides (kind, key, reason, at) VALUES (?, ?, ?, ?)"),
                                overrides)  # fmt: skip
            self._import_write(cur, list(writes.values()), stored, writing)
        return _ImportChunk(stored, writes, created, updated)

    @staticmethod
    def _import_history(at: str | None, who: str, done: _ImportChunk) -> list[tuple[Any, ...]]:
        """The chunk's ``import`` history rows: one per binding it wrote (its fields before and after)."""
        history: list[tuple[Any, ...]] = []
        original = done.original
        for hid, (pair, (_, row)) in zip(history_ids(len(done.writes)), done.writes.items(), strict=True):
            before = original.get(pair)
            if before is None:  # created: the whole record, written straight from its row
                after = created_history_json(row.values)
                history.append((hid, at, who, "import", pair[0], pair[1], None, after))
                continue
            old, new = changed_fields(before, row.binding)
            history.append((hid, at, who, "import", row.kind, row.key, history_json(old), history_json(new)))
        return history

    def _held_published(
        self, cur: Cursor, writes: Sequence[tuple[int, ImportRow]]
    ) -> list[tuple[int, str]]:
        """The lines among ``writes`` that would bind a held ARK published (:func:`published`; a chunk
        of ids per statement)."""
        by_naan: dict[str, list[tuple[int, str]]] = {}
        statuses: dict[int, str] = {}
        unheld: dict[str, bool] = {}  # NAAN -> holds none (most imports: no ids to look up)
        for number, row in writes:
            naan = row.naan
            if naan is not None and row.kind == "ark" and published(row.status):
                if naan not in unheld:
                    unheld[naan] = not self._has_holds(cur, naan)
                if not unheld[naan]:
                    by_naan.setdefault(naan, []).append((number, row.key))
                    statuses[number] = row.status
        return [
            (number, f"{key} {_held_refusal(statuses[number], _other(held, key))}")
            for naan, wanted in by_naan.items()
            for number, key, held in self._held_among(cur, naan, wanted)
        ]

    def _held_among(
        self, cur: Cursor, naan: str, wanted: Sequence[tuple[int, str]]
    ) -> list[tuple[int, str, str]]:
        """``(line number, key, held key)`` for each ARK of ``wanted`` (``(line number, key)`` under
        ``naan``) that is held or qualifies a held ARK (:func:`_held_key`): about :data:`_CHUNK` ids
        per statement, an ARK and its ancestors in one (an ARK of 4,096 characters may have 2,000)."""
        prefix = f"ark:{naan}/"
        out: list[tuple[int, str, str]] = []
        chunk: list[tuple[int, str, tuple[str, ...]]] = []
        size = 0

        def read() -> None:
            blades = list(dict.fromkeys(k[len(prefix) :] for _, _, keys in chunk for k in keys))
            marks = ", ".join("?" * len(blades))
            self._exec(cur, f"SELECT id FROM holds WHERE naan = ? AND id IN ({marks})", [naan, *blades])
            held = {prefix + str(row[0]) for row in cur.fetchall()}
            out.extend((n, key, found) for n, key, keys in chunk if (found := _held_key(keys, held)))

        for n, key in wanted:
            keys = _and_ancestors(key)
            if chunk and size + len(keys) > _CHUNK:
                read()
                chunk, size = [], 0
            chunk.append((n, key, keys))
            size += len(keys)
        if chunk:
            read()
        return out

    def _import_state(self, cur: Cursor, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], Binding]:
        """The stored bindings among ``pairs`` (locked where the backend locks rows), a chunk of keys per
        statement."""
        state: dict[tuple[str, str], Binding] = {}
        by_kind: dict[str, list[str]] = {}
        for kind, key in sorted(pairs):
            by_kind.setdefault(kind, []).append(key)
        for kind, wanted in by_kind.items():
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                self._exec(cur, f"SELECT {BINDING_COLS} FROM bindings WHERE kind = ? AND key IN ({marks})"
                           f"{self._for_update}", [kind, *chunk])  # fmt: skip
                for row in cur.fetchall():
                    b = binding_from_row(row)
                    state[(kind, b.key)] = b
        return state

    def _statuses(self, cur: Cursor, kind: str, keys: Sequence[str]) -> list[Any]:
        """``(key, status, naan)`` rows of the bindings of ``kind`` among ``keys`` (a backend may lock
        them until the transaction ends)."""
        marks = ", ".join("?" * len(keys))
        self._exec(
            cur, f"SELECT key, status, naan FROM bindings WHERE kind = ? AND key IN ({marks})", [kind, *keys]
        )
        return cur.fetchall()

    def _import_write(
        self,
        cur: Cursor,
        writes: Sequence[tuple[int, ImportRow]],
        stored: Mapping[tuple[str, str], Binding],
        writing: ExitStack,
    ) -> None:
        """Write the rows ``writes`` (``(line, row)``, one per key), a chunk per ``executemany``: a key
        ``stored`` lacks (the lookup found none) by a plain insert, the others by the upsert with its
        tombstone guard.  Here the writes end before this returns; a backend may instead leave them
        running on the server and push their end (waiting for them, checking what they wrote) on
        ``writing``, which the import closes before its next statement.

        The plain insert (``ON CONFLICT DO NOTHING``) is the common case of an import and costs less than
        half the upsert on SQLite: an upsert carries the binding's ``UPDATE`` triggers (the full-text
        index), and a statement that may fire triggers keeps a statement journal of every page it
        changes.  A key that another writer bound since the lookup (PostgreSQL locks no row that is not
        there) is not inserted: the import is refused naming its line, never written over that
        binding.  A row the upsert refused (tombstoned by another writer since the lookup) rejects the
        import naming its line too."""
        new, known = self._new_and_known(writes, stored)
        values = f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
        insert = self._q(values + "ON CONFLICT DO NOTHING")
        guard = "WHERE bindings.status <> 'tombstoned'"
        upsert = self._q(values + f"ON CONFLICT (kind, key) DO UPDATE SET {IMPORT_SETS} {guard}")
        for sql, rows, fresh in ((insert, new, True), (upsert, known, False)):
            for i in range(0, len(rows), _CHUNK):
                chunk = rows[i : i + _CHUNK]
                cur.executemany(sql, [row.values for _, row in chunk])
                if cur.rowcount != len(chunk):
                    self._import_refused(cur, chunk, fresh=fresh)

    @staticmethod
    def _new_and_known(
        writes: Sequence[tuple[int, ImportRow]], stored: Mapping[tuple[str, str], Binding]
    ) -> tuple[list[tuple[int, ImportRow]], list[tuple[int, ImportRow]]]:
        """``writes`` parted into the rows of keys ``stored`` lacks and those of keys it holds, in order.

        >>> row = ImportRow.of(Binding("uuid", "k", "k", "https://e.org/"))
        >>> SqlStore._new_and_known([(1, row)], {})
        ([(1, ImportRow(('uuid', 'k', 'k', 'https://e.org/', ...)))], [])
        """
        new: list[tuple[int, ImportRow]] = []
        known: list[tuple[int, ImportRow]] = []
        for write in writes:
            (known if (write[1].kind, write[1].key) in stored else new).append(write)
        return new, known

    def _import_refused(self, cur: Cursor, writes: Sequence[tuple[int, ImportRow]], *, fresh: bool) -> None:
        """Raise :class:`ImportRejectedError` naming the lines among ``writes`` that a statement of
        :meth:`_import_write` did not write: with ``fresh`` (the plain insert), a key another writer bound
        since the lookup (the store now holds another row than the line's); otherwise a key tombstoned by
        another writer since the lookup."""
        problems: list[tuple[int, str]] = []
        if fresh:
            for number, row in writes:
                there = self._current(cur, row.kind, row.key)
                if there is not None and binding_values(there) != row.values:
                    problems.append((number, f"{row.key} was bound by another writer during the import; "
                                             "nothing imported: import again (the line then updates it)"))
        else:
            for number, row in writes:
                found_rows = self._statuses(cur, row.kind, [row.key])
                if found_rows and found_rows[0][1] == "tombstoned" and row.status != "tombstoned":
                    problems.append((number, f"{row.key} was tombstoned meanwhile; not rebound"))
        raise ImportRejectedError(problems or [(writes[0][0], "bindings changed during the import")])

    # -- dump and restore -----------------------------------------------------------------------------
    def _dump_reader(self) -> AbstractContextManager[_Query]:
        """A function that runs one query (its parameters) and streams its rows, every query reading one
        snapshot."""
        return self._plain_dump_reader()

    @contextmanager
    def _plain_dump_reader(self) -> Iterator[_Query]:
        with self._transaction(write=False) as cur:

            def query(sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
                self._exec(cur, sql, params)
                while rows := cur.fetchmany(_CHUNK):
                    yield from rows

            yield query

    def dump(self, fp: IO[str]) -> Mapping[str, int]:
        """Everything, as a dump (see :meth:`Store.dump`)."""
        with self._dump_reader() as query:
            counts = {t.name: int(next(query(f"SELECT COUNT(*) FROM {t.name}"))[0]) for t in TABLES}
            schema = int(next(query("SELECT MAX(version) FROM schema_version"))[0])
            fp.write(header_line(DumpHeader(self.backend, schema, counts)))
            for table in TABLES:
                sql = f"SELECT {', '.join(table.columns)} FROM {table.name} ORDER BY {', '.join(table.order)}"
                for values in query(sql):
                    fp.write(row_line(table, values))
        return counts

    def _insert_rows(self, cur: Cursor, table: Table, rows: Sequence[tuple[Any, ...]], merge: bool) -> int:
        """Insert ``rows`` into ``table``; with ``merge`` a row whose key is there already is skipped.
        Return how many were inserted."""
        marks = ", ".join("?" * len(table.columns))
        sql = f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES ({marks})"
        if merge:
            sql += " ON CONFLICT DO NOTHING"
        cur.executemany(self._q(sql), rows)
        return max(cur.rowcount, 0)  # the sum over the rows (DB-API drivers here): a merge's skips excluded

    def _insert_new_bindings(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[Any, ...]]
    ) -> list[tuple[str, str]]:
        """Insert the ``bindings`` rows whose key is free (``ON CONFLICT DO NOTHING``, row by row
        atomic) and return the ``(kind, key)`` of each row inserted: the others' keys the store binds.
        One multi-row statement per :data:`_MAX_PARAMETERS` values, on both backends (SQLite's
        ``executemany`` drops what ``RETURNING`` returns; on PostgreSQL a pipelined ``executemany``
        returning each row's key took 1.3 times as long)."""
        row_marks = f"({', '.join('?' * len(table.columns))})"
        per = max(1, _MAX_PARAMETERS // len(table.columns))
        inserted: list[tuple[str, str]] = []
        for start in range(0, len(rows), per):
            part = rows[start:start + per]
            sql = (f"INSERT INTO bindings ({', '.join(table.columns)}) VALUES "
                   f"{', '.join([row_marks] * len(part))} ON CONFLICT DO NOTHING RETURNING kind, key")
            cur.execute(self._q(sql), [v for values in part for v in values])
            inserted += [(kind, key) for kind, key in cur.fetchall()]
        return inserted

    def restore(
        self, lines: Iterable[str], *, merge: bool = False, principal: Principal | None = None
    ) -> RestoreReport:
        """Restore a dump (see :meth:`Store.restore`)."""
        numbered = enumerate(lines, 1)
        first = next(numbered, None)
        if first is None:
            raise StoreError("empty dump: no header line", line=1)
        header = parse_header(first[1])
        check_readable(header, self.schema_version())
        order = {t.name: i for i, t in enumerate(TABLES)}
        restored = dict.fromkeys(order, 0)
        seen = dict.fromkeys(order, 0)
        with self._transaction(write=True) as cur, ExitStack() as bulk:
            self._lock_schema(cur)

            def refuse_unless_empty() -> None:
                for table in TABLES:
                    if not self._is_empty(cur, table.name):
                        raise StoreError(
                            f"the store is not empty (table {table.name} has rows): restore into an empty "
                            "store, or merge (rows already there are kept)"
                        )

            if merge:
                self._lock_many_naans(cur)
                self._hold_mints(cur)
                bulk.enter_context(self._bulk_insert(cur))
                self._temp_table(cur, _MERGED, "kind TEXT NOT NULL, key TEXT NOT NULL, "
                                 "line INTEGER NOT NULL, kept INTEGER NOT NULL, PRIMARY KEY (kind, key)")
            else:
                refuse_unless_empty()  # before the load locks the tables: a store in use is refused at once
                bulk.enter_context(self._load_empty(cur, _ALL_TABLES))
                refuse_unless_empty()  # and once the load holds them (PostgreSQL): none came in between
            current: Table | None = None
            merging = _Merging(str(principal or local_principal()))
            rows = read_rows(numbered, header.schema)
            row = next(rows, None)
            while row is not None:
                number, name, _ = row
                table = TABLES[order[name]]
                if current is not None and order[name] <= order[current.name]:
                    raise StoreError(
                        f"{name} rows after {current.name} rows: a dump lists each table once, "
                        "in the order pidkit writes them", line=number
                    )
                current, follow = table, _TableRows(row, rows)
                restored[name] += self._restore_table(cur, table, follow, merge, merging)
                seen[name], row = follow.count, follow.next_row
            wrong = [f"{t}: {seen[t]} of {n}" for t, n in header.counts.items() if seen.get(t, 0) != n]
            wrong += [f"{t}: {n}, not in the header" for t, n in seen.items() if n and t not in header.counts]
            if wrong:
                problems = "; ".join(wrong)
                raise StoreError(f"rows and header disagree (dump cut short?): {problems}; nothing restored")
            skipped = {t: seen[t] - restored[t] for t in seen}
            if merge:
                restored["history"] += self._record_merged(cur, merging.who)
                self._drop_temp_table(cur, _MERGED)
            else:
                restored["history"] += self._adopt(cur)
        return RestoreReport(restored, skipped)

    @contextmanager
    def _bulk_insert(self, cur: Cursor) -> Iterator[None]:
        """Around many bindings inserted (and updated, never deleted) in the transaction of ``cur`` (a
        restore, a big import): what keeps an index of the backend's in step may do it once at the end
        instead of row by row (SQLite's full-text index,
        :meth:`~pidkit.store.sqlite.SqliteStore._bulk_insert`); here, nothing."""
        yield

    def _is_empty(self, cur: Cursor, table: str) -> bool:
        """Whether the table ``table`` has no row, in ``cur``'s transaction."""
        self._exec(cur, f"SELECT 1 FROM {table} LIMIT 1")
        return cur.fetchone() is None

    def _load_empty(self, cur: Cursor, tables: Sequence[str]) -> AbstractContextManager[None]:
        """Around many rows loaded into ``tables`` in ``cur``'s transaction, in a store found without
        bindings (a restore into an empty store; a big import into a store without bindings):
        :meth:`_bulk_insert`, or what loads such tables faster still (PostgreSQL builds the secondary
        indexes of ``tables`` after the rows, if the store still has no bindings once it holds them)."""
        return self._bulk_insert(cur)

    def _adopt(self, cur: Cursor) -> int:
        """Give every binding without history one ``adopt`` row (principal ``system:restore``), as
        migration 3 does for the bindings of an older store: a dump of an older schema has none.  Its id
        is a TID of now, when the binding reached this store (the time a harvester sees,
        :meth:`list_recorded`).  A dump of a consistent store has history for every binding, so its
        restore adds nothing (round trips stay exact).  The bindings without history are found in one
        statement (into a temporary table), then given their rows a chunk at a time; returns the rows
        added."""
        self._temp_table(cur, _ADOPTED, "kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (kind, key)")
        without = "NOT EXISTS (SELECT 1 FROM history h WHERE h.kind = b.kind AND h.key = b.key)"
        self._exec(cur, f"INSERT INTO {_ADOPTED} SELECT b.kind, b.key FROM bindings b WHERE {without}")
        stamp, added = now(), 0
        for part in self._keyset_chunks(cur, f"SELECT kind, key FROM {_ADOPTED} a", "a"):
            ids = history_ids(len(part))
            self._insert_history(cur, [(hid, stamp, "system:restore", "adopt", kind, key, None, None)
                                       for hid, (kind, key) in zip(ids, part, strict=True)])  # fmt: skip
            added += len(part)
        self._drop_temp_table(cur, _ADOPTED)
        return added

    def _keyset_chunks(self, cur: Cursor, select: str, alias: str) -> Iterator[list[Any]]:
        """The rows of ``select`` (a ``SELECT … FROM`` a table aliased ``alias`` keyed by ``kind`` and
        ``key``, its first two columns those), :data:`_CHUNK` at a time in key order, each chunk read
        past the last one's key (a range of the key's index, whatever was written meanwhile)."""
        last: tuple[str, str] | None = None
        while True:
            where = "" if last is None else f" WHERE ({alias}.kind, {alias}.key) > (?, ?)"
            self._exec(cur, f"{select}{where} ORDER BY {alias}.kind, {alias}.key LIMIT ?",
                       [*(last or ()), _CHUNK])  # fmt: skip
            rows = cur.fetchall()
            if not rows:
                return
            yield rows
            last = (rows[-1][0], rows[-1][1])

    def _record_merged(self, cur: Cursor, who: str) -> int:
        """Write a ``merge`` history row by ``who`` for each binding the merge added (:data:`_MERGED`,
        not kept), its ``after`` the binding as it came in.  Once the merge wrote everything else, so
        that its time is as near its commit as can be: a harvester that read past the time before the
        commit would miss the binding.  A chunk at a time; returns the rows written."""
        stamp, added = now(), 0
        columns = ", ".join(f"b.{c}" for c in BINDING_COLUMNS)
        select = (f"SELECT {columns} FROM {_MERGED} m JOIN bindings b ON b.kind = m.kind AND b.key = m.key "
                  "AND m.kept = 0")  # fmt: skip
        for rows in self._keyset_chunks(cur, select, "m"):
            ids = history_ids(len(rows))
            self._insert_history(cur, [
                (hid, stamp, who, "merge", row[0], row[1], None, created_history_json(row))
                for hid, row in zip(ids, rows, strict=True)
            ])  # fmt: skip
            added += len(rows)
        return added

    def _restore_table(
        self, cur: Cursor, table: Table, rows: Iterator[tuple[int, tuple[Any, ...]]], merge: bool,
        merging: _Merging,
    ) -> int:
        """Insert one table's rows of a dump (``(line number, values)``, read as they are needed) in
        chunks of :meth:`_restore_chunk`; return how many were inserted.

        A merge writes beside other writers: before a chunk of holds or ARK bindings is checked, it
        takes the lock of each NAAN they are under (:meth:`_lock_naan`, as a bind, a hold or an import
        does; ``merging.locked``: those it holds already), so a bind or hold under that NAAN that committed
        first is seen by the check, and one that comes after waits for the restore's commit and then sees
        its rows.  A restore into an empty store holds the tables themselves (:meth:`_load_empty`)."""
        inserted, held = 0, self._may_be_held(cur, table)
        while chunk := list(itertools.islice(rows, _CHUNK)):
            if merge and (naans := _ark_naans(table, chunk) - merging.locked):
                for naan in sorted(naans):
                    self._lock_naan(cur, naan)  # in one order within a chunk
                merging.locked.update(naans)
                held = self._may_be_held(cur, table)  # read again under the locks: a hold just committed
            if merge and table.name == "bindings":
                inserted += self._merge_bindings(cur, table, chunk, merging, held=held)
                continue
            if merge and table.name in _OF_A_BINDING:
                chunk = self._not_of_kept(cur, table, chunk)
            inserted += self._restore_chunk(cur, table, chunk, merge, held=held)
        return inserted

    def _merge_bindings(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]], merging: _Merging, *,
        held: bool,
    ) -> int:
        """Merge a chunk of a dump's ``bindings`` rows: a key the store binds already keeps the store's
        binding.  Every key of the dump is remembered in the temporary table :data:`_MERGED` with its line
        and whether the store kept its own binding (:meth:`_not_of_kept` reads it), and a key the dump
        binds twice is refused naming both lines (as a restore into an empty store refuses it).  Which
        keys the store kept is what the insert itself reports (:meth:`_insert_new_bindings`), never a
        read made before it: a key another writer binds or deletes meanwhile is kept or merged as the
        insert finds it, and its history follows the binding the store ends up with.  (Each binding
        added gets its ``merge`` history row at the merge's end: :meth:`_record_merged`.)"""
        kind_at, key_at = table.columns.index("kind"), table.columns.index("key")
        by_kind: dict[str, dict[str, int]] = {}
        for number, values in rows:
            first = by_kind.setdefault(values[kind_at], {}).setdefault(values[key_at], number)
            if first != number:
                raise StoreError(f"bindings row refused: {values[key_at]} is bound on line {first} too",
                                 line=number)  # fmt: skip
        repeated = sorted((keys[key], key, earlier) for kind, keys in by_kind.items()
                          for key, earlier, _ in self._merged_among(cur, kind, list(keys)))  # fmt: skip
        if repeated:
            number, key, earlier = repeated[0]
            raise StoreError(f"bindings row refused: {key} is bound on line {earlier} too", line=number)
        new = set(self._restore_chunk_by(cur, table, rows, self._insert_new_bindings, held=held))
        cur.executemany(
            self._q(f"INSERT INTO {_MERGED} (kind, key, line, kept) VALUES (?, ?, ?, ?)"),
            [(kind, key, number, int((kind, key) not in new)) for kind, keys in by_kind.items()
             for key, number in keys.items()],
        )  # fmt: skip
        return len(new)

    def _not_of_kept(
        self, cur: Cursor, table: Table, rows: list[tuple[int, tuple[Any, ...]]]
    ) -> list[tuple[int, tuple[Any, ...]]]:
        """The rows of a chunk of history or overrides (rows naming a binding by ``kind`` and ``key``) but
        those of an id the store bound before the merge (its binding is kept: the dump's rows tell of
        another binding, or of one the other store deleted): a key of the dump's bindings the merge kept
        (:meth:`_merge_bindings`), or a key the dump does not bind and the store does."""
        kind_at, key_at = table.columns.index("kind"), table.columns.index("key")
        by_kind: dict[str, set[str]] = {}
        for _, values in rows:
            by_kind.setdefault(values[kind_at], set()).add(values[key_at])
        kept: set[tuple[str, str]] = set()
        for kind, keys in by_kind.items():
            merged = {key: was_kept for key, _, was_kept in self._merged_among(cur, kind, sorted(keys))}
            kept.update((kind, key) for key, was_kept in merged.items() if was_kept)
            others = sorted(keys - set(merged))
            kept.update((kind, key) for key in (self._bound_among(cur, kind, others) if others else ()))
        if not kept:
            return rows
        return [(number, values) for number, values in rows if (values[kind_at], values[key_at]) not in kept]

    def _temp_table(self, cur: Cursor, name: str, columns: str) -> None:
        """An empty temporary table ``name`` of ``columns`` for the rest of ``cur``'s transaction, until
        :meth:`_drop_temp_table` (SQLite: the store's one writer connection)."""
        self._exec(cur, f"DROP TABLE IF EXISTS temp.{name}")
        self._exec(cur, f"CREATE TEMP TABLE {name} ({columns})")

    def _drop_temp_table(self, cur: Cursor, name: str) -> None:
        """Drop the temporary table ``name`` (:meth:`_temp_table`), in ``cur``'s transaction."""
        self._exec(cur, f"DROP TABLE IF EXISTS temp.{name}")

    def _keys_among(self, cur: Cursor, table: str, columns: str, kind: str, keys: Sequence[str]) -> list[Any]:
        """``columns`` of the rows of ``table`` (keyed by ``kind`` and ``key``) whose key is among ``keys``
        (of ``kind``), read without locking them."""
        marks = ", ".join("?" * len(keys))
        self._exec(cur, f"SELECT {columns} FROM {table} WHERE kind = ? AND key IN ({marks})", [kind, *keys])
        return cur.fetchall()

    def _merged_among(self, cur: Cursor, kind: str, keys: Sequence[str]) -> list[Any]:
        """``(key, line, kept)`` of the keys among ``keys`` (of ``kind``) that the merge's dump bound before
        (:data:`_MERGED`)."""
        return self._keys_among(cur, _MERGED, "key, line, kept", kind, keys)

    def _bound_among(self, cur: Cursor, kind: str, keys: Sequence[str]) -> list[str]:
        """The keys among ``keys`` (of ``kind``) the store binds, read without locking them."""
        return [row[0] for row in self._keys_among(cur, "bindings", "key", kind, keys)]

    def _may_be_held(self, cur: Cursor, table: Table) -> bool:
        """Whether :meth:`_refuse_held_published` may refuse rows of ``table`` restored now: ``bindings`` rows
        only while the store holds some id (a dump's holds are restored before its bindings)."""
        if table.name != "bindings":
            return True
        self._exec(cur, "SELECT 1 FROM holds LIMIT 1")
        return cur.fetchone() is not None

    def _restore_chunk(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]], merge: bool, *,
        held: bool = True,
    ) -> int:
        """Insert a chunk of dump rows (``(line number, values)``) with :meth:`_insert_rows` (see
        :meth:`_restore_chunk_by`); return how many were inserted."""
        def insert(cur: Cursor, table: Table, values: Sequence[tuple[Any, ...]]) -> int:
            return self._insert_rows(cur, table, values, merge)

        return self._restore_chunk_by(cur, table, rows, insert, held=held)

    def _restore_chunk_by(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]],
        insert: Callable[[Cursor, Table, Sequence[tuple[Any, ...]]], _Inserted], *, held: bool = True,
    ) -> _Inserted:
        """Insert a chunk of dump rows (``(line number, values)``) with ``insert`` and return what it
        returns; a row the database refuses (a duplicate key, a broken reference, a check) is found
        again row by row to name its line.  With ``held`` (:meth:`_may_be_held`) the rows are then
        checked by :meth:`_refuse_held_published`."""
        self._exec(cur, "SAVEPOINT pidkit_restore")
        try:
            inserted = insert(cur, table, [values for _, values in rows])
        except self._db_errors:
            self._exec(cur, "ROLLBACK TO SAVEPOINT pidkit_restore")
            for number, values in rows:  # the whole transaction is rolled back after the first failure
                try:
                    insert(cur, table, [values])
                except self._db_errors as exc:
                    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise StoreError(f"{table.name} row refused: {said}", line=number) from None
            raise  # pragma: no cover - every row alone went in, so the chunk should have too
        self._exec(cur, "RELEASE SAVEPOINT pidkit_restore")
        if held:
            self._refuse_held_published(cur, table, rows)
        return inserted

    def _refuse_held_published(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]]
    ) -> None:
        """Refuse a restored chunk (:class:`~pidkit.errors.StoreError` naming the first line; the restore's
        transaction is rolled back) whose rows would leave a held ARK bound published (public, unavailable
        or tombstoned) — a hold means "never given out", a published binding that it was
        (:meth:`Store.check`'s rule; :meth:`bind`, :meth:`tombstone`, :meth:`add_hold` and an import
        refuse it too).
        ``bindings`` rows are checked against the holds (the dump's, restored before them, and the
        store's), ``holds`` rows against the store's bindings (a merge)."""
        found: list[tuple[int, str]] = []
        if table.name == "bindings":
            kind, key, status, naan = (table.columns.index(c) for c in ("kind", "key", "status", "naan"))
            by_naan: dict[str, list[tuple[int, str]]] = {}
            for number, v in rows:
                if v[kind] == "ark" and published(v[status]) and v[naan] is not None:
                    by_naan.setdefault(v[naan], []).append((number, v[key]))
            for ark_naan, wanted in by_naan.items():
                for number, ark, held in self._held_among(cur, ark_naan, wanted):
                    stored = self._published_status(cur, ark)  # a merge keeps a binding already there
                    if stored is not None:
                        found.append((number, f"{ark} {_held_refusal(stored, _other(held, ark))}"))
        elif table.name == "holds":
            naan, ident = table.columns.index("naan"), table.columns.index("id")
            by_id: dict[str, dict[str, int]] = {}
            for number, v in rows:
                by_id.setdefault(v[naan], {}).setdefault(v[ident], number)
            for held_naan, ids in by_id.items():
                for blade in self._taken_in(cur, held_naan, list(ids), ["published"]):
                    bound = self._published_at_or_under(cur, held_naan, blade)
                    assert bound is not None  # read in the same transaction
                    found.append((ids[blade], _cannot_hold(f"ark:{held_naan}/{blade}", *bound)))
        if found:
            number, why = min(found)
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise StoreError(f"{table.name} row refused: {why}{more}; nothing restored", line=number)

    def _published_status(self, cur: Cursor, key: str) -> str | None:
        """The status of the store's ARK binding ``key`` if it is published now, else ``None``."""
        self._exec(cur, "SELECT status FROM bindings WHERE kind = 'ark' AND key = ? AND status <> ?",
                   (key, UNPUBLISHED))  # fmt: skip
        row = cur.fetchone()
        return None if row is None else str(row[0])

    # -- integrity ----------------------------------------------------------------------------------
    def check(self, *, limit: int = 1000) -> list[str]:
        """Problems with the store's integrity (none: ``[]``), from one consistent snapshot — see
        :meth:`Store.check`; at most ``limit`` are listed, then how many more there were."""
        problems: list[str] = []
        with self._dump_reader() as query:
            sql = ("SELECT m.name, m.counter, COUNT(d.id), MAX(d.position) FROM minters m "
                   "LEFT JOIN minted d ON d.minter = m.name GROUP BY m.name, m.counter ORDER BY m.name")
            for name, counter, count, top in query(sql):
                if top is not None and int(top) >= int(counter):
                    problems.append(f"minter {name}: counter {counter}, but position {top} is in its "
                                    "minted log (the counter must be past every position minted)")
                if int(count) > int(counter):
                    problems.append(f"minter {name}: {count} ids minted, more than its counter {counter}")
            sql = ("SELECT d.minter, COUNT(*) FROM minted d LEFT JOIN minters m ON m.name = d.minter "
                   "WHERE m.name IS NULL GROUP BY d.minter ORDER BY d.minter")
            for minter, count in query(sql):
                if str(minter).startswith(IMPORTED):
                    continue  # issued by the system an import came from
                problems.append(f"minted log: {count} ids of minter {minter}, which does not exist")
            held, bkey = "('ark:' || h.naan || '/' || h.id)", f"b.key{self._code_point_order}"
            # From each hold, one range of the bindings' keys (CROSS JOIN: SQLite keeps that order).  The
            # few rows are sorted here: ordered by the server, PostgreSQL's cursor (planned to start fast)
            # walked every binding in key order instead, 100 times slower.
            sql = (f"SELECT b.key, b.status, {held} FROM holds h CROSS JOIN bindings b WHERE b.kind = 'ark' "
                   f"AND b.naan = h.naan AND {bkey} >= {held} AND {bkey} < {held} || '{QUALIFIED_HIGH}' "
                   f"AND (b.key = {held} OR {bkey} >= {held} || '{QUALIFIED_LOW}') "
                   f"AND b.status <> '{UNPUBLISHED}'")
            for key, status, held_key in sorted(query(sql)):
                problems.append(f"binding {key}: {status}, but " + (
                    "its id is held" if key == held_key else f"it qualifies {held_key}, which is held"))
            # Reserved again after it was published (an earlier build allowed it), by a change this store
            # made or a dump restored: it answers 404 where it answered before.  A few rows, sorted here.
            sql = ("SELECT b.kind, b.key FROM bindings b WHERE b.status = ? AND EXISTS (SELECT 1 FROM "
                   "history h WHERE h.kind = b.kind AND h.key = b.key AND h.after LIKE ? AND "
                   f"{_shows_published('h.before')})")
            reserved = f'%"status":"{UNPUBLISHED}"%'
            for kind, key in sorted(query(sql, (UNPUBLISHED, reserved, *_PUBLISHED_MARKS))):
                problems.append(f"binding {kind} {key}: reserved again after it was published (it answers "
                                "404 where it answered before: make it public again, or unavailable with a "
                                "reason)")
            for key_id, digest in query("SELECT key_id, secret_hash FROM api_keys ORDER BY key_id"):
                if not _HASH.fullmatch(str(digest)):
                    problems.append(f"API key {key_id}: secret_hash is not a SHA-256 hex digest")
            sql = ("SELECT b.kind, b.key FROM bindings b WHERE NOT EXISTS (SELECT 1 FROM history h "
                   "WHERE h.kind = b.kind AND h.key = b.key) ORDER BY b.kind, b.key")
            for kind, key in query(sql):
                problems.append(f"binding {kind} {key}: no history")
            sql = ("SELECT kind, key, status FROM bindings WHERE (status = 'unavailable' AND "
                   "(reason IS NULL OR reason = '')) OR (status = 'tombstoned' AND (tombstone_reason IS NULL "
                   "OR tombstoned_at IS NULL)) OR (status = 'public' AND target IS NULL) ORDER BY kind, key")
            for kind, key, status in query(sql):
                problems.append(f"binding {kind} {key}: status {status} without its "
                                + ("target" if status == "public" else "reason"))
            # An ARK's NAAN and shoulder columns are read from its key (a list by NAAN and shoulder relies
            # on it: list_recorded passes over the rows of keys outside the prefix); a dump may say else.
            prefix = "'ark:' || naan || '/'"
            sql = (f"SELECT key, naan, shoulder FROM bindings WHERE kind = 'ark' AND (naan IS NULL OR "
                   f"substr(key, 1, length({prefix})) <> {prefix} OR (shoulder IS NOT NULL AND "
                   f"substr(key, length({prefix}) + 1, length(shoulder)) <> shoulder)) "
                   "ORDER BY key")  # fmt: skip
            for key, naan, shoulder in query(sql):
                problems.append(f"binding ark {key}: NAAN {naan!r} and shoulder {shoulder!r}, not its key's")
            sql = "SELECT kind, key, extra FROM bindings WHERE extra <> '{}' ORDER BY kind, key"
            for kind, key, extra in query(sql):
                try:
                    for name, _ in extra_from_text(str(extra)):
                        check_extra_name(name)
                except (PidkitError, ValueError) as exc:
                    problems.append(f"binding {kind} {key}: extra metadata: {exc}")
            problems += self._account_problems(query)
        if len(problems) > limit:
            problems[limit:] = [f"… and {len(problems) - limit} more"]
        return problems

    # -- API keys -----------------------------------------------------------------------------------
    def create_api_key(
        self, naan: str, shoulder: str | None = None, *, label: str = "", principal: Principal | None = None,
        owner: str | None = None,
    ) -> tuple[ApiKey, str]:
        """Create a scoped API key; return it and its secret (shown once)."""
        check_naan(naan)
        if shoulder is not None:
            check_shoulder(shoulder)
        key_id = secrets.token_hex(_KEY_ID_BYTES)
        secret = f"pk_{key_id}_{secrets.token_urlsafe(_SECRET_BYTES)}"
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                f"INSERT INTO api_keys (secret_hash, {API_KEY_COLS}) VALUES (?, ?, ?, ?, ?, ?, NULL, ?) "
                f"RETURNING {API_KEY_COLS}",
                (_hash_secret(secret), key_id, naan, shoulder, label, now(), owner),
            )
            key = api_key_from_row(cur.fetchone())
            after = {"naan": naan, "shoulder": shoulder, "label": label}
            self._record(cur, principal, "apikey.create", "api_key", key_id, None,
                         after if owner is None else {**after, "owner": owner})
            return key, secret

    def verify_api_key(self, secret: str) -> ApiKey | None:
        """The live key for ``secret``, or ``None``.  A key a user made lives only while its maker
        does: not once the user is disabled (or gone), nor past the user's present scope (an
        administrator narrowed it) — the key's scope never reaches past its maker's."""
        match = _SECRET.fullmatch(secret)
        if match is None:
            return None
        with self._transaction(write=False) as cur:
            self._exec(
                cur, f"SELECT secret_hash, {API_KEY_COLS} FROM api_keys WHERE key_id = ?", (match[1],)
            )
            row = cur.fetchone()
            if row is None or not hmac.compare_digest(str(row[0]), _hash_secret(secret)):
                return None
            key = api_key_from_row(row[1:])
            if key.revoked:
                return None
            if key.owner is None:
                return key  # made by a local command: no maker to outlive
            self._exec(cur, f"SELECT {USER_COLS} FROM users WHERE name = ?", (key.owner,))
            maker = cur.fetchone()
        user = user_from_row(maker) if maker is not None else None
        if user is None or not user.active or not user.scope.allows(key.naan, key.shoulder):
            return None
        return key

    def revoke_api_key(self, key_id: str, *, principal: Principal | None = None) -> ApiKey:
        """Revoke a key (idempotent)."""
        stamp = now()
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ? "
                f"RETURNING {API_KEY_COLS}",
                (stamp, key_id),
            )
            row = cur.fetchone()
            if row is None:
                raise NotFoundError("unknown API key", text=key_id)
            key = api_key_from_row(row)
            if stored_time(key.revoked_at) == stamp:
                self._record(cur, principal, "apikey.revoke", "api_key", key_id, {"revoked_at": None},
                             {"revoked_at": stamp}, stamp)
        return key

    def list_api_keys(self) -> list[ApiKey]:
        """Every key record."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {API_KEY_COLS} FROM api_keys ORDER BY created, key_id")
            return [api_key_from_row(row) for row in cur.fetchall()]
