"""JSON Lines: how bindings are exported and read back (``pidkit export`` / ``import``, the REST API).

One binding per line, a JSON object as :meth:`~pidkit.store.base.Binding.to_dict` gives it, written
compact and in UTF-8 (:func:`binding_line`).  Lines end at ``\\n`` only: a value may hold U+2028,
U+2029 or U+0085, which ``str.splitlines`` would also split on (:func:`split_lines`).

>>> from pidkit.store.records import Binding, Erc
>>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/", erc=Erc(what="a\\u2028b"))
>>> parse_import_line(binding_line(b)).binding.erc.what
'a\\u2028b'
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
from collections.abc import Iterator
from typing import Any, Final

from ..ark.syntax import plain_normalized
from ..codecs import iso_z
from ..errors import StoreError
from .changes import PATCH_FIELDS, BindingChange, change_from_patch, extra_text, new_binding
from .keys import ark_key, canonical
from .records import ERC_ELEMENTS, KINDS, STATUSES, Binding, check_extra_name
from .redirects import validate_target
from .rows import BINDING_COLUMNS, binding_from_row, binding_values, checked_row

__all__ = ["ImportRow", "UpdateRow", "binding_line", "parse_import_line", "parse_update_line", "split_lines"]


def binding_line(b: Binding) -> str:
    """One export line (with its ``\\n``).

    >>> from pidkit.store.records import Binding
    >>> binding_line(Binding("uuid", "k", "k", None, status="reserved"))[:40]
    '{"kind":"uuid","key":"k","text":"k","tar'
    """
    return json.dumps(b.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"


def split_lines(text: str) -> Iterator[str]:
    """The lines of a JSON Lines text: split at ``\\n`` only (JSON escapes every other control
    character, and a ``\\r`` before the ``\\n`` is JSON whitespace).

    >>> list(split_lines('{"a":"x\\u2028y"}\\n{"b":1}\\r\\n'))
    ['{"a":"x\\u2028y"}', '{"b":1}\\r']
    """
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _text(obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str):
        raise StoreError(f"field {name!r} must be a string")
    return value


def _opt_text(obj: dict[str, Any], name: str) -> str | None:
    return None if obj.get(name) is None else _text(obj, name)


_NO_ERC: Final = ("", "", "", "")
_WHO, _WHAT, _WHEN, _WHERE = ERC_ELEMENTS
_ERC_NAMES: Final = frozenset(ERC_ELEMENTS)
#: The fields of an import line: those of an export line (:meth:`Binding.to_dict`, the one definition);
#: any other is refused, never dropped unread (``"extras"`` for ``"extra"`` lost the metadata silently).
LINE_FIELDS: Final = frozenset(new_binding("uuid", "k", "k", None, None).to_dict())


def _erc(obj: dict[str, Any], name: str) -> tuple[str, str, str, str]:
    """The who/what/when/where strings of an ERC field (all ``""`` when it is absent or empty)."""
    value = obj.get(name)
    if not value:
        return _NO_ERC
    if isinstance(value, dict):
        if not _ERC_NAMES.issuperset(value):
            unknown = min(set(value) - _ERC_NAMES)
            raise StoreError(f"field {name!r}: not an ERC element ({', '.join(ERC_ELEMENTS)})", text=unknown)
        get = value.get
        texts = (get(_WHO, ""), get(_WHAT, ""), get(_WHEN, ""), get(_WHERE, ""))
        if all(isinstance(t, str) for t in texts):
            return texts
    raise StoreError(f"field {name!r} must be an object of who/what/when/where strings")


#: A timestamp already in the store's form (:func:`pidkit.store.rows.stored_time`: UTC, microseconds, ``Z``).
_STORED_TIME: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def _time_text(value: object, field: str) -> str | None:
    """The stored form of a timestamp of an import line (:func:`_time`, then ``stored_time``); a value
    already in that form, once read as a valid time, is its own stored form (export lines)."""
    if isinstance(value, str) and _STORED_TIME.fullmatch(value) is not None:
        try:
            _dt.datetime.fromisoformat(value)  # a real date and time (else _time says what is wrong)
        except ValueError:
            pass
        else:
            return value
    when = _time(value, field)
    return None if when is None else iso_z(when)


def _time(value: object, field: str) -> _dt.datetime | None:
    """A timestamp of an import line (ISO 8601 with a time zone), in UTC."""
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
        return when.astimezone(_dt.UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-14:00 is past year 9999 in UTC
        raise StoreError(f"{field} is out of range in UTC", text=value) from None


#: Where :class:`ImportRow` finds its parts in the ``bindings`` row.
_KIND, _KEY, _STATUS, _NAAN, _SHOULDER = (
    BINDING_COLUMNS.index(c) for c in ("kind", "key", "status", "naan", "shoulder")
)


class ImportRow:
    """One import line as the store will write it: its ``bindings`` row (:attr:`values`) and the
    :class:`~pidkit.store.records.Binding` that row holds (:attr:`binding`).

    Authorization checks (the web API's key scope) look at the row's parts, so they check exactly
    what is written.  A parsed line is built as its row, checked by :func:`~pidkit.store.rows.checked_row`
    as :func:`~pidkit.store.rows.binding_values` checks a binding's; the binding is read back from the
    row when first asked for.

    >>> row = ImportRow.of(Binding("uuid", "k", "k", "https://e.org/", status="reserved"))
    >>> ImportRow(row.values).binding == row.binding, row.status
    (True, 'reserved')
    """

    __slots__ = ("_binding", "values")

    #: The ``bindings`` row (:data:`~pidkit.store.rows.BINDING_COLUMNS` order, strings checked).
    values: tuple[Any, ...]
    _binding: Binding | None

    def __init__(self, values: tuple[Any, ...], binding: Binding | None = None) -> None:
        self.values = values
        self._binding = binding

    @classmethod
    def of(cls, binding: Binding) -> ImportRow:
        """The row of ``binding`` (its strings checked: a bad one is refused naming the field)."""
        return cls(binding_values(binding), binding)

    def __repr__(self) -> str:
        return f"ImportRow({self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImportRow) and other.values == self.values

    def __hash__(self) -> int:
        return hash(self.values)

    @property
    def binding(self) -> Binding:
        """The binding the row holds."""
        if self._binding is None:
            self._binding = binding_from_row(self.values)
        return self._binding

    @property
    def kind(self) -> str:
        """The id kind."""
        kind: str = self.values[_KIND]
        return kind

    @property
    def key(self) -> str:
        """The canonical key."""
        key: str = self.values[_KEY]
        return key

    @property
    def naan(self) -> str | None:
        """The NAAN (ARKs)."""
        naan: str | None = self.values[_NAAN]
        return naan

    @property
    def shoulder(self) -> str | None:
        """The shoulder (ARKs)."""
        shoulder: str | None = self.values[_SHOULDER]
        return shoulder

    @property
    def status(self) -> str:
        """The status written."""
        status: str = self.values[_STATUS]
        return status


_STAMPS: dict[_dt.datetime, str] = {}


def _stamp_text(stamp: _dt.datetime) -> str:
    """``stored_time(stamp)``, remembered for the last stamp asked for (an import stamps its lines alike)."""
    text = _STAMPS.get(stamp)
    if text is None:
        _STAMPS.clear()
        text = _STAMPS[stamp] = iso_z(stamp)
    return text


def parse_import_line(line: str, *, now: _dt.datetime | None = None) -> ImportRow:
    """Validate one JSON Lines record (an export line, or a hand-written one: ``kind`` defaults to
    ``ark``) and return the row it writes; raise :class:`~pidkit.errors.PidkitError` naming the problem.
    ``created``/``updated`` default to ``now`` (default: the current time).

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
    if not LINE_FIELDS.issuperset(obj):
        raise StoreError(f"unknown field (one of {', '.join(sorted(LINE_FIELDS))})",
                         text=min(set(obj) - LINE_FIELDS))  # fmt: skip
    get = obj.get
    kind = _text(obj, "kind") if "kind" in obj else "ark"  # hand-written imports: ARKs by default
    text = _text(obj, "text")
    if kind not in KINDS:
        raise StoreError(f"unknown id kind (one of {', '.join(KINDS)})", text=kind)
    naan = shoulder = None
    if kind == "ark":
        plain = plain_normalized(text)  # ark_key's fast path, without its record
        if plain is None:
            k = ark_key(text)
            key, naan, shoulder = k.key, k.naan, k.shoulder
        else:
            key, naan, shoulder = text, plain[0], plain[1] or None
    else:
        key = canonical(kind, text)
    given_key = get("key")
    if given_key is not None and given_key != key:
        raise StoreError(f"key {given_key!r} is not the canonical form of text (expected {key!r})")
    status = _text(obj, "status") if "status" in obj else "public"
    if status not in STATUSES:
        raise StoreError(f"status must be {', '.join(STATUSES)}", text=str(status))
    target = _opt_text(obj, "target")
    if target is not None:
        validate_target(target)
    elif status == "public":
        raise StoreError("a public binding needs a target URL", text=text)
    passthrough = get("passthrough", False)
    if not isinstance(passthrough, bool):
        raise StoreError("field 'passthrough' must be true or false")
    reason = _opt_text(obj, "tombstone_reason")
    tombstoned_at = _time(get("tombstoned_at"), "tombstoned_at")
    if status == "tombstoned" and (not reason or tombstoned_at is None):
        raise StoreError("a tombstoned binding needs tombstone_reason and tombstoned_at", text=text)
    why = _opt_text(obj, "reason")
    if (status == "unavailable") != bool(why and why.strip()):
        raise StoreError("status unavailable, and only it, has a reason", text=text)
    extra = get("extra") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise StoreError("field 'extra' must be an object of element names to strings")
    for name in extra:
        check_extra_name(name)
    erc = _erc(obj, "erc")
    support = _erc(obj, "support")
    created = _time_text(get("created"), "created")
    updated = _time_text(get("updated"), "updated")
    stamp = _stamp_text(now or _dt.datetime.now(_dt.UTC)) if created is None or updated is None else ""
    pairs = tuple(sorted(extra.items())) if extra else ()
    row = (
        kind, key, text, target, *erc, *support, int(passthrough), status,
        naan, shoulder, reason, None if tombstoned_at is None else iso_z(tombstoned_at), why,
        extra_text(pairs) if pairs else "{}",
        stamp if created is None else created, stamp if updated is None else updated,
    )  # fmt: skip
    # every string checked as binding_values checks it: a bad line is refused, never half-written
    return ImportRow(checked_row(row, pairs))


@dataclasses.dataclass(frozen=True, slots=True)
class UpdateRow:
    """One line of ``pidkit import --update``: the id and the change it names (JSON merge patch)."""

    #: The binding an id not bound yet starts from.
    start: Binding
    change: BindingChange

    @property
    def kind(self) -> str:
        """The id kind."""
        return self.start.kind

    @property
    def key(self) -> str:
        """The canonical key."""
        return self.start.key

    @property
    def naan(self) -> str | None:
        """The NAAN (ARKs)."""
        return self.start.naan


#: The members of an update line that name the id.
_ID_FIELDS: Final = ("kind", "text", "key")


def parse_update_line(line: str) -> UpdateRow:
    """One line of a partial import: ``text`` (the id; ``kind`` defaults to ``ark``) and the fields to
    change as a JSON merge patch (:func:`pidkit.store.changes.change_from_patch`); a field not named is
    kept, ``null`` clears it.  Export lines read this way change every field they carry but ``created``,
    ``updated`` and the tombstone fields, which an update does not set.

    >>> row = parse_update_line('{"text": "ark:/99999/fk4-x1", "extra": {"dc.title": "T"}}')
    >>> row.key, row.change.extra, row.change.target
    ('ark:99999/fk4x1', {'dc.title': 'T'}, None)
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise StoreError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except (RecursionError, ValueError):
        raise StoreError("not JSON we read") from None
    if not isinstance(obj, dict):
        raise StoreError("not a JSON object")
    kind = _text(obj, "kind") if "kind" in obj else "ark"
    text = _text(obj, "text")
    if kind not in KINDS:
        raise StoreError(f"unknown id kind (one of {', '.join(KINDS)})", text=kind)
    naan = shoulder = None
    if kind == "ark":
        k = ark_key(text)
        key, naan, shoulder = k.key, k.naan, k.shoulder
    else:
        key = canonical(kind, text)
    given_key = obj.get("key")
    if given_key is not None and given_key != key:
        raise StoreError(f"key {given_key!r} is not the canonical form of text (expected {key!r})")
    ignored = ("created", "updated", "tombstone_reason", "tombstoned_at")
    patch = {k: v for k, v in obj.items() if k not in _ID_FIELDS and k not in ignored}
    if patch.get("status") == "tombstoned":
        raise StoreError("an update does not tombstone (pidkit tombstone does)", text=text)
    unknown = [k for k in patch if k not in PATCH_FIELDS]
    if unknown:
        raise StoreError(f"unknown field (one of {', '.join(PATCH_FIELDS)})", text=unknown[0])
    return UpdateRow(new_binding(kind, key, text, naan, shoulder), change_from_patch(patch))
