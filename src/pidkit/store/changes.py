"""Partial updates of a binding, and what a change changed (DESIGN.md: "updates are partial").

A :class:`BindingChange` names the fields it changes; :func:`apply_change` is the one rule that turns
a binding (or none) and a change into the binding written — used by :meth:`Store.bind`, ``PATCH
/api/v1/bindings`` (JSON merge patch, RFC 7396) and ``pidkit import --update`` alike — and
:func:`changed_fields` is what the history records of it.

>>> b = apply_change(None, new_binding("ark", "ark:1/x", "ark:1/x"),
...                  BindingChange(target="https://e.org/", extra={"dc.title": "T"}), _T0)
>>> b.status, b.extra
('public', (('dc.title', 'T'),))
>>> b2 = apply_change(b, b, BindingChange(extra={"dc.title": None}, status="unavailable", reason="gone"), _T1)
>>> old, new = changed_fields(b, b2)
>>> old
{'status': 'public', 'reason': None, 'extra': {'dc.title': 'T'}}
>>> new
{'status': 'unavailable', 'reason': 'gone', 'extra': {}}
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from collections.abc import Mapping
from typing import Any, Final

from ..errors import ConflictError, StoreError
from .records import Binding, Erc, ErcChange, check_extra_name, check_text, erc_changes
from .redirects import validate_target

__all__ = [
    "BindingChange",
    "apply_change",
    "change_from_patch",
    "changed_fields",
    "extra_from_text",
    "extra_text",
    "new_binding",
]

_T0: Final = _dt.datetime(2024, 5, 1, tzinfo=_dt.UTC)
_T1: Final = _dt.datetime(2024, 5, 2, tzinfo=_dt.UTC)
#: Statuses a change may set (``tombstoned`` only through :meth:`Store.tombstone`).
_SETTABLE: Final = ("public", "reserved", "unavailable")
#: Fields the history leaves out of a change: the row's time is ``updated``.
_NOT_RECORDED: Final = frozenset({"updated"})


@dataclasses.dataclass(frozen=True, slots=True)
class BindingChange:
    """The fields a change names (``None``: not named, kept).

    ``target=""`` clears the target; ``erc``/``support`` as in :meth:`Store.bind`; ``reason`` goes with
    status ``unavailable`` (``""`` clears it); ``extra`` maps element names to a new value, or ``None``
    to remove the element.

    >>> BindingChange().is_empty()
    True
    """

    target: str | None = None
    erc: ErcChange | None = None
    support: ErcChange | None = None
    passthrough: bool | None = None
    status: str | None = None
    reason: str | None = None
    extra: Mapping[str, str | None] | None = None
    #: Remove every extra element first (JSON merge patch ``"extra": null``), then apply ``extra``.
    clear_extra: bool | None = None

    def is_empty(self) -> bool:
        """True when the change names nothing."""
        return all(getattr(self, f.name) is None for f in dataclasses.fields(self))


def new_binding(
    kind: str, key: str, text: str, naan: str | None = None, shoulder: str | None = None
) -> Binding:
    """The binding a change to an id not bound yet starts from (no target, empty ERC, reserved until
    the change says otherwise — :func:`apply_change` makes it public by default).

    >>> new_binding("ark", "ark:1/x", "ark:/1/x").text
    'ark:/1/x'
    """
    return Binding(kind, key, text, None, status="reserved", naan=naan, shoulder=shoulder)


def _merge_erc(erc: Erc, change: ErcChange | None) -> Erc:
    named = erc_changes(change)
    return dataclasses.replace(erc, **named) if named else erc


def _merge_extra(extra: tuple[tuple[str, str], ...], change: Mapping[str, str | None] | None,
                 clear: bool | None = None) -> tuple[tuple[str, str], ...]:
    if clear:
        extra = ()
    if not change:
        return extra
    out = dict(extra)
    for name, value in change.items():
        check_extra_name(name)
        if value is None:
            out.pop(name, None)
        elif not isinstance(value, str):
            raise StoreError(f"extra element {name} must be a string or null", text=repr(value))
        else:
            out[name] = check_text(value, f"extra.{name}")
    return tuple(sorted(out.items()))


def apply_change(
    before: Binding | None, start: Binding, change: BindingChange, stamp: _dt.datetime
) -> Binding:
    """The binding after ``change``: ``before`` (the stored binding, or ``None`` for a new one, which
    starts from ``start`` and is public unless the change says otherwise) with only the named fields
    changed, ``updated`` set to ``stamp``.

    Rules: a tombstoned binding never changes (:class:`~pidkit.errors.ConflictError`); a change sets
    status ``public``, ``reserved`` or ``unavailable``; ``unavailable`` needs a reason, which any other
    status drops; a public binding needs a target.

    >>> x = apply_change(None, new_binding("uuid", "k", "k"), BindingChange(status="reserved"), _T0)
    >>> apply_change(x, x, BindingChange(status="public"), _T1)
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: a public binding needs a target URL in 'k'
    """
    base = before or start
    if base.is_tombstoned:
        raise ConflictError("tombstoned: this id is withdrawn and is never bound again", text=base.text)
    status = change.status
    if status is not None and status not in _SETTABLE:
        raise StoreError("bind sets status public, reserved or unavailable (use tombstone to withdraw for "
                         "good)", text=status)
    if status is None:
        status = base.status if before is not None else "public"
    target = base.target
    if change.target is not None:
        target = validate_target(change.target) if change.target else None
    reason = base.reason
    if change.reason is not None:
        reason = check_text(change.reason, "reason").strip() or None
    if status != "unavailable":
        if change.reason:
            raise StoreError("a reason goes with status unavailable", text=change.reason)
        reason = None
    elif not reason:
        raise StoreError("status unavailable needs a reason (why the object is not available)",
                         text=base.text)
    after = dataclasses.replace(
        base,
        target=target,
        erc=_merge_erc(base.erc, change.erc),
        support=_merge_erc(base.support, change.support),
        passthrough=base.passthrough if change.passthrough is None else change.passthrough,
        status=status,
        reason=reason,
        extra=_merge_extra(base.extra, change.extra, change.clear_extra),
        created=base.created if before is not None else stamp,
        updated=stamp,
    )
    if after.status == "public" and after.target is None:
        raise StoreError("a public binding needs a target URL", text=base.text)
    return after


def changed_fields(before: Binding | None, after: Binding | None
                   ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """What the history records of a change: the fields that differ, before and after (the whole
    record on the side where it did not exist: ``None``).  ``updated`` is the history row's own time.

    >>> b = Binding("uuid", "k", "k", "https://e.org/")
    >>> changed_fields(None, b)[0] is None, changed_fields(b, b)
    (True, ({}, {}))
    """
    old = None if before is None else {k: v for k, v in before.to_dict().items() if k not in _NOT_RECORDED}
    new = None if after is None else {k: v for k, v in after.to_dict().items() if k not in _NOT_RECORDED}
    if old is None or new is None:
        return old, new
    keys = [k for k in new if old.get(k) != new[k]]
    return {k: old.get(k) for k in keys}, {k: new[k] for k in keys}


def extra_text(extra: tuple[tuple[str, str], ...]) -> str:
    """The stored form of the extra elements: a JSON object, keys sorted, compact, UTF-8 as is (the
    same text on every backend, so dumps compare equal).

    >>> extra_text((("b", "2"), ("a", "é")))
    '{"a":"é","b":"2"}'
    """
    return json.dumps(dict(extra), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def extra_from_text(text: str) -> tuple[tuple[str, str], ...]:
    """The extra elements of their stored form.

    >>> extra_from_text('{"a":"1"}')
    (('a', '1'),)
    """
    obj = json.loads(text) if text else {}
    if not isinstance(obj, dict) or not all(isinstance(v, str) for v in obj.values()):
        raise StoreError("extra must be a JSON object of strings", text=text)
    return tuple(sorted(obj.items()))


#: The fields a JSON merge patch of a binding may name.
PATCH_FIELDS: Final = ("target", "erc", "support", "passthrough", "status", "reason", "extra")


def _patch_erc(value: object, name: str) -> Mapping[str, str] | None:
    """An ERC member of a merge patch: ``null`` clears the four elements, an object sets (a string) or
    clears (``null``) the elements it names."""
    if value is None:
        return {"who": "", "what": "", "when": "", "where": ""}
    if not isinstance(value, dict):
        raise StoreError(f"field {name!r} must be an object of who/what/when/where strings or null")
    out: dict[str, str] = {}
    for element, v in value.items():
        if v is not None and not isinstance(v, str):
            raise StoreError(f"field {name}.{element} must be a string or null")
        out[str(element)] = v or ""
    erc_changes(out)  # names checked here: one rule
    return out


def change_from_patch(obj: Mapping[str, object]) -> BindingChange:
    """The :class:`BindingChange` of a JSON merge patch (RFC 7396) of a binding: a member changes its
    field, ``null`` clears it (``target``, ``reason``, an ERC element, an extra element, or all extra
    elements), a member not there is kept.  Members other than :data:`PATCH_FIELDS` are refused.

    >>> c = change_from_patch({"target": None, "erc": {"who": "W", "what": None}, "extra": {"x": None}})
    >>> c.target, dict(c.erc or {}), c.extra
    ('', {'who': 'W', 'what': ''}, {'x': None})
    >>> change_from_patch({"colour": "red"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: unknown field (one of target, erc, ..., extra) in 'colour'
    """
    for name in obj:
        if name not in PATCH_FIELDS:
            raise StoreError(f"unknown field (one of {', '.join(PATCH_FIELDS)})", text=str(name))
    target = obj.get("target", ...)
    if target is not ... and target is not None and not isinstance(target, str):
        raise StoreError("field 'target' must be a URL string or null")
    passthrough = obj.get("passthrough")
    if passthrough is not None and not isinstance(passthrough, bool):
        raise StoreError("field 'passthrough' must be true, false or null")
    status = obj.get("status")
    if (status is not None and not isinstance(status, str)) or ("status" in obj and status is None):
        raise StoreError("field 'status' must be public, reserved or unavailable")
    reason = obj.get("reason", ...)
    if reason is not ... and reason is not None and not isinstance(reason, str):
        raise StoreError("field 'reason' must be a string or null")
    extra = obj.get("extra", ...)
    if extra is not ... and extra is not None and not isinstance(extra, dict):
        raise StoreError("field 'extra' must be an object of element names to strings (null removes one)")
    return BindingChange(
        target=None if target is ... else (target or ""),
        erc=_patch_erc(obj["erc"], "erc") if "erc" in obj else None,
        support=_patch_erc(obj["support"], "support") if "support" in obj else None,
        passthrough=False if "passthrough" in obj and passthrough is None else passthrough,
        status=status if isinstance(status, str) else None,
        reason=None if reason is ... else (reason or ""),
        extra=extra if isinstance(extra, dict) else None,
        clear_extra=True if "extra" in obj and extra is None else None,
    )
