"""Where the UIDs of a record stand (shared by audit, migrate and match) and when two UIDs are one.

Every operation streams the file record by record (memory: the largest record, plus for ``audit`` and
``match`` an index of the UIDs seen, about 100 bytes per UID).  Decisions (see also DESIGN.md, GEDCOM row):

* **What counts as a UID**: a ``_UID`` or ``UID`` line.  At level 1 it identifies the record; at level 2
  the level-1 structure above it (an event, Gedcom-L U6 / GEDCOM 7 ``EVENT_DETAIL``).
* **Identity** (``match`` and duplicate detection): :meth:`GedcomUid.same_identity` — on the first 36
  characters when further ones follow them (Gedcom-L U1: they are not significant), the 16 bytes when the
  value spells them (case, dashes and braces do not matter), else the verbatim text.  A ``bad-checksum``
  value is its own identity (its 36 hex digits): U4, which would have made the first 32 digits
  significant, was rejected.  It is reported as a *probable* duplicate/match of a value with the same 16
  bytes (``probable`` in the reports), never merged with it.  In addition a compact XarkId and the GUID
  form of the same XarkId are one identity, so a file and its 7.0 migration match.
* **GEDCOM 7's recommended form** for a UID is RFC 9562 UUID text (:func:`is_rfc9562_text`); the spec
  requires existing values be kept verbatim, so other forms are reported, never rewritten.

>>> from pidkit.gedcom.reader import read_bytes
>>> rec = list(read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 BIRT\\n2 _UID X\\n1 UID Y\\n0 TRLR\\n"))[1]
>>> [(s.line, s.level, s.tag, s.parent, s.value, structure) for s, structure, _ in uid_sites(rec)]
[(4, 2, '_UID', 'BIRT', 'X', 3), (5, 1, 'UID', 'INDI', 'Y', 2)]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from ..codecs import read_uuid_text
from ..errors import GedcomUidError
from ..gedcom_uid import GedcomUid, UidForm
from .grammar import LENIENT_LEVEL, LENIENT_LINE, lenient_line_with_tag
from .reader import Record

__all__ = [
    "MAX_EXAMPLES",
    "UID_BYTES",
    "FoundUid",
    "UidSite",
    "identity_key",
    "is_rfc9562_text",
    "parse_uid",
    "uid_sites",
]

#: Every UID line has these bytes (a record without them has no UID: nothing to scan).  Looked for with
#: ``data.find(UID_BYTES) < 0``: on CPython 3.11 that takes half the time of ``UID_BYTES not in data``.
UID_BYTES: Final = b"UID"

#: Keep at most this many examples per list in a report (counts are always complete).
MAX_EXAMPLES: Final = 1000

# A _UID/UID line anywhere in a record's bytes (loosely, as the reader reads lines).
_UID_LINE: Final = lenient_line_with_tag(b"_UID|UID")


def identity_key(uid: GedcomUid) -> bytes | str:
    """A key such that two UIDs have equal keys exactly when they name the same structure.

    As :meth:`GedcomUid.same_identity`: the 16 bytes when the value spells them, the 18 bytes of all 36
    digits for a ``bad-checksum`` value (U4 rejected), the XarkId's 16 GUID bytes for a compact XarkId,
    else the :attr:`~GedcomUid.significant` text (U1: the first 36 characters of a longer hex value).

    >>> a = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    >>> identity_key(a) == identity_key(GedcomUid.parse("161c15d0-3ece-4796-8211-bbb2e9ee7f4f"))
    True
    >>> identity_key(a) == identity_key(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6 (x)"))
    True
    >>> identity_key(a) == identity_key(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0000"))
    False
    >>> identity_key(GedcomUid.parse("AYvP5WgA-_-_ASNFZ4mr")) == identity_key(
    ...     GedcomUid.parse("018bcfe5-6800-4fbf-8fbf-0123456789ab"))
    True
    """
    data = uid.bytes16
    if data is not None:
        if uid.form is UidForm.BAD_CHECKSUM:
            return data + bytes.fromhex(uid.significant[32:])
        return data
    if uid.form is UidForm.OTHER and len(uid.value) == 20:
        xarkid = uid.to_xarkid()
        if xarkid is not None:
            return xarkid.guid.bytes
    return uid.significant


@dataclass(frozen=True, slots=True)
class UidSite:
    """Where a UID stands: the record (tag, xref, first line), the UID line and its level, the tag
    (``_UID``/``UID``), the structure it identifies (``parent``: the record tag at level 1, the event
    tag at level 2) and the value as written.

    >>> UidSite("INDI", "@I1@", 4, 5, 1, "_UID", "INDI", "X").to_json()["line"]
    5
    """

    record: str | None
    xref: str | None
    record_line: int
    line: int
    level: int
    tag: str
    parent: str | None
    value: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "record": self.record,
            "xref": self.xref,
            "record_line": self.record_line,
            "line": self.line,
            "level": self.level,
            "tag": self.tag,
            "parent": self.parent,
            "value": self.value,
        }


#: A UID line of a record: where it stands (:class:`UidSite`), the line number of the structure it
#: identifies, and the offset of its tag in the record's bytes (:attr:`Record.data`).
FoundUid: TypeAlias = tuple[UidSite, int, int]


def uid_sites(rec: Record) -> Iterator[FoundUid]:
    """``(site, structure line, tag offset)`` of every ``_UID``/``UID`` line of a record at level ≥ 1, in
    line order (see :data:`FoundUid`).

    The structure a UID identifies is the line it is a substructure of: the record's first line at level
    1, else the nearest line above it of one level less — provided no line of a still lower level comes
    between (a level jump: then it has none, ``parent`` ``None`` and structure line 0).  The UID lines are
    found in the record's bytes without parsing its other lines (only those above a level-2 UID, until
    its parent).  The line of a site is ``rec.lines[site.line - rec.number]``.
    """
    data = rec.data
    if data.find(UID_BYTES) < 0:
        return
    rtag, xref = rec.tag, rec.xref
    number, counted = rec.number, 0  # the line number at offset `counted` (a line start)
    for m in _UID_LINE.finditer(data):
        level = int(m.group(1))
        if level < 1:
            continue
        start = m.start()
        number += data.count(b"\n", counted, start) + data.count(b"\r", counted, start)
        number -= data.count(b"\r\n", counted, start)
        counted = start
        value = rec.dialect.decode(m.group(3)) if m.group(3) is not None else ""
        tag = m.group(2).decode("ascii")
        if level == 1:
            yield UidSite(rtag, xref, rec.number, number, 1, tag, rtag, value), rec.number, m.start(2)
            continue
        parent: str | None = None
        structure = 0
        for back, text in enumerate(reversed(data[:start].splitlines()), 1):
            head = LENIENT_LEVEL.match(text)
            if head is None or int(head.group(1)) >= level:
                continue
            above = LENIENT_LINE.fullmatch(text)  # a line exactly when parse_line reads one (same level, tag)
            if above is not None:
                if int(above.group(1)) == level - 1:
                    parent = above.group(3).decode("ascii")
                    structure = number - back
                break
        yield UidSite(rtag, xref, rec.number, number, level, tag, parent, value), structure, m.start(2)


def parse_uid(value: str) -> GedcomUid | None:
    """The value of a UID line as a :class:`GedcomUid`, or ``None`` for an empty one.

    >>> parse_uid("X1").form.value, parse_uid("")
    ('other', None)
    """
    try:
        return GedcomUid.parse(value)
    except GedcomUidError:
        return None


def is_rfc9562_text(value: str) -> bool:
    """Whether a UID value is written as GEDCOM 7 recommends: RFC 9562 §4 UUID text (dashed, unbraced).

    >>> is_rfc9562_text("161c15d0-3ece-4796-8211-bbb2e9ee7f4f")
    True
    >>> is_rfc9562_text("161C15D03ECE47968211BBB2E9EE7F4F")
    False
    >>> is_rfc9562_text("{161c15d0-3ece-4796-8211-bbb2e9ee7f4f}")
    False
    """
    text = read_uuid_text(value)
    return text is not None and text.rfc9562
