"""Streaming, lossless GEDCOM reader (5.5, 5.5.1 and 7.0).

A file is read in chunks and handed out one *record* at a time (a level-0 line and every line up to
the next level-0 line), so memory is bounded by the largest record, not by the file.  Every line keeps
its exact bytes (:attr:`GedcomLine.raw`, terminator included) so that writing the lines back gives the
input byte for byte; the parsed fields (level, xref, tag, payload) are a view for analysis.

The line grammar (gedcom-1 "Lines" and 5.5.1's looser rules) is :mod:`pidkit.gedcom.grammar`; each
line's terminator (CR-LF, CR or LF) is kept as found.

Real files are messy.  Blank lines, leading whitespace, several spaces between fields, trailing
spaces, lines longer than 5.5.1's 255 characters, level jumps, undecodable bytes and stray non-GEDCOM
lines are all read and kept; each gives a :class:`GedcomWarning` naming its line number.

>>> import io
>>> data = b"0 HEAD\\n1 GEDC\\n2 VERS 5.5.1\\n1 CHAR UTF-8\\n0 @I1@ INDI\\r\\n1 NAME Jo /Doe/\\r\\n0 TRLR\\n"
>>> reader = GedcomReader(io.BytesIO(data))
>>> reader.version, reader.codec
('5.5.1', 'utf-8')
>>> [(r.tag, r.xref, len(r.lines)) for r in reader]
[('HEAD', None, 4), ('INDI', '@I1@', 2), ('TRLR', None, 1)]
>>> reader.bom + b"".join(line.raw for r in GedcomReader(io.BytesIO(data)) for line in r.lines) == data
True
"""

from __future__ import annotations

import codecs
import io
import itertools
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, BinaryIO, Final, NamedTuple

from ..errors import GedcomError
from .encoding import DEFAULT_CODEC, codec_for_charset, decode_replacing, is_ascii_compatible, sniff
from .grammar import (
    EOL_RE,
    HEAD_CHAR,
    HEAD_VERS,
    LENIENT_LINE,
    LINE,
    LINE_END,
    LOOSE_POINTER,
    NEXT_RECORD,
    POINTER_5_TEXT,
    POINTER_7_TEXT,
    RECORD_TAG,
    SURROGATE,
    TAG_7_TEXT,
    XREF_7_TEXT,
    Scan,
    record_scanner,
)

__all__ = [
    "MAX_LINE_551",
    "Dialect",
    "GedcomLine",
    "GedcomReader",
    "GedcomWarning",
    "ReadWarnings",
    "Record",
    "Undecodable",
    "escape_at",
    "is_pointer",
    "parse_line",
    "read_bytes",
    "unescape_at",
]

#: GEDCOM 5.5.1 ch. 1 "Grammar rules": a line, terminator included, must not exceed 255 characters.
MAX_LINE_551: Final = 255

#: Read this many bytes at a time.
CHUNK_SIZE: Final = 1 << 20

#: A line longer than this many bytes (terminator excluded) is an error, not a line: it bounds the memory
#: a file without line breaks (a binary file, ``/dev/zero``) can take.
MAX_LINE_BYTES: Final = 1 << 20

#: Keep at most this many warnings of each kind (the per-kind counts are always complete).
MAX_WARNINGS_PER_KIND: Final = 100

_HINT_BYTES: Final = 65536


class GedcomWarning(NamedTuple):
    """Something odd about one line that was read (and kept) anyway.

    >>> str(GedcomWarning(7, "blank-line", "blank line"))
    'line 7: blank line'
    """

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Undecodable(NamedTuple):
    """Bytes of a line that the file's encoding cannot read: where they start (1-based, counted in the
    line's bytes as the file holds them), what they are, and the encoding they were read in (a Python codec
    name, as :attr:`GedcomReader.codec`).

    >>> str(Undecodable(9, "byte 0xe9", "utf-8"))
    'byte 0xe9 at position 9 is not valid utf-8'
    """

    position: int
    what: str
    codec: str

    def __str__(self) -> str:
        return f"{self.what} at position {self.position} is not valid {self.codec}"


def _bytes_shown(data: bytes) -> str:
    """Bytes named in a message.

    >>> _bytes_shown(b"\\xe9"), _bytes_shown(b"\\xe2\\x82")
    ('byte 0xe9', 'byte sequence 0xe2 0x82')
    """
    if len(data) == 1:
        return f"byte {data[0]:#04x}"
    return "byte sequence " + " ".join(f"{b:#04x}" for b in data)


class Dialect(NamedTuple):
    """How a file's lines are to be understood: shared by all of a file's records.

    ``codec`` is the file's character encoding; ``view_codec`` the encoding of :attr:`GedcomLine.data`
    (the same, except UTF-8 for UTF-16 files); ``version`` is ``HEAD.GEDC.VERS`` (or ``None``).
    """

    codec: str = DEFAULT_CODEC
    view_codec: str = DEFAULT_CODEC
    version: str | None = None

    @property
    def gedcom7(self) -> bool:
        """Whether the file says it is GEDCOM 7.x.

        >>> Dialect(version="7.0.1").gedcom7, Dialect(version="5.5.1").gedcom7
        (True, False)
        """
        return self.version is not None and self.version.strip().startswith("7")

    def decode(self, data: bytes) -> str:
        """Decode bytes of the view encoding (undecodable bytes become U+FFFD, see :meth:`decode_checked`;
        the raw bytes are kept).

        >>> Dialect().decode(b"caf\\xc3\\xa9")
        'café'
        """
        if data.isascii():  # every codec pidkit reads with agrees on ASCII (and the ANSEL one is slow)
            return data.decode("ascii")
        return self.decode_checked(data)[0]

    def decode_checked(self, data: bytes, start: int = 0) -> tuple[str, tuple[Undecodable, ...]]:
        """Decode ``data[start:]`` (``data``: view bytes of a line, from its start), and name every piece
        the file's encoding cannot read, each replaced by one U+FFFD: bytes the codec rejects, or in a
        UTF-16 file an unpaired surrogate (a code unit).  Positions count the line's bytes as the file holds
        them, so they are right for UTF-16 files too.

        >>> Dialect().decode_checked(b"1 NAME J\\xe9r", 7)
        ('J\ufffdr', (Undecodable(position=9, what='byte 0xe9', codec='utf-8'),))
        >>> utf16 = Dialect("utf-16-le", "utf-8")
        >>> utf16.decode_checked("1 NAME J\\ud800r".encode("utf-8", "surrogatepass"), 7)[1]
        (Undecodable(position=17, what='code unit 0xd800 (an unpaired surrogate)', codec='utf-16-le'),)
        """
        part = data[start:] if start else data
        if part.isascii():
            return part.decode("ascii"), ()
        if self.view_codec != self.codec:
            return self._decode_transcoded(data, start)
        try:
            return part.decode(self.view_codec), ()
        except UnicodeDecodeError:
            pass
        text, spans = decode_replacing(part, self.view_codec)
        found = tuple(Undecodable(start + a + 1, _bytes_shown(part[a:b]), self.codec) for a, b in spans)
        return text, found

    def identifier(self, data: bytes) -> str:
        """A cross-reference identifier or a pointer (view bytes, ``@`` included) as text, read as line
        values are (in the file's encoding) but losslessly, so that an identifier reads the same wherever it
        stands and two different ones never read the same: a byte the encoding cannot read becomes a lone
        surrogate (``surrogateescape``), a UTF-16 file's unpaired surrogate stays one.

        >>> Dialect().identifier(b"@F\\xc3\\xa9@"), Dialect().identifier(b"@I\\xe91@")
        ('@Fé@', '@I\\udce91@')
        >>> Dialect("cp1252", "cp1252").identifier(b"@F\\xe9@")
        '@Fé@'
        """
        if data.isascii():
            return data.decode("ascii")
        if self.view_codec != self.codec:
            return data.decode(self.view_codec, "surrogatepass")
        return data.decode(self.view_codec, "surrogateescape")

    def _decode_transcoded(self, data: bytes, start: int) -> tuple[str, tuple[Undecodable, ...]]:
        """:meth:`decode_checked` for a UTF-16 file, whose view is UTF-8 with its unpaired surrogates kept
        (``surrogatepass``)."""
        try:
            text = data[start:].decode(self.view_codec, "surrogatepass")
        except UnicodeDecodeError:  # a view cut inside a character: named as any undecodable bytes are
            part = data[start:]
            text, spans = decode_replacing(part, self.view_codec)
            codec = self.codec
            return text, tuple(Undecodable(start + a + 1, _bytes_shown(part[a:b]), codec) for a, b in spans)
        if SURROGATE.search(text) is None:
            return text, ()
        codec = self.codec
        at = len(data[:start].decode(self.view_codec, "surrogatepass").encode(codec, "surrogatepass"))
        found = []
        done = 0
        for m in SURROGATE.finditer(text):
            at += len(text[done : m.start()].encode(codec, "surrogatepass"))
            unit = f"code unit {ord(m.group()):#06x} (an unpaired surrogate)"
            found.append(Undecodable(at + 1, unit, codec))
            at += len(m.group().encode(codec, "surrogatepass"))
            done = m.end()
        return SURROGATE.sub("\ufffd", text), tuple(found)


class GedcomLine(NamedTuple):
    """One line of a GEDCOM file, with its exact bytes.

    ``number`` is the 1-based line number (0 for a line pidkit made); ``raw`` the bytes in the file's
    encoding, terminator included; ``data`` the same line in an ASCII-compatible encoding (``raw``
    itself unless the file is UTF-16).  ``level`` is ``None`` for a line that is not a GEDCOM line
    (blank, stray text); then ``xref``, ``tag`` and ``payload`` are ``None`` too.  ``payload`` is the
    line value as bytes of ``data`` (``@@`` not undone), ``None`` when the line has no value; ``eol``
    is the terminator as found (``b"\\r\\n"``, ``b"\\r"``, ``b"\\n"`` or ``b""`` at the end of a file).

    >>> line = parse_line(b"1 _UID 0123\\r\\n", 5)
    >>> line.level, line.tag, line.payload, line.eol, line.number
    (1, '_UID', b'0123', b'\\r\\n', 5)
    """

    number: int
    raw: bytes
    data: bytes
    level: int | None
    xref: str | None
    tag: str | None
    payload: bytes | None
    eol: bytes

    def value(self, dialect: Dialect = Dialect()) -> str | None:  # noqa: B008 - immutable default
        """The line value as text (no ``@@`` unescaping, no CONT/CONC joining), or ``None``.

        >>> parse_line(b"1 NAME Jo /Doe/\\n").value()
        'Jo /Doe/'
        """
        return None if self.payload is None else dialect.decode(self.payload)

    def checked_value(
        self,
        dialect: Dialect = Dialect(),  # noqa: B008 - immutable default
    ) -> tuple[str | None, tuple[Undecodable, ...]]:
        """:meth:`value`, and the bytes of it that the file's encoding cannot read (there it holds U+FFFD),
        as :meth:`Dialect.decode_checked` names them: by position in the line.

        >>> parse_line(b"1 NAME J\\xe9r\\n", 6).checked_value()
        ('J\ufffdr', (Undecodable(position=9, what='byte 0xe9', codec='utf-8'),))
        """
        if self.payload is None:
            return None, ()
        end = len(self.data) - len(self.eol)
        return dialect.decode_checked(self.data[:end], end - len(self.payload))


def parse_line(data: bytes, number: int = 1) -> GedcomLine:
    """Parse one line (ASCII-compatible bytes, terminator included) without any warnings.

    Lines that do not follow the grammar even leniently come back with ``level=None``.

    >>> parse_line(b"0 @I1@ INDI\\n")[3:7]
    (0, '@I1@', 'INDI', None)
    >>> parse_line(b"  2   DATE 1 JAN 1900")[3:7]
    (2, None, 'DATE', b'1 JAN 1900')
    >>> parse_line(b"garbage\\r").level is None
    True
    """
    return _parse(data, data, number)[0]


def _parse(raw: bytes, data: bytes, number: int) -> tuple[GedcomLine, bool]:
    """Parse a line; the flag says whether it needed the lenient grammar (or none)."""
    m = LINE.fullmatch(data)
    strict = m is not None
    if m is None:
        m = LENIENT_LINE.fullmatch(data)
    if m is None:
        eol = LINE_END.search(data)
        return GedcomLine(number, raw, data, None, None, None, None, eol.group(1) if eol else b""), True
    level_b, xref_b, tag_b, payload, eol_b = m.groups()
    xref = xref_b.decode("latin-1") if xref_b is not None else None
    return GedcomLine(number, raw, data, int(level_b), xref, _tag(tag_b), payload, eol_b), not strict


_TAG_CACHE: dict[bytes, str] = {}


def _tag(tag_b: bytes) -> str:
    tag = _TAG_CACHE.get(tag_b)
    if tag is None:
        tag = tag_b.decode("ascii")
        if len(_TAG_CACHE) < 4096:
            _TAG_CACHE[tag_b] = tag
    return tag


def is_pointer(payload: str, *, gedcom7: bool) -> bool:
    """Whether a line value is a pointer (gedcom-1 production ``pointer``; 5.5.1 ``@<XREF>@``).

    >>> is_pointer("@I1@", gedcom7=True), is_pointer("@@I1@", gedcom7=True)
    (True, False)
    >>> is_pointer("@#DJULIAN@", gedcom7=False)
    False
    """
    return (POINTER_7_TEXT if gedcom7 else POINTER_5_TEXT).fullmatch(payload) is not None


def unescape_at(text: str, *, gedcom7: bool) -> str:
    """Undo ``@`` doubling in a line string.

    7.0 (gedcom-1 production ``lineStr``): only a leading ``@`` is doubled.  5.5.1: every ``@`` in a
    value is doubled, so ``@@`` anywhere stands for ``@``.

    >>> unescape_at("@@@@@ four", gedcom7=True), unescape_at("a@@b @@c", gedcom7=False)
    ('@@@@ four', 'a@b @c')
    """
    if gedcom7:
        return text[1:] if text.startswith("@@") else text
    return text.replace("@@", "@")


def escape_at(text: str, *, gedcom7: bool) -> str:
    """Double ``@`` as the version requires (inverse of :func:`unescape_at`).

    >>> escape_at("@me and @I", gedcom7=True), escape_at("a@b", gedcom7=False)
    ('@@me and @I', 'a@@b')
    """
    if gedcom7:
        return "@" + text if text.startswith("@") else text
    return text.replace("@", "@@")


class Record:
    """A level-0 line and its substructure lines, kept as the bytes that were read.

    The lines before the first level-0 line of a file, if any, form a record whose first line is not
    level 0.  ``data`` is the record's bytes in the view encoding (see :class:`GedcomLine`), ``number``
    the 1-based line number of its first line, ``tag`` its :attr:`tag` where the caller has read it
    already (the reader's scan has).  ``well_formed`` says that every line passed the reader's fast check
    (:func:`~pidkit.gedcom.grammar.record_scanner`): true only for records the reader cut from one run of
    such lines.  Lines are parsed only when :attr:`lines` is asked for.

    >>> rec = Record(b"0 @N1@ NOTE a@@b\\n1 CONC c\\n1 CONT d\\n", 1, Dialect(version="5.5.1"))
    >>> rec.tag, rec.xref, rec.text(0), len(rec.lines)
    ('NOTE', '@N1@', 'a@bc\\nd', 3)
    """

    __slots__ = ("_head", "_lines", "_tag", "data", "dialect", "number", "well_formed")

    def __init__(
        self, data: bytes, number: int, dialect: Dialect, tag: str | None = None, well_formed: bool = False
    ) -> None:
        self.data = data
        self.number = number
        self.dialect = dialect
        self.well_formed = well_formed
        self._tag = tag
        self._lines: tuple[GedcomLine, ...] | None = None
        self._head: GedcomLine | None = None

    @classmethod
    def from_lines(cls, lines: Sequence[GedcomLine], dialect: Dialect) -> Record:
        """A record made of ``lines`` (e.g. a changed copy of another record's lines).

        >>> Record.from_lines([parse_line(b"0 TRLR\\n")], Dialect()).data
        b'0 TRLR\\n'
        """
        rec = cls(b"".join([line.data for line in lines]), lines[0].number if lines else 0, dialect)
        rec._lines = tuple(lines)
        return rec

    def __repr__(self) -> str:
        return f"Record({self.data!r}, {self.number!r}, {self.dialect!r})"

    @property
    def raw(self) -> bytes:
        """The record's bytes in the file's encoding, exactly as read (or as changed)."""
        dialect = self.dialect
        if dialect.view_codec == dialect.codec:
            return self.data
        return self.data.decode(dialect.view_codec, "surrogatepass").encode(dialect.codec, "surrogatepass")

    @property
    def lines(self) -> tuple[GedcomLine, ...]:
        """The record's lines, parsed (cached)."""
        if self._lines is None:
            dialect = self.dialect
            transcode = dialect.view_codec != dialect.codec
            out = []
            for i, data in enumerate(self.data.splitlines(keepends=True)):
                raw = data
                if transcode:
                    text = data.decode(dialect.view_codec, "surrogatepass")
                    raw = text.encode(dialect.codec, "surrogatepass")
                out.append(_parse(raw, data, self.number + i)[0])
            self._lines = tuple(out)
        return self._lines

    @property
    def first_line(self) -> GedcomLine | None:
        """The record's first line, parsed (``None`` for a record without lines)."""
        if self._lines is not None:
            return self._lines[0] if self._lines else None
        if self._head is None:
            end = EOL_RE.search(self.data)
            data = self.data[: end.end()] if end else self.data
            self._head = _parse(data, data, self.number)[0]
        return self._head

    @property
    def head(self) -> GedcomLine | None:
        """The level-0 line, or ``None`` for leading junk."""
        first = self.first_line
        return first if first is not None and first.level == 0 else None

    @property
    def tag(self) -> str | None:
        """The record's tag (``INDI``, ``FAM``, ``HEAD``, ``TRLR`` …), or ``None``."""
        if self._tag is not None:
            return self._tag
        if self._lines is None and self._head is None:
            m = RECORD_TAG.match(self.data)
            if m is not None:  # the common case, without building the line
                return _TAG_CACHE.get(m.group(1)) or _tag(m.group(1))
        head = self.head
        return head.tag if head is not None else None

    @property
    def xref(self) -> str | None:
        """The record's cross-reference identifier (``@I1@``), or ``None``."""
        head = self.head
        return head.xref if head is not None else None

    def text(self, index: int) -> str:
        """The payload of line ``index`` with its CONT/CONC lines joined and ``@`` escapes undone.

        CONT adds a line break, CONC (5.x) appends directly.  A pointer is returned as written.
        """
        lines = self.lines
        line = lines[index]
        if line.level is None:
            raise GedcomError("not a GEDCOM line", line=line.number)
        gedcom7 = self.dialect.gedcom7
        first = line.value(self.dialect) or ""
        if is_pointer(first, gedcom7=gedcom7):
            return first
        parts = [unescape_at(first, gedcom7=gedcom7)]
        for j in range(index + 1, len(lines)):  # no slice: reading every line's text stays linear
            nxt = lines[j]
            if nxt.level is None:
                continue
            if nxt.level != line.level + 1 or nxt.tag not in ("CONT", "CONC"):
                break
            if nxt.tag == "CONT":
                parts.append("\n")
            parts.append(unescape_at(nxt.value(self.dialect) or "", gedcom7=gedcom7))
        return "".join(parts)

    def substructures(self, level: int = 1) -> Iterator[tuple[int, GedcomLine]]:
        """``(index, line)`` of the lines at ``level`` (default the record's direct substructures)."""
        for i, line in enumerate(self.lines):
            if line.level == level:
                yield i, line


class GedcomReader:
    """Read a GEDCOM file record by record, keeping every byte.

    ``source`` is a binary file object; ``name`` is used in messages.  After construction (which reads
    the header record) :attr:`bom`, :attr:`codec`, :attr:`charset` and :attr:`version` are known.
    Iterate to get :class:`Record` objects; :attr:`warnings` fills up as lines are read.
    ``progress`` is called with the number of bytes read after each chunk.

    >>> import io
    >>> r = GedcomReader(io.BytesIO(b"0 HEAD\\n\\n 1 CHAR ANSEL\\n0 TRLR"))
    >>> r.codec, [len(rec.lines) for rec in r]
    ('gedcom', [3, 1])
    >>> [str(w) for w in r.warnings]
    ['line 2: blank line', 'line 3: leading whitespace before the level']
    """

    def __init__(
        self,
        source: BinaryIO,
        *,
        name: str = "<stream>",
        chunk_size: int = CHUNK_SIZE,
        progress: Callable[[int], None] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self.name = name
        self._source = source
        self._chunk_size = max(chunk_size, 1)
        self.max_line_bytes = max_line_bytes
        self._progress = progress
        self._warnings: list[GedcomWarning] = []
        self._kept: Counter[str] = Counter()
        self.warning_counts: Counter[str] = Counter()
        self.eol_counts: Counter[bytes] = Counter()
        self.charset: str | None = None
        self.lines_read = 0
        first = source.read(self._chunk_size)
        # enough to sniff a BOM / UTF-16 and, even with tiny chunks, to see the whole header (up to 64 KiB):
        # the version decides how lines are checked
        while len(first) < 4 or (len(first) < _HINT_BYTES and NEXT_RECORD.search(first) is None):
            more = source.read(self._chunk_size)
            if not more:
                break
            first += more
        sniffed = sniff(first)
        self.bom: bytes = sniffed.bom
        first = first[len(self.bom) :]
        self._utf16 = sniffed.codec is not None and not is_ascii_compatible(sniffed.codec)
        self._sniffed_codec = sniffed.codec
        codec = sniffed.codec or DEFAULT_CODEC
        version_hint: str | None = None
        if not self._utf16:
            m = HEAD_VERS.search(first[:_HINT_BYTES])
            if m is not None:
                version_hint = m.group(1).decode("latin-1").strip()
            # the bytes are checked as they are read, the header's among them: take HEAD.CHAR first
            end = NEXT_RECORD.search(first, 0, _HINT_BYTES)
            m = HEAD_CHAR.search(first, 0, end.start() if end else _HINT_BYTES)
            if m is not None:
                codec = self._declared_codec(m.group(1).decode("latin-1").strip()) or codec
        self._version_hint = version_hint
        self.dialect = Dialect(codec, "utf-8" if self._utf16 else codec, version_hint)
        self._eol = b""
        self._scan: Callable[[bytes, int], Scan] | None = None
        self._records = self._iter_records(first)
        self._pending: Record | None = next(self._records, None)
        self._first_line = self._pending.first_line if self._pending is not None else None
        if self._pending is not None and self._pending.tag == "HEAD":
            self._read_header(self._pending)
        if self._pending is not None:
            self._pending.dialect = self.dialect

    # -- construction helpers -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        progress: Callable[[int], None] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> GedcomReader:
        """Open ``path`` for reading (use as a context manager to close it)."""
        fh = open(path, "rb")  # noqa: SIM115 - closed by close()/__exit__
        try:
            return cls(fh, name=os.fspath(path), progress=progress, max_line_bytes=max_line_bytes)
        except BaseException:
            fh.close()
            raise

    def require_gedcom(self) -> None:
        """Raise :class:`GedcomError` unless the file starts with the header line ``0 HEAD``.

        gedcom-1 "Lines": ``Dataset = Header *Record Trailer`` and ``Header = "0 HEAD" EOL …`` (5.5.1
        ch. 1 likewise).  A byte-order mark, UTF-16 and leading whitespace before the level are accepted;
        anything else (an empty file, a text file, a record before the header) is not a GEDCOM file.

        >>> read_bytes(b"0 HEAD\\n0 TRLR\\n").require_gedcom()
        >>> read_bytes(b"root:x:0:0\\n").require_gedcom()
        Traceback (most recent call last):
        ...
        pidkit.errors.GedcomError: not a GEDCOM file: does not start with '0 HEAD' (line 1: 'root:x:0:0')
        """
        if self._first_line is None:
            raise GedcomError("not a GEDCOM file: the file is empty")
        line = self._first_line
        if line.level != 0 or line.xref is not None or line.tag != "HEAD" or (line.payload or b"").strip():
            shown = self.dialect.decode(line.data[: len(line.data) - len(line.eol)][:60])
            raise GedcomError(f"not a GEDCOM file: does not start with '0 HEAD' (line 1: {shown!r})")

    def close(self) -> None:
        """Close the underlying file."""
        self._source.close()

    def __enter__(self) -> GedcomReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- properties -----------------------------------------------------------------------------

    @property
    def codec(self) -> str:
        """The file's character encoding (a Python codec name)."""
        return self.dialect.codec

    @property
    def version(self) -> str | None:
        """``HEAD.GEDC.VERS`` as written (stripped), or ``None``."""
        return self.dialect.version

    @property
    def gedcom7(self) -> bool:
        """Whether the file is GEDCOM 7.x."""
        return self.dialect.gedcom7

    @property
    def default_eol(self) -> bytes:
        """The file's line terminator (that of its first line; ``b"\\n"`` if none), in the view encoding."""
        return self._eol or b"\n"

    def __iter__(self) -> Iterator[Record]:
        # The records after the first are made once the header is read, with the file's final dialect.
        pending, self._pending = self._pending, None
        return itertools.chain(() if pending is None else (pending,), self._records)

    def decode(self, payload: bytes) -> str:
        """Decode bytes of :attr:`GedcomLine.data` (see :meth:`Dialect.decode`)."""
        return self.dialect.decode(payload)

    def make_line(
        self, level: int, tag: str, value: str | None = None, *, xref: str | None = None, eol: bytes = b"\n"
    ) -> GedcomLine:
        """A new line in this file's encoding (``value`` is written as given: escape ``@`` yourself).

        >>> import io
        >>> GedcomReader(io.BytesIO(b"0 HEAD\\n")).make_line(1, "_UID", "ABC", eol=b"\\r\\n").raw
        b'1 _UID ABC\\r\\n'
        """
        text = f"{level} {xref + ' ' if xref else ''}{tag}{' ' + value if value else ''}"
        if "\r" in text or "\n" in text:
            raise GedcomError("a line value cannot contain a line break", text=text)
        full = text + eol.decode("ascii")
        if full.isascii() and not self._utf16:  # every ASCII-compatible codec writes ASCII as itself
            data = full.encode("ascii")
            return _parse(data, data, 0)[0]
        try:
            raw = full.encode(self.codec)
        except UnicodeEncodeError as exc:
            raise GedcomError(
                f"cannot encode {text[exc.start : exc.end]!r} in {self.codec}",
                text=text,
                position=exc.start + 1,
            ) from exc
        data = raw if not self._utf16 else full.encode("utf-8")
        return _parse(raw, data, 0)[0]

    # -- reading ----------------------------------------------------------------------------------

    def _read_header(self, head: Record) -> None:
        """Take the version and the character set from the header record (HEAD.GEDC.VERS, HEAD.CHAR)."""
        version = self._version_hint
        charset_line: GedcomLine | None = None
        in_gedc = False
        for line in head.lines:
            if line.level == 1:
                in_gedc = line.tag == "GEDC"
                if line.tag == "CHAR":
                    charset_line = line
            elif line.level == 2 and in_gedc and line.tag == "VERS" and line.payload is not None:
                version = line.payload.decode("latin-1").strip()
        codec = self._sniffed_codec or DEFAULT_CODEC
        if charset_line is not None and charset_line.payload is not None:
            self.charset = charset_line.payload.decode("latin-1").strip()
            named = codec_for_charset(self.charset)
            if named is None:
                message = f"unknown HEAD.CHAR {self.charset!r}; read as {codec}"
                self._warn(charset_line.number, "charset", message)
            elif named == "utf-16":
                if not self._utf16:
                    message = "HEAD.CHAR UNICODE but the bytes are not UTF-16"
                    self._warn(charset_line.number, "charset", message)
            elif self._sniffed_codec is not None and named != self._sniffed_codec:
                self._warn(
                    charset_line.number,
                    "charset",
                    f"HEAD.CHAR {self.charset!r} but the file starts with a {self._sniffed_codec} "
                    "byte-order mark",
                )
            codec = self._declared_codec(self.charset) or codec
        gedcom7 = self.dialect.gedcom7
        self.dialect = Dialect(codec, "utf-8" if self._utf16 else codec, version)
        if self.dialect.gedcom7 != gedcom7:
            self._scan = None  # the fast line check depends on the version: make it again

    def _declared_codec(self, charset: str) -> str | None:
        """The codec ``HEAD.CHAR`` gives the file, or ``None`` where it gives none: an unknown name, or a
        file whose byte-order mark or UTF-16 bytes already say (the BOM wins, with a warning)."""
        named = codec_for_charset(charset)
        if named is None or named == "utf-16" or self._sniffed_codec is not None:
            return None
        return named

    @property
    def warnings(self) -> list[GedcomWarning]:
        """The warnings kept so far, in line order: the first :data:`MAX_WARNINGS_PER_KIND` of each kind
        (:attr:`warning_counts` counts them all, :attr:`warnings_omitted` the rest)."""
        return sorted(self._warnings, key=lambda w: w.line)

    @property
    def warnings_omitted(self) -> Counter[str]:
        """Per kind, how many warnings :attr:`warnings` leaves out.

        >>> r = read_bytes(b"0 HEAD\\n" + b"\\n" * (MAX_WARNINGS_PER_KIND + 2))
        >>> _ = list(r)
        >>> len(r.warnings), r.warnings_omitted
        (100, Counter({'blank-line': 2}))
        """
        return self.warning_counts - self._kept

    def _warn(self, number: int, kind: str, message: str) -> None:
        self.warning_counts[kind] += 1
        if self._kept[kind] < MAX_WARNINGS_PER_KIND:
            self._kept[kind] += 1
            self._warnings.append(GedcomWarning(number, kind, message))

    def _read_size(self) -> int:
        """Bytes per chunk: at most :attr:`max_line_bytes` of view bytes, so that a longer line always
        spans two chunks and :meth:`_complete` sees it (UTF-16 grows by at most 3/2 as UTF-8)."""
        limit = self.max_line_bytes // 2 if self._utf16 else self.max_line_bytes
        return max(1, min(self._chunk_size, limit))

    def _raw_chunks(self, first: bytes) -> Iterator[bytes]:
        """The file's bytes after the BOM, at most :meth:`_read_size` at a time."""
        size = self._read_size()
        if self._progress is not None:
            self._progress(len(first) + len(self.bom))
        for start in range(0, len(first), size):
            yield first[start : start + size]
        while chunk := self._source.read(size):
            if self._progress is not None:
                self._progress(len(chunk))
            yield chunk

    def _chunks(self, first: bytes) -> Iterator[bytes]:
        """The file's bytes after the BOM, as view bytes (UTF-16 is transcoded to UTF-8)."""
        if not self._utf16:
            yield from self._raw_chunks(first)
            return
        decoder = codecs.getincrementaldecoder(self.dialect.codec)("surrogatepass")
        raw = self._raw_chunks(first)
        chunk = next(raw, b"")
        while True:
            final = not chunk
            try:
                text = decoder.decode(chunk, final=final)
            except UnicodeDecodeError as exc:
                raise GedcomError(
                    f"{self.name}: truncated {self.dialect.codec} data (odd number of bytes) after line "
                    f"{self.lines_read}"
                ) from exc
            if text:
                yield text.encode("utf-8", "surrogatepass")
            if final:
                return
            chunk = next(raw, b"")

    def _complete(self, first: bytes) -> Iterator[bytes]:
        """Buffers of complete lines (the last line of the file may lack its terminator).

        A buffer is cut after its last terminator, except that a CR at the very end is kept back (its
        LF may start the next chunk), so CR-only files stream too.  A chunk holds at most
        :attr:`max_line_bytes`, so a longer line is always carried over: it is the first line of the next
        buffer, where it is measured.
        """
        carry = b""
        max_line = self.max_line_bytes
        for chunk in self._chunks(first):
            buf = carry + chunk if carry else chunk
            if carry:
                end = EOL_RE.search(buf)
                if (end.start() if end else len(buf)) > max_line:
                    raise GedcomError(f"line {self.lines_read + 1} is longer than {max_line} bytes")
            limit = len(buf) - 1 if buf.endswith(b"\r") else len(buf)
            cut = max(buf.rfind(b"\n", 0, limit), buf.rfind(b"\r", 0, limit)) + 1
            if cut <= 0:
                carry = buf
                continue
            carry = buf[cut:]
            yield buf[:cut] if cut < len(buf) else buf
        if carry:
            yield carry

    def _setup(self, buf: bytes) -> Callable[[bytes, int], Scan]:
        """Learn the file's line terminator from its first line and make the fast line check."""
        if not self._eol:
            m = EOL_RE.search(buf)
            self._eol = m.group() if m else b"\n"
        # gedcom-1 production Line in 7.0; 5.x lines whose value keeps them within 255 characters.  Anything
        # else takes the slow path, which warns about it.
        self._scan = record_scanner(self._eol, gedcom7=self.dialect.gedcom7)
        return self._scan

    def _iter_records(self, first: bytes) -> Iterator[Record]:
        parts: list[bytes] = []  # the current record's bytes, in pieces
        rec_start = 1  # line number of the current record's first line
        rec_tag: str | None = None  # its tag, where the scan read it
        number = 0  # lines read so far
        for buf in self._complete(first):
            self._scan or self._setup(buf)
            eol = self._eol
            n = len(buf)
            pos = 0
            if not buf.isascii():
                self._check_decoding(buf, number + 1)
            while pos < n:
                scan = self._scan or self._setup(buf)  # the header may have changed the version
                end, count, starts, numbers, tags = scan(buf, pos)
                if end > pos:
                    # a run of well-formed lines: cut it into records at its level-0 lines
                    self.eol_counts[eol] += count
                    self._check_trailing(buf, pos, end, number + 1)
                    if parts and buf.startswith(b"0 ", pos):
                        yield Record(b"".join(parts), rec_start, self.dialect, rec_tag)
                        parts = []
                        rec_start = number + 1
                        rec_tag = None
                    piece = pos
                    for cut, before, tag in zip(starts, numbers, tags, strict=True):
                        if parts:  # the record began in an earlier run
                            parts.append(buf[piece:cut])
                            yield Record(b"".join(parts), rec_start, self.dialect, rec_tag)
                            parts = []
                        else:
                            yield Record(buf[piece:cut], rec_start, self.dialect, rec_tag, True)
                        rec_start = number + before + 1
                        rec_tag = tag
                        piece = cut
                    parts.append(buf[piece:end])
                    number += count
                    pos = end
                    self.lines_read = number
                    if pos >= n:
                        break
                # one line the fast check did not accept: parse it with warnings
                m = EOL_RE.search(buf, pos)
                line_end = m.end() if m else n
                data = buf[pos:line_end]
                number += 1
                self.lines_read = number
                line = self._slow_line(data, number)
                if line.level == 0 and parts:
                    yield Record(b"".join(parts), rec_start, self.dialect, rec_tag)
                    parts = []
                    rec_start = number
                    rec_tag = None
                parts.append(data)
                pos = line_end
        if parts:
            yield Record(b"".join(parts), rec_start, self.dialect, rec_tag)

    def _check_trailing(self, buf: bytes, start: int, end: int, first_number: int) -> None:
        """Warn about well-formed lines in ``buf[start:end]`` that end in a space or tab."""
        eol = self._eol
        for blank in (b" ", b"\t"):
            needle = blank + eol
            at = buf.find(needle, start, end)
            while at >= 0:
                number = first_number + buf.count(eol, start, at)
                line_start = buf.rfind(eol, start, at) + len(eol) if buf.rfind(eol, start, at) >= 0 else start
                line = parse_line(buf[line_start : at + len(needle)], number)
                if not line.payload or not self.dialect.gedcom7:
                    self._warn(number, "trailing-space", "space at the end of the line (kept)")
                at = buf.find(needle, at + 1, end)

    def _check_decoding(self, buf: bytes, first_number: int) -> None:
        """Warn about each line of ``buf`` that the file's encoding cannot read, naming the first piece
        (:meth:`Dialect.decode_checked`); the reader keeps its bytes."""
        dialect = self.dialect
        try:
            buf.decode(dialect.view_codec)  # fails on a UTF-16 file's unpaired surrogates too
        except UnicodeDecodeError:
            pass
        else:
            return
        for offset, data in enumerate(buf.splitlines(keepends=True)):
            if data.isascii():
                continue
            found = dialect.decode_checked(data)[1]
            if found:
                self._warn(first_number + offset, "decode", f"{found[0]} (kept as is)")

    def _slow_line(self, data: bytes, number: int) -> GedcomLine:
        """Parse a line the fast check did not accept, warning about everything odd in it."""
        line, lenient = _parse(data, data, number)
        if line.eol:
            self.eol_counts[line.eol] += 1
            if line.eol != self._eol and self.eol_counts[line.eol] == 1:
                message = f"line ending {line.eol!r} differs from the first line's {self._eol!r} (kept)"
                self._warn(number, "mixed-eol", message)
        body = data[: len(data) - len(line.eol)]
        if line.level is None:
            if not body.strip():
                self._warn(number, "blank-line", "blank line" if not body else "line of only whitespace")
            else:
                shown = self.dialect.decode(body)[:60]  # (cut as text: bytes may end inside a character)
                self._warn(number, "not-gedcom", f"not a GEDCOM line: {shown!r} (kept)")
            return line
        if lenient:
            if body[:1] in (b" ", b"\t"):
                self._warn(number, "leading-space", "leading whitespace before the level")
            stripped = body.lstrip(b" \t")
            if stripped[:1] == b"0" and stripped[1:2].isdigit():
                self._warn(number, "level", "level number with a leading zero")
            if LINE.fullmatch(stripped + line.eol) is None:
                self._warn(number, "extra-space", "fields separated by more than one space or by tabs")
        if line.payload is not None and (
            not line.payload or (line.payload[-1:] in b" \t" and not self.dialect.gedcom7)
        ):
            self._warn(number, "trailing-space", "space at the end of the line (kept)")
        if self.dialect.gedcom7:
            self._check_7(line, number)
        if len(data) > MAX_LINE_551 and not self.dialect.gedcom7:
            chars = len(self.dialect.decode(data))
            if chars > MAX_LINE_551:
                message = f"line of {chars} characters (GEDCOM 5.5.1 allows {MAX_LINE_551})"
                self._warn(number, "long-line", message)
        return line

    def _check_7(self, line: GedcomLine, number: int) -> None:
        """Warn about what GEDCOM 7 (gedcom-1 "Lines") does not allow but older files have: CONC, tags and
        cross-reference identifiers that are not uppercase, a line value starting with a single ``@``.

        The line is read as 5.x would read it (CONC is joined by :meth:`Record.text`); no byte changes.
        """
        tag = line.tag or ""
        if tag == "CONC":
            self._warn(number, "conc-7", "CONC in a GEDCOM 7 file (7.0 has only CONT; joined as in 5.x)")
        elif TAG_7_TEXT.fullmatch(tag) is None:
            self._warn(number, "tag-7", f"tag {tag!r} is not a GEDCOM 7 tag (uppercase letters, digits, _)")
        if line.xref is not None and XREF_7_TEXT.fullmatch(line.xref) is None:
            message = (
                f"cross-reference identifier {line.xref!r} is not GEDCOM 7's (uppercase letters, digits, _)"
            )
            self._warn(number, "xref-7", message)
        payload = line.payload
        if payload and payload[:1] == b"@" and payload[:2] != b"@@":
            shown = self.dialect.decode(payload[:60])
            if LOOSE_POINTER.fullmatch(payload) is not None:
                if XREF_7_TEXT.fullmatch(shown) is None:
                    message = f"pointer {shown!r} is not GEDCOM 7's (uppercase letters, digits, _)"
                    self._warn(number, "pointer-7", message)
            else:
                message = f"line value {shown!r} starts with a single @ (GEDCOM 7 doubles a leading @)"
                self._warn(number, "at-7", message)


@dataclass(kw_only=True)
class ReadWarnings:
    """The warnings a reader gave, as a report keeps them: in line order, the first
    :data:`MAX_WARNINGS_PER_KIND` of each kind as text, every one counted per kind, and the rest counted.

    >>> r = read_bytes(b"0 HEAD\\n\\n0 TRLR\\n")
    >>> _ = list(r)
    >>> report = ReadWarnings()
    >>> report.take_warnings(r)
    >>> report.warnings_json()
    {'warning_counts': {'blank-line': 1}, 'warnings': ['line 2: blank line'], 'warnings_omitted': {}}
    """

    warnings: list[str] = field(default_factory=list)
    warning_counts: Counter[str] = field(default_factory=Counter)
    warnings_omitted: Counter[str] = field(default_factory=Counter)

    def take_warnings(self, reader: GedcomReader, *, leave_out: Collection[str] = ()) -> None:
        """Keep the warnings ``reader`` has given so far, but those of the kinds ``leave_out`` (what the
        report says otherwise).

        >>> r = read_bytes(b"0 HEAD\\n\\n1 NOTE \\xff\\n0 TRLR\\n")
        >>> _ = list(r)
        >>> report = ReadWarnings()
        >>> report.take_warnings(r, leave_out={"decode"})
        >>> report.warnings, dict(report.warning_counts)
        (['line 2: blank line'], {'blank-line': 1})
        """
        self.warning_counts = Counter({k: n for k, n in reader.warning_counts.items() if k not in leave_out})
        self.warnings = [str(w) for w in reader.warnings if w.kind not in leave_out]
        self.warnings_omitted = Counter(
            {k: n for k, n in reader.warnings_omitted.items() if k not in leave_out}
        )

    def warnings_json(self) -> dict[str, Any]:
        """The warnings as the reports' ``--json`` lists them."""
        return {
            "warning_counts": dict(self.warning_counts),
            "warnings": self.warnings,
            "warnings_omitted": dict(self.warnings_omitted),
        }


def read_bytes(data: bytes) -> GedcomReader:
    """A reader over bytes in memory (convenience for tests and small inputs).

    >>> [r.tag for r in read_bytes(b"0 HEAD\\n0 TRLR\\n")]
    ['HEAD', 'TRLR']
    """
    return GedcomReader(io.BytesIO(data))
