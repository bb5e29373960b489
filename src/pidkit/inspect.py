"""Recognize any identifier: every plausible reading of a string, ranked.

:func:`inspect` asks each scheme's own parser (it never re-implements a scheme's rule) and returns a
:class:`Report` whose ``candidates`` are all the readings, best first; ``scheme`` is the best reading's
scheme, or ``"unknown"``.  The JSON shape is the contract of ``pidkit inspect --json`` (DESIGN.md): ``input``,
``scheme``, ``valid``, ``normalized``, ``timestamp`` (ISO 8601 UTC with ``Z`` or ``None``) and
``candidates`` (every reading, with the same fields plus ``parts`` and ``notes``).

Ranking.  Every reading gets a score for how specific the evidence is, not how common the scheme is:

=====================================================  =====
evidence                                                score
=====================================================  =====
an ``ark:`` label (with or without an NMA)                100
a PAF ``_UID`` whose checksum verifies (1 in 65,536)       95
a XarkId whose embedded time is plausible (1990–2200)      90
a TID whose embedded time is plausible (1990–2200)         88
a UUID (dashed, braced or 32 hex)                          70
a GEDCOM UID of another form (32 hex, bad checksum …)      50
a XarkId / TID with an implausible time                    45
a Library.Link id (11 base64url characters)                35
a GEDCOM 5.5.1 xref (1–20 characters of its repertoire)    15
an atproto record key (almost any short ASCII word)        10
=====================================================  =====

>>> r = inspect("ark:/12345/x5-4-xz-321")
>>> r.scheme, r.normalized
('ark', 'ark:12345/x54xz321')
>>> inspect("3jzfcijpj2z2a").scheme
'tid'
>>> [c.scheme for c in inspect("3jzfcijpj2z2a").candidates]
['tid', 'gedcom-xref', 'record-key']
>>> inspect("").scheme
'unknown'
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .ark import Ark
from .codecs import iso_z, read_uuid_text, uuid_text
from .errors import PidkitError, TimestampRangeError
from .gedcom_uid import GedcomUid, UidForm
from .llid import LLID_LENGTH, read_llid
from .record_key import RecordKey
from .tid import Tid
from .xarkid import XarkId

__all__ = ["Reading", "Report", "inspect"]

#: Embedded times outside this window make a time-based reading unlikely (random text decodes to any time).
PLAUSIBLE_FROM = dt.datetime(1990, 1, 1, tzinfo=dt.UTC)
PLAUSIBLE_TO = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)

#: Longest input inspected; longer text is reported as unknown without running the parsers.
MAX_INPUT = 8192

# GEDCOM 5.5.1 xref id: "@" + 1..20 chars, first alphanumeric (the XarkId specification, docs/xarkid.md:
# "A-Za-z0-9_.?<>~\/~#$%^&*()[+-").
_XREF = re.compile(r"@?([A-Za-z0-9][A-Za-z0-9_.?<>~\\/#$%^&*()\[+\-]{0,19})@?")


@dataclass(frozen=True)
class Reading:
    """One reading of the input as an identifier of ``scheme``."""

    scheme: str
    valid: bool
    normalized: str | None
    timestamp: dt.datetime | None
    score: int
    parts: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The reading as JSON-ready data (timestamp as ISO 8601 UTC with ``Z``).

        >>> inspect("2222222222222").best.to_json()["timestamp"]
        '1970-01-01T00:00:00.000000Z'
        """
        return {
            "scheme": self.scheme,
            "valid": self.valid,
            "normalized": self.normalized,
            "timestamp": _iso(self.timestamp, self.scheme),
            "score": self.score,
            "parts": self.parts,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Report:
    """Every reading of ``input``, best first."""

    input: str
    candidates: tuple[Reading, ...]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def best(self) -> Reading | None:
        """The highest-ranked reading, or ``None`` when nothing fits."""
        return self.candidates[0] if self.candidates else None

    @property
    def scheme(self) -> str:
        """The best reading's scheme, or ``"unknown"``."""
        return self.best.scheme if self.best else "unknown"

    @property
    def valid(self) -> bool:
        """Whether the best reading is a valid identifier of its scheme."""
        return self.best.valid if self.best else False

    @property
    def normalized(self) -> str | None:
        """The best reading's normalized form."""
        return self.best.normalized if self.best else None

    @property
    def timestamp(self) -> dt.datetime | None:
        """The best reading's embedded time (UTC), if it has one."""
        return self.best.timestamp if self.best else None

    def to_json(self) -> dict[str, Any]:
        """The JSON object printed by ``pidkit inspect --json`` for this input.

        >>> sorted(inspect("x").to_json())
        ['candidates', 'errors', 'input', 'normalized', 'scheme', 'timestamp', 'valid']
        """
        best = self.best
        return {
            "input": self.input,
            "scheme": self.scheme,
            "valid": self.valid,
            "normalized": self.normalized,
            "timestamp": _iso(self.timestamp, best.scheme if best else ""),
            "candidates": [c.to_json() for c in self.candidates],
            "errors": self.errors,
        }


def _iso(ts: dt.datetime | None, scheme: str) -> str | None:
    if ts is None:
        return None
    # XarkIds carry milliseconds, TIDs microseconds: show the precision the id has.
    return iso_z(ts, "microseconds" if scheme == "tid" else "milliseconds")


def _plausible(ts: dt.datetime) -> bool:
    return PLAUSIBLE_FROM <= ts < PLAUSIBLE_TO


def _read_ark(text: str) -> list[Reading]:
    if "ark:" not in text.lower():
        return []
    ark = Ark.parse(text)
    norm = ark.normalize()
    parts: dict[str, Any] = {
        "nma": ark.nma,
        "naan": ark.naan,
        "shoulder": ark.shoulder,
        "blade": ark.blade,
        "component_path": ark.component_path,
        "variant_path": ark.variant_path,
        "inflection": ark.inflection,
        "check_zone": norm.check_zone,
        "check_ok": norm.check_ok,
    }
    notes = []
    shared = norm.shared_naan
    if shared is not None:
        parts["shared_naan"] = shared.meaning
        parts["long_term"] = shared.long_term
        notes.append(f"NAAN {norm.naan} is shared ({shared.meaning}): {shared.purpose}")
    from .registry import describe_naan  # the public NAAN registry (issue 16): who holds this NAAN

    notes.append(describe_naan(norm.naan))
    return [Reading("ark", True, str(norm), None, 100, parts, tuple(notes))]


def _read_xarkid(text: str) -> list[Reading]:
    x = XarkId.parse(text)
    try:
        ts: dt.datetime | None = x.timestamp
    except TimestampRangeError:  # 48 bits of milliseconds reach past 9999-12-31, which datetime cannot show
        ts = None
    plausible = ts is not None and _plausible(ts)
    notes = [] if plausible else ["embedded time is outside 1990–2200: probably not a XarkId"]
    if ts is None:
        notes.append(f"embedded time ({x.unix_ms} Unix ms) is after the year 9999")
    parts = {"compact": x.compact, "guid": str(x.guid), "unix_ms": x.unix_ms, "random": f"{x.random:018x}"}
    return [Reading("xarkid", True, x.compact, ts, 90 if plausible else 45, parts, tuple(notes))]


def _read_tid(text: str) -> list[Reading]:
    t = Tid.parse(text)
    ts = t.timestamp
    plausible = _plausible(ts)
    notes = [] if plausible else ["embedded time is outside 1990–2200: probably not a TID"]
    # tid.mdx: "The top bit is always 0"; its syntax (first char 2-j) still admits c-j, which set it.
    valid = not t.high_bit
    if not valid:
        notes.append("top bit set (first character c-j): the TID syntax allows it, the layout does not")
    parts = {"micros": t.micros, "clock_id": t.clock_id, "int": t.int}
    return [Reading("tid", valid, str(t), ts, 88 if plausible and valid else 45, parts, tuple(notes))]


def _read_gedcom_uid(text: str) -> list[Reading]:
    uid = GedcomUid.parse(text)
    form = uid.form
    if form is UidForm.OTHER:
        return []  # any text is a legal UID value: not evidence of anything
    if form is UidForm.UUID:
        return []  # the uuid reading covers it, with the GEDCOM 7 note there
    u = uid.to_uuid()
    parts: dict[str, Any] = {"form": str(form), "uuid": str(u) if u else None}
    if form is UidForm.VALID:
        return [Reading("gedcom-uid", True, str(uid), None, 95, parts, ("PAF _UID with a valid checksum",))]
    if form is UidForm.BAD_CHECKSUM:
        note = "36 hex digits whose last four are not the PAF checksum of the first 32"
        return [Reading("gedcom-uid", False, str(uid), None, 50, parts, (note,))]
    note = "32 hex digits: a PAF _UID without checksum"
    return [Reading("gedcom-uid", True, str(uid), None, 50, parts, (note,))]


def _read_uuid(text: str) -> list[Reading]:
    read = read_uuid_text(text)  # the one rule for UUID text (pidkit.codecs), as the store's uuid_key
    if read is None:
        return []
    u = uuid.UUID(int=read.value)
    parts = {"version": u.version, "variant": u.variant, "hex": u.hex, "urn": u.urn}
    notes = ("also a GEDCOM 7 UID value",) if read.dashed else ()
    return [Reading("uuid", True, uuid_text(read.value), None, 70, parts, notes)]


def _read_llid(text: str) -> list[Reading]:
    if len(text) != LLID_LENGTH:
        return []  # not even the length: no reason worth reporting
    value = read_llid(text)
    parts = {"int64": value, "hex": value.to_bytes(8, "big", signed=True).hex()}
    note = "11 base64url characters: the shape of a Library.Link resource id (a hash: nothing more to verify)"
    return [Reading("llid", True, text, None, 35, parts, (note,))]


def _read_xref(text: str) -> list[Reading]:
    m = _XREF.fullmatch(text)
    if m is None:
        return []
    return [Reading("gedcom-xref", True, f"@{m.group(1)}@", None, 15, {"id": m.group(1)}, ())]


def _read_record_key(text: str) -> list[Reading]:
    key = RecordKey.parse(text)
    return [Reading("record-key", True, str(key), None, 10, {}, ())]


_READERS: tuple[tuple[str, Callable[[str], list[Reading]]], ...] = (
    ("ark", _read_ark),
    ("xarkid", _read_xarkid),
    ("tid", _read_tid),
    ("gedcom-uid", _read_gedcom_uid),
    ("uuid", _read_uuid),
    ("llid", _read_llid),
    ("gedcom-xref", _read_xref),
    ("record-key", _read_record_key),
)


def inspect(text: str) -> Report:
    """Every plausible reading of ``text``, best first (see the module docstring for the ranking).

    Never raises for bad input: what no parser accepts is reported as ``unknown`` with each parser's error
    in ``errors``.

    >>> r = inspect("AYvP5WgA-_-_ASNFZ4mr")
    >>> r.scheme, r.to_json()["timestamp"]
    ('xarkid', '2023-11-14T22:13:20.000Z')
    >>> inspect("161C15D03ECE47968211BBB2E9EE7F4FA5A6").scheme
    'gedcom-uid'
    >>> inspect("not an id!").errors["record-key"]
    "invalid record key character ' '"
    """
    if len(text) > MAX_INPUT:
        return Report(text, (), {"input": f"longer than {MAX_INPUT} characters"})
    readings: list[Reading] = []
    errors: dict[str, str] = {}
    for scheme, reader in _READERS:
        try:
            readings.extend(reader(text))
        except PidkitError as exc:
            errors[scheme] = exc.message
    readings.sort(key=lambda r: (-r.score, not r.valid))
    return Report(text, tuple(readings), errors if not readings else {})
