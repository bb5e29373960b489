"""EZID's metadata elements and pidkit's bindings: the one mapping the EZID importer
(:mod:`pidkit.importers.ezid`) and EZID's API (:mod:`pidkit.web.ezid`) share (EZID API v2, "Internal
metadata", "Identifier status", "Metadata profiles").

========================  ===========================================================================
EZID element              binding
========================  ===========================================================================
``_target``               ``target`` (none given: the identifier's own EZID URL, as EZID defaults it)
``_status``               ``status``: ``public``, ``reserved``, ``unavailable | reason`` → unavailable
                          with that reason (:data:`NO_REASON` if none); a tombstone reads
                          ``unavailable | reason`` (EZID has no tombstone)
``_created``/``_updated`` ``created`` / ``updated`` as Unix seconds (read only)
``_owner``                who created it: the principal of its first history row (a user's name);
                          an id imported from EZID keeps its EZID owner (the extra element
                          ``ezid.owner``, set by the importer only)
``_ownergroup``           an imported id's EZID group (``ezid.ownergroup``, importer only)
``_profile``/``_export``  kept as the extra elements ``ezid.profile`` / ``ezid.export`` (defaults
                          ``erc`` / ``yes`` when absent)
``erc.who`` …             the object's ERC (``erc.who``/``erc.what``/``erc.when``/``erc.where``)
``erc``                   the whole ERC as one ANVL document (EZID "Profile erc": ``who: …%0Awhat:
                          …``), read into the same four fields; an ``erc.*`` element beside it must
                          agree with it
``erc-support.who`` …     the commitment's ERC (pidkit's ``erc-support``; no EZID counterpart)
anything else             an extra metadata element under its EZID name (``dc.title``, ``datacite``)
========================  ===========================================================================

>>> b = Binding("ark", "ark:99999/fk4x", "ark:/99999/fk4x", "https://e.org/", erc=Erc(who="Proust"),
...             extra=(("dc.title", "T"),))
>>> [n for n, _ in binding_elements(b, "ann")]
['_target', '_profile', '_status', '_export', '_owner', 'erc.who', 'dc.title']
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Final

from ..anvl import AnvlError, read_ezid_record
from ..errors import StoreError
from .changes import BindingChange
from .records import ERC_ELEMENTS, Binding, Erc, ReservedAgainError, refuse_reserving_again

__all__ = [
    "ERC_NAMES",
    "EXPORT_EXTRA",
    "IMPORTED",
    "KEPT",
    "NO_REASON",
    "PROFILE_EXTRA",
    "SUPPORT_NAMES",
    "WHOLE_ERC",
    "EzidElementError",
    "binding_elements",
    "erc_document",
    "erc_of",
    "ezid_change",
    "ezid_id",
    "read_status",
    "reserved_again",
    "status_text",
]

#: EZID "Metadata profiles", erc: the object's ERC elements → :class:`Erc` fields.
ERC_NAMES: Final = {f"erc.{name}": name for name in ERC_ELEMENTS}
#: The commitment's ERC (``erc-support:`` of ``?info``), written ``erc-support.who`` … here.
SUPPORT_NAMES: Final = {f"erc-support.{name}": name for name in ERC_ELEMENTS}
#: Where ``_profile`` and ``_export`` are kept: extra elements of these names.
PROFILE_EXTRA: Final = "ezid.profile"
EXPORT_EXTRA: Final = "ezid.export"
#: EZID's reserved elements kept as extra elements, by EZID name.
KEPT: Final = {"_profile": PROFILE_EXTRA, "_export": EXPORT_EXTRA}
#: EZID's ownership of an imported id, kept as extra elements by the importer (never set through the API:
#: pidkit's scopes are NAANs and shoulders, not owners).
IMPORTED: Final = {"_owner": "ezid.owner", "_ownergroup": "ezid.ownergroup"}
#: The extra elements the EZID elements are kept in (never listed as extra elements of their own).
_KEPT_EXTRA: Final = frozenset({*KEPT.values(), *IMPORTED.values()})
#: EZID "Profile erc": the element that binds a whole ERC document.
WHOLE_ERC: Final = "erc"
#: Defaults EZID shows when the element was never set ("Internal metadata").
_DEFAULTS: Final = {"_profile": "erc", "_export": "yes"}
#: The reason of an ``unavailable`` id given none (the store keeps one with every withdrawal).
NO_REASON: Final = "unavailable in EZID (no reason given)"
#: ``_status`` values ("Identifier status").
_STATUSES: Final = ("public", "reserved", "unavailable")


class EzidElementError(StoreError):
    """An element EZID's rules refuse: names the element.

    >>> str(EzidElementError("_status", "invalid transition", "reserved"))
    "element '_status': invalid transition in 'reserved'"
    """

    def __init__(self, element: str, problem: str, value: str | None = None) -> None:
        super().__init__(f"element {element!r}: {problem}", text=value)
        self.element = element


def read_status(text: str) -> tuple[str, str | None]:
    """A ``_status`` value: the status and, for ``unavailable``, the reason after ``|`` (``None`` if
    none); :class:`EzidElementError` for another status.

    >>> read_status("unavailable | withdrawn by author"), read_status(" public ")
    (('unavailable', 'withdrawn by author'), ('public', None))
    >>> read_status("gone")
    Traceback (most recent call last):
    ...
    pidkit.store.ezid.EzidElementError: element '_status': not public, reserved or unavailable in 'gone'
    """
    status, bar, reason = (part.strip() for part in text.partition("|"))
    if status not in _STATUSES or (bar and status != "unavailable"):
        raise EzidElementError("_status", "not public, reserved or unavailable", text)
    return status, (reason or None) if status == "unavailable" else None


def status_text(b: Binding) -> str:
    """The ``_status`` of a binding: a withdrawal or tombstone as ``unavailable | reason``.

    >>> status_text(Binding("ark", "ark:1/x", "ark:1/x", None, status="tombstoned", tombstone_reason="gone"))
    'unavailable | gone'
    """
    if b.status == "unavailable":
        return f"unavailable | {b.reason}" if b.reason else "unavailable"
    if b.is_tombstoned:
        return f"unavailable | {b.tombstone_reason}" if b.tombstone_reason else "unavailable"
    return b.status


def ezid_id(key: str) -> str:
    """An ARK's key as EZID writes identifiers (``ark:/NAAN/…``).

    >>> ezid_id("ark:99999/fk4x")
    'ark:/99999/fk4x'
    """
    return "ark:/" + key.removeprefix("ark:").removeprefix("/")


def _unix(when: _dt.datetime | None) -> str | None:
    return None if when is None else str(int(when.timestamp()))


def binding_elements(b: Binding, owner: str | None) -> list[tuple[str, str]]:
    """The elements EZID's "get identifier metadata" returns for ``b`` (``owner``: its ``_owner``).

    >>> when = _dt.datetime(2011, 3, 22, 16, 45, 37, tzinfo=_dt.UTC)
    >>> binding_elements(Binding("ark", "ark:1/x", "ark:1/x", None, status="reserved", created=when,
    ...                          extra=(("ezid.profile", "dc"),)), None)[:3]
    [('_created', '1300812337'), ('_profile', 'dc'), ('_status', 'reserved')]
    """
    extra = b.extra_dict
    out: list[tuple[str, str]] = [(n, v) for n, v in (("_created", _unix(b.created)),
                                                      ("_updated", _unix(b.updated)),
                                                      ("_target", b.target)) if v is not None]
    out.append(("_profile", extra.get(PROFILE_EXTRA, _DEFAULTS["_profile"])))
    out.append(("_status", status_text(b)))
    out.append(("_export", extra.get(EXPORT_EXTRA, _DEFAULTS["_export"])))
    owner = extra.get(IMPORTED["_owner"]) or owner
    if owner:
        out.append(("_owner", owner))
    if group := extra.get(IMPORTED["_ownergroup"]):
        out.append(("_ownergroup", group))
    for names, erc in ((ERC_NAMES, b.erc), (SUPPORT_NAMES, b.support)):
        out += [(name, getattr(erc, field)) for name, field in names.items() if getattr(erc, field)]
    out += [(n, v) for n, v in b.extra if n not in _KEPT_EXTRA]
    return out


def reserved_again(value: str = "reserved") -> EzidElementError:
    """EZID's answer to a ``_status: value`` that would make a published identifier reserved again (the
    store's rule: :func:`~pidkit.store.records.refuse_reserving_again`).

    >>> str(reserved_again()).split(": ", 1)[1]
    "invalid transition: an identifier made public is never reserved again in 'reserved'"
    """
    return EzidElementError(
        "_status", "invalid transition: an identifier made public is never reserved again", value
    )


def _status_change(value: str, before: Binding | None) -> tuple[str, str | None]:
    """The status (and reason) ``_status: value`` sets, by EZID's transitions: ``reserved`` only at
    creation (or kept while reserved); reserved → public / unavailable; public ↔ unavailable."""
    status, reason = read_status(value)
    try:  # the store's rule, read here to answer in EZID's words before anything is written
        refuse_reserving_again(before.status if before is not None else None, status, value)
    except ReservedAgainError:
        raise reserved_again(value) from None
    if status == "unavailable" and reason is None:
        reason = before.reason if before is not None and before.reason else NO_REASON
    return status, reason


def ezid_change(
    elements: Mapping[str, str], before: Binding | None, *, owner: str, default_target: str
) -> BindingChange:
    """The change EZID's create (``before`` ``None``) or update of ``elements`` makes (values already
    unescaped and stripped; an empty value deletes the element).  ``owner`` is the requesting user
    (``_owner`` may name only them: pidkit has no proxies); ``default_target`` the identifier's own
    EZID URL, its target when none is given.  :class:`EzidElementError` names a refused element; the
    store's rules (targets, extra names) apply when the change is written.

    >>> c = ezid_change({"_status": "unavailable", "erc.who": "Proust", "dc.title": ""}, None,
    ...                 owner="ann", default_target="https://h/ezid/id/ark:/1/x")
    >>> c.status, c.reason, c.target
    ('unavailable', 'unavailable in EZID (no reason given)', 'https://h/ezid/id/ark:/1/x')
    >>> dict(c.erc or {}), dict(c.extra or {})
    ({'who': 'Proust'}, {'dc.title': None})
    >>> ezid_change({"_created": "1"}, None, owner="ann", default_target="https://h/")
    Traceback (most recent call last):
    ...
    pidkit.store.ezid.EzidElementError: element '_created': not settable (EZID sets it)
    """
    target: str | None = None
    status: str | None = None
    reason: str | None = None
    erc = erc_document(elements[WHOLE_ERC]) if WHOLE_ERC in elements else {}
    support: dict[str, str] = {}
    extra: dict[str, str | None] = {}
    for name, value in elements.items():
        if name == "_target":
            target = value or default_target
        elif name == "_status":
            if not value:
                raise EzidElementError(name, "cannot be deleted (public, reserved or unavailable)")
            status, reason = _status_change(value, before)
        elif name == "_export" and value not in ("", "yes", "no"):
            raise EzidElementError(name, "must be yes or no", value)
        elif name in KEPT:
            extra[KEPT[name]] = value or None
        elif name == "_owner":
            imported = before.extra_dict.get(IMPORTED[name]) if before is not None else None
            if value and value not in (owner, imported):
                raise EzidElementError(name, f"may name only the requesting user {owner!r} (no proxies "
                                       "here)", value)
        elif name.startswith("_"):
            raise EzidElementError(name, "not settable (EZID sets it)")
        elif name == WHOLE_ERC:
            continue  # read above
        elif name in ERC_NAMES:
            _agree(erc, ERC_NAMES[name], value, name)
        elif name in SUPPORT_NAMES:
            support[SUPPORT_NAMES[name]] = value
        elif name in _KEPT_EXTRA:
            kept = next(k for k, v in (*KEPT.items(), *IMPORTED.items()) if v == name)
            raise EzidElementError(name, f"reserved here: it keeps {kept}")
        else:
            extra[name] = value or None
    final = status or (before.status if before is not None else "public")
    stored_target = before.target if before is not None else None
    if target is None and stored_target is None and final not in ("reserved", "tombstoned"):
        target = default_target  # EZID: the target defaults to the identifier's EZID URL
    return BindingChange(
        target=target, status=status, reason=reason, erc=erc or None, support=support or None,
        extra=extra or None,
    )


def _agree(erc: dict[str, str], field: str, value: str, name: str) -> None:
    """Set ``erc[field]`` to ``value`` (element ``name``) unless the whole-ERC document set it otherwise."""
    if erc.setdefault(field, value) != value:
        raise EzidElementError(name, f"disagrees with the {field} of the element {WHOLE_ERC!r}", value)


def erc_document(value: str) -> dict[str, str]:
    """The ERC fields of EZID's whole-ERC element (EZID "Profile erc": "an entire ANVL document containing
    ERC metadata may be bound to the metadata element erc"), ``value`` already unescaped once as an
    element value: ANVL ``name: value`` lines (:func:`pidkit.anvl.read_ezid_record`: comments,
    continuation lines, ``%XX`` escapes), an optional ``erc:`` label line first, names ``who``, ``what``,
    ``when``, ``where`` only.  An empty value is an empty ERC (an update's "delete": every field
    cleared).  :class:`EzidElementError` names a line that is not ERC.

    >>> erc_document("who: Proust, Marcel\\nwhat: Remembrance of Things Past")
    {'who': 'Proust, Marcel', 'what': 'Remembrance of Things Past'}
    >>> erc_document("")
    {'who': '', 'what': '', 'when': '', 'where': ''}
    >>> erc_document("who: x\\nhow: y")
    Traceback (most recent call last):
    ...
    pidkit.store.ezid.EzidElementError: element 'erc': not an ERC element (who, what, when, where) in 'how'
    """
    if not value.strip():
        return dict.fromkeys(ERC_ELEMENTS, "")
    try:
        elements = read_ezid_record(value)
    except AnvlError as exc:
        raise EzidElementError(WHOLE_ERC, f"not an ANVL document ({exc})", value) from None
    if elements.get(WHOLE_ERC, None) == "":
        del elements[WHOLE_ERC]  # the document's own "erc:" label line
    for name in elements:
        if name not in ERC_ELEMENTS:
            raise EzidElementError(WHOLE_ERC, f"not an ERC element ({', '.join(ERC_ELEMENTS)})", name)
    return elements


def erc_of(elements: Mapping[str, str]) -> Erc:
    """The object's ERC named by ``erc.*`` elements and the whole-ERC element ``erc`` (the importer's
    whole-record ERC; :class:`EzidElementError` where they disagree).

    >>> erc_of({"erc.who": "Proust", "dc.title": "x"})
    Erc(who='Proust', what='', when='', where='')
    >>> erc_of({"erc": "who: Proust\\nwhat: T", "erc.what": "T"})
    Erc(who='Proust', what='T', when='', where='')
    """
    erc = erc_document(elements[WHOLE_ERC]) if WHOLE_ERC in elements else {}
    for name, field in ERC_NAMES.items():
        if name in elements:
            _agree(erc, field, elements[name], name)
    return Erc(**{field: erc.get(field, "") for field in ERC_ELEMENTS})
