"""Import a NOID minter database (``noid.bdb``, BerkeleyDB B-tree, as Perl ``Noid.pm`` 0.424 writes it).

NOID's layout (``Noid.pm``; ``:`` is its reserved root ``$R``):

* ``:/template``, ``:/naan``, ``:/prefix``, ``:/mask``, ``:/generator_type`` (``random`` or
  ``sequential``), ``:/oacounter`` (ids minted so far), ``:/total`` …: the minter.
* ``ID<TAB>:/c`` → ``svec|date|contact|counter``: the circulation record of an id; ``svec`` is its
  status history, newest first (``i`` issued, ``q`` queued, ``u`` unqueued).
* ``ID<TAB>:/h``: a hold.  A long-term minter holds every id it issues.
* ``ID<TAB>ELEMENT`` → value: a binding.  ``:/q/…`` → ID: the mint queue.  ``:/idmap/ELEMENT<TAB>PATTERN``
  → replacement: a rule-based binding.

What it becomes:

* The minter: a pidkit minter ``noid-NAAN-PREFIX`` with NOID's template.  For a sequential template its
  counter is NOID's ``oacounter`` (NOID mints ordinal ``oacounter`` next, as pidkit does); for a random
  one a fresh seed and counter 0 — NOID's random order (Perl's ``srand``/``rand`` over its
  sub-counters) is not reproduced, and need not be: every id NOID issued is in the minted log, and
  pidkit's minter skips them.
* Every id ever issued (an ``i`` anywhere in its status history), and every bound id (NOID lets a
  long-term minter bind an id it holds but never issued: bound, it is in use) → the minted log.  An id
  held or queued, never issued nor bound → a hold.
* Bindings: ``_t`` (NOID's resolver target element) → the target (public; an id bound without a
  target is reserved); ``erc.who`` … ``erc.where`` and plain ``who`` … ``where`` → the ERC; any other
  element → the binding's extra metadata, under its NOID name (the store's one name rule,
  :func:`~pidkit.store.check_extra_name`, decides: a name it refuses, such as one with a space, makes
  the record **refused** unless the import is told ``drop_extra=True``; then the report names what was
  left out).  The rule-based ``:/idmap`` bindings have no place in this store: refused, or left out
  with ``drop_extra``.

Reading ``noid.bdb`` needs the ``berkeleydb`` package (``pip install 'pidkit[noid]'``, built against
Debian's ``libdb-dev``).  Read a copy, or a minter nobody is using: NOID writes the file in place.

>>> circulation("iq|20240501120000|me/me|7")
('iq', 7)
>>> was_issued("qi"), was_issued("q")
(True, False)
"""

from __future__ import annotations

import importlib
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..ark.chars import check_naan
from ..errors import PidkitError
from ..store import Erc, Principal, Store
from .common import (
    DumpBuilder,
    ImportReport,
    Outcome,
    Progress,
    SourceError,
    apply,
    ark_id,
    extra_elements,
    note_dropped,
    progress_every,
    refused_names,
    source_name,
)

__all__ = ["NoidDatabase", "circulation", "import_noid", "read_noid", "was_issued"]

_R: Final = ":/"  # NOID's reserved root "$R/"
_TAB: Final = "\t"
#: NOID's resolver reads the target of an id from this element.
TARGET_ELEMENT: Final = "_t"
_ERC: Final = {
    **{f"erc.{e}": e for e in ("who", "what", "when", "where")},
    **{e: e for e in ("who", "what", "when", "where")},
}


def circulation(record: str) -> tuple[str, int]:
    """``(status history, counter)`` of a circulation record ``svec|date|contact|counter``."""
    parts = record.split("|")
    counter = int(parts[-1]) if len(parts) >= 4 and parts[-1].isdigit() else 0
    return parts[0], counter


def was_issued(history: str) -> bool:
    """Whether a status history shows the id issued at some time (NOID's ``i``)."""
    return "i" in history


@dataclass
class _Id:
    circ: str | None = None
    hold: bool = False
    queued: bool = False
    elements: dict[str, str] = field(default_factory=dict)


@dataclass
class NoidDatabase:
    """What a ``noid.bdb`` holds, read once: the admin values (``template``, ``naan``, …), each id's
    circulation, hold, queue and bindings, the rule-based ``idmap`` bindings, and any other key."""

    source: str
    admin: dict[str, str]
    ids: dict[str, _Id]
    idmaps: list[tuple[str, str]]  # ("ELEMENT PATTERN", replacement)
    other: list[str]


def _records(path: Path, source: str) -> Iterator[tuple[str, str]]:
    """Every ``(key, value)`` of the BerkeleyDB B-tree at ``path`` (read-only), as text."""
    try:
        bdb: Any = importlib.import_module("berkeleydb.db")
    except ImportError:
        raise SourceError(
            "reading a NOID database needs the berkeleydb package: pip install 'pidkit[noid]' "
            "(it builds against BerkeleyDB's headers: apt-get install libdb-dev)",
            text=source,
        ) from None
    handle = bdb.DB()
    try:
        handle.open(str(path), None, bdb.DB_BTREE, bdb.DB_RDONLY)
    except bdb.DBError as exc:
        raise SourceError(f"not a BerkeleyDB B-tree file NOID writes ({exc.args[-1]})", text=source) from None

    def step(move: Callable[[], Any]) -> Any:
        try:
            return move()
        except bdb.DBError as exc:  # a file cut short or damaged: found only as it is read
            raise SourceError(f"the BerkeleyDB file cannot be read ({exc.args[-1]})", text=source) from None

    try:
        cursor = step(handle.cursor)
        item = step(cursor.first)
        last: bytes | None = None
        while item is not None:
            key, value = item
            if key == last:  # NOID writes each key once; a second value would silently replace the first
                raise SourceError(f"record {key!r} is in the file twice", text=source)
            last = key
            try:
                yield key.decode("utf-8"), value.decode("utf-8")
            except UnicodeDecodeError:
                raise SourceError(f"record {key!r} is not UTF-8", text=source) from None
            item = step(cursor.next)
        cursor.close()
    finally:
        handle.close()


def _locate(path: str | os.PathLike[str]) -> Path:
    """``noid.bdb`` itself, in the ``NOID`` directory given, or in its ``NOID`` subdirectory."""
    p = Path(path)
    for candidate in (p, p / "noid.bdb", p / "NOID" / "noid.bdb"):
        if candidate.is_file():
            return candidate
    raise SourceError(
        "no NOID database here (noid.bdb, or a NOID directory holding it)", text=os.fspath(path)
    )


def read_noid(path: str | os.PathLike[str]) -> NoidDatabase:
    """Read a NOID database (the file, or the directory holding it) into a :class:`NoidDatabase`."""
    file = _locate(path)
    source = source_name(file)
    admin: dict[str, str] = {}
    ids: dict[str, _Id] = {}
    idmaps: list[tuple[str, str]] = []
    other: list[str] = []
    for key, value in _records(file, source):
        if key.startswith(f"{_R}idmap/"):
            element, _tab, pattern = key[len(f"{_R}idmap/") :].partition(_TAB)
            if not pattern.startswith(_R):  # ":/idmap/ELEMENT<TAB>:/h" is the rule's own hold
                idmaps.append((f"{element} {pattern}", value))
        elif key.startswith(f"{_R}q/"):
            ids.setdefault(value, _Id()).queued = True
        elif key.startswith(_R):
            admin[key[len(_R) :]] = value
        elif _TAB in key:
            ident, _tab, element = key.partition(_TAB)
            entry = ids.setdefault(ident, _Id())
            if element == f"{_R}c":
                entry.circ = value
            elif element == f"{_R}h":
                entry.hold = True
            elif element.startswith(_R):
                continue  # NOID's own per-id admin values ("pepper", never implemented)
            else:
                entry.elements[element] = value
        else:
            other.append(key)
    if "template" not in admin and "naan" not in admin:
        raise SourceError("not a NOID minter database (no :/template or :/naan)", text=source)
    return NoidDatabase(source, admin, ids, idmaps, other)


#: The largest counter a minter keeps (its column is a signed 64-bit integer).
_MAX_COUNTER: Final = (1 << 63) - 1


def _counter(db: NoidDatabase) -> int:
    """NOID's ``:/oacounter`` (``0`` when absent or empty); :class:`SourceError` for one that is no
    count a minter can keep.

    >>> _counter(NoidDatabase("x", {"oacounter": "10"}, {}, [], []))
    10
    >>> _counter(NoidDatabase("x", {"oacounter": "ten"}, {}, [], []))
    Traceback (most recent call last):
    ...
    pidkit.importers.common.SourceError: :/oacounter is not a count of minted ids (0 to 9223372036854775807) in 'ten'
    """  # noqa: E501
    text = db.admin.get("oacounter", "") or "0"
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_COUNTER:
        raise SourceError(f":/oacounter is not a count of minted ids (0 to {_MAX_COUNTER})", text=text)
    return int(text)


def _naan(db: NoidDatabase) -> str:
    """NOID's ``:/naan`` as the store keeps it: normalized (draft-kunze-ark-40 §3.2 step 4: lowercase)
    and checked by the one NAAN rule; :class:`SourceError` for none, or one that is no NAAN.

    >>> _naan(NoidDatabase("x", {"naan": "B2345"}, {}, [], []))
    'b2345'
    >>> _naan(NoidDatabase("x", {"naan": " 99999 "}, {}, [], []))
    Traceback (most recent call last):
    ...
    pidkit.importers.common.SourceError: :/naan is not a NAAN: NAAN must be betanumeric (0-9 and bcdfghjkmnpqrstvwxz) in ' 99999 ' at position 1
    """  # noqa: E501
    naan = db.admin.get("naan", "")
    if not naan:
        raise SourceError(
            "this NOID minter has no NAAN (a short-term or bind-only minter): its ids are not ARKs",
            text=db.source,
        )
    try:
        return check_naan(naan.lower())
    except PidkitError as exc:
        raise SourceError(f":/naan is not a NAAN: {exc.message}", text=naan, position=exc.position) from None


def _minter(b: DumpBuilder, db: NoidDatabase) -> str | None:
    """Add the pidkit minter that continues NOID's; a note saying what it is, or ``None`` for a
    bind-only NOID database (no template)."""
    template = db.admin.get("template", "")
    naan = _naan(db)
    if not template:
        return None
    prefix = db.admin.get("prefix", "")
    name = f"noid-{naan}-{prefix}" if prefix else f"noid-{naan}"
    sequential = db.admin.get("generator_type") == "sequential"
    counter = _counter(db) if sequential else 0
    b.add_minter(name, naan=naan, template=template, seed=secrets.randbits(63), counter=counter)
    order = (
        f"sequential, counter {counter} (NOID's oacounter)" if sequential else "random, new seed, counter 0"
    )
    return f"minter {name}: template {template}, {order}"


def _bind(b: DumpBuilder, ident: str, entry: _Id, where: str, *, drop_extra: bool) -> Outcome:
    """The binding of one NOID id; its outcome."""
    others = {e: v for e, v in entry.elements.items() if e != TARGET_ELEMENT and e not in _ERC}
    extra, refused = extra_elements(others)
    if refused and not drop_extra:
        return Outcome(where, ident, "refused", refused_names(refused))
    erc: dict[str, str] = {}
    named: dict[str, str] = {}
    for element, value in entry.elements.items():
        if element in _ERC:
            field_name = _ERC[element]
            if field_name in erc and erc[field_name] != value:  # "who" and "erc.who": one would be lost
                return Outcome(where, ident, "refused", f"elements {named[field_name]!r} and {element!r} "
                               f"give the ERC's {field_name} two values")  # fmt: skip
            erc[field_name], named[field_name] = value, element
    target = entry.elements.get(TARGET_ELEMENT) or None
    try:
        b.add_ark(
            ident, target=target, where=where, erc=Erc(**erc), status="public" if target else "reserved",
            extra=extra,
        )  # fmt: skip
    except PidkitError as exc:
        return Outcome(where, ident, "refused", str(exc))
    return Outcome(where, ident, "imported", dropped=tuple(refused))


def _id(b: DumpBuilder, db: NoidDatabase, ident: str, entry: _Id, *, drop_extra: bool) -> Outcome:
    """One id of the database: minted log, hold and binding; its outcome."""
    where = f"keys {ident!r}<TAB>…"
    try:
        ark = ark_id(ident)
    except PidkitError as exc:
        return Outcome(where, ident, "refused", f"not an ARK under a NAAN: {exc}")
    naan = str(ark.naan)
    blade = str(ark)[len(f"ark:{naan}/") :]
    issued = entry.circ is not None and was_issued(circulation(entry.circ)[0])
    mintable = "/" not in blade and "." not in blade
    if entry.elements:
        outcome = _bind(b, ident, entry, where, drop_extra=drop_extra)
        if outcome.action == "refused":
            return outcome
    else:
        outcome = Outcome(where, ident, "imported")
    # a bound id is in use whatever its circulation: add_ark put it in the minted log (never a hold: a
    # held id is one never given out, and a public binding gives it out).  An issued id with qualifiers
    # (X/c, X.v2) gave out the Name it qualifies (draft-kunze-ark-40 §2.5), which goes in the minted log;
    # a held one is held as it is (a mint skips the Name a held ARK qualifies).
    if not entry.elements:
        if issued:
            b.add_minted(naan, blade if mintable else str(ark.ancestors()[-1])[len(f"ark:{naan}/") :])
        elif entry.hold or entry.queued or entry.circ is not None:
            b.add_hold(naan, blade)
    what = "issued" if issued else "bound" if entry.elements else "held"
    return Outcome(
        where, ident, outcome.action, what if not outcome.reason else outcome.reason, outcome.dropped
    )


def database_report(
    db: NoidDatabase, b: DumpBuilder, *, drop_extra: bool = False, progress: Progress | None = None
) -> ImportReport:
    """Map a read NOID database into ``b``; the report (not yet applied)."""
    _naan(db)
    notes: list[str] = []
    minter_note = _minter(b, db)
    if minter_note:
        notes.append(minter_note)
    outcomes: list[Outcome] = []
    for n, (ident, entry) in enumerate(sorted(db.ids.items()), 1):
        outcomes.append(_id(b, db, ident, entry, drop_extra=drop_extra))
        progress_every(progress, n, last=n == len(db.ids))
    for rule, replacement in db.idmaps:
        where = f"key ':/idmap/{rule.replace(' ', '<TAB>', 1)}'"
        if drop_extra:
            outcomes.append(
                Outcome(where, rule, "skipped", f"rule-based binding (-> {replacement}) left out")
            )
        else:
            why = "a rule-based (:/idmap) binding has no place here (drop_extra / --drop-extra leaves it out)"
            outcomes.append(Outcome(where, rule, "refused", why))
    if db.other:
        notes.append(
            f"{len(db.other)} records that are neither NOID admin values nor id records were ignored"
        )
    notes.extend(note_dropped(outcomes))
    return ImportReport("noid", db.source, tuple(outcomes), notes=tuple(notes))


def import_noid(
    path: str | os.PathLike[str],
    store: Store,
    *,
    drop_extra: bool = False,
    progress: Progress | None = None,
    principal: Principal | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import the NOID minter database at ``path`` (``noid.bdb``, or the directory holding it) into
    ``store``: all or nothing; see the module text for what goes where.  Raises
    :class:`~pidkit.importers.common.ImportRefusedError` (nothing written) if a record is refused,
    :class:`~pidkit.importers.common.SourceError` if the database cannot be read.  ``principal`` and
    ``dry_run``: as :func:`~pidkit.importers.common.apply` takes them."""
    db = read_noid(path)
    b = DumpBuilder("noid")
    report = database_report(db, b, drop_extra=drop_extra, progress=progress)
    return apply(b, store, report, principal=principal, dry_run=dry_run)
