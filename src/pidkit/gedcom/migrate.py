"""``migrate``: convert a GEDCOM 5.5 / 5.5.1 / 5.5.5 file to GEDCOM 7.0, keeping every UID verbatim.

The conversion streams the file record by record (memory: the largest record, plus the index of the
file's cross-reference identifiers that :func:`index_file` makes in a first pass — 8 bytes per record,
:class:`XrefSet`).  A record whose lines need no more than a new payload or tag takes a quick way
(:meth:`_Migration.quick`, checked to write what the general way writes); the others are read into a tree
of structures and converted structure by structure.  What it does, each rule citing GEDCOM 7
(``specs/gedcom7/``):

* **Container** (gedcom-1): UTF-8 with a byte-order mark, whatever the input encoding (ANSEL, UTF-16,
  CP1252 …); every line in 7.0's form (``Level D [Xref D] Tag [D LineVal] EOL``, one space, no leading
  blanks) with the input's line ending; ``CONC`` joined (7.0 has only ``CONT``); ``@`` unescaped as 5.5.1
  writes it (``@@`` → ``@``) and a leading ``@`` doubled as 7.0 requires; banned characters removed.
  Bytes the input's encoding cannot read (and a UTF-16 file's unpaired surrogates) cannot be written in
  UTF-8: wherever they stand in a line, each is a loss naming the line, the byte and the encoding read (in
  a value it becomes U+FFFD; a cross-reference identifier or pointer holding it is renamed) — the reader's
  "kept as is" warnings about them are left out of the report: they hold for the input, not the output.
* **Header** (gedcom-3 ``HEADER``): ``GEDC.VERS 7.0`` first, ``SCHMA`` with a ``TAG`` for each extension
  tag in use whose URI pidkit knows (:data:`~pidkit.gedcom.tags.KNOWN_EXTENSIONS`); ``CHAR``,
  ``GEDC.FORM`` (no longer needed), ``FILE`` and ``SUBN`` (gone in 7.0, reported) removed.
* **Cross-reference identifiers** (gedcom-1 ``Xref``): identifiers and pointers are read alike, in the
  file's encoding (:meth:`~pidkit.gedcom.reader.Dialect.identifier`); one that is not 7.0's
  (``@NoTe ref@``, ``@Fé@``) gets a new one (``@X1@``); a pointer to no record becomes ``@VOID@``
  (reported).
* **Records**: ``NOTE`` → ``SNOTE`` (and the pointers to them); ``SUBN`` removed (reported); an inline
  ``SOUR`` (text, no pointer) and an inline ``OBJE`` (no pointer) become new records right after the
  record that held them (gedcom-3: a citation and a multimedia link are pointers in 7.0).
* **Payloads** (gedcom-2): dates, ages, languages, media types, file paths and enumerations, by
  :mod:`~pidkit.gedcom.values7`; what a conversion cannot say in the 7.0 payload is kept in a ``PHRASE``.
  ``ASSO.RELA`` → ``ROLE`` (with the word as ``PHRASE``); ``FORM.TYPE`` → ``FORM.MEDI``; ``EMAI`` → ``EMAIL``.
* **UIDs**: ``_UID`` → ``UID`` wherever 7.0 has one (:func:`~pidkit.gedcom.tags.has_uid_home_7`), the
  value verbatim (U7: all its characters unchanged); elsewhere it stays the extension ``_UID``.  The
  ``_UID`` of an inline ``SOUR`` goes with it to the new ``SOUR`` record (a citation has no ``UID`` in
  7.0, a source record has), that of an inline ``OBJE`` to the new ``OBJE`` record.
  ``add_uids=True`` gives every record of the default types without one a new UUID in the same pass.
* **Extensions** are kept.  A standard tag that 7.0 does not allow where it stands (``SOUR.TEXT`` is fine,
  ``INDI.AFN`` is not) becomes the extension tag ``_AFN`` with its substructures, and is reported.

Every loss — data 7.0 cannot hold where it stood — is a line of :attr:`MigrateReport.losses`
(``line N: …``); with ``strict=True`` the first one raises :class:`~pidkit.errors.GedcomError` instead.
A 7.0 input is only given its ``_UID`` → ``UID`` renames (the rest of it is already 7.0).

>>> from pidkit.gedcom.reader import read_bytes
>>> data = (b"0 HEAD\\n1 GEDC\\n2 VERS 5.5.1\\n1 CHAR ANSEL\\n0 @I1@ INDI\\n1 NAME Jo /Doe/\\n"
...         b"1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\\n0 @N1@ NOTE a@@b\\n1 CONC c\\n0 TRLR\\n")
>>> report, records = migrate(read_bytes(data), index_file(read_bytes(data)))
>>> out = report.bom + b"".join(rec.raw for rec in records)
>>> out == migrate_bytes(data)[1]
True
>>> print(out.decode("utf-8-sig"), end="")
0 HEAD
1 GEDC
2 VERS 7.0
0 @I1@ INDI
1 NAME Jo /Doe/
1 UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6
0 @N1@ SNOTE a@bc
0 TRLR
>>> report.renamed, report.losses
(1, [])
"""

from __future__ import annotations

import heapq
import io
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import GedcomError
from ..gedcom_uid import GedcomUid
from .g7tables import PAYLOADS, RECORDS, SUBSTRUCTURES
from .grammar import (
    BANNED_7,
    EXT_TAG_LINE,
    LINE_ITEM_TEXT,
    LINES_TEXT,
    POINTER_5_TEXT,
    RECORD_XREF,
    SURROGATE,
    XREF_7_TEXT,
    lenient_line_with_tag,
)
from .reader import Dialect, GedcomLine, GedcomReader, ReadWarnings, Record, is_pointer, unescape_at
from .sites import MAX_EXAMPLES, UidSite, is_rfc9562_text, parse_uid, uid_sites
from .tags import (
    DEFAULT_RECORD_TYPES,
    ENUMERATIONS_7,
    KNOWN_EXTENSIONS,
    RELA_TO_ROLE,
    RENAMED_TAGS_7,
    UID_TAGS,
    has_uid_home_7,
)
from .values7 import Converted, age_7, date_7, date_exact_7, file_7, language_7, media_type_7

__all__ = ["BOM_7", "MigrateIndex", "MigrateReport", "XrefSet", "index_file", "migrate", "migrate_bytes"]

_LANG_LINE: Final = lenient_line_with_tag(b"LANG")

#: The extension that keeps a phrase where 7.0 allows no ``PHRASE`` (a language 5.5.1 named that BCP 47
#: has no tag for, e.g. ``Hmong``): 7.0's own ``PHRASE`` as a documented extension, as FamilySearch's
#: converter writes it.
PHRASE_EXT: Final = ("_PHRASE", "https://gedcom.io/terms/v7/PHRASE")

#: gedcom-1 "Characters": a 7.0 file is UTF-8; pidkit writes the byte-order mark, as FamilySearch's
#: converter does ("an initial U+FEFF may be present").
BOM_7: Final = b"\xef\xbb\xbf"

VOID: Final = "@VOID@"


def _shown(identifier: str) -> str:
    """An identifier read by :meth:`~pidkit.gedcom.reader.Dialect.identifier` as a message shows it: each
    piece the file's encoding cannot read as U+FFFD.

    >>> _shown("@I\\udce91@")
    '@I\ufffd1@'
    """
    return SURROGATE.sub("\ufffd", identifier)


def _line_xref(line: GedcomLine, dialect: Dialect) -> str | None:
    """A line's cross-reference identifier as :meth:`~pidkit.gedcom.reader.Dialect.identifier` reads it
    (:attr:`~pidkit.gedcom.reader.GedcomLine.xref` holds its view bytes as Latin-1).

    >>> from pidkit.gedcom.reader import parse_line
    >>> _line_xref(parse_line(b"0 @F\\xc3\\xa9@ FAM\\n"), Dialect())
    '@F\xe9@'
    """
    return None if line.xref is None else dialect.identifier(line.xref.encode("latin-1"))


#: The records 7.0 no longer has (gedcom-3: the submission record was removed): dropped, reported.
_REMOVED_RECORDS: Final = frozenset({"SUBN"})
#: HEAD substructures that 7.0 removed: dropped without a report (the conversion itself replaces them).
_HEAD_REPLACED: Final = frozenset({"GEDC", "CHAR"})
#: HEAD substructures that 7.0 removed: dropped and reported.
_HEAD_REMOVED: Final = frozenset({"FILE", "SUBN"})


class XrefSet:
    """The cross-reference identifiers of a file in 8 bytes each: their 64-bit hashes, sorted.

    Two identifiers with one hash (for a million records, a chance of about one in 10^7) would make a
    pointer to the missing one look resolved; nothing else depends on it.

    >>> xrefs = XrefSet()
    >>> xrefs.add("@I1@")
    >>> "@I1@" in xrefs, "@I2@" in xrefs, len(xrefs)
    (True, False, 1)
    """

    __slots__ = ("_hashes", "_sorted")

    #: Sort this many hashes at a time, then merge (no list of a million ints in memory).
    CHUNK: Final = 1 << 16

    def __init__(self) -> None:
        self._hashes = array("q")
        self._sorted = True

    def add(self, xref: str) -> None:
        """Add ``xref``."""
        self._hashes.append(hash(xref))
        self._sorted = False

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, xref: object) -> bool:
        if not self._sorted:
            data, size = self._hashes, self.CHUNK
            chunks = [array("q", sorted(data[i : i + size])) for i in range(0, len(data), size)]
            self._hashes = array("q", heapq.merge(*chunks))
            self._sorted = True
        key = hash(xref)
        at = bisect_left(self._hashes, key)
        return at < len(self._hashes) and self._hashes[at] == key


@dataclass
class MigrateIndex:
    """What the first pass over a file found: its records' cross-reference identifiers, the new ones for
    those that are not 7.0's, and the extension tags in use (``made``: the xrefs :meth:`new_xref` gave)."""

    xrefs: XrefSet = field(default_factory=XrefSet)
    renamed: dict[str, str] = field(default_factory=dict)
    ext_tags: set[str] = field(default_factory=set)
    unknown_language: bool = False
    next_id: int = 1
    made: set[str] = field(default_factory=set)

    def new_xref(self) -> str:
        """A cross-reference identifier no record of the file has (``@X1@``, ``@X2@`` …)."""
        while True:
            xref = f"@X{self.next_id}@"
            self.next_id += 1
            if xref not in self.xrefs and xref not in self.made:
                self.made.add(xref)
                return xref


def index_file(reader: GedcomReader) -> MigrateIndex:
    """The first pass of :func:`migrate`: read every record's xref and the extension tags in use.

    >>> from pidkit.gedcom.reader import read_bytes
    >>> index = index_file(read_bytes(b"0 HEAD\\n0 @NoTe ref@ NOTE x\\n0 @3@ _LOC\\n0 TRLR\\n"))
    >>> "@3@" in index.xrefs, index.renamed, sorted(index.ext_tags)
    (True, {'@NoTe ref@': '@X1@'}, ['_LOC'])
    """
    index = MigrateIndex()
    invalid: list[str] = []
    for rec in reader:
        head = RECORD_XREF.match(rec.data)
        if head is not None:
            xref = rec.dialect.identifier(head.group(1)) if head.group(1) else None
        else:
            first = rec.head
            xref = _line_xref(first, rec.dialect) if first is not None else None
        if xref is not None:
            index.xrefs.add(xref)
            if XREF_7_TEXT.fullmatch(xref) is None or xref == VOID:
                invalid.append(xref)
        if b"_" in rec.data:
            for m in EXT_TAG_LINE.finditer(rec.data):
                index.ext_tags.add(m.group(1).decode("ascii"))
        if not index.unknown_language and b"LANG" in rec.data:
            for m in _LANG_LINE.finditer(rec.data):
                if not language_7(rec.dialect.decode(m.group(3) or b"")).ok:
                    index.unknown_language = True
    for xref in invalid:
        index.renamed.setdefault(xref, index.new_xref())
    return index


@dataclass
class MigrateReport(ReadWarnings):
    """What :func:`migrate` did, and every loss by line (:attr:`losses`, the first
    :data:`~pidkit.gedcom.sites.MAX_EXAMPLES`; :attr:`loss_counts` counts them all by kind)."""

    file: str
    version: str | None
    bom: bytes = BOM_7
    renamed: int = 0
    forms: Counter[str] = field(default_factory=Counter)
    not_uuid: list[UidSite] = field(default_factory=list)
    not_uuid_count: int = 0
    no_home: list[UidSite] = field(default_factory=list)
    no_home_count: int = 0
    empty: list[UidSite] = field(default_factory=list)
    added_uids: int = 0
    new_records: Counter[str] = field(default_factory=Counter)
    xrefs_renamed: int = 0
    schema: dict[str, str] = field(default_factory=dict)
    losses: list[str] = field(default_factory=list)
    loss_counts: Counter[str] = field(default_factory=Counter)

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
            "added_uids": self.added_uids,
            "new_records": dict(self.new_records),
            "xrefs_renamed": self.xrefs_renamed,
            "schema": self.schema,
            "loss_count": sum(self.loss_counts.values()),
            "loss_counts": dict(self.loss_counts),
            "losses": self.losses,
            **self.warnings_json(),
        }


class _Node:
    """One structure: tag, xref, payload (text with line breaks, or a pointer), input line, substructures."""

    __slots__ = ("children", "line", "pointer", "tag", "value", "xref")

    def __init__(self, tag: str, value: str | None, pointer: str | None, line: int, xref: str | None = None):
        self.tag = tag
        self.value = value
        self.pointer = pointer
        self.line = line
        self.xref = xref
        self.children: list[_Node] = []


def _phrase(text: str, line: int) -> _Node:
    return _Node("PHRASE", text, None, line)


class _Migration:
    """The state of one conversion (report, index, options) and its rules, one method per rule."""

    def __init__(
        self,
        reader: GedcomReader,
        index: MigrateIndex,
        report: MigrateReport,
        *,
        strict: bool,
        add_uids: bool,
    ) -> None:
        self.reader = reader
        self.index = index
        self.report = report
        self.strict = strict
        self.add_uids = add_uids
        self.pending: list[_Node] = []  # records made from inline structures, written after the current one
        self.cache: dict[tuple[str, str], Converted | None] = {}
        self.record_tag: str | None = None
        self.record_xref: str | None = None
        self.record_line = 0

    # -- reporting ------------------------------------------------------------------------------------------

    def loss(self, line: int, kind: str, message: str) -> None:
        """Report data 7.0 cannot hold where it stood (``strict``: raise)."""
        if self.strict:
            raise GedcomError(f"{message} (--strict)", line=line)
        self.report.loss_counts[kind] += 1
        if len(self.report.losses) < MAX_EXAMPLES:
            self.report.losses.append(f"line {line}: {message}")

    def replaced(self, line: GedcomLine, dialect: Dialect) -> None:
        """gedcom-1 "Characters": 7.0 is UTF-8, so no byte the input's encoding cannot read (nor a UTF-16
        file's unpaired surrogate) is written as it is, wherever it stands in the line
        (:meth:`~pidkit.gedcom.reader.Dialect.decode_checked` names each): a loss each.  In a line value
        it becomes U+FFFD; a cross-reference identifier or a pointer holding it is renamed (the pointer as
        its record, or ``@VOID@``); a line that is not GEDCOM is dropped."""
        body = line.data[: len(line.data) - len(line.eol)]
        if body.isascii():
            return
        start = len(body) if line.payload is None else len(body) - len(line.payload)
        head = dialect.decode_checked(body[:start])[1]
        if line.level is None:
            for bad in head:
                self.loss(line.number, "decode", f"{bad}: dropped with its line (not a GEDCOM line)")
            return
        for bad in head:  # level and tag are ASCII (grammar): the bytes are the xref's
            shown = _shown(_line_xref(line, dialect) or "")
            message = f"{bad}: in cross-reference identifier {shown}, renamed in the GEDCOM 7 output"
            self.loss(line.number, "decode", message)
        value, found = dialect.decode_checked(body, start) if start < len(body) else ("", ())
        pointer = is_pointer(value, gedcom7=dialect.gedcom7) and POINTER_5_TEXT.fullmatch(value)
        for bad in found:
            where = "replaced by U+FFFD"
            if pointer:
                where = f"in pointer {value}, renamed as its record (or @VOID@)"
            self.loss(line.number, "decode", f"{bad}: {where} in the GEDCOM 7 output")

    # -- reading a record into a tree -----------------------------------------------------------------------

    def tree(self, rec: Record) -> _Node | None:
        """The record as a tree of structures (CONC/CONT joined, ``@`` unescaped as the version writes it)."""
        dialect: Dialect = rec.dialect
        gedcom7 = dialect.gedcom7
        stack: list[tuple[int, _Node]] = []
        root: _Node | None = None
        for line in rec.lines:
            self.replaced(line, dialect)  # every line, whatever becomes of it
            if line.level is None:
                body = line.data[: len(line.data) - len(line.eol)]
                if body.strip():
                    self.loss(
                        line.number, "not-gedcom", f"not a GEDCOM line, dropped: {dialect.decode(body)!r}"
                    )
                continue
            tag = line.tag or ""
            raw = line.value(dialect)
            if tag in ("CONT", "CONC") and stack and stack[-1][0] == line.level - 1:
                node = stack[-1][1]
                text = unescape_at(raw or "", gedcom7=gedcom7)
                if node.pointer is not None:
                    self.loss(line.number, "conc-pointer", f"{tag} after a pointer, dropped: {text!r}")
                    continue
                joined = ("\n" if tag == "CONT" else "") + self.clean(text, line.number)
                node.value = (node.value or "") + joined
                continue
            while stack and stack[-1][0] >= line.level:
                stack.pop()
            if not stack and root is not None:
                self.loss(line.number, "level", f"line of level {line.level} outside its record, dropped")
                continue
            if stack and line.level > stack[-1][0] + 1:
                self.loss(line.number, "level", f"level {line.level} after level {stack[-1][0]}: dropped")
                continue
            pointer: str | None = None
            value: str | None = None
            if raw is not None:
                if is_pointer(raw, gedcom7=gedcom7) and POINTER_5_TEXT.fullmatch(raw):
                    pointer = dialect.identifier(line.payload or b"")  # read as the xrefs (index_file)
                else:
                    value = self.clean(unescape_at(raw, gedcom7=gedcom7), line.number)
            xref = _line_xref(line, dialect)
            if stack and xref is not None and (XREF_7_TEXT.fullmatch(xref) is None or xref == VOID):
                xref = self.index.new_xref()  # a substructure's (index_file indexes records' only)
                self.report.xrefs_renamed += 1
            node = _Node(tag, value, pointer, line.number, xref)
            if stack:
                stack[-1][1].children.append(node)
            else:
                root = node
            stack.append((line.level, node))
        return root

    # -- records --------------------------------------------------------------------------------------------

    def quick(self, rec: Record, eol: str) -> str | None:
        """The converted record's text when no line of it needs more than a new payload or tag (no
        ``CONC``, no structure made, moved or renamed to an extension, no ``PHRASE``, no loss); else
        ``None``, and :meth:`record` converts it.  Equal to what :meth:`record` writes (tested)."""
        dialect = rec.dialect
        data = rec.data
        try:
            text = data.decode("ascii" if data.isascii() else dialect.view_codec)
        except UnicodeDecodeError:
            return None
        if BANNED_7.search(text) is not None:
            return None
        renamed = self.index.renamed
        xrefs = self.index.xrefs
        child = _CHILD
        out: list[str] = []
        uids: list[tuple[int, _Node, str, int]] = []  # (index in out, node, parent tag, level)
        # per level above: (structure type or None in an extension, tag, payload kind)
        stack: list[tuple[str | None, str, str]] = []
        if LINES_TEXT.fullmatch(text) is None:
            return None
        number = rec.number
        root_xref: str | None = None
        root_tag: str | None = None
        previous, previous_tag = -1, ""  # the level and tag of the line before
        for level_s, xref, tag, value_s in LINE_ITEM_TEXT.findall(text):
            level = int(level_s)
            if level > len(stack) or (level == 0) != (not stack):
                return None
            del stack[level:]
            pointer: str | None = None
            value: str | None = value_s
            if "@" in value_s:
                # a 5.x pointer (grammar POINTER_5_TEXT: @, not # nor @, no other @, @), written out for speed
                inner = value_s[1:-1]
                if value_s[0] == value_s[-1] == "@" and inner and inner[0] != "#" and "@" not in inner:
                    pointer, value = value_s, None
                    if pointer in renamed:
                        pointer = renamed[pointer]
                    elif pointer != VOID and pointer not in xrefs:
                        return None
                else:
                    return None  # @ escapes: the general path
            if level == 0:
                root_xref, root_tag = xref or None, tag
                if tag == "NOTE":
                    tag = "SNOTE"
                rtype = RECORDS.get(tag)
                if (rtype is None and not tag.startswith("_")) or tag in ("HEAD", "TRLR") or pointer or value:
                    return None
                previous, previous_tag = 0, tag
                if xref:
                    xref = renamed.get(xref, xref)
                stack.append((rtype, tag, ""))
                out.append(f"0 {xref} {tag}" if xref else f"0 {tag}")
                number += 1
                continue
            if xref:
                return None
            ptype, ptag, pkind = stack[level - 1]
            if ptag == "CONT":
                return None  # a substructure of a CONT line
            ntype: str | None = None
            kind = ""
            if ptype is not None and tag[0] != "_" and tag != "CONT":
                if tag == "NOTE" and pointer is not None:
                    tag = "SNOTE"
                found = child.get((ptype, tag))
                if found is None:
                    return None  # not allowed here, renamed, or made into other structures
                tag, ntype, kind = found
                if kind == "<Text>":
                    if pointer is not None:
                        return None
                elif kind[:2] == "@<":
                    if pointer is None:
                        return None
                elif pointer is not None:
                    return None
                elif kind == "" or kind == "[Y|<NULL>]":
                    if value and not (kind == "[Y|<NULL>]" and value == "Y"):
                        return None
                elif value is not None:
                    converted = self.converter(kind, ntype, value)
                    if converted is not None:
                        if converted.phrase is not None or not converted.ok:
                            return None
                        value = converted.value
            elif tag == "_UID":
                uids.append((len(out), _Node("_UID", value, None, number), ptag, level))
            elif tag == "CONT":
                # a CONT right after the text it continues (or after another CONT of it)
                after = previous == level - 1 or (previous == level and previous_tag == "CONT")
                if pkind != "<Text>" or not after:
                    return None
                kind = "CONT"
            elif tag == "CONC" or (ptype is None and value is not None and tag in _TYPE_BY_TAG):
                return None  # CONC, or a standard payload inside an extension: the general path
            stack.append((ntype, tag, kind))
            previous, previous_tag = level, tag
            if pointer is not None:
                out.append(f"{level} {tag} {pointer}")
            elif value:
                out.append(f"{level} {tag} {value}")
            else:
                out.append(f"{level} {tag}")
            number += 1
        self.record_tag, self.record_xref, self.record_line = root_tag, root_xref, rec.number
        if root_xref is not None and root_xref in renamed:
            self.report.xrefs_renamed += 1
        for at, node, parent, level in uids:
            self.uid(node, _Node(parent, None, None, 0), level)
            out[at] = f"{level} {node.tag} {node.value}" if node.value else f"{level} {node.tag}"
        if (
            self.add_uids
            and stack
            and stack[0][1] in DEFAULT_RECORD_TYPES
            and not any(line.startswith("1 UID ") or line == "1 UID" for line in out)
        ):
            out.append(f"1 UID {GedcomUid.new_uuid().value}")
            self.report.added_uids += 1
        return eol.join(out) + eol

    def converter(self, kind: str, ntype: str, value: str) -> Converted | None:
        """The payload conversion for a payload kind (``None``: the text stays as it is), remembered for
        the last :data:`_CACHE_SIZE` payloads (the same dates, sexes and ages come back again and again)."""
        key = (ntype, value)
        cache = self.cache
        if key in cache:
            return cache[key]
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        converted = cache[key] = self.convert(kind, ntype, value)
        return converted

    def convert(self, kind: str, ntype: str, value: str) -> Converted | None:
        """The payload conversion for a payload kind (``None``: the text stays as it is)."""
        if kind in ("<DateValue>", "<DatePeriod>"):
            converted = date_7(value)
            period = converted.value.startswith(("FROM", "TO"))
            if kind == "<DatePeriod>" and converted.ok and converted.value and not period:
                return Converted("", value, False)
            return converted
        if kind == "<DateExact>":
            return date_exact_7(value)
        if kind == "<Age>":
            return age_7(value)
        if kind == "<Language>":
            return language_7(value)
        if kind == "<MediaType>":
            return media_type_7(value)
        if kind == "<FilePath>":
            return file_7(value)
        if kind in ("<Enum>", "<List:Enum>"):
            return self.enum(value, ntype, kind == "<List:Enum>")
        return None

    def record(self, rec: Record) -> list[_Node]:
        """The converted record (and the records made from its inline structures)."""
        root = self.tree(rec)
        if root is None:
            return []
        shown = _shown(root.xref) if root.xref is not None else None
        self.record_tag, self.record_xref, self.record_line = root.tag, shown, root.line
        if root.tag == "HEAD":
            return [self.head(root)]
        if root.tag == "TRLR":
            return [_Node("TRLR", None, None, root.line)]
        if root.tag in _REMOVED_RECORDS:
            self.loss(root.line, "removed", f"{root.tag} record (not in GEDCOM 7), dropped")
            return []
        if root.xref is not None:
            root.xref = self.xref(root.xref)
        if root.tag == "NOTE":
            root.tag = "SNOTE"
        rtype = RECORDS.get(root.tag)
        if rtype is None and not root.tag.startswith("_"):
            self.loss(root.line, "extension", f"{root.tag} is not a GEDCOM 7 record: kept as _{root.tag}")
            root.tag = "_" + root.tag
        if rtype is not None:
            self.payload(root, rtype, None)
        self.children(root, rtype, 0)
        self.pending, made = [], self.pending
        out = [root, *made]
        if self.add_uids:
            for node in out:
                self.add_uid(node)
        return out

    def head(self, root: _Node) -> _Node:
        """gedcom-3 ``HEADER``: ``GEDC.VERS 7.0`` and ``SCHMA`` first, then the 5.x header's other lines."""
        head = _Node("HEAD", None, None, root.line)
        gedc = _Node("GEDC", None, None, root.line)
        gedc.children.append(_Node("VERS", "7.0", None, root.line))
        head.children.append(gedc)
        known = {t: KNOWN_EXTENSIONS[t] for t in sorted(self.index.ext_tags) if t in KNOWN_EXTENSIONS}
        if self.index.unknown_language:
            known[PHRASE_EXT[0]] = PHRASE_EXT[1]
        if known:
            schma = _Node("SCHMA", None, None, root.line)
            schma.children.extend(_Node("TAG", f"{t} {uri}", None, root.line) for t, uri in known.items())
            head.children.append(schma)
            self.report.schema = known
        rest = _Node("HEAD", None, None, root.line)
        for child in root.children:
            if child.tag in _HEAD_REPLACED or child.tag == "SCHMA":
                continue
            if child.tag in _HEAD_REMOVED:
                shown = _shown(child.pointer or "") or child.value or ""
                self.loss(child.line, "removed", f"HEAD.{child.tag} {shown} (not in GEDCOM 7), dropped")
                continue
            rest.children.append(child)
        self.children(rest, RECORDS["HEAD"], 0)
        head.children.extend(rest.children)
        return head

    def xref(self, xref: str) -> str:
        """A record's xref as 7.0 allows it (gedcom-1 ``Xref``)."""
        new = self.index.renamed.get(xref)
        if new is not None:
            self.report.xrefs_renamed += 1
            return new
        return xref

    def pointer(self, node: _Node) -> None:
        """A pointer to a record of the file (renamed as the record was), else ``@VOID@`` (reported)."""
        pointer = node.pointer
        if pointer is None or pointer == VOID:
            return
        new = self.index.renamed.get(pointer)
        if new is not None:
            node.pointer = new
        elif pointer not in self.index.xrefs:
            self.loss(node.line, "void", f"{node.tag} {_shown(pointer)} points to no record: @VOID@")
            node.pointer = VOID

    # -- substructures --------------------------------------------------------------------------------------

    def children(self, node: _Node, ntype: str | None, level: int) -> None:
        """Convert the substructures of ``node`` (of structure type ``ntype``; ``None`` in an extension)."""
        out: list[_Node] = []
        for child in node.children:
            out.extend(self.structure(child, node, ntype, level + 1))
        node.children = out

    def structure(self, node: _Node, parent: _Node, ptype: str | None, level: int) -> list[_Node]:
        """One substructure, converted (a list: it may become several, or none)."""
        tag = node.tag
        if tag == "_UID":
            return [self.uid(node, parent, level)]
        if ptype is None or tag.startswith("_"):  # inside an extension, or an extension: only pointers
            self.untyped(node, level)
            return [node]
        tag = node.tag = RENAMED_TAGS_7.get(tag, tag)
        if tag == "NOTE" and node.pointer is not None:
            tag = node.tag = "SNOTE"
        allowed = SUBSTRUCTURES.get(ptype, {})
        if tag == "RELA" and ptype == "g7:ASSO":
            return [self.rela(node, level)]
        if tag == "TYPE" and ptype == "g7:FORM":
            tag = node.tag = "MEDI"
        if tag == "SOUR" and node.pointer is None and allowed.get("SOUR") == "g7:SOUR":
            return [self.inline_source(node, level)]
        if tag == "OBJE" and node.pointer is None and allowed.get("OBJE") == "g7:OBJE":
            link = self.inline_object(node, level)
            return [link] if link is not None else []
        ntype = allowed.get(tag)
        if ntype is None:
            self.loss(
                node.line,
                "extension",
                f"{tag} is not a GEDCOM 7 substructure of {parent.tag}: kept as _{tag}",
            )
            node.tag = "_" + tag
            self.untyped(node, level)
            return [node]
        self.payload(node, ntype, parent)
        self.children(node, ntype, level)
        return [node]

    def untyped(self, node: _Node, level: int) -> None:
        """An extension structure and its substructures: pointers checked; a standard tag whose payload is
        a language, an age or a date wherever 7.0 defines it gets that payload converted; the rest is kept
        as it is (the extension defines what its substructures mean, gedcom-1 "Extensions")."""
        self.pointer(node)
        ntype = _TYPE_BY_TAG.get(node.tag)
        if ntype is not None and node.value is not None and node.pointer is None:
            self.payload(node, ntype, None)
        for child in node.children:
            if child.tag == "_UID":
                self.uid(child, node, level + 1)  # no UID home in an extension: reported, kept
            else:
                self.untyped(child, level + 1)

    def uid(self, node: _Node, parent: _Node, level: int) -> _Node:
        """``_UID`` → ``UID`` where 7.0 has a UID (value verbatim, U7); else it stays ``_UID`` (reported)."""
        value = node.value or ""
        site = UidSite(
            self.record_tag, self.record_xref, self.record_line, node.line, level, "_UID", parent.tag, value
        )
        uid = parse_uid(value)
        if uid is None:
            if len(self.report.empty) < MAX_EXAMPLES:
                self.report.empty.append(site)
            return node
        if not has_uid_home_7(level, self.record_tag, parent.tag):
            self.report.no_home_count += 1
            if len(self.report.no_home) < MAX_EXAMPLES:
                self.report.no_home.append(site)
            return node
        node.tag = "UID"
        self.report.renamed += 1
        self.report.forms[uid.form.value] += 1
        if not is_rfc9562_text(value):
            self.report.not_uuid_count += 1
            if len(self.report.not_uuid) < MAX_EXAMPLES:
                self.report.not_uuid.append(site)
        return node

    def add_uid(self, record: _Node) -> None:
        """``add_uids``: a new UUID for a record of the default types that has no ``UID``."""
        if record.tag not in DEFAULT_RECORD_TYPES or any(c.tag == "UID" for c in record.children):
            return
        record.children.append(_Node("UID", GedcomUid.new_uuid().value, None, record.line))
        self.report.added_uids += 1

    # -- payloads -------------------------------------------------------------------------------------------

    def payload(self, node: _Node, ntype: str, parent: _Node | None) -> None:
        """The payload as the structure type's (gedcom-3 metasyntax: ``<Text>``, ``@<XREF:…>@``, …)."""
        kind = PAYLOADS.get(ntype, "")
        if kind.startswith("@<"):
            if node.pointer is None:
                if node.value:
                    self.loss(
                        node.line,
                        "payload",
                        f"{node.tag} {node.value!r} is not a pointer: kept as _{node.tag}",
                    )
                    node.tag = "_" + node.tag
                    return
                node.pointer = VOID
            self.pointer(node)
            return
        if node.pointer is not None:
            self.pointer(node)
            if kind == "" or kind in ("[Y|<NULL>]",):
                self.loss(node.line, "payload", f"{node.tag} takes no pointer: kept as _{node.tag}")
                node.tag = "_" + node.tag
            else:
                node.value, node.pointer = node.pointer, None
            return
        value = node.value
        if kind in ("", "[Y|<NULL>]"):
            if value is None or value == "" or (kind == "[Y|<NULL>]" and value == "Y"):
                return
            node.value = None
            allowed = SUBSTRUCTURES.get(ntype, {})
            if "NOTE" in allowed:  # 5.x events with a description: the text becomes the event's note
                note = _Node("NOTE", value, None, node.line)
                node.children.append(note)
                if kind == "[Y|<NULL>]":
                    node.value = "Y"
                return
            self.loss(node.line, "payload", f"{node.tag} takes no text in GEDCOM 7, dropped: {value!r}")
            return
        if value is None:
            return
        converted = self.converter(kind, ntype, value)
        if converted is None:
            return
        self.converted(node, ntype, converted)

    def converted(self, node: _Node, ntype: str, converted: Converted) -> None:
        """Put a converted payload in place, with its ``PHRASE``; report what no ``PHRASE`` can keep."""
        original = node.value
        node.value = converted.value
        phrase_ok = "PHRASE" in SUBSTRUCTURES.get(ntype, {})
        if converted.phrase is not None and phrase_ok:
            node.children.insert(0, _phrase(converted.phrase, node.line))
        if not converted.ok:
            if converted.phrase is not None and phrase_ok:
                self.loss(
                    node.line, "value", f"{node.tag} {original!r} is not a GEDCOM 7 value: kept as its PHRASE"
                )
            elif (
                converted.phrase is not None
                and self.index.unknown_language
                and PAYLOADS.get(ntype) == "<Language>"
            ):
                node.children.insert(0, _Node(PHRASE_EXT[0], converted.phrase, None, node.line))
            elif ntype in ("g7:DATE-exact", "g7:HEAD-DATE") or converted.phrase is None:
                self.loss(
                    node.line,
                    "value",
                    f"{node.tag} {original!r} is not a GEDCOM 7 value: kept as _{node.tag}",
                )
                node.tag, node.value = "_" + node.tag, original
            else:
                self.loss(
                    node.line,
                    "value",
                    f"{node.tag} {original!r} is not a GEDCOM 7 value: {converted.value!r}",
                )
        elif converted.phrase is not None and not phrase_ok:
            self.loss(node.line, "value", f"{node.tag} {original!r} written as {converted.value!r}")

    def enum(self, value: str, ntype: str, is_list: bool) -> Converted:
        """gedcom-2 "Enumeration": upper case; another value is ``OTHER`` with the text as its phrase."""
        values = ENUMERATIONS_7.get(ntype)
        items = [v.strip().upper() for v in value.split(",")] if is_list else [value.strip().upper()]
        if values is None or all(item in values for item in items):
            return Converted(", ".join(items), None, True)
        if not is_list and "OTHER" in values:
            return Converted("OTHER", value, True)
        return Converted(", ".join(i for i in items if i in values), value, False)

    def clean(self, text: str, line: int) -> str:
        """gedcom-1 "Characters": remove the banned characters (reported)."""
        if BANNED_7.search(text) is None:
            return text
        self.loss(line, "banned", f"banned character(s) removed: {text!r}")
        return BANNED_7.sub("", text)

    def rela(self, node: _Node, level: int) -> _Node:
        """5.5.1 ``ASSO.RELA`` text (at ``level``) → 7.0 ``ROLE`` (gedcom-3 ``ASSOCIATION_STRUCTURE``) with a
        ``PHRASE``."""
        text = (node.value or "").strip()
        role = RELA_TO_ROLE.get(text.lower(), "OTHER")
        new = _Node("ROLE", role, None, node.line)
        if text.upper() != role:
            new.children.append(_phrase(text, node.line))
        new.children.extend(node.children)
        self.children(new, "g7:ROLE", level)
        return new

    def new_record(self, record: _Node) -> None:
        """Convert the substructures of a record made from an inline structure, as those of a record of
        its own (its tag, xref and line: where a ``_UID`` of it has a home, what the report names); then
        it waits in :attr:`pending` to be written after the current record."""
        current = self.record_tag, self.record_xref, self.record_line
        self.record_tag, self.record_xref, self.record_line = record.tag, record.xref, record.line
        try:
            self.children(record, RECORDS[record.tag], 0)
        finally:
            self.record_tag, self.record_xref, self.record_line = current
        self.report.new_records[record.tag] += 1
        self.pending.append(record)

    def inline_source(self, node: _Node, level: int) -> _Node:
        """5.5.1 ``SOURCE_CITATION`` without a pointer (at ``level``) → a new ``SOUR`` record (its text as
        ``NOTE``) and a citation of it; its ``TEXT`` lines go to the citation's ``DATA`` (gedcom-3
        ``SOURCE_CITATION``).  Its ``_UID`` / ``UID`` lines identify the source it describes: they go to the
        new record, which 7.0 gives a ``UID`` (gedcom-3 ``SOURCE_RECORD``: ``IDENTIFIER_STRUCTURE``), value
        verbatim (U7); a ``SOURCE_CITATION`` has none."""
        xref = self.index.new_xref()
        record = _Node("SOUR", None, None, node.line, xref)
        if node.value:
            record.children.append(_Node("NOTE", node.value, None, node.line))
        cite = _Node("SOUR", None, xref, node.line)
        data: _Node | None = None
        for child in node.children:
            if child.tag in UID_TAGS:
                record.children.append(child)
                continue
            if child.tag != "TEXT":
                cite.children.append(child)
                continue
            if data is None:  # DATA stands where the first TEXT stood
                data = _Node("DATA", None, None, child.line)
                cite.children.append(data)
            data.children.append(child)
        self.new_record(record)
        self.children(cite, "g7:SOUR", level)
        return cite

    def inline_object(self, node: _Node, level: int) -> _Node | None:
        """5.5 / 5.5.1 ``MULTIMEDIA_LINK`` without a pointer (at ``level``) → a new ``OBJE`` record and a
        link to it; the link keeps ``TITL`` (gedcom-3 ``MULTIMEDIA_LINK``), 5.5's ``OBJE.FORM`` goes under
        each ``FILE``."""
        xref = self.index.new_xref()
        record = _Node("OBJE", None, None, node.line, xref)
        link = _Node("OBJE", None, xref, node.line)
        form = [c for c in node.children if c.tag == "FORM"]
        for child in node.children:
            if child.tag in ("TITL", "CROP"):
                link.children.append(child)
            elif child.tag != "FORM":
                record.children.append(child)
        for file in (c for c in record.children if c.tag == "FILE"):
            if form and not any(c.tag == "FORM" for c in file.children):
                file.children.extend(form)
        self.new_record(record)
        self.children(link, "g7:OBJE", level)
        return link


def _types_by_tag() -> dict[str, str]:
    """Standard tags whose every structure type has one payload kind among those :meth:`_Migration.untyped`
    converts → one of those types."""
    kinds: dict[str, dict[str, str]] = {}
    for children in SUBSTRUCTURES.values():
        for tag, ntype in children.items():
            kinds.setdefault(tag, {})[PAYLOADS.get(ntype, "")] = ntype
    return {
        tag: next(iter(by_kind.values()))
        for tag, by_kind in kinds.items()
        if len(by_kind) == 1 and next(iter(by_kind)) in ("<Language>", "<Age>", "<DateValue>")
    }


_TYPE_BY_TAG: Final = _types_by_tag()

#: Tags whose conversion makes or moves structures (:meth:`_Migration.structure`): never the quick way.
_SPECIAL_TAGS: Final = frozenset({"RELA", "TYPE", "SOUR", "OBJE"})


def _children_table() -> dict[tuple[str, str], tuple[str, str, str]]:
    """(structure type, 5.x tag) → (7.0 tag, structure type, payload kind) for the substructures
    :meth:`_Migration.quick` converts: every one 7.0 allows, renamed as :data:`RENAMED_TAGS_7` says, but
    those of :data:`_SPECIAL_TAGS`."""
    table: dict[tuple[str, str], tuple[str, str, str]] = {}
    renames = {new: old for old, new in RENAMED_TAGS_7.items()}
    for ptype, children in SUBSTRUCTURES.items():
        for tag, ntype in children.items():
            if tag in _SPECIAL_TAGS or tag == "UID":
                continue
            kind = PAYLOADS.get(ntype, "")
            table[(ptype, tag)] = (tag, ntype, kind)
            if tag in renames:
                table[(ptype, renames[tag])] = (tag, ntype, kind)
    return table


_CHILD: Final = _children_table()

#: Remember this many payload conversions (:meth:`_Migration.converter`).
_CACHE_SIZE: Final = 1 << 14


def _escape_7(text: str) -> str:
    """gedcom-1 ``lineStr``: a leading ``@`` doubled."""
    return "@" + text if text.startswith("@") else text


def _lines(node: _Node, level: int, out: list[str]) -> None:
    """The 7.0 lines of ``node`` at ``level`` (gedcom-1 ``Line``; a leading ``@`` doubled, line breaks as
    ``CONT``)."""
    head = f"{level} {node.xref} {node.tag}" if node.xref else f"{level} {node.tag}"
    if node.pointer is not None:
        out.append(f"{head} {node.pointer}")
    elif node.value:
        first, *rest = node.value.split("\n")
        out.append(f"{head} {_escape_7(first)}" if first else head)
        for more in rest:
            out.append(f"{level + 1} CONT {_escape_7(more)}" if more else f"{level + 1} CONT")
    else:
        out.append(head)
    for child in node.children:
        _lines(child, level + 1, out)


def migrate(
    reader: GedcomReader,
    index: MigrateIndex,
    *,
    strict: bool = False,
    add_uids: bool = False,
    quick: bool = True,
) -> tuple[MigrateReport, Iterator[Record]]:
    """Convert the file ``reader`` reads to GEDCOM 7.0 (see the module docstring); ``index`` is the first
    pass's (:func:`index_file` on another reader of the same file).

    Returns the report (filled in as the records are consumed) and the records to write (UTF-8, in the
    file's line ending; write :attr:`MigrateReport.bom` first: :data:`BOM_7`, or a 7.0 input's own).
    ``strict``: the first loss raises
    :class:`~pidkit.errors.GedcomError` naming its line.  ``add_uids``: records of the default types
    without a UID get a new UUID.  ``quick=False`` converts every record the general way (the quick way
    must give the same bytes, for the tests).
    """
    # a 7.0 input keeps its bytes, its byte-order mark (or none) too
    report = MigrateReport(reader.name, reader.version, reader.bom if reader.gedcom7 else BOM_7)
    state = _Migration(reader, index, report, strict=strict, add_uids=add_uids)
    out_dialect = Dialect("utf-8", "utf-8", "7.0")

    def records() -> Iterator[Record]:
        if reader.gedcom7:
            yield from _uids_only(reader, state)
            report.take_warnings(reader)
            return
        eol = reader.default_eol.decode("ascii")
        for rec in reader:
            text = state.quick(rec, eol) if quick else None
            if text is not None:
                yield Record(text.encode("utf-8"), rec.number, out_dialect)
                continue
            for node in state.record(rec):
                lines: list[str] = []
                _lines(node, 0, lines)
                text = eol.join(lines) + eol
                yield Record(text.encode("utf-8"), node.line, out_dialect)
        report.take_warnings(reader, leave_out={"decode"})  # each is a loss (_Migration.replaced)

    return report, records()


def _uids_only(reader: GedcomReader, state: _Migration) -> Iterator[Record]:
    """A 7.0 file: rename ``_UID`` to ``UID`` where 7.0 has a UID, in the record's bytes; every other byte
    stays."""
    for rec in reader:
        found = [(site, at) for site, _, at in uid_sites(rec) if site.tag == "_UID"]
        renamed: list[int] = []  # offsets of the "_" of the _UID tags to rename
        for site, at in found:
            state.record_tag, state.record_xref, state.record_line = site.record, site.xref, site.record_line
            node = _Node("_UID", site.value, None, site.line)
            state.uid(node, _Node(site.parent or "", None, None, 0), site.level)
            if node.tag == "UID":
                renamed.append(at)
        yield _rename(rec, renamed) if renamed else rec


def _rename(rec: Record, offsets: list[int]) -> Record:
    """The record with the ``_`` at each of ``offsets`` (the start of a ``_UID`` tag) removed."""
    data = rec.data
    pieces = []
    start = 0
    for at in offsets:
        pieces.append(data[start:at])
        start = at + 1
    pieces.append(data[start:])
    return Record(b"".join(pieces), rec.number, rec.dialect)


def migrate_bytes(
    data: bytes, *, strict: bool = False, add_uids: bool = False
) -> tuple[MigrateReport, bytes]:
    """:func:`migrate` a file held in memory (both passes over ``data``): the report and the 7.0 file's
    bytes, byte-order mark included.

    >>> report, out = migrate_bytes(b"0 HEAD\\n1 GEDC\\n2 VERS 5.5\\n0 @I1@ INDI\\n1 FAMC @F9@\\n0 TRLR\\n")
    >>> out
    b'\\xef\\xbb\\xbf0 HEAD\\n1 GEDC\\n2 VERS 7.0\\n0 @I1@ INDI\\n1 FAMC @VOID@\\n0 TRLR\\n'
    >>> report.losses
    ['line 5: FAMC @F9@ points to no record: @VOID@']
    """
    index = index_file(GedcomReader(io.BytesIO(data)))
    report, records = migrate(GedcomReader(io.BytesIO(data)), index, strict=strict, add_uids=add_uids)
    out = b"".join(rec.raw for rec in records)
    return report, report.bom + out
