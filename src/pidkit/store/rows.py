"""The one place that knows the column order of the store's tables (``migrations/*.sql``).

Records go in and come out as :mod:`pidkit.store.base` dataclasses; only the functions here turn them
into rows (tuples in column order, times as stored text) and rows back into records.  Every string
written goes through :func:`~pidkit.store.base.check_text` on its way in (:func:`binding_values`).

>>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/", erc=Erc(who="W"))
>>> binding_from_row(binding_values(b)) == b
True
>>> dict(zip(BINDING_COLUMNS, binding_values(b), strict=True))["erc_who"]
'W'
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..codecs import iso_z
from .base import _UNSTORABLE, ApiKey, Binding, Erc, MinterInfo, check_text

__all__ = [
    "API_KEY_COLS",
    "BINDING_COLS",
    "BINDING_COLUMNS",
    "BINDING_PARAMS",
    "IMPORT_SETS",
    "MINTER_COLS",
    "TABLES",
    "Table",
    "api_key_from_row",
    "binding_from_row",
    "binding_values",
    "minter_from_row",
    "stored_time",
    "time_from_stored",
]

#: ``bindings`` (migration 1), in table order.
BINDING_COLUMNS: Final = (
    "kind", "key", "text", "target", "erc_who", "erc_what", "erc_when", "erc_where",
    "support_who", "support_what", "support_when", "support_where", "passthrough", "status", "naan",
    "shoulder", "tombstone_reason", "tombstoned_at", "created", "updated",
)  # fmt: skip
BINDING_COLS: Final = ", ".join(BINDING_COLUMNS)
BINDING_PARAMS: Final = ", ".join("?" * len(BINDING_COLUMNS))
#: An import's upsert: every column but the key (an import restores the exported row).
IMPORT_SETS: Final = ", ".join(f"{c} = excluded.{c}" for c in BINDING_COLUMNS if c not in ("kind", "key"))
MINTER_COLS: Final = "name, naan, template, seed, counter, created"
API_KEY_COLS: Final = "key_id, naan, shoulder, label, created, revoked_at"


@dataclass(frozen=True, slots=True)
class Table:
    """One table as a dump carries it: its columns in table order, which of them may be NULL, which
    hold integers (the rest hold text), and the order its rows are written in (its primary key)."""

    name: str
    columns: tuple[str, ...]
    order: tuple[str, ...]
    nullable: frozenset[str] = frozenset()
    integers: frozenset[str] = frozenset()


#: Every table a store holds (but ``schema_version``), parents before children.
TABLES: Final = (
    Table("naans", ("naan", "name", "created"), ("naan",)),
    Table("shoulders", ("naan", "shoulder", "created"), ("naan", "shoulder")),
    Table(
        "minters", ("name", "naan", "template", "seed", "counter", "created"), ("name",),
        integers=frozenset({"seed", "counter"}),
    ),
    Table(
        "minted", ("naan", "id", "minter", "position", "minted_at"), ("naan", "id"),
        integers=frozenset({"position"}),
    ),
    Table("holds", ("naan", "id", "created"), ("naan", "id")),
    Table(
        "bindings", BINDING_COLUMNS, ("kind", "key"),
        nullable=frozenset({"target", "naan", "shoulder", "tombstone_reason", "tombstoned_at"}),
        integers=frozenset({"passthrough"}),
    ),
    Table(
        "api_keys", ("key_id", "secret_hash", "naan", "shoulder", "label", "created", "revoked_at"),
        ("key_id",), nullable=frozenset({"shoulder", "revoked_at"}),
    ),
    Table("overrides", ("kind", "key", "reason", "at"), ("kind", "key", "at")),
)


def stored_time(when: _dt.datetime | None) -> str | None:
    """An instant as the store keeps it: ISO 8601 UTC, microseconds, ``Z`` (sorts as text).

    >>> stored_time(_dt.datetime(2024, 5, 1, 12, tzinfo=_dt.UTC))
    '2024-05-01T12:00:00.000000Z'
    """
    return None if when is None else iso_z(when)


def time_from_stored(value: str | None) -> _dt.datetime | None:
    """A stored instant read back (timezone-aware, UTC).

    >>> time_from_stored("2024-05-01T12:00:00.000000Z").tzname()
    'UTC'
    """
    return None if value is None else _dt.datetime.fromisoformat(value)


def binding_values(b: Binding) -> tuple[Any, ...]:
    """The ``bindings`` row of ``b`` (in :data:`BINDING_COLUMNS` order), each string checked with
    :func:`~pidkit.store.base.check_text` (naming the column): the one check every write path goes
    through."""
    erc, support = b.erc, b.support
    created = stored_time(b.created)
    updated = created if b.updated is b.created else stored_time(b.updated)
    row = (
        b.kind, b.key, b.text, b.target, erc.who, erc.what, erc.when, erc.where,
        support.who, support.what, support.when, support.where, int(b.passthrough), b.status,
        b.naan, b.shoulder, b.tombstone_reason, stored_time(b.tombstoned_at), created, updated,
    )  # fmt: skip
    texts = (
        b.kind, b.key, b.text, b.target or "", erc.who, erc.what, erc.when, erc.where, support.who,
        support.what, support.when, support.where, b.status, b.naan or "", b.shoulder or "",
        b.tombstone_reason or "",
    )  # fmt: skip
    if _UNSTORABLE.search("".join(texts)) is not None:
        for name, value in zip(BINDING_COLUMNS, row, strict=True):  # name the column and position
            if isinstance(value, str):
                check_text(value, name)
    return row


def binding_from_row(row: Sequence[Any]) -> Binding:
    """The :class:`Binding` of a ``bindings`` row (:data:`BINDING_COLS` selected)."""
    (
        kind, key, text, target, erc_who, erc_what, erc_when, erc_where,
        support_who, support_what, support_when, support_where, passthrough, status, naan, shoulder,
        tombstone_reason, tombstoned_at, created, updated,
    ) = row  # fmt: skip
    return Binding(
        kind=kind,
        key=key,
        text=text,
        target=target,
        erc=Erc(erc_who, erc_what, erc_when, erc_where),
        support=Erc(support_who, support_what, support_when, support_where),
        passthrough=bool(passthrough),
        status=status,
        naan=naan,
        shoulder=shoulder,
        tombstone_reason=tombstone_reason,
        tombstoned_at=time_from_stored(tombstoned_at),
        created=time_from_stored(created),
        updated=time_from_stored(updated),
    )


def minter_from_row(row: Sequence[Any]) -> MinterInfo:
    """The :class:`MinterInfo` of a ``minters`` row (:data:`MINTER_COLS` selected)."""
    name, naan, template, seed, counter, created = row
    return MinterInfo(name, naan, template, int(seed), int(counter), time_from_stored(created))


def api_key_from_row(row: Sequence[Any]) -> ApiKey:
    """The :class:`ApiKey` of an ``api_keys`` row (:data:`API_KEY_COLS` selected)."""
    key_id, naan, shoulder, label, created, revoked_at = row
    return ApiKey(key_id, naan, shoulder, label, time_from_stored(created), time_from_stored(revoked_at))
