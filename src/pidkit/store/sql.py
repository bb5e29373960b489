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
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any, Final, Protocol

from ..codecs import iso_z
from ..errors import ConflictError, ExhaustedError, NotFoundError, PidkitError, StoreError
from . import keys, migrations
from .base import (
    DEFAULT_BATCH,
    KINDS,
    ApiKey,
    Binding,
    Erc,
    ErcChange,
    ImportRejectedError,
    ImportReport,
    MinterInfo,
    Naan,
    NotOwnerError,
    Override,
    Resolution,
    RestoreReport,
    Status,
    Store,
    check_text,
    erc_changes,
    validate_target,
)
from .dump import DumpHeader, header_line, parse_header, parse_row, row_line
from .jsonl import ImportRow, binding_line, parse_import_line
from .rows import (
    API_KEY_COLS,
    BINDING_COLS,
    BINDING_PARAMS,
    IMPORT_SETS,
    MINTER_COLS,
    TABLES,
    Table,
    api_key_from_row,
    binding_from_row,
    binding_values,
    minter_from_row,
    stored_time,
    time_from_stored,
)

#: Version of the schema this code expects (the highest migration shipped).
_SCHEMA_VERSION_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)"
)


#: Secret format: ``pk_<keyid>_<random>``; key id 16 hex digits, random 32 bytes (base64url).
_KEY_ID_BYTES: Final = 8
_SECRET_BYTES: Final = 32
_SECRET = re.compile(r"pk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")

#: Keys per lookup statement (imports, ``resolve_many``) and rows per ``executemany`` when importing.
_CHUNK: Final = 1000

#: Retries of a mint batch that lost a race on the ``minted`` key to another minter (PostgreSQL).
_MINT_RETRIES: Final = 5


class Cursor(Protocol):
    """The DB-API cursor subset the store uses."""

    @property
    def rowcount(self) -> int: ...  # pragma: no cover - protocol

    def execute(self, query: Any, params: Any = ..., /) -> Any: ...  # pragma: no cover - protocol

    def fetchone(self) -> Any: ...  # pragma: no cover - protocol

    def fetchall(self) -> list[Any]: ...  # pragma: no cover - protocol

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...  # pragma: no cover - protocol

    def executemany(self, query: Any, params_seq: Any, /) -> Any: ...  # pragma: no cover - protocol


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


def _resolution(ark: str, k: keys.ArkKey, found: Mapping[str, Binding]) -> Resolution | None:
    """The store's resolution rule for ``ark`` (key ``k``) among the bindings ``found`` by key: the exact
    binding, else the longest bound public ancestor that allows passthrough, with the rest as suffix."""
    exact = found.get(k.key)
    if exact is not None:
        return Resolution(exact)
    for ancestor in k.ancestors:
        b = found.get(ancestor)
        if b is not None and b.passthrough and b.status == "public" and k.key.startswith(ancestor):
            return Resolution(b, keys.passthrough_suffix(ark, k.naan, k.key[len(ancestor) :]))
    return None


def _hash_secret(secret: str) -> str:
    """SHA-256 of a high-entropy secret (no stretching needed: it is 256 random bits)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SqlStore(Store):
    """The shared SQL implementation; subclasses provide the connection handling."""

    def __init__(self) -> None:
        self._makers: dict[tuple[str, str, int], keys.IdMaker] = {}

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
        """Serialize migrations across processes inside the current transaction."""

    @abc.abstractmethod
    def _taken(self, cur: Cursor, naan: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are held, minted or bound (as ``ark:NAAN/id``) under ``naan``."""

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
        """Apply the migrations this database lacks, each in its own locked transaction."""
        for migration in migrations.load():
            with self._transaction(write=True) as cur:
                self._lock_migrations(cur)
                self._exec(cur, _SCHEMA_VERSION_DDL)
                self._exec(cur, "SELECT 1 FROM schema_version WHERE version = ?", (migration.version,))
                if cur.fetchone() is not None:
                    continue
                for statement in migration.statements:
                    self._exec(cur, statement)
                self._exec(
                    cur,
                    "INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)",
                    (migration.version, migration.name, now()),
                )

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

    def _add_shoulder(self, cur: Cursor, naan: str, shoulder: str) -> None:
        self._exec(
            cur,
            "INSERT INTO shoulders (naan, shoulder, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (naan, keys.check_shoulder(shoulder), now()),
        )

    def add_naan(self, naan: str, name: str = "", *, shoulders: Iterable[str] = ()) -> Naan:
        """Register a NAAN with its shoulders."""
        keys.check_naan(naan)
        wanted = [keys.check_shoulder(s) for s in shoulders]
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "INSERT INTO naans (naan, name, created) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING RETURNING naan",
                (naan, name, now()),
            )
            if cur.fetchone() is None:
                raise ConflictError("NAAN already registered", text=naan)
            for shoulder in wanted:
                self._add_shoulder(cur, naan, shoulder)
            return self._naan(cur, naan)

    def add_shoulder(self, naan: str, shoulder: str) -> Naan:
        """Add a shoulder to a registered NAAN."""
        with self._transaction(write=True) as cur:
            self._naan(cur, naan)
            self._add_shoulder(cur, naan, shoulder)
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

    # -- minters ------------------------------------------------------------------------------------
    def create_minter(self, name: str, *, naan: str, template: str, seed: int | None = None) -> MinterInfo:
        """Create a named minter."""
        if not name.strip() or name != name.strip():
            raise StoreError("a minter name must be non-empty without surrounding spaces", text=name)
        prefix = keys.template_prefix(template)
        if seed is None:
            seed = secrets.randbits(63)  # fits a signed BIGINT
        with self._transaction(write=True) as cur:
            self._naan(cur, naan)
            if prefix:
                self._add_shoulder(cur, naan, prefix)
            self._exec(
                cur,
                f"INSERT INTO minters ({MINTER_COLS}) VALUES (?, ?, ?, ?, 0, ?) "
                f"ON CONFLICT DO NOTHING RETURNING {MINTER_COLS}",
                (name, naan, template, seed, now()),
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("a minter with this name exists", text=name)
            return minter_from_row(row)

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

    def _maker(self, info: MinterInfo) -> keys.IdMaker:
        key = (info.template, info.naan, info.seed)
        maker = self._makers.get(key)
        if maker is None:
            maker = self._makers[key] = keys.make_minter(info.template, info.naan, info.seed)
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

    def _mint_batch(self, name: str, size: int) -> list[str]:
        """One transaction: reserve positions, skip taken ids, record ``size`` minted ids."""
        with self._transaction(write=True) as cur:
            chosen: list[tuple[str, str, str, int, str]] = []
            need = size
            stamp = now()
            info: MinterInfo | None = None
            while need:
                info, start = self._reserve(cur, name, need)
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
                    chosen.append((info.naan, blade, name, pos, stamp))
                need = size - len(chosen)
            if info is None:
                return []
            self._insert_minted(cur, chosen)
            naan = info.naan
            return [f"ark:{naan}/{row[1]}" for row in chosen]

    def mint_batches(self, minter: str, n: int, *, batch_size: int = DEFAULT_BATCH) -> Iterator[list[str]]:
        """Mint ``n`` ids, one transaction per batch."""
        if n < 0:
            raise StoreError(f"cannot mint a negative number of ids ({n})")
        if batch_size < 1:
            raise StoreError(f"batch size must be positive ({batch_size})")
        self.get_minter(minter)  # unknown minter: fail before yielding anything
        left = n
        while left > 0:
            size = min(batch_size, left)
            batch = self._mint_with_retry(minter, size)
            left -= size
            yield batch

    def _mint_with_retry(self, minter: str, size: int) -> list[str]:
        for attempt in range(_MINT_RETRIES):
            try:
                return self._mint_batch(minter, size)
            except self._unique_errors:
                if attempt == _MINT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def add_hold(self, minter_or_naan: str, *ids: str) -> int:
        """Hold ids so they are never minted."""
        with self._transaction(write=True) as cur:
            self._exec(cur, "SELECT naan FROM minters WHERE name = ?", (minter_or_naan,))
            row = cur.fetchone()
            naan = str(row[0]) if row is not None else self._naan(cur, minter_or_naan).naan
            self._lock_naan(cur, naan)
            added = 0
            stamp = now()
            for text in ids:
                blade = keys.blade(naan, text)
                self._exec(
                    cur,
                    "INSERT INTO holds (naan, id, created) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING RETURNING id",
                    (naan, blade, stamp),
                )
                if cur.fetchone() is not None:
                    added += 1
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

    # -- bindings -----------------------------------------------------------------------------------
    def _bind(
        self,
        kind: str,
        key: str,
        text: str,
        target: str | None,
        *,
        erc: ErcChange | None,
        support: ErcChange | None,
        passthrough: bool | None,
        status: Status | None,
        naan: str | None,
        shoulder: str | None,
        force: bool = False,
    ) -> Binding:
        """Insert or partially update one binding (see :meth:`Store.bind`): the upsert sets only the
        columns the change names, inside the write transaction, so concurrent changes of other
        fields are never lost."""
        if status is not None and status not in ("public", "reserved"):
            raise StoreError("bind sets status public or reserved (use tombstone to withdraw)", text=status)
        if target:
            validate_target(target)
        erc_set, support_set = erc_changes(erc), erc_changes(support)
        stamp = _dt.datetime.now(_dt.UTC)
        values = binding_values(Binding(
            kind, key, text, target or None, Erc(**erc_set), Erc(**support_set), bool(passthrough),
            status or "public", naan, shoulder, created=stamp, updated=stamp,
        ))  # fmt: skip
        named = [f"erc_{name}" for name in erc_set] + [f"support_{name}" for name in support_set]
        named += [
            col
            for col, value in (("target", target), ("passthrough", passthrough), ("status", status))
            if value is not None
        ]
        sets = ", ".join(f"{col} = excluded.{col}" for col in (*named, "updated"))
        with self._transaction(write=True) as cur:
            refusal = None
            if kind == "ark" and naan is not None:
                self._lock_naan(cur, naan)
                refusal = self._ark_refusal(cur, text, naan)
                if refusal is not None and not force:
                    raise StoreError(f"{refusal} (bind with force to override; it is recorded)", text=text)
            self._exec(
                cur,
                f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
                f"ON CONFLICT (kind, key) DO UPDATE SET {sets} WHERE bindings.status <> 'tombstoned' "
                f"RETURNING {BINDING_COLS}",
                values,
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("tombstoned: this id is withdrawn and is never bound again", text=text)
            bound = binding_from_row(row)
            if bound.status == "public" and bound.target is None:
                raise StoreError("a public binding needs a target URL", text=text)
            if refusal is not None:
                self._exec(
                    cur,
                    "INSERT INTO overrides (kind, key, reason, at) VALUES (?, ?, ?, ?)",
                    (kind, key, refusal, stored_time(stamp)),
                )
        return bound

    def _ark_refusal(self, cur: Cursor, text: str, naan: str) -> str | None:
        """Why binding the ARK ``text`` under ``naan`` needs ``force``, or ``None``: its NAAN is not
        registered here, or a minter of this NAAN with a check-character (``k``) template mints on its
        name and the check character is wrong."""
        self._exec(cur, "SELECT 1 FROM naans WHERE naan = ?", (naan,))
        if cur.fetchone() is None:
            return f"NAAN {naan} is not registered in this store"
        self._exec(cur, "SELECT name, template FROM minters WHERE naan = ? ORDER BY name", (naan,))
        for name, template in cur.fetchall():
            problem = keys.check_char_problem(text, template)
            if problem is not None:
                return f"{problem} (minter {name})"
        return None

    def list_overrides(self, ark: str | None = None) -> list[Override]:
        """Bindings made with ``force``, oldest first."""
        sql = "SELECT kind, key, reason, at FROM overrides"
        params: tuple[str, ...] = ()
        if ark is not None:
            sql += " WHERE kind = 'ark' AND key = ?"
            params = (keys.ark_key(_lookup(ark)).key,)
        with self._transaction(write=False) as cur:
            self._exec(cur, sql + " ORDER BY at, key", params)
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
    ) -> Binding:
        """Create or partially update an ARK binding."""
        k = keys.ark_key(_lookup(ark))
        return self._bind(
            "ark", k.key, ark, target, erc=erc, support=support, passthrough=passthrough,
            status=status, naan=k.naan, shoulder=k.shoulder, force=force,
        )  # fmt: skip

    def bind_id(
        self,
        kind: str,
        value: str,
        target: str | None = None,
        *,
        erc: ErcChange | None = None,
        support: ErcChange | None = None,
        status: Status | None = None,
    ) -> Binding:
        """Create or partially update the binding of another kind of id."""
        if kind == "ark":
            return self.bind(value, target, erc=erc, support=support, status=status)
        key = keys.canonical(kind, _lookup(value))
        return self._bind(
            kind, key, value, target, erc=erc, support=support, passthrough=None,
            status=status, naan=None, shoulder=None,
        )  # fmt: skip

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
        key = keys.canonical(kind, _lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, [(kind, key)])
        return found[0] if found else None

    def find_ids(self, value: str) -> list[Binding]:
        """Every binding ``value`` names under any kind."""
        pairs = keys.readings(_lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, pairs)
        order = {kind: i for i, kind in enumerate(KINDS)}
        return sorted(found, key=lambda b: order.get(b.kind, len(order)))

    def resolve(self, ark: str) -> Resolution | None:
        """Exact binding, else the longest public passthrough ancestor with the suffix."""
        return self.resolve_many([ark])[0]

    def resolve_many(self, arks: Sequence[str]) -> list[Resolution | None]:
        """:meth:`resolve` of each ARK with one read of every key (each ARK and its ancestors)."""
        wanted = [(ark, keys.ark_key(_lookup(ark))) for ark in arks]
        if not wanted:
            return []
        found = {b.key: b for b in map(binding_from_row, self._ark_rows([k for _, k in wanted]))}
        return [_resolution(ark, k, found) for ark, k in wanted]

    def _ark_rows(self, wanted: Sequence[keys.ArkKey]) -> list[Any]:
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

    def tombstone(self, ark: str, reason: str) -> Binding:
        """Withdraw an ARK for good."""
        if not reason.strip():
            raise StoreError("a tombstone needs a reason", text=ark)
        k = keys.ark_key(ark)
        stamp = _dt.datetime.now(_dt.UTC)
        values = binding_values(Binding(
            "ark", k.key, ark, None, status="tombstoned", naan=k.naan, shoulder=k.shoulder,
            tombstone_reason=reason, tombstoned_at=stamp, created=stamp, updated=stamp,
        ))  # fmt: skip
        with self._transaction(write=True) as cur:
            self._lock_naan(cur, k.naan)
            self._exec(
                cur,
                f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
                "ON CONFLICT (kind, key) DO UPDATE SET status = excluded.status, "
                "tombstone_reason = excluded.tombstone_reason, tombstoned_at = excluded.tombstoned_at, "
                "updated = excluded.updated WHERE bindings.status <> 'tombstoned' "
                f"RETURNING {BINDING_COLS}",
                values,
            )
            row = cur.fetchone()
            if row is not None:
                return binding_from_row(row)
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
        if after is not None:
            clauses.append("key > ?")
            params.append(check_text(after, "after"))
        params.append(limit)
        with self._transaction(write=False) as cur:
            self._exec(
                cur,
                f"SELECT {BINDING_COLS} FROM bindings WHERE {' AND '.join(clauses)} ORDER BY key LIMIT ?",
                params,
            )
            return [binding_from_row(row) for row in cur.fetchall()]

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

    def import_jsonl(self, fp: Iterable[str], *, owner: str | None = None) -> ImportReport:
        """Read an export back, all or nothing (``owner``: see :meth:`Store.import_jsonl`)."""
        problems: list[tuple[int, str]] = []
        rows: list[tuple[int, ImportRow]] = []
        lines = 0
        for number, line in enumerate(fp, 1):
            lines = number
            if not line.strip():
                continue
            try:
                rows.append((number, parse_import_line(line)))
            except PidkitError as exc:
                problems.append((number, str(exc)))
        if problems:
            raise ImportRejectedError(problems)
        created = updated = 0
        with self._transaction(write=True) as cur:
            for naan in sorted({row.naan for _, row in rows if row.kind == "ark" and row.naan}):
                self._lock_naan(cur, naan)  # in one order: concurrent imports do not deadlock
            # What the store holds now, looked up per chunk (one statement per _CHUNK keys, not
            # one per line); then updated as the lines are applied in order, so a later line sees an
            # earlier one (a key imported twice is created once, then updated).
            state = self._import_state(cur, {(row.kind, row.key) for _, row in rows})
            writes: dict[tuple[str, str], tuple[int, ImportRow]] = {}
            for number, row in rows:
                pair = (row.kind, row.key)
                existing = state.get(pair)
                if owner is not None and row.kind != "ark":
                    if existing is not None and existing[1] != owner:
                        raise NotOwnerError(
                            f"{row.kind} {row.key} was not bound by NAAN {owner}; only its owner changes it",
                            line=number,
                        )
                    row = ImportRow.of(dataclasses.replace(row.binding, naan=owner))
                if existing is not None and existing[0] == "tombstoned":
                    if row.status != "tombstoned":
                        problems.append((number, f"{row.key} is tombstoned in the store; not rebound"))
                    continue
                writes[pair] = (number, row)  # an import restores every column: the last line wins
                state[pair] = (row.status, row.naan)
                if existing is None:
                    created += 1
                else:
                    updated += 1
            if problems:
                raise ImportRejectedError(problems)
            self._import_write(cur, list(writes.values()))
        return ImportReport(lines, created, updated)

    def _import_state(
        self, cur: Cursor, pairs: set[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, Any]]:
        """``(status, naan)`` of the stored bindings among ``pairs``, a chunk of keys per statement."""
        state: dict[tuple[str, str], tuple[str, Any]] = {}
        by_kind: dict[str, list[str]] = {}
        for kind, key in sorted(pairs):
            by_kind.setdefault(kind, []).append(key)
        for kind, wanted in by_kind.items():
            for i in range(0, len(wanted), _CHUNK):
                for key, status, naan in self._statuses(cur, kind, wanted[i : i + _CHUNK]):
                    state[(kind, key)] = (status, naan)
        return state

    def _statuses(self, cur: Cursor, kind: str, keys: Sequence[str]) -> list[Any]:
        """``(key, status, naan)`` rows of the bindings of ``kind`` among ``keys`` (a backend may lock
        them until the transaction ends)."""
        marks = ", ".join("?" * len(keys))
        self._exec(
            cur, f"SELECT key, status, naan FROM bindings WHERE kind = ? AND key IN ({marks})", [kind, *keys]
        )
        return cur.fetchall()

    def _import_write(self, cur: Cursor, writes: Sequence[tuple[int, ImportRow]]) -> None:
        """Upsert the rows ``writes`` (``(line, row)``, one per key), a chunk per ``executemany``.
        The upsert keeps its tombstone guard; a row it refused (tombstoned by another writer since
        the lookup) rejects the import naming its line."""
        sql = self._q(
            f"INSERT INTO bindings ({BINDING_COLS}) VALUES ({BINDING_PARAMS}) "
            f"ON CONFLICT (kind, key) DO UPDATE SET {IMPORT_SETS} WHERE bindings.status <> 'tombstoned'"
        )
        for i in range(0, len(writes), _CHUNK):
            chunk = writes[i : i + _CHUNK]
            cur.executemany(sql, [row.values for _, row in chunk])
            if cur.rowcount != len(chunk):
                self._import_refused(cur, chunk)

    def _import_refused(self, cur: Cursor, writes: Sequence[tuple[int, ImportRow]]) -> None:
        """Raise :class:`ImportRejectedError` naming the lines among ``writes`` whose key the upsert's
        tombstone guard refused."""
        problems: list[tuple[int, str]] = []
        for number, row in writes:
            found = self._statuses(cur, row.kind, [row.key])
            if found and found[0][1] == "tombstoned" and row.status != "tombstoned":
                problems.append((number, f"{row.key} was tombstoned meanwhile; not rebound"))
        raise ImportRejectedError(problems or [(writes[0][0], "bindings changed during the import")])

    # -- dump and restore -----------------------------------------------------------------------------
    def _dump_reader(self) -> AbstractContextManager[Callable[[str], Iterator[Any]]]:
        """A function that runs one query and streams its rows, every query reading one snapshot."""
        return self._plain_dump_reader()

    @contextmanager
    def _plain_dump_reader(self) -> Iterator[Callable[[str], Iterator[Any]]]:
        with self._transaction(write=False) as cur:

            def query(sql: str) -> Iterator[Any]:
                self._exec(cur, sql)
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

    def restore(self, lines: Iterable[str], *, merge: bool = False) -> RestoreReport:
        """Restore a dump (see :meth:`Store.restore`)."""
        numbered = enumerate(lines, 1)
        first = next(numbered, None)
        if first is None:
            raise StoreError("empty dump: no header line", line=1)
        header = parse_header(first[1])
        schema = self.schema_version()
        if header.schema > schema:
            raise StoreError(
                f"the dump is of schema {header.schema}, newer than this store's {schema}: "
                "restore it with the pidkit that made it, or a newer one", line=1
            )
        order = {t.name: i for i, t in enumerate(TABLES)}
        restored = dict.fromkeys(order, 0)
        seen = dict.fromkeys(order, 0)
        with self._transaction(write=True) as cur:
            self._lock_migrations(cur)
            if not merge:
                for table in TABLES:
                    self._exec(cur, f"SELECT 1 FROM {table.name} LIMIT 1")
                    if cur.fetchone() is not None:
                        raise StoreError(
                            f"the store is not empty (table {table.name} has rows): restore into an empty "
                            "store, or merge (rows already there are kept)"
                        )
            current: Table | None = None
            chunk: list[tuple[int, tuple[Any, ...]]] = []  # (line number, values)
            for number, line in numbered:
                if not line.strip():
                    continue
                name, values = parse_row(line, number)
                table = TABLES[order[name]]
                if table is not current:
                    if current is not None and order[name] < order[current.name]:
                        raise StoreError(
                            f"{name} rows after {current.name} rows: a dump lists each table once, "
                            "in the order pidkit writes them", line=number
                        )
                    if chunk and current is not None:
                        restored[current.name] += self._restore_chunk(cur, current, chunk, merge)
                    current, chunk = table, []
                chunk.append((number, values))
                seen[name] += 1
                if len(chunk) >= _CHUNK:
                    restored[table.name] += self._restore_chunk(cur, table, chunk, merge)
                    chunk = []
            if chunk and current is not None:
                restored[current.name] += self._restore_chunk(cur, current, chunk, merge)
            wrong = [f"{t}: {seen[t]} of {n}" for t, n in header.counts.items() if seen.get(t, 0) != n]
            wrong += [f"{t}: {n}, not in the header" for t, n in seen.items() if n and t not in header.counts]
            if wrong:
                problems = "; ".join(wrong)
                raise StoreError(f"rows and header disagree (dump cut short?): {problems}; nothing restored")
        return RestoreReport(restored, {t: seen[t] - restored[t] for t in seen})

    def _restore_chunk(
        self, cur: Cursor, table: Table, rows: Sequence[tuple[int, tuple[Any, ...]]], merge: bool
    ) -> int:
        """Insert a chunk of dump rows (``(line number, values)``); a row the database refuses (a
        duplicate key, a broken reference, a check) is found again row by row to name its line."""
        self._exec(cur, "SAVEPOINT pidkit_restore")
        try:
            inserted = self._insert_rows(cur, table, [values for _, values in rows], merge)
        except self._db_errors:
            self._exec(cur, "ROLLBACK TO SAVEPOINT pidkit_restore")
            for number, values in rows:  # the whole transaction is rolled back after the first failure
                try:
                    self._insert_rows(cur, table, [values], merge)
                except self._db_errors as exc:
                    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise StoreError(f"{table.name} row refused: {said}", line=number) from None
            raise  # pragma: no cover - every row alone went in, so the chunk should have too
        self._exec(cur, "RELEASE SAVEPOINT pidkit_restore")
        return inserted

    # -- API keys -----------------------------------------------------------------------------------
    def create_api_key(
        self, naan: str, shoulder: str | None = None, *, label: str = ""
    ) -> tuple[ApiKey, str]:
        """Create a scoped API key; return it and its secret (shown once)."""
        keys.check_naan(naan)
        if shoulder is not None:
            keys.check_shoulder(shoulder)
        key_id = secrets.token_hex(_KEY_ID_BYTES)
        secret = f"pk_{key_id}_{secrets.token_urlsafe(_SECRET_BYTES)}"
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                f"INSERT INTO api_keys (secret_hash, {API_KEY_COLS}) VALUES (?, ?, ?, ?, ?, ?, NULL) "
                f"RETURNING {API_KEY_COLS}",
                (_hash_secret(secret), key_id, naan, shoulder, label, now()),
            )
            return api_key_from_row(cur.fetchone()), secret

    def verify_api_key(self, secret: str) -> ApiKey | None:
        """The live key for ``secret``, or ``None``."""
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
        return None if key.revoked else key

    def revoke_api_key(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent)."""
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ? "
                f"RETURNING {API_KEY_COLS}",
                (now(), key_id),
            )
            row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown API key", text=key_id)
        return api_key_from_row(row)

    def list_api_keys(self) -> list[ApiKey]:
        """Every key record."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {API_KEY_COLS} FROM api_keys ORDER BY created, key_id")
            return [api_key_from_row(row) for row in cur.fetchall()]
