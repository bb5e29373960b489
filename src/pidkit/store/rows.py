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
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..codecs import iso_z
from ..errors import StoreError, TidError
from ..tid import MAX_CLOCK_ID, MAX_MICROS, Tid, TidClock
from .changes import BindingChange, apply_change, extra_from_text, extra_text, new_binding
from .records import ApiKey, Binding, Erc, HistoryEntry, MinterInfo, User, check_text, unstorable

__all__ = [
    "API_KEY_COLS",
    "BINDING_COLS",
    "BINDING_COLUMNS",
    "BINDING_PARAMS",
    "FIRST_TID",
    "HISTORY_COLS",
    "HISTORY_COLUMNS",
    "IMPORT_SETS",
    "MINTER_COLS",
    "TABLES",
    "USER_COLS",
    "Table",
    "api_key_from_row",
    "binding_from_row",
    "binding_values",
    "checked_row",
    "created_history_json",
    "history_from_row",
    "minter_from_row",
    "parse_recorded_position",
    "recorded_position",
    "recorded_time",
    "stored_time",
    "tid_bound",
    "time_from_stored",
    "user_from_row",
]

#: ``bindings`` (migration 1; ``reason`` and ``extra`` since migration 3), the times last (rows compared
#: "times aside" drop the last two values).
BINDING_COLUMNS: Final = (
    "kind", "key", "text", "target", "erc_who", "erc_what", "erc_when", "erc_where",
    "support_who", "support_what", "support_when", "support_where", "passthrough", "status", "naan",
    "shoulder", "tombstone_reason", "tombstoned_at", "reason", "extra", "created", "updated",
)  # fmt: skip
BINDING_COLS: Final = ", ".join(BINDING_COLUMNS)
BINDING_PARAMS: Final = ", ".join("?" * len(BINDING_COLUMNS))
#: An import's upsert: every column but the key (an import restores the exported row).
IMPORT_SETS: Final = ", ".join(f"{c} = excluded.{c}" for c in BINDING_COLUMNS if c not in ("kind", "key"))
MINTER_COLS: Final = "name, naan, template, seed, counter, created"
API_KEY_COLS: Final = "key_id, naan, shoulder, label, created, revoked_at, owner"
#: ``users`` (migration 4) but the password hash, which only the sign-in check reads.
USER_COLS: Final = "name, naan, shoulder, admin, created, disabled_at"
#: ``history`` (migration 3), in table order.
HISTORY_COLUMNS: Final = ("id", "at", "principal", "operation", "kind", "key", "before", "after")
HISTORY_COLS: Final = ", ".join(HISTORY_COLUMNS)


@dataclass(frozen=True, slots=True)
class Table:
    """One table as a dump carries it: its columns in table order, which of them may be NULL, which
    hold integers (the rest hold text), and the order its rows are written in (its primary key)."""

    name: str
    columns: tuple[str, ...]
    order: tuple[str, ...]
    nullable: frozenset[str] = frozenset()
    integers: frozenset[str] = frozenset()
    #: The schema version that added the table (a dump of an older schema has none of its rows).
    since: int = 1
    #: Columns added after the table, by name: ``(schema version, value in rows of older dumps)``.
    added: Mapping[str, tuple[int, Any]] = field(default_factory=dict)

    def columns_at(self, schema: int) -> tuple[str, ...]:
        """The columns a dump of ``schema`` carries.

        >>> "extra" in TABLES[5].columns_at(2), "extra" in TABLES[5].columns_at(3)
        (False, True)
        """
        return tuple(c for c in self.columns if self.added.get(c, (0, None))[0] <= schema)


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
        nullable=frozenset({"target", "naan", "shoulder", "tombstone_reason", "tombstoned_at", "reason"}),
        integers=frozenset({"passthrough"}),
        added={"reason": (3, None), "extra": (3, "{}")},
    ),
    Table(
        "api_keys", ("key_id", "secret_hash", "naan", "shoulder", "label", "created", "revoked_at", "owner"),
        ("key_id",), nullable=frozenset({"shoulder", "revoked_at", "owner"}), added={"owner": (4, None)},
    ),
    Table("overrides", ("kind", "key", "reason", "at"), ("kind", "key", "at"), since=2),
    Table("history", HISTORY_COLUMNS, ("id",), nullable=frozenset({"before", "after"}), since=3),
    # the password's Argon2id hash goes with the user, as an API key's SHA-256 does (never a secret);
    # sessions and sign-in failures are not carried (credentials and counters that expire)
    Table(
        "users", ("name", "password_hash", "naan", "shoulder", "admin", "created", "disabled_at"),
        ("name",), nullable=frozenset({"shoulder", "disabled_at"}), integers=frozenset({"admin"}), since=4,
    ),
)


def stored_time(when: _dt.datetime | None) -> str | None:
    """An instant as the store keeps it: ISO 8601 UTC, microseconds, ``Z`` (sorts as text).

    >>> stored_time(_dt.datetime(2024, 5, 1, 12, tzinfo=_dt.UTC))
    '2024-05-01T12:00:00.000000Z'
    """
    return None if when is None else iso_z(when)


def is_stored_time(value: str) -> bool:
    """Whether ``value`` is a time exactly as :func:`stored_time` writes it — the form the store compares
    and sorts as text (a restore refuses any other spelling, even of the same instant).

    >>> is_stored_time("2024-05-01T12:00:00.000000Z"), is_stored_time("2024-05-01T12:00:00Z")
    (True, False)
    >>> is_stored_time("2024-13-01T12:00:00.000000Z"), is_stored_time("2024-05-01T12:00:00.000000")
    (False, False)
    """
    if _STORED_TIME.fullmatch(value) is None:
        return False
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:  # a month 13, a February 30
        return False
    return True


#: :func:`stored_time`'s form (``fromisoformat`` also reads other spellings of an instant).
_STORED_TIME: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def time_from_stored(value: str | None) -> _dt.datetime | None:
    """A stored instant read back (timezone-aware, UTC).

    >>> time_from_stored("2024-05-01T12:00:00.000000Z").tzname()
    'UTC'
    """
    return None if value is None else _dt.datetime.fromisoformat(value)


def binding_values(b: Binding) -> tuple[Any, ...]:
    """The ``bindings`` row of ``b`` (in :data:`BINDING_COLUMNS` order), each string checked with
    :func:`~pidkit.store.base.check_text` (naming the column): the one check every write path goes
    through (:func:`checked_row`)."""
    erc, support = b.erc, b.support
    created = stored_time(b.created)
    updated = created if b.updated is b.created else stored_time(b.updated)
    row = (
        b.kind, b.key, b.text, b.target, erc.who, erc.what, erc.when, erc.where,
        support.who, support.what, support.when, support.where, int(b.passthrough), b.status,
        b.naan, b.shoulder, b.tombstone_reason, stored_time(b.tombstoned_at), b.reason, extra_text(b.extra),
        created, updated,
    )  # fmt: skip
    return checked_row(row, b.extra)


def check_new(change: BindingChange, text: str) -> None:
    """Raise what ``change`` of a new ARK binding would raise when written (a bad target, a public one
    without a target, a bad extra element name, a character no store keeps), with no store: a mint
    checks the binding it will make before it uses an id, so a refused request uses none.  ``text``
    stands for the id not minted yet.

    >>> check_new(BindingChange(target="https://e.org/"), "ark:99999/fk4")
    >>> check_new(BindingChange(extra={"_x": "1"}), "ark:99999/fk4")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pidkit.errors.StoreError: ...
    >>> check_new(BindingChange(status="reserved", erc={"who": chr(0)}), "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pidkit.errors.StoreError: erc_who: character U+0000 not allowed in ... at position 1
    """
    binding_values(apply_change(None, new_binding("ark", text, text), change, _dt.datetime.now(_dt.UTC)))


def checked_row(row: tuple[Any, ...], extra: tuple[tuple[str, str], ...]) -> tuple[Any, ...]:
    """``row`` (a ``bindings`` row, :data:`BINDING_COLUMNS` order, ``extra`` the elements its ``extra``
    column holds) once every string in it passed :func:`~pidkit.store.base.check_text`; the first that
    does not is refused naming its column.  Import lines build their row directly and check it here.

    >>> row = binding_values(Binding("uuid", "k", "k", None))[:3] + ("x" + chr(0),) + (None,) * 18
    >>> checked_row(row, ())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: target: character U+0000 not allowed in ... at position 2
    """
    texts = [v for v in row[:20] if v.__class__ is str]
    texts += [v for pair in extra for v in pair]
    if unstorable("".join(texts)):
        for name, value in zip(BINDING_COLUMNS, row, strict=True):  # name the column and position
            if isinstance(value, str):
                check_text(value, name)
        for element, value in extra:  # the extra column holds them JSON-escaped: each is named here
            check_text(element, "extra element name")
            check_text(value, f"extra.{element}")
    return row


_JSON_STR: Final = json.encoder.encode_basestring  # a JSON string as json.dumps(ensure_ascii=False) writes it


def _json_text(value: str | None) -> str:
    return "null" if value is None else _JSON_STR(value)


def created_history_json(row: Sequence[Any]) -> str:
    """What the history records as ``after`` for a binding created as ``row`` (a ``bindings`` row):
    :meth:`Binding.to_dict` but ``updated``, as compact JSON with sorted keys — the text
    ``json.dumps(changed_fields(None, binding_from_row(row))[1], ensure_ascii=False, sort_keys=True,
    separators=(",", ":"))`` gives, written straight from the row (bulk imports).

    >>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/", erc=Erc(who="W"))
    >>> created_history_json(binding_values(b))[:65]
    '{"created":null,"erc":{"what":"","when":"","where":"","who":"W"},'
    >>> from pidkit.store.changes import changed_fields
    >>> fields = changed_fields(None, b)[1]
    >>> reference = json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    >>> created_history_json(binding_values(b)) == reference
    True
    """
    (
        kind, key, text, target, erc_who, erc_what, erc_when, erc_where,
        support_who, support_what, support_when, support_where, passthrough, status, _naan, _shoulder,
        tombstone_reason, tombstoned_at, reason, extra, created, _updated,
    ) = row  # fmt: skip
    j = _JSON_STR
    return "".join((
        '{"created":', _json_text(created),
        ',"erc":{"what":', j(erc_what), ',"when":', j(erc_when), ',"where":', j(erc_where),
        ',"who":', j(erc_who),
        '},"extra":', extra, ',"key":', j(key), ',"kind":', j(kind),
        ',"passthrough":', "true" if passthrough else "false", ',"reason":', _json_text(reason),
        ',"status":', j(status), ',"support":{"what":', j(support_what), ',"when":', j(support_when),
        ',"where":', j(support_where), ',"who":', j(support_who), '},"target":', _json_text(target),
        ',"text":', j(text), ',"tombstone_reason":', _json_text(tombstone_reason),
        ',"tombstoned_at":', _json_text(tombstoned_at), "}",
    ))  # fmt: skip


def binding_from_row(row: Sequence[Any]) -> Binding:
    """The :class:`Binding` of a ``bindings`` row (:data:`BINDING_COLS` selected)."""
    (
        kind, key, text, target, erc_who, erc_what, erc_when, erc_where,
        support_who, support_what, support_when, support_where, passthrough, status, naan, shoulder,
        tombstone_reason, tombstoned_at, reason, extra, created, updated,
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
        reason=reason,
        extra=extra_from_text(extra) if extra != "{}" else (),
    )


def minter_from_row(row: Sequence[Any]) -> MinterInfo:
    """The :class:`MinterInfo` of a ``minters`` row (:data:`MINTER_COLS` selected)."""
    name, naan, template, seed, counter, created = row
    return MinterInfo(name, naan, template, int(seed), int(counter), time_from_stored(created))


def api_key_from_row(row: Sequence[Any]) -> ApiKey:
    """The :class:`ApiKey` of an ``api_keys`` row (:data:`API_KEY_COLS` selected)."""
    key_id, naan, shoulder, label, created, revoked_at, owner = row
    return ApiKey(key_id, naan, shoulder, label, time_from_stored(created), time_from_stored(revoked_at),
                  owner)


def user_from_row(row: Sequence[Any]) -> User:
    """The :class:`User` of a ``users`` row (:data:`USER_COLS` selected)."""
    name, naan, shoulder, admin, created, disabled_at = row
    return User(name, naan, shoulder, bool(admin), time_from_stored(created), time_from_stored(disabled_at))


def history_from_row(row: Sequence[Any]) -> HistoryEntry:
    """The :class:`HistoryEntry` of a ``history`` row (:data:`HISTORY_COLS` selected)."""
    id_, at, principal, operation, kind, key, before, after = row
    return HistoryEntry(
        id_, time_from_stored(at), principal, operation, kind, key,
        None if before is None else json.loads(before), None if after is None else json.loads(after),
    )  # fmt: skip


#: One TID clock per process (a forked child gets its own: the same clock id in two processes would
#: give the same history ids at the same microsecond).
_CLOCKS: dict[int, TidClock] = {}


def _clock() -> TidClock:
    """This process's TID clock."""
    pid = os.getpid()
    clock = _CLOCKS.get(pid)
    if clock is None:
        clock = _CLOCKS[pid] = TidClock()
    return clock


_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
#: A history row id below every TID (TIDs begin with 2 … b): the ``0:KIND:KEY`` rows of migration 3,
#: which adopted the bindings made before history was kept, sort before it.
FIRST_TID: Final = "1"


def recorded_time(history_id: str, stored_at: str) -> _dt.datetime:
    """When the store recorded the change of the history row ``history_id`` (whose ``at`` is
    ``stored_at``): the time in its TID — the order of the rows is the order of these times — or, for a
    row without one (migration 3's ``0:KIND:KEY``), its ``at``.

    >>> recorded_time("3jzfcijpj2z2a", "2020-01-01T00:00:00.000000Z").isoformat()
    '2023-06-30T15:03:01.887007+00:00'
    >>> recorded_time("0:ark:ark:99999/x", "2020-01-01T00:00:00.000000Z").year
    2020
    """
    if history_id >= FIRST_TID:
        try:
            return Tid.parse(history_id).timestamp
        except TidError:
            pass
    return _dt.datetime.fromisoformat(stored_at)


def tid_bound(when: _dt.datetime, *, end: bool) -> str:
    """The first (``end=False``) or last (``end=True``) history row id a change recorded at the
    microsecond ``when`` can have (a time outside the TIDs' range, 1970 to 2255, as its nearest end).

    >>> import datetime as dt
    >>> t = dt.datetime(2023, 6, 30, 15, 3, 1, 887007, tzinfo=dt.UTC)
    >>> tid_bound(t, end=False) <= "3jzfcijpj2z2a" <= tid_bound(t, end=True)
    True
    >>> tid_bound(dt.datetime(9999, 12, 31, tzinfo=dt.UTC), end=True)
    'bzzzzzzzzzzzz'
    """
    micros = (when - _EPOCH) // _dt.timedelta(microseconds=1)
    return str(Tid.from_parts(micros=min(max(micros, 0), MAX_MICROS), clock_id=MAX_CLOCK_ID if end else 0))


def recorded_position(history_id: str, stored_at: str) -> str:
    """The position of a binding in the order of recorded changes (:meth:`Store.list_recorded`), from
    its newest history row: ``a/AT/ID`` for a migration-3 row (those come first, by ``at`` and id),
    ``b/ID`` for a row with a TID (then, by id).

    >>> recorded_position("3jzfcijpj2z2a", "2023-06-30T15:03:01.887007Z")
    'b/3jzfcijpj2z2a'
    """
    if history_id >= FIRST_TID:
        return f"b/{history_id}"
    return f"a/{stored_at}/{history_id}"


def parse_recorded_position(text: str) -> tuple[str, str | None, str]:
    """A position of :func:`recorded_position` as ``(part, at, id)``; ``b/`` alone is the start of the
    second part.  :class:`~pidkit.errors.StoreError` for anything else.

    >>> parse_recorded_position("a/2024-05-01T12:00:00.000000Z/0:ark:ark:99999/x")
    ('a', '2024-05-01T12:00:00.000000Z', '0:ark:ark:99999/x')
    >>> parse_recorded_position("b/")
    ('b', None, '')
    """
    check_text(text, "position")  # what no database could compare (NUL, a lone surrogate)
    part, slash, rest = text.partition("/")
    if part == "b" and slash and (rest == "" or rest >= FIRST_TID):
        return "b", None, rest
    at, _, history_id = rest.partition("/")
    if part == "a" and history_id and history_id < FIRST_TID:
        try:
            if stored_time(time_from_stored(at)) == at:
                return "a", at, history_id
        except ValueError:
            pass
    raise StoreError(f"not a position in the order of recorded changes: {text!r}")


def history_id() -> str:
    """A new history row id: a TID (sorts by time; unique across processes but for a 1 in 1024 chance
    of two at the same microsecond, which the primary key then refuses).

    >>> len(history_id()), history_id() < history_id()
    (13, True)
    """
    return _clock().next_str()


def history_ids(n: int) -> list[str]:
    """``n`` new history row ids at once, in increasing order (:func:`history_id`'s, one clock reading
    for all: the ids of a bulk write).

    >>> ids = history_ids(3)
    >>> len(ids), ids == sorted(ids), history_id() > ids[-1]
    (3, True, True)
    """
    return _clock().next_many(n)


def history_json(fields: Mapping[str, Any] | None) -> str | None:
    """A history ``before``/``after`` value: compact JSON, keys sorted (the same text on every backend,
    and the text :func:`created_history_json` writes straight from a row).

    >>> history_json({"who": "W", "status": "public"})
    '{"status":"public","who":"W"}'
    """
    if fields is None:
        return None
    return json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
