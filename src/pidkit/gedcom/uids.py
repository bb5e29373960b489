"""UID work on GEDCOM files: audit, add missing UIDs, migrate ``_UID`` → ``UID``, match two files.

Every operation streams the file record by record (memory: the largest record, plus for ``audit`` and
``match`` an index of the UIDs seen, about 100 bytes per UID).  Lines are never rewritten except the
ones an operation must touch: ``add_uids`` only inserts lines, ``migrate`` only renames tags.

Decisions (see also DESIGN.md, GEDCOM row):

* **What counts as a UID**: a ``_UID`` or ``UID`` line.  At level 1 it identifies the record; at level 2
  the level-1 structure above it (an event, Gedcom-L U6 / GEDCOM 7 ``EVENT_DETAIL``).  A record with a
  ``_UID`` in a 7.0 file already *has* an identifier: ``add_uids`` gives it no second one (run ``migrate``).
* **Where a new UID goes**: as the last line of the record (after its last level-1 substructure and its
  subordinate lines), so nothing before it moves and no CONT/CONC run is split; an event's UID goes
  after the last line of that event.  GEDCOM 7 lets UID stand anywhere among the substructures; PAF
  writes ``_UID`` near the end of a record too.  The new line takes the encoding of the file and the
  line ending of the line before it.
* **New values**: ``1 _UID`` in the PAF form (UUID v4 + U2 checksum) for 5.x, ``1 UID`` with a dashed
  UUID v4 for 7.0 (RFC 9562 §4, as GEDCOM 7 ``g7:UID`` recommends); with ``xarkid=True`` a new XarkId,
  its compact form in 5.x and its GUID form in 7.0.
* **Identity** (``match`` and duplicate detection): :meth:`GedcomUid.same_identity` — on the first 36
  characters when further ones follow them (Gedcom-L U1: they are not significant), the 16 bytes when the
  value spells them (case, dashes and braces do not matter), else the verbatim text.  A ``bad-checksum``
  value is its own identity (its 36 hex digits): U4, which would have made the first 32 digits
  significant, was rejected.  It is reported as a *probable* duplicate/match of a value with the same 16
  bytes (``probable`` in the reports), never merged with it.  In addition a compact XarkId and the GUID
  form of the same XarkId are one identity, so a file and its 7.0 migration match.
* **GEDCOM 7 homes for UID** (gedcom-3 "IDENTIFIER_STRUCTURE", "EVENT_DETAIL"): level 1 of the seven
  records, and level 2 under an individual or family event or attribute.  ``migrate`` renames ``_UID``
  there and leaves any other ``_UID`` (e.g. under ``HEAD``) as an extension tag, reporting it.
* **7.0 rules audited**: ``_UID`` where ``UID`` belongs; a ``UID`` that is not in the RFC 9562 UUID
  production (the spec *recommends* it for new values and requires existing ones be kept verbatim, so
  this is reported, not an error); a ``UID`` where 7.0 has no home.

>>> from pidkit.gedcom.reader import read_bytes
>>> data = (b"0 HEAD\\n1 GEDC\\n2 VERS 5.5.1\\n0 @I1@ INDI\\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\\n"
...         b"0 @I2@ INDI\\n1 NAME x\\n0 TRLR\\n")
>>> report = audit(read_bytes(data))
>>> report.records["INDI"], report.with_uid["INDI"], dict(report.forms)
(2, 1, {'valid': 1})
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import GedcomUidError
from ..gedcom_uid import GedcomUid, UidForm
from ..xarkid import XarkId
from .reader import _STRICT, GedcomLine, GedcomReader, Record

__all__ = [
    "DEFAULT_RECORD_TYPES",
    "EVENT_TAGS",
    "AddReport",
    "AuditReport",
    "MatchReport",
    "MigrateReport",
    "UidSite",
    "add_uids",
    "audit",
    "identity_key",
    "match",
    "migrate",
]

UID_TAGS: Final = frozenset({"_UID", "UID"})
_UID_BYTES: Final = b"UID"

#: Records that get a UID by default (NOTE is the 5.x note record, SNOTE the 7.0 one).
DEFAULT_RECORD_TYPES: Final = ("INDI", "FAM", "SOUR", "REPO", "OBJE", "NOTE", "SNOTE", "SUBM")

#: gedcom-3 INDIVIDUAL_EVENT_STRUCTURE and FAMILY_EVENT_STRUCTURE tags (``--events``).
EVENT_TAGS: Final = frozenset(
    [
        "ADOP",
        "BAPM",
        "BARM",
        "BASM",
        "BIRT",
        "BLES",
        "BURI",
        "CENS",
        "CHR",
        "CHRA",
        "CONF",
        "CREM",
        "DEAT",
        "EMIG",
        "FCOM",
        "GRAD",
        "IMMI",
        "NATU",
        "ORDN",
        "PROB",
        "RETI",
        "WILL",
        "EVEN",
        "ANUL",
        "DIV",
        "DIVF",
        "ENGA",
        "MARB",
        "MARC",
        "MARL",
        "MARR",
        "MARS",
    ]
)

#: gedcom-3 INDIVIDUAL_ATTRIBUTE_STRUCTURE and FAMILY_ATTRIBUTE_STRUCTURE tags (their EVENT_DETAIL has UID).
ATTRIBUTE_TAGS: Final = frozenset(
    [
        "CAST",
        "DSCR",
        "EDUC",
        "IDNO",
        "NATI",
        "NCHI",
        "NMR",
        "OCCU",
        "PROP",
        "RELI",
        "RESI",
        "SSN",
        "TITL",
        "FACT",
    ]
)

#: gedcom-3 RECORD: the records whose IDENTIFIER_STRUCTURE holds UID (NOTE: the 5.x name of SNOTE).
UID_RECORDS_7: Final = frozenset({"FAM", "INDI", "OBJE", "REPO", "SNOTE", "SOUR", "SUBM", "NOTE"})
_EVENT_PARENTS: Final = frozenset({"INDI", "FAM"})

#: RFC 9562 §4 UUID production (8-4-4-4-12 hex digits).
_UUID_PRODUCTION: Final = re.compile(
    r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
)

#: Keep at most this many examples per list in a report (counts are always complete).
MAX_EXAMPLES: Final = 1000


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


def _uid_sites(rec: Record) -> Iterator[tuple[int, GedcomLine, UidSite]]:
    """``(index, line, site)`` of every ``_UID``/``UID`` line at level ≥ 1 of a record."""
    if _UID_BYTES not in rec.data:
        return
    parents: list[str | None] = []
    for i, line in enumerate(rec.lines):
        level = line.level
        if level is None:
            continue
        del parents[level:]
        parents.extend([None] * (level - len(parents)))
        if level >= 1 and line.tag in UID_TAGS:
            value = (line.value(rec.dialect) or "") if line.payload is not None else ""
            parent = parents[level - 1] if level - 1 < len(parents) else None
            yield (
                i,
                line,
                UidSite(rec.tag, rec.xref, rec.number, line.number, level, line.tag or "", parent, value),
            )
        parents.append(line.tag)


# A _UID/UID line anywhere in a record's bytes (lenient about whitespace, like the reader).
_UID_LINE: Final = re.compile(
    rb"(?:\A|(?<=[\r\n]))[ \t]*([0-9]+)[ \t]+(?:@[^@\r\n]+@[ \t]+)?(_UID|UID)"
    rb"(?:[ \t]([^\r\n]*))?(?=[\r\n]|\Z)"
)
_LINE_HEAD: Final = re.compile(rb"[ \t]*([0-9]+)[ \t]+(?:@[^@\r\n]+@[ \t]+)?([A-Za-z0-9_]+)")


def _uid_sites_fast(rec: Record) -> Iterator[tuple[UidSite, int]]:
    """``(site, structure line)`` of every UID line of a record at level ≥ 1, found in the record's bytes
    without parsing its other lines (the same sites as :func:`_uid_sites`)."""
    data = rec.data
    if _UID_BYTES not in data:
        return
    rtag, xref = rec.tag, rec.xref
    for m in _UID_LINE.finditer(data):
        level = int(m.group(1))
        if level < 1:
            continue
        start = m.start()
        number = (
            rec.number
            + data.count(b"\n", 0, start)
            + data.count(b"\r", 0, start)
            - data.count(b"\r\n", 0, start)
        )
        value = rec.dialect.decode(m.group(3)) if m.group(3) is not None else ""
        tag = m.group(2).decode("ascii")
        if level == 1:
            yield UidSite(rtag, xref, rec.number, number, 1, tag, rtag, value), rec.number
            continue
        parent: str | None = None
        structure = 0
        previous = data[:start].splitlines()
        for back, text in enumerate(reversed(previous)):
            head = _LINE_HEAD.match(text)
            if head is not None and int(head.group(1)) == level - 1:
                parent = head.group(2).decode("ascii")
                structure = number - 1 - back
                break
        yield UidSite(rtag, xref, rec.number, number, level, tag, parent, value), structure


def _parse_uid(value: str) -> GedcomUid | None:
    try:
        return GedcomUid.parse(value)
    except GedcomUidError:
        return None


def _has_7_home(site: UidSite) -> bool:
    if site.level == 1:
        return site.record in UID_RECORDS_7
    if site.level == 2:
        return site.record in _EVENT_PARENTS and (site.parent in EVENT_TAGS or site.parent in ATTRIBUTE_TAGS)
    return False


# -- audit ------------------------------------------------------------------------------------------------


@dataclass
class AuditReport:
    """What :func:`audit` found (counts are complete; example lists stop at :data:`MAX_EXAMPLES`)."""

    file: str
    version: str | None
    codec: str
    gedcom7: bool
    records: Counter[str] = field(default_factory=Counter)
    with_uid: Counter[str] = field(default_factory=Counter)
    without_uid: Counter[str] = field(default_factory=Counter)
    forms: Counter[str] = field(default_factory=Counter)
    level2_forms: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    uids: int = 0
    level2: int = 0
    missing: list[tuple[str, str | None, int]] = field(default_factory=list)
    duplicates: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    duplicate_count: int = 0
    probable: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    probable_count: int = 0
    problems: list[tuple[str, UidSite]] = field(default_factory=list)
    problem_counts: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    warning_counts: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        """No duplicates and no problems (records without UIDs alone are not a problem)."""
        return not self.duplicate_count and not self.problem_counts

    def add_problem(self, kind: str, site: UidSite) -> None:
        """Count a problem and keep it as an example."""
        self.problem_counts[kind] += 1
        if len(self.problems) < MAX_EXAMPLES:
            self.problems.append((kind, site))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        types = sorted(self.records)
        return {
            "file": self.file,
            "version": self.version,
            "encoding": self.codec,
            "gedcom7": self.gedcom7,
            "ok": self.ok,
            "records": {
                t: {
                    "total": self.records[t],
                    "with_uid": self.with_uid[t],
                    "without_uid": self.without_uid[t],
                }
                for t in types
            },
            "uids": self.uids,
            "forms": dict(self.forms),
            "tags": dict(self.tags),
            "level2": {"count": self.level2, "forms": dict(self.level2_forms)},
            "missing": [{"record": t, "xref": x, "line": n} for t, x, n in self.missing],
            "duplicate_count": self.duplicate_count,
            "duplicates": [{"first": a.to_json(), "again": b.to_json()} for a, b in self.duplicates],
            "probable_count": self.probable_count,
            "probable": [{"first": a.to_json(), "again": b.to_json()} for a, b in self.probable],
            "problem_counts": dict(self.problem_counts),
            "problems": [{"kind": k, **s.to_json()} for k, s in self.problems],
            "warning_counts": dict(self.warning_counts),
            "warnings": self.warnings,
        }

    def to_text(self) -> str:
        """A human-readable summary."""
        out = [f"{self.file}: GEDCOM {self.version or '(no version)'}, {self.codec}"]
        out.append("records        total  with UID  without")
        for t in sorted(self.records):
            out.append(f"  {t:<12} {self.records[t]:>6} {self.with_uid[t]:>9} {self.without_uid[t]:>8}")
        forms = ", ".join(f"{k} {v}" for k, v in sorted(self.forms.items())) or "none"
        out.append(f"UIDs at level 1: {self.uids - self.level2} ({forms})")
        if self.level2:
            forms2 = ", ".join(f"{k} {v}" for k, v in sorted(self.level2_forms.items()))
            out.append(f"UIDs at level 2: {self.level2} ({forms2})")
        if self.tags:
            out.append("tags: " + ", ".join(f"{k} {v}" for k, v in sorted(self.tags.items())))
        if self.duplicate_count:
            out.append(f"same UID on two structures: {self.duplicate_count}")
            for a, b in self.duplicates[:20]:
                out.append(
                    f"  line {b.line} ({b.record} {b.xref or ''}) repeats {b.value!r} of line {a.line}"
                )
        if self.probable_count:
            out.append(f"probably the same UID (same 32 data digits, a bad checksum): {self.probable_count}")
            for a, b in self.probable[:20]:
                out.append(f"  line {b.line} ({b.record} {b.xref or ''}) {b.value!r} ~ line {a.line}")
        for kind, count in sorted(self.problem_counts.items()):
            out.append(f"{_PROBLEM_TEXT.get(kind, kind)}: {count}")
            for _, s in [p for p in self.problems if p[0] == kind][:10]:
                out.append(f"  line {s.line}: {s.level} {s.tag} {s.value}")
        if self.warning_counts:
            shown = ", ".join(f"{k} {v}" for k, v in sorted(self.warning_counts.items()))
            out.append(f"lines read with warnings: {shown}")
            out.extend(f"  {w}" for w in self.warnings[:10])
        out.append("ok" if self.ok else "problems found")
        return "\n".join(out)


_PROBLEM_TEXT: Final = {
    "bad-checksum": "PAF-form UIDs whose checksum does not match",
    "empty": "UID lines without a value",
    "_UID-in-7": "_UID in a GEDCOM 7 file (7.0 uses UID; run migrate)",
    "not-uuid-7": "GEDCOM 7 UIDs not in the RFC 9562 UUID form (kept verbatim; new ones should be UUIDs)",
    "no-home-7": "GEDCOM 7 UIDs where 7.0 defines none",
    "UID-in-5": "UID tags in a GEDCOM 5.x file (5.x programs read _UID)",
    "repeated-in-record": "the same UID twice on one structure",
}


def audit(reader: GedcomReader, *, types: Collection[str] = DEFAULT_RECORD_TYPES) -> AuditReport:
    """Audit the UIDs of a file: per record type with and without UID, forms, tags, level-2 UIDs,
    duplicates (one identity on two structures) and version rules.  ``types`` are the record types
    whose missing UIDs are listed (all record types are counted)."""
    report = AuditReport(reader.name, reader.version, reader.codec, reader.gedcom7)
    gedcom7 = reader.gedcom7
    # identity → (structure line << 32) | UID line: small, as it holds every UID of the file
    seen: dict[bytes | str, int] = {}
    # the 16 data bytes of bad-checksum values → where first seen (rare: the probable-duplicate check)
    bad_data: dict[bytes, tuple[bytes | str, int]] = {}
    wanted = frozenset(types)
    for rec in reader:
        tag = rec.tag
        if tag is None or tag in ("HEAD", "TRLR"):
            if _UID_BYTES not in rec.data:
                continue
        elif tag is not None:
            report.records[tag] += 1
        has_uid = False
        local: set[tuple[int, bytes | str]] = set()
        for site, structure in _uid_sites_fast(rec):
            report.uids += 1
            report.tags[site.tag] += 1
            uid = _parse_uid(site.value)
            form = uid.form.value if uid is not None else "empty"
            if site.level == 1:
                has_uid = True
                report.forms[form] += 1
            else:
                report.level2 += 1
                report.level2_forms[form] += 1
            if uid is None:
                report.add_problem("empty", site)
                continue
            if uid.form is UidForm.BAD_CHECKSUM:
                report.add_problem("bad-checksum", site)
            if gedcom7:
                if site.tag == "_UID":
                    report.add_problem("_UID-in-7", site)
                elif not _has_7_home(site):
                    report.add_problem("no-home-7", site)
                elif _UUID_PRODUCTION.fullmatch(site.value) is None:
                    report.add_problem("not-uuid-7", site)
            elif site.tag == "UID":
                report.add_problem("UID-in-5", site)
            key = identity_key(uid)
            where = (structure, key)
            if where in local:
                report.add_problem("repeated-in-record", site)
                continue
            local.add(where)
            first = seen.get(key)
            if uid.bytes16 is not None:
                _check_probable(report, uid, structure, site, seen, bad_data)
            if first is None:
                seen[key] = (structure << 32) | site.line
            elif first >> 32 != structure:
                report.duplicate_count += 1
                if len(report.duplicates) < MAX_EXAMPLES:
                    report.duplicates.append((_first_site(first, site.value), site))
        if tag is not None and tag not in ("HEAD", "TRLR"):
            if has_uid:
                report.with_uid[tag] += 1
            else:
                report.without_uid[tag] += 1
                if tag in wanted and len(report.missing) < MAX_EXAMPLES:
                    report.missing.append((tag, rec.xref, rec.number))
    report.warning_counts = Counter(reader.warning_counts)
    report.warnings = [str(w) for w in reader.warnings]
    return report


def _check_probable(
    report: AuditReport,
    uid: GedcomUid,
    structure: int,
    site: UidSite,
    seen: dict[bytes | str, int],
    bad_data: dict[bytes, tuple[bytes | str, int]],
) -> None:
    """Count a probable duplicate: a bad-checksum value and another value with the same 16 data bytes
    but another identity, on another structure (U4 rejected: not the same identity, worth a look)."""
    data = uid.bytes16
    if data is None:
        return
    key = identity_key(uid)
    earlier: list[tuple[bytes | str, int | None]] = []
    if data in bad_data:
        earlier.append(bad_data[data])
    if uid.form is UidForm.BAD_CHECKSUM:
        earlier.append((data, seen.get(data)))
        bad_data.setdefault(data, (key, (structure << 32) | site.line))
    for other_key, packed in earlier:
        if packed is not None and other_key != key and packed >> 32 != structure:
            report.probable_count += 1
            if len(report.probable) < MAX_EXAMPLES:
                report.probable.append((_first_site(packed, site.value), site))
            return


def _first_site(packed: int, value: str) -> UidSite:
    """The earlier occurrence of a duplicate, as far as the compact index knows it (its line numbers).

    >>> _first_site((4 << 32) | 5, "X").line
    5
    """
    structure, line = packed >> 32, packed & 0xFFFFFFFF
    return UidSite(None, None, structure, line, 0, "", None, value)


# -- add-uids ---------------------------------------------------------------------------------------------


@dataclass
class AddReport:
    """What :func:`add_uids` did (``added`` lists examples: record, xref, input line, level, value)."""

    file: str
    version: str | None
    gedcom7: bool
    tag: str
    added_records: Counter[str] = field(default_factory=Counter)
    added_events: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    added: list[tuple[str | None, str | None, int, int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warning_counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        """Number of lines added."""
        return sum(self.added_records.values()) + sum(self.added_events.values())

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        return {
            "file": self.file,
            "version": self.version,
            "tag": self.tag,
            "added": self.total,
            "added_records": dict(self.added_records),
            "added_events": dict(self.added_events),
            "kept": dict(self.kept),
            "examples": [
                {"record": r, "xref": x, "line": n, "level": lv, "value": v} for r, x, n, lv, v in self.added
            ],
            "warning_counts": dict(self.warning_counts),
            "warnings": self.warnings,
        }

    def to_text(self) -> str:
        """A human-readable summary."""
        rec = ", ".join(f"{k} {v}" for k, v in sorted(self.added_records.items())) or "none"
        out = [f"{self.file}: added {self.total} {self.tag} line(s): records {rec}"]
        if self.added_events:
            out.append("  events " + ", ".join(f"{k} {v}" for k, v in sorted(self.added_events.items())))
        if self.kept:
            out.append("  kept existing: " + ", ".join(f"{k} {v}" for k, v in sorted(self.kept.items())))
        return "\n".join(out)


def _last_gedcom_line(lines: list[GedcomLine], start: int, stop: int) -> int:
    """Index of the last GEDCOM line in ``lines[start:stop]`` (``start`` if none)."""
    for i in range(stop - 1, start - 1, -1):
        if lines[i].level is not None:
            return i
    return start


def _insert_after(
    lines: list[GedcomLine], index: int, make: Callable[[bytes], GedcomLine], reader: GedcomReader
) -> None:
    """Insert ``make(eol)`` after ``lines[index]``, with that line's terminator.

    The last line of a file may have no terminator; it must then get one (the file's usual one), the
    only case where an existing line changes.
    """
    prev = lines[index]
    eol = prev.eol
    if not eol:
        eol = reader.default_eol
        raw_eol = eol.decode("ascii").encode(reader.codec)
        lines[index] = prev._replace(raw=prev.raw + raw_eol, data=prev.data + eol, eol=eol)
    lines.insert(index + 1, make(eol))


def _paf_values(batch: int = 4096) -> Iterator[str]:
    """New PAF-form values without end, made ``batch`` at a time (:meth:`GedcomUid.new_paf_strings`)."""
    while True:
        yield from GedcomUid.new_paf_strings(batch)


def _maker(reader: GedcomReader, level: int, tag: str, value: str) -> Callable[[bytes], GedcomLine]:
    def make(eol: bytes) -> GedcomLine:
        return reader.make_line(level, tag, value, eol=eol)

    return make


def add_uids(
    reader: GedcomReader,
    *,
    types: Collection[str] = DEFAULT_RECORD_TYPES,
    events: bool = False,
    xarkid: bool = False,
    new_uid: Callable[[], str] | None = None,
) -> tuple[AddReport, Iterator[Record]]:
    """Give every record of ``types`` without a UID a new one (and, with ``events``, every event).

    Returns the report (filled in as the records are consumed) and the records to write.  Existing
    ``_UID``/``UID`` lines are never changed, moved or removed.  ``new_uid`` overrides the value
    generator (for tests).
    """
    gedcom7 = reader.gedcom7
    tag = "UID" if gedcom7 else "_UID"
    report = AddReport(reader.name, reader.version, gedcom7, tag)
    if new_uid is None:
        if xarkid:

            def new_uid() -> str:
                return str(GedcomUid.from_xarkid(XarkId.new(), gedcom7=gedcom7))

        elif gedcom7:

            def new_uid() -> str:
                return GedcomUid.new_uuid().value

        else:
            values = _paf_values()  # one generator per call: not shared between threads

            def new_uid() -> str:
                return next(values)

    make_value: Callable[[], str] = new_uid
    wanted = frozenset(types)

    def records() -> Iterator[Record]:
        for rec in reader:
            rtag = rec.tag
            if rtag not in wanted:
                yield rec
                continue
            has_uid = _UID_BYTES in rec.data and any(
                line.level == 1 and line.tag in UID_TAGS for line in rec.lines
            )
            if has_uid:
                report.kept[rtag] += 1
                if not events:
                    yield rec
                    continue
            if not events:
                quick = _append_quickly(rec, reader, tag, make_value)
                if quick is not None:
                    report.added_records[rtag] += 1
                    if len(report.added) < MAX_EXAMPLES:
                        report.added.append((rtag, rec.xref, rec.number, 1, quick[1]))
                    yield quick[0]
                    continue
            lines = list(rec.lines)
            changed = False
            if events:
                changed = _add_event_uids(lines, rec, tag, make_value, report, reader)
            if not has_uid:
                value = make_value()
                last = _last_gedcom_line(lines, 0, len(lines))
                _insert_after(lines, last, _maker(reader, 1, tag, value), reader)
                report.added_records[rtag] += 1
                if len(report.added) < MAX_EXAMPLES:
                    report.added.append((rtag, rec.xref, rec.number, 1, value))
                changed = True
            yield Record.from_lines(lines, rec.dialect) if changed else rec
        report.warning_counts = Counter(reader.warning_counts)
        report.warnings = [str(w) for w in reader.warnings]

    return report, records()


def _append_quickly(
    rec: Record, reader: GedcomReader, tag: str, make_value: Callable[[], str]
) -> tuple[Record, str] | None:
    """The record with a level-1 UID line appended, without parsing its other lines — when its last line
    is a GEDCOM line with a terminator (else ``None``: the caller takes the general path)."""
    data = rec.data
    eol = b"\r\n" if data.endswith(b"\r\n") else data[-1:]
    if eol not in (b"\r\n", b"\n", b"\r"):
        return None
    body = data[: -len(eol)]
    start = max(body.rfind(b"\n"), body.rfind(b"\r")) + 1
    if _STRICT.fullmatch(data, start) is None:
        return None
    value = make_value()
    new = b"1 " + tag.encode("ascii") + b" " + value.encode("ascii") + eol if value.isascii() else None
    if new is None:
        new = reader.make_line(1, tag, value, eol=eol).data
    return Record(data + new, rec.number, rec.dialect), value


def _add_event_uids(
    lines: list[GedcomLine],
    rec: Record,
    tag: str,
    make_value: Callable[[], str],
    report: AddReport,
    reader: GedcomReader,
) -> bool:
    """Insert a level-2 UID into every event of the record that has none; True if any was added."""
    starts = [i for i, line in enumerate(lines) if line.level == 1 and line.tag in EVENT_TAGS]
    changed = False
    for start in reversed(starts):  # from the end, so earlier indexes stay valid
        stop = start + 1
        while stop < len(lines) and (lines[stop].level is None or (lines[stop].level or 0) > 1):
            stop += 1
        if any(line.level == 2 and line.tag in UID_TAGS for line in lines[start + 1 : stop]):
            continue
        value = make_value()
        last = _last_gedcom_line(lines, start, stop)
        _insert_after(lines, last, _maker(reader, 2, tag, value), reader)
        event = lines[start].tag or ""
        report.added_events[event] += 1
        if len(report.added) < MAX_EXAMPLES:
            report.added.append((rec.tag, rec.xref, lines[start].number, 2, value))
        changed = True
    return changed


# -- migrate ----------------------------------------------------------------------------------------------


@dataclass
class MigrateReport:
    """What :func:`migrate` did and what it could not place in GEDCOM 7."""

    file: str
    version: str | None
    renamed: int = 0
    forms: Counter[str] = field(default_factory=Counter)
    not_uuid: list[UidSite] = field(default_factory=list)
    not_uuid_count: int = 0
    no_home: list[UidSite] = field(default_factory=list)
    no_home_count: int = 0
    empty: list[UidSite] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warning_counts: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        return {
            "file": self.file,
            "version": self.version,
            "renamed": self.renamed,
            "forms": dict(self.forms),
            "not_uuid_count": self.not_uuid_count,
            "not_uuid": [s.to_json() for s in self.not_uuid],
            "no_home_count": self.no_home_count,
            "no_home": [s.to_json() for s in self.no_home],
            "empty": [s.to_json() for s in self.empty],
            "warning_counts": dict(self.warning_counts),
            "warnings": self.warnings,
        }

    def to_text(self) -> str:
        """A human-readable summary."""
        out = [f"{self.file}: renamed {self.renamed} _UID line(s) to UID"]
        if self.version is None or not self.version.startswith("7"):
            out.append(
                f"  note: the file is GEDCOM {self.version or '(no version)'}; only UID tags were migrated"
            )
        if self.not_uuid_count:
            out.append(
                f"  {self.not_uuid_count} value(s) kept verbatim that are not RFC 9562 UUIDs "
                "(GEDCOM 7 recommends UUIDs for new UIDs only):"
            )
            out.extend(f"    line {s.line}: {s.value}" for s in self.not_uuid[:20])
        if self.no_home_count:
            out.append(f"  {self.no_home_count} _UID line(s) with no GEDCOM 7 home, left as _UID:")
            out.extend(f"    line {s.line}: under {s.parent}" for s in self.no_home[:20])
        if self.empty:
            out.append(f"  {len(self.empty)} empty _UID line(s) left as they are")
        return "\n".join(out)


def migrate(reader: GedcomReader) -> tuple[MigrateReport, Iterator[Record]]:
    """Rename ``_UID`` to ``UID`` where GEDCOM 7 has a UID (value verbatim); report the rest.

    Returns the report (filled in as the records are consumed) and the records to write.
    """
    report = MigrateReport(reader.name, reader.version)

    def records() -> Iterator[Record]:
        for rec in reader:
            sites = [(i, line, site) for i, line, site in _uid_sites(rec) if site.tag == "_UID"]
            if not sites:
                yield rec
                continue
            lines = list(rec.lines)
            for i, line, site in sites:
                uid = _parse_uid(site.value)
                if uid is None:
                    if len(report.empty) < MAX_EXAMPLES:
                        report.empty.append(site)
                    continue
                if not _has_7_home(site):
                    report.no_home_count += 1
                    if len(report.no_home) < MAX_EXAMPLES:
                        report.no_home.append(site)
                    continue
                lines[i] = _rename(line, reader)
                report.renamed += 1
                report.forms[uid.form.value] += 1
                if _UUID_PRODUCTION.fullmatch(site.value) is None:
                    report.not_uuid_count += 1
                    if len(report.not_uuid) < MAX_EXAMPLES:
                        report.not_uuid.append(site)
            yield Record.from_lines(lines, rec.dialect)
        report.warning_counts = Counter(reader.warning_counts)
        report.warnings = [str(w) for w in reader.warnings]

    return report, records()


def _rename(line: GedcomLine, reader: GedcomReader) -> GedcomLine:
    """The line with its tag ``_UID`` replaced by ``UID``; every other byte stays (leading space too)."""
    at = line.data.index(b"_UID")
    data = line.data[:at] + line.data[at + 1 :]
    if line.raw is line.data or line.raw == line.data:
        raw = data
    else:
        codec = reader.codec
        raw = data.decode(reader.dialect.view_codec, "surrogatepass").encode(codec, "surrogatepass")
    return line._replace(raw=raw, data=data, tag="UID")


# -- match ------------------------------------------------------------------------------------------------


@dataclass
class MatchReport:
    """Records of two files that share a UID, and the conflicts."""

    file_a: str
    file_b: str
    matches: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    match_count: int = 0
    conflicts: list[tuple[str, UidSite, UidSite]] = field(default_factory=list)
    conflict_counts: Counter[str] = field(default_factory=Counter)
    probable: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    probable_count: int = 0
    only_a: int = 0
    only_b: int = 0

    @property
    def ok(self) -> bool:
        """No conflicts."""
        return not self.conflict_counts

    def add_conflict(self, kind: str, a: UidSite, b: UidSite) -> None:
        """Count a conflict and keep it as an example."""
        self.conflict_counts[kind] += 1
        if len(self.conflicts) < MAX_EXAMPLES:
            self.conflicts.append((kind, a, b))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        return {
            "a": self.file_a,
            "b": self.file_b,
            "ok": self.ok,
            "match_count": self.match_count,
            "matches": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.matches],
            "conflict_counts": dict(self.conflict_counts),
            "conflicts": [
                {"kind": k, "first": a.to_json(), "second": b.to_json()} for k, a, b in self.conflicts
            ],
            "probable_count": self.probable_count,
            "probable": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.probable],
            "only_a": self.only_a,
            "only_b": self.only_b,
        }

    def to_text(self) -> str:
        """A human-readable summary."""
        out = [
            f"{self.match_count} record(s) matched by UID; "
            f"{self.only_a} UID(s) only in A, {self.only_b} only in B"
        ]
        for a, b in self.matches[:50]:
            out.append(
                f"  {a.record} {a.xref or ''} (A line {a.line}) = {b.record} {b.xref or ''} (B line {b.line})"
            )
        if self.match_count > 50:
            out.append(f"  … {self.match_count - 50} more (use --json)")
        if self.probable_count:
            out.append(
                f"{self.probable_count} probable match(es), not merged (same 32 data digits, a bad checksum)"
            )
            for a, b in self.probable[:20]:
                out.append(f"  {a.value!r} (A line {a.line}) ~ {b.value!r} (B line {b.line})")
        for kind, count in sorted(self.conflict_counts.items()):
            out.append(f"conflicts, {_CONFLICT_TEXT[kind]}: {count}")
            for _, a, b in [c for c in self.conflicts if c[0] == kind][:20]:
                out.append(
                    f"  {a.value!r}: {a.record} {a.xref or ''} line {a.line} / "
                    f"{b.record} {b.xref or ''} line {b.line}"
                )
        return "\n".join(out)


_CONFLICT_TEXT: Final = {
    "type": "one UID on records of different types in A and B",
    "same-file-a": "one UID on two records of A",
    "same-file-b": "one UID on two records of B",
    "one-to-many": "one record matched to two different records of the other file",
}


def _record_sites(reader: GedcomReader) -> Iterator[UidSite]:
    for rec in reader:
        for site, _ in _uid_sites_fast(rec):
            if site.level == 1:
                yield site


def _index(sites: Iterable[UidSite], report: MatchReport, kind: str) -> dict[bytes | str, UidSite]:
    index: dict[bytes | str, UidSite] = {}
    for site in sites:
        uid = _parse_uid(site.value)
        if uid is None:
            continue
        key = identity_key(uid)
        first = index.get(key)
        if first is None:
            index[key] = site
        elif first.record_line != site.record_line:
            report.add_conflict(kind, first, site)
    return index


def match(a: GedcomReader, b: GedcomReader) -> MatchReport:
    """Records of ``a`` and ``b`` that share a UID identity (level-1 UIDs), and the conflicts: one UID on
    records of different types, one UID on two records of the same file, one record matched to two."""
    report = MatchReport(a.name, b.name)
    index_a = _index(_record_sites(a), report, "same-file-a")
    index_b = _index(_record_sites(b), report, "same-file-b")
    pairs: dict[tuple[int, int], tuple[UidSite, UidSite]] = {}
    matched_keys = 0
    for key, site_b in index_b.items():
        site_a = index_a.get(key)
        if site_a is None:
            continue
        matched_keys += 1
        if site_a.record != site_b.record:
            report.add_conflict("type", site_a, site_b)
        else:
            pairs.setdefault((site_a.record_line, site_b.record_line), (site_a, site_b))
    partners_a: dict[int, tuple[UidSite, UidSite]] = {}
    partners_b: dict[int, tuple[UidSite, UidSite]] = {}
    for (line_a, line_b), (site_a, site_b) in pairs.items():
        other = partners_a.setdefault(line_a, (site_a, site_b))
        if other[1].record_line != line_b:
            report.add_conflict("one-to-many", other[1], site_b)
        other = partners_b.setdefault(line_b, (site_a, site_b))
        if other[0].record_line != line_a:
            report.add_conflict("one-to-many", other[0], site_a)
        report.match_count += 1
        if len(report.matches) < MAX_EXAMPLES:
            report.matches.append((site_a, site_b))
    report.only_a = len(index_a) - matched_keys
    report.only_b = len(index_b) - matched_keys
    _probable_matches(report, index_a, index_b)
    return report


def _probable_matches(
    report: MatchReport, index_a: dict[bytes | str, UidSite], index_b: dict[bytes | str, UidSite]
) -> None:
    """Pairs whose 16 data bytes agree but whose identities differ because a checksum is bad (18-byte
    keys, see :func:`identity_key`): reported as probable, not matched (U4 was rejected)."""
    bad_a: dict[bytes, list[bytes]] = {}
    for key in index_a:
        if isinstance(key, bytes) and len(key) == 18:
            bad_a.setdefault(key[:16], []).append(key)
    for key_b, site_b in index_b.items():
        if not isinstance(key_b, bytes):
            continue
        data = key_b[:16]
        keys_a = [k for k in bad_a.get(data, ()) if k != key_b]
        if len(key_b) == 18 and data in index_a:
            keys_a.insert(0, data)
        for key_a in keys_a:
            report.probable_count += 1
            if len(report.probable) < MAX_EXAMPLES:
                report.probable.append((index_a[key_a], site_b))
