"""``add_uids``: give every record (and, if asked, every event) without a UID a new one.

Lines are never rewritten: ``add_uids`` only inserts lines.

* A record with a ``_UID`` in a 7.0 file already *has* an identifier: it gets no second one (run
  ``migrate``).
* **Where a new UID goes**: as the last line of the record (after its last level-1 substructure and its
  subordinate lines), so nothing before it moves and no CONT/CONC run is split; an event's UID goes
  after the last line of that event.  GEDCOM 7 lets UID stand anywhere among the substructures; PAF
  writes ``_UID`` near the end of a record too.  The new line takes the encoding of the file and the
  line ending of the line before it.
* **New values**: ``1 _UID`` in the PAF form (UUID v4 + U2 checksum) for 5.x, ``1 UID`` with a dashed
  UUID v4 for 7.0 (RFC 9562 §4, as GEDCOM 7 ``g7:UID`` recommends); with ``xarkid=True`` a new XarkId,
  its compact form in 5.x and its GUID form in 7.0.

>>> from pidkit.gedcom.reader import read_bytes
>>> reader = read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n0 TRLR\\n")
>>> report, records = add_uids(reader, new_uid=lambda: "X1")
>>> b"".join(rec.raw for rec in records)
b'0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n'
>>> report.total, dict(report.added_records)
(1, {'INDI': 1})
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..gedcom_uid import GedcomUid
from ..xarkid import XarkId
from .grammar import LINE
from .reader import GedcomLine, GedcomReader, ReadWarnings, Record
from .sites import MAX_EXAMPLES, UID_BYTES
from .tags import DEFAULT_RECORD_TYPES, EVENT_TAGS, UID_TAGS

__all__ = ["AddReport", "add_uids"]


@dataclass
class AddReport(ReadWarnings):
    """What :func:`add_uids` did (``added`` lists examples: record, xref, input line, level, value)."""

    file: str
    version: str | None
    gedcom7: bool
    tag: str
    added_records: Counter[str] = field(default_factory=Counter)
    added_events: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    added: list[tuple[str | None, str | None, int, int, str]] = field(default_factory=list)

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
            **self.warnings_json(),
        }


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
    """New PAF-form values without end, made ``batch`` at a time (:meth:`GedcomUid.new_paf_strings`); an
    iterator of the standard library's, which ``next`` reaches without a Python frame.

    >>> values = _paf_values(2)
    >>> len({next(values) for _ in range(5)})
    5
    """
    return itertools.chain.from_iterable(map(GedcomUid.new_paf_strings, itertools.repeat(batch)))


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
            new_uid = partial(next, _paf_values())  # one iterator per call: not shared between threads

    make_value: Callable[[], str] = new_uid
    wanted = frozenset(types)
    line_start = b"1 " + tag.encode("ascii") + b" "  # a new level-1 UID line, before its value
    added_records, examples = report.added_records, report.added

    def records() -> Iterator[Record]:
        for rec in reader:
            rtag = rec.tag
            if rtag not in wanted:
                yield rec
                continue
            has_uid = rec.data.find(UID_BYTES) >= 0 and any(
                line.level == 1 and line.tag in UID_TAGS for line in rec.lines
            )
            if has_uid:
                report.kept[rtag] += 1
                if not events:
                    yield rec
                    continue
            if not events:
                quick = _append_quickly(rec, reader, line_start, tag, make_value)
                if quick is not None:
                    added_records[rtag] += 1
                    if len(examples) < MAX_EXAMPLES:
                        examples.append((rtag, rec.xref, rec.number, 1, quick[1]))
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
        report.take_warnings(reader)

    return report, records()


def _append_quickly(
    rec: Record, reader: GedcomReader, line_start: bytes, tag: str, make_value: Callable[[], str]
) -> tuple[Record, str] | None:
    """The record with a level-1 UID line appended, without parsing its other lines — when its last line
    is a GEDCOM line with a terminator (else ``None``: the caller takes the general path).  ``line_start``
    is the new line's ``b"1 " + tag + b" "``, used when the value is ASCII."""
    data = rec.data
    last = data[-1:]
    if last == b"\n":
        eol = b"\r\n" if data.endswith(b"\r\n") else b"\n"
    elif last == b"\r":
        eol = b"\r"
    else:
        return None
    if not rec.well_formed:  # else the reader has checked every line of the record
        # the last line starts after the terminator before it, which ends in the same byte as this one's
        # in a file of one terminator; any other CR or LF in what follows fails the match (general path)
        start = data.rfind(last, 0, len(data) - len(eol)) + 1
        if LINE.fullmatch(data, start) is None:
            return None
    value = make_value()
    if value.isascii():
        new = line_start + value.encode("ascii") + eol
    else:
        new = reader.make_line(1, tag, value, eol=eol).data
    return Record(data + new, rec.number, rec.dialect, rec.tag), value


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
