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
import datetime as _dt
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Any, Final, Protocol

from ..errors import ConflictError, ExhaustedError, NotFoundError, PidkitError, StoreError
from . import _ids, migrations
from .base import (
    _UNSTORABLE,
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
    Status,
    Store,
    check_text,
    erc_changes,
    validate_target,
)

#: Version of the schema this code expects (the highest migration shipped).
_SCHEMA_VERSION_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)"
)

_BINDING_COLS: Final = (
    "kind, key, text, target, erc_who, erc_what, erc_when, erc_where, "
    "support_who, support_what, support_when, support_where, passthrough, status, naan, shoulder, "
    "tombstone_reason, tombstoned_at, created, updated"
)
_BINDING_PARAMS: Final = ", ".join("?" * 20)
_BINDING_NAMES: Final = tuple(c.strip() for c in _BINDING_COLS.split(","))
_MINTER_COLS: Final = "name, naan, template, seed, counter, created"
_API_KEY_COLS: Final = "key_id, naan, shoulder, label, created, revoked_at"

#: Secret format: ``pk_<keyid>_<random>``; key id 16 hex digits, random 32 bytes (base64url).
_KEY_ID_BYTES: Final = 8
_SECRET_BYTES: Final = 32
_SECRET = re.compile(r"pk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")

#: Keys per lookup statement (imports, ``resolve_many``) and rows per ``executemany`` when importing.
_CHUNK: Final = 1000

#: The import upsert's update: every column but the key (an import restores the exported row).
_IMPORT_SETS: Final = ", ".join(f"{c} = excluded.{c}" for c in _BINDING_NAMES if c not in ("kind", "key"))

#: Retries of a mint batch that lost a race on the ``minted`` key to another minter (PostgreSQL).
_MINT_RETRIES: Final = 5


class Cursor(Protocol):
    """The DB-API cursor subset the store uses."""

    @property
    def rowcount(self) -> int: ...  # pragma: no cover - protocol

    def execute(self, query: Any, params: Any = ..., /) -> Any: ...  # pragma: no cover - protocol

    def fetchone(self) -> Any: ...  # pragma: no cover - protocol

    def fetchall(self) -> list[Any]: ...  # pragma: no cover - protocol

    def executemany(self, query: Any, params_seq: Any, /) -> Any: ...  # pragma: no cover - protocol


def now() -> str:
    """The current UTC time as stored (ISO 8601, microseconds, ``Z``).

    >>> now().endswith("Z")
    True
    """
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _time(value: str | None) -> _dt.datetime | None:
    return None if value is None else _dt.datetime.fromisoformat(value)


def _time_text(value: object, field: str) -> str | None:
    """A timestamp from an import line, re-rendered in the stored form."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise StoreError(f"{field} must be an ISO 8601 string or null")
    try:
        when = _dt.datetime.fromisoformat(value)
    except ValueError:
        raise StoreError(f"{field} is not an ISO 8601 timestamp", text=value) from None
    if when.tzinfo is None:
        raise StoreError(f"{field} has no time zone", text=value)
    try:
        utc = when.astimezone(_dt.UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-14:00 is past year 9999 in UTC
        raise StoreError(f"{field} is out of range in UTC", text=value) from None
    return utc.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _checked_row(values: Sequence[Any]) -> tuple[Any, ...]:
    """The binding row ``values`` (in ``_BINDING_COLS`` order) after :func:`check_text` on every
    string — the one check every write path (bind, bind_id, import, tombstone) goes through."""
    row = tuple(values)
    if _UNSTORABLE.search("".join(v for v in row if isinstance(v, str))) is not None:
        for name, value in zip(_BINDING_NAMES, row, strict=True):  # name the column and position
            if isinstance(value, str):
                check_text(value, name)
    return row


def _lookup(value: str) -> str:
    """An id to look up: NUL (never stored, refused by PostgreSQL) is refused naming its position."""
    at = value.find("\x00")
    if at >= 0:
        raise StoreError("NUL character in id", text=value, position=at + 1)
    return value


def _resolution(ark: str, k: _ids.ArkKey, found: Mapping[str, Binding]) -> Resolution | None:
    """The store's resolution rule for ``ark`` (key ``k``) among the bindings ``found`` by key: the exact
    binding, else the longest bound public ancestor that allows passthrough, with the rest as suffix."""
    exact = found.get(k.key)
    if exact is not None:
        return Resolution(exact)
    for ancestor in k.ancestors:
        b = found.get(ancestor)
        if b is not None and b.passthrough and b.status == "public" and k.key.startswith(ancestor):
            return Resolution(b, _ids.passthrough_suffix(ark, k.naan, k.key[len(ancestor) :]))
    return None


def _binding(row: Sequence[Any]) -> Binding:
    return Binding(
        kind=row[0],
        key=row[1],
        text=row[2],
        target=row[3],
        erc=Erc(row[4], row[5], row[6], row[7]),
        support=Erc(row[8], row[9], row[10], row[11]),
        passthrough=bool(row[12]),
        status=row[13],
        naan=row[14],
        shoulder=row[15],
        tombstone_reason=row[16],
        tombstoned_at=_time(row[17]),
        created=_time(row[18]),
        updated=_time(row[19]),
    )


def _minter(row: Sequence[Any]) -> MinterInfo:
    return MinterInfo(row[0], row[1], row[2], int(row[3]), int(row[4]), _time(row[5]))


def _api_key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(row[0], row[1], row[2], row[3], _time(row[4]), _time(row[5]))


def _hash_secret(secret: str) -> str:
    """SHA-256 of a high-entropy secret (no stretching needed: it is 256 random bits)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SqlStore(Store):
    """The shared SQL implementation; subclasses provide the connection handling."""

    def __init__(self) -> None:
        self._makers: dict[tuple[str, str, int], _ids.IdMaker] = {}

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
        return Naan(row[0], row[1], shoulders, _time(row[2]))

    def _add_shoulder(self, cur: Cursor, naan: str, shoulder: str) -> None:
        self._exec(
            cur,
            "INSERT INTO shoulders (naan, shoulder, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (naan, _ids.check_shoulder(shoulder), now()),
        )

    def add_naan(self, naan: str, name: str = "", *, shoulders: Iterable[str] = ()) -> Naan:
        """Register a NAAN with its shoulders."""
        _ids.check_naan(naan)
        wanted = [_ids.check_shoulder(s) for s in shoulders]
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
        prefix = _ids.template_prefix(template)
        if seed is None:
            seed = secrets.randbits(63)  # fits a signed BIGINT
        with self._transaction(write=True) as cur:
            self._naan(cur, naan)
            if prefix:
                self._add_shoulder(cur, naan, prefix)
            self._exec(
                cur,
                f"INSERT INTO minters ({_MINTER_COLS}) VALUES (?, ?, ?, ?, 0, ?) "
                f"ON CONFLICT DO NOTHING RETURNING {_MINTER_COLS}",
                (name, naan, template, seed, now()),
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("a minter with this name exists", text=name)
            return _minter(row)

    def _get_minter(self, cur: Cursor, name: str) -> MinterInfo:
        self._exec(cur, f"SELECT {_MINTER_COLS} FROM minters WHERE name = ?", (name,))
        row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown minter", text=name)
        return _minter(row)

    def get_minter(self, name: str) -> MinterInfo:
        """The minter's state."""
        with self._transaction(write=False) as cur:
            return self._get_minter(cur, name)

    def list_minters(self) -> list[MinterInfo]:
        """Every minter."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {_MINTER_COLS} FROM minters ORDER BY name")
            return [_minter(row) for row in cur.fetchall()]

    def _maker(self, info: MinterInfo) -> _ids.IdMaker:
        key = (info.template, info.naan, info.seed)
        maker = self._makers.get(key)
        if maker is None:
            maker = self._makers[key] = _ids.make_minter(info.template, info.naan, info.seed)
        return maker

    def _reserve(self, cur: Cursor, name: str, count: int) -> tuple[MinterInfo, int]:
        """Advance the minter's counter by ``count`` (locking its row); return the state and the start."""
        self._exec(
            cur,
            f"UPDATE minters SET counter = counter + ? WHERE name = ? RETURNING {_MINTER_COLS}",
            (count, name),
        )
        row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown minter", text=name)
        info = _minter(row)
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
                blade = _ids.blade(naan, text)
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
        new_erc, new_support = Erc(**erc_set), Erc(**support_set)
        stamp = now()
        values = _checked_row((
            kind, key, text, target or None, new_erc.who, new_erc.what, new_erc.when, new_erc.where,
            new_support.who, new_support.what, new_support.when, new_support.where,
            int(bool(passthrough)), status or "public", naan, shoulder, None, None, stamp, stamp,
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
                f"INSERT INTO bindings ({_BINDING_COLS}) VALUES ({_BINDING_PARAMS}) "
                f"ON CONFLICT (kind, key) DO UPDATE SET {sets} WHERE bindings.status <> 'tombstoned' "
                f"RETURNING {_BINDING_COLS}",
                values,
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("tombstoned: this id is withdrawn and is never bound again", text=text)
            bound = _binding(row)
            if bound.status == "public" and bound.target is None:
                raise StoreError("a public binding needs a target URL", text=text)
            if refusal is not None:
                self._exec(
                    cur,
                    "INSERT INTO overrides (kind, key, reason, at) VALUES (?, ?, ?, ?)",
                    (kind, key, refusal, stamp),
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
            problem = _ids.check_char_problem(text, template)
            if problem is not None:
                return f"{problem} (minter {name})"
        return None

    def list_overrides(self, ark: str | None = None) -> list[Override]:
        """Bindings made with ``force``, oldest first."""
        sql = "SELECT kind, key, reason, at FROM overrides"
        params: tuple[str, ...] = ()
        if ark is not None:
            sql += " WHERE kind = 'ark' AND key = ?"
            params = (_ids.ark_key(_lookup(ark)).key,)
        with self._transaction(write=False) as cur:
            self._exec(cur, sql + " ORDER BY at, key", params)
            return [Override(r[0], r[1], r[2], _time(r[3])) for r in cur.fetchall()]

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
        k = _ids.ark_key(_lookup(ark))
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
        key = _ids.canonical(kind, _lookup(value))
        return self._bind(
            kind, key, value, target, erc=erc, support=support, passthrough=None,
            status=status, naan=None, shoulder=None,
        )  # fmt: skip

    def _select_keys(self, cur: Cursor, pairs: Sequence[tuple[str, str]]) -> list[Binding]:
        if not pairs:
            return []
        where = " OR ".join("(kind = ? AND key = ?)" for _ in pairs)
        params = [v for pair in pairs for v in pair]
        self._exec(cur, f"SELECT {_BINDING_COLS} FROM bindings WHERE {where}", params)
        return [_binding(row) for row in cur.fetchall()]

    def get_binding(self, ark: str) -> Binding | None:
        """The binding of an ARK."""
        return self.get_id("ark", ark)

    def get_id(self, kind: str, value: str) -> Binding | None:
        """The binding of ``value`` as ``kind``."""
        key = _ids.canonical(kind, _lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, [(kind, key)])
        return found[0] if found else None

    def find_ids(self, value: str) -> list[Binding]:
        """Every binding ``value`` names under any kind."""
        pairs = _ids.readings(_lookup(value))
        with self._single_read() as cur:
            found = self._select_keys(cur, pairs)
        order = {kind: i for i, kind in enumerate(KINDS)}
        return sorted(found, key=lambda b: order.get(b.kind, len(order)))

    def resolve(self, ark: str) -> Resolution | None:
        """Exact binding, else the longest public passthrough ancestor with the suffix."""
        return self.resolve_many([ark])[0]

    def resolve_many(self, arks: Sequence[str]) -> list[Resolution | None]:
        """:meth:`resolve` of each ARK with one read of every key (each ARK and its ancestors)."""
        wanted = [(ark, _ids.ark_key(_lookup(ark))) for ark in arks]
        if not wanted:
            return []
        found = {b.key: b for b in map(_binding, self._ark_rows([k for _, k in wanted]))}
        return [_resolution(ark, k, found) for ark, k in wanted]

    def _ark_rows(self, wanted: Sequence[_ids.ArkKey]) -> list[Any]:
        """The stored ARK rows among ``wanted`` and their ancestors: one statement for up to
        :data:`_CHUNK` keys (``IN (?, …)``), else one per chunk inside one read transaction."""
        keys = list(dict.fromkeys(key for k in wanted for key in (k.key, *k.ancestors)))
        chunks = [keys[i : i + _CHUNK] for i in range(0, len(keys), _CHUNK)]
        rows: list[Any] = []
        with self._single_read() if len(chunks) == 1 else self._transaction(write=False) as cur:
            for chunk in chunks:
                marks = ", ".join("?" * len(chunk))
                sql = f"SELECT {_BINDING_COLS} FROM bindings WHERE kind = 'ark' AND key IN ({marks})"
                self._exec(cur, sql, chunk)
                rows += cur.fetchall()
        return rows

    def tombstone(self, ark: str, reason: str) -> Binding:
        """Withdraw an ARK for good."""
        if not reason.strip():
            raise StoreError("a tombstone needs a reason", text=ark)
        k = _ids.ark_key(ark)
        stamp = now()
        values = _checked_row((
            "ark", k.key, ark, None, "", "", "", "", "", "", "", "", 0, "tombstoned",
            k.naan, k.shoulder, reason, stamp, stamp, stamp,
        ))  # fmt: skip
        with self._transaction(write=True) as cur:
            self._lock_naan(cur, k.naan)
            self._exec(
                cur,
                f"INSERT INTO bindings ({_BINDING_COLS}) VALUES ({_BINDING_PARAMS}) "
                "ON CONFLICT (kind, key) DO UPDATE SET status = excluded.status, "
                "tombstone_reason = excluded.tombstone_reason, tombstoned_at = excluded.tombstoned_at, "
                "updated = excluded.updated WHERE bindings.status <> 'tombstoned' "
                f"RETURNING {_BINDING_COLS}",
                values,
            )
            row = cur.fetchone()
            if row is not None:
                return _binding(row)
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
                f"SELECT {_BINDING_COLS} FROM bindings WHERE {' AND '.join(clauses)} ORDER BY key LIMIT ?",
                params,
            )
            return [_binding(row) for row in cur.fetchall()]

    def export_jsonl(self, fp: IO[str]) -> int:
        """Write every binding as one JSON object per line."""
        count = 0
        for kind in KINDS:
            after: str | None = None
            while True:
                page = self.list_bindings(kind=kind, after=after, limit=1000)
                for b in page:
                    fp.write(json.dumps(b.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
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
            writes: dict[tuple[str, str], tuple[int, tuple[Any, ...]]] = {}
            for number, row in rows:
                values = row.values
                pair = (row.kind, row.key)
                existing = state.get(pair)
                if owner is not None and row.kind != "ark":
                    if existing is not None and existing[1] != owner:
                        raise NotOwnerError(
                            f"{row.kind} {row.key} was not bound by NAAN {owner}; only its owner changes it",
                            line=number,
                        )
                    values = (*values[:14], owner, *values[15:])
                if existing is not None and existing[0] == "tombstoned":
                    if row.status != "tombstoned":
                        problems.append((number, f"{row.key} is tombstoned in the store; not rebound"))
                    continue
                writes[pair] = (number, values)  # an import restores every column: the last line wins
                state[pair] = (row.status, values[14])
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
        for kind, keys in by_kind.items():
            for i in range(0, len(keys), _CHUNK):
                for key, status, naan in self._statuses(cur, kind, keys[i : i + _CHUNK]):
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

    def _import_write(self, cur: Cursor, writes: Sequence[tuple[int, tuple[Any, ...]]]) -> None:
        """Upsert the rows ``writes`` (``(line, values)``, one per key), a chunk per ``executemany``.
        The upsert keeps its tombstone guard; a row it refused (tombstoned by another writer since
        the lookup) rejects the import naming its line."""
        sql = self._q(
            f"INSERT INTO bindings ({_BINDING_COLS}) VALUES ({_BINDING_PARAMS}) "
            f"ON CONFLICT (kind, key) DO UPDATE SET {_IMPORT_SETS} WHERE bindings.status <> 'tombstoned'"
        )
        for i in range(0, len(writes), _CHUNK):
            chunk = writes[i : i + _CHUNK]
            cur.executemany(sql, [values for _, values in chunk])
            if cur.rowcount != len(chunk):
                self._import_refused(cur, chunk)

    def _import_refused(self, cur: Cursor, writes: Sequence[tuple[int, tuple[Any, ...]]]) -> None:
        """Raise :class:`ImportRejectedError` naming the lines among ``writes`` whose key the upsert's
        tombstone guard refused."""
        problems: list[tuple[int, str]] = []
        for number, values in writes:
            found = self._statuses(cur, values[0], [values[1]])
            if found and found[0][1] == "tombstoned" and values[13] != "tombstoned":
                problems.append((number, f"{values[1]} was tombstoned meanwhile; not rebound"))
        raise ImportRejectedError(problems or [(writes[0][0], "bindings changed during the import")])

    # -- API keys -----------------------------------------------------------------------------------
    def create_api_key(
        self, naan: str, shoulder: str | None = None, *, label: str = ""
    ) -> tuple[ApiKey, str]:
        """Create a scoped API key; return it and its secret (shown once)."""
        _ids.check_naan(naan)
        if shoulder is not None:
            _ids.check_shoulder(shoulder)
        key_id = secrets.token_hex(_KEY_ID_BYTES)
        secret = f"pk_{key_id}_{secrets.token_urlsafe(_SECRET_BYTES)}"
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                f"INSERT INTO api_keys (secret_hash, {_API_KEY_COLS}) VALUES (?, ?, ?, ?, ?, ?, NULL) "
                f"RETURNING {_API_KEY_COLS}",
                (_hash_secret(secret), key_id, naan, shoulder, label, now()),
            )
            return _api_key(cur.fetchone()), secret

    def verify_api_key(self, secret: str) -> ApiKey | None:
        """The live key for ``secret``, or ``None``."""
        match = _SECRET.fullmatch(secret)
        if match is None:
            return None
        with self._transaction(write=False) as cur:
            self._exec(
                cur, f"SELECT secret_hash, {_API_KEY_COLS} FROM api_keys WHERE key_id = ?", (match[1],)
            )
            row = cur.fetchone()
        if row is None or not hmac.compare_digest(str(row[0]), _hash_secret(secret)):
            return None
        key = _api_key(row[1:])
        return None if key.revoked else key

    def revoke_api_key(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent)."""
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ? "
                f"RETURNING {_API_KEY_COLS}",
                (now(), key_id),
            )
            row = cur.fetchone()
        if row is None:
            raise NotFoundError("unknown API key", text=key_id)
        return _api_key(row)

    def list_api_keys(self) -> list[ApiKey]:
        """Every key record."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {_API_KEY_COLS} FROM api_keys ORDER BY created, key_id")
            return [_api_key(row) for row in cur.fetchall()]


def _text(obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str):
        raise StoreError(f"field {name!r} must be a string")
    return value


def _opt_text(obj: dict[str, Any], name: str) -> str | None:
    return None if obj.get(name) is None else _text(obj, name)


_NO_ERC: Final = Erc()
_ERC_FIELDS: Final = ("who", "what", "when", "where")


def _erc(obj: dict[str, Any], name: str) -> Erc:
    value = obj.get(name)
    if not value:
        return _NO_ERC
    if not isinstance(value, dict) or not all(isinstance(value.get(k, ""), str) for k in _ERC_FIELDS):
        raise StoreError(f"field {name!r} must be an object of who/what/when/where strings")
    return Erc(*(value.get(k, "") for k in _ERC_FIELDS))


@dataclass(frozen=True, slots=True)
class ImportRow:
    """One import line as the store will write it: the id's ``kind``, canonical ``key``, ``naan`` and
    ``shoulder`` (ARKs only), ``status``, and every column value (``values``, in table order).

    Authorization checks (the web API's key scope) look at these fields, so they check exactly what
    is written.
    """

    kind: str
    key: str
    naan: str | None
    shoulder: str | None
    status: str
    values: tuple[Any, ...]


def parse_import_line(line: str) -> ImportRow:
    """Validate one JSON Lines record (an export line, or a hand-written one: ``kind`` defaults to
    ``ark``) and return the row it writes; raise :class:`~pidkit.errors.PidkitError` naming the problem.

    >>> row = parse_import_line('{"text": "ark:/99999/fk4-x1", "target": "https://e.org/"}')
    >>> row.kind, row.key, row.naan, row.shoulder
    ('ark', 'ark:99999/fk4x1', '99999', 'fk4')
    >>> late = '"created": "9999-12-31T23:59:59-14:00"'
    >>> parse_import_line('{"text": "ark:99999/x", "status": "reserved", ' + late + '}')
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: created is out of range in UTC in '9999-12-31T23:59:59-14:00'
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise StoreError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise StoreError("not JSON we read (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer longer than int_max_str_digits
        raise StoreError(f"not JSON we read ({exc})") from None
    if not isinstance(obj, dict):
        raise StoreError("not a JSON object")
    kind = _text(obj, "kind") if "kind" in obj else "ark"  # hand-written imports: ARKs by default
    text = _text(obj, "text")
    if kind not in KINDS:
        raise StoreError(f"unknown id kind (one of {', '.join(KINDS)})", text=kind)
    naan = shoulder = None
    if kind == "ark":
        k = _ids.ark_key(text)
        key, naan, shoulder = k.key, k.naan, k.shoulder
    else:
        key = _ids.canonical(kind, text)
    given_key = obj.get("key")
    if given_key is not None and given_key != key:
        raise StoreError(f"key {given_key!r} is not the canonical form of text (expected {key!r})")
    status = _text(obj, "status") if "status" in obj else "public"
    if status not in ("public", "reserved", "tombstoned"):
        raise StoreError("status must be public, reserved or tombstoned", text=str(status))
    target = _opt_text(obj, "target")
    if target is not None:
        validate_target(target)
    elif status == "public":
        raise StoreError("a public binding needs a target URL", text=text)
    passthrough = obj.get("passthrough", False)
    if not isinstance(passthrough, bool):
        raise StoreError("field 'passthrough' must be true or false")
    erc, support = _erc(obj, "erc"), _erc(obj, "support")
    reason = _opt_text(obj, "tombstone_reason")
    tombstoned_at = _time_text(obj.get("tombstoned_at"), "tombstoned_at")
    if status == "tombstoned" and (not reason or tombstoned_at is None):
        raise StoreError("a tombstoned binding needs tombstone_reason and tombstoned_at", text=text)
    stamp = now()
    created = _time_text(obj.get("created"), "created") or stamp
    updated = _time_text(obj.get("updated"), "updated") or stamp
    values = _checked_row((
        kind, key, text, target, erc.who, erc.what, erc.when, erc.where,
        support.who, support.what, support.when, support.where, int(passthrough), status,
        naan, shoulder, reason, tombstoned_at, created, updated,
    ))  # fmt: skip
    return ImportRow(kind, key, naan, shoulder, status, values)
