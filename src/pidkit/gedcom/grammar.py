"""The GEDCOM line grammar, written once: every regular expression that reads GEDCOM lines is built here.

The rules are gedcom-1 "Lines" (GEDCOM 7.0, ``specs/gedcom7/gedcom-1-hierarchical-container-format.md``)::

    Line    = Level D [Xref D] Tag [D LineVal] EOL
    Level   = "0" / nonzero *DIGIT
    D       = %x20                            ; space
    Xref    = atsign 1*tagchar atsign         ; but not "@VOID@"
    Tag     = stdTag / extTag
    LineVal = pointer / lineStr
    EOL     = %x0D [%x0A] / %x0A              ; CR-LF, CR, or LF
    stdTag  = ucletter *tagchar
    extTag  = underscore 1*tagchar
    tagchar = ucletter / DIGIT / underscore
    pointer = voidPtr / Xref
    lineStr = (nonAt / atsign atsign) *nonEOL ; leading @ doubled

with GEDCOM 5.5.1's looser rules where the reader accepts them (ch. 1 "Grammar": tags of either case,
cross-reference identifiers with any character but ``@`` — ``@NoTe ref@`` —, a line value that is anything
up to the terminator, ``@#`` escapes) and what older programs write (gedcom-1 "Lines", note: "previous
versions allowed spaces … to precede the level": leading whitespace, several delimiters, tabs).

The pieces are regular-expression *source* (bytes, for the view bytes of a line, see
:class:`~pidkit.gedcom.reader.GedcomLine`); the compiled patterns below are made of them and nothing else.

>>> LINE.fullmatch(b"1 @I1@ _UID 0123\\r\\n").groups()
(b'1', b'@I1@', b'_UID', b'0123', b'\\r\\n')
>>> LENIENT_LINE.fullmatch(b"  2\\tDATE 1 JAN 1900").groups()
(b'2', None, b'DATE', b'1 JAN 1900', b'')
>>> bool(TAG_7_TEXT.fullmatch("_UID")), bool(TAG_7_TEXT.fullmatch("_uid"))
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Final

from ..codecs import load_speedups

__all__ = [
    "AGE_5",
    "AGE_5_PART",
    "AGE_7",
    "BANNED_7",
    "BCP47",
    "BC_5",
    "DATE_CALENDAR_WORDS_5",
    "DATE_DUAL_5",
    "DATE_ESCAPE_5",
    "DATE_EXACT_7",
    "DATE_INT_5",
    "DATE_PHRASE_5",
    "DATE_VALUE_7",
    "EOL",
    "EOL_RE",
    "EXT_TAG",
    "EXT_TAG_LINE",
    "HEAD_CHAR",
    "HEAD_VERS",
    "LENIENT_LEVEL",
    "LENIENT_LINE",
    "LEVEL",
    "LINE",
    "LINES_TEXT",
    "LINE_END",
    "LINE_ITEM_TEXT",
    "LINE_STR_7",
    "LINE_TEXT",
    "LINE_VAL",
    "LOOSE_POINTER",
    "MEDIA_TOKEN",
    "NEXT_RECORD",
    "POINTER_5_TEXT",
    "POINTER_7_TEXT",
    "RECORD_TAG",
    "RECORD_XREF",
    "STD_TAG",
    "SURROGATE",
    "TAG_5",
    "TAG_7",
    "TAG_7_TEXT",
    "URL_DRIVE",
    "URL_SCHEME",
    "XREF_5",
    "XREF_7",
    "XREF_7_TEXT",
    "D",
    "Scan",
    "lenient_line_with_tag",
    "record_scanner",
    "valid_lines_5",
    "valid_lines_7",
]

# -- gedcom-1 "Lines" (7.0) -------------------------------------------------------------------------------

#: ``Level = "0" / nonzero *DIGIT``
LEVEL: Final = rb"0|[1-9][0-9]*"
#: ``D = %x20``
D: Final = rb" "
#: ``Xref = atsign 1*tagchar atsign`` (``tagchar = ucletter / DIGIT / underscore``)
XREF_7: Final = rb"@[A-Z0-9_]+@"
#: ``stdTag = ucletter *tagchar``
STD_TAG: Final = rb"[A-Z][A-Z0-9_]*"
#: ``extTag = underscore 1*tagchar``
EXT_TAG: Final = rb"_[A-Z0-9_]+"
#: ``Tag = stdTag / extTag``
TAG_7: Final = STD_TAG + rb"|" + EXT_TAG
#: ``lineStr = (nonAt / atsign atsign) *nonEOL`` (the view bytes of any character but CR and LF)
LINE_STR_7: Final = rb"[^@\r\n][^\r\n]*|@@[^\r\n]*"
#: ``EOL = %x0D [%x0A] / %x0A``: CR-LF, CR or LF (alternatives in this order: CR-LF is one terminator)
EOL: Final = rb"\r\n|\r|\n"

# -- GEDCOM 5.5.1 ch. 1 "Grammar", as the reader accepts it ----------------------------------------------

#: 5.5.1 ``xref_ID``: any character but ``@`` and line breaks between the ``@`` (``@NoTe ref@``)
XREF_5: Final = rb"@[^@\r\n]+@"
#: 5.5.1 ``tag``: letters of either case, digits, underscore
_TAGCHAR_5: Final = rb"[A-Za-z0-9_]"
TAG_5: Final = _TAGCHAR_5 + rb"+"
#: 5.5.1 ``line_value`` (and 7.0 ``LineVal`` read loosely): anything up to the terminator
LINE_VAL: Final = rb"[^\r\n]*"
#: 5.5.1 ``pointer``: ``@xref@``, where ``@#`` starts an escape (``@#DJULIAN@``), not a pointer
_POINTER_5: Final = rb"@[^@#\r\n][^@\r\n]*@"
#: a 7.0 ``pointer`` in either case (is it one? the 7.0 checks then say whether the case is right)
_POINTER_ANY_CASE: Final = rb"@[A-Za-z0-9_]+@"

# -- what older programs write (gedcom-1 "Lines", note; 5.5 readers accepted it) --------------------------

_LOOSE_LEVEL: Final = rb"[0-9]+"  # leading zeros
_LOOSE_D: Final = rb"[ \t]+"  # several delimiters, tabs
_LOOSE_D1: Final = rb"[ \t]"  # the delimiter before a value (further blanks belong to the value)
_LEADING: Final = rb"[ \t]*"  # whitespace before the level
_LINE_START: Final = rb"(?:\A|[\r\n])"


def _lenient_head(tag: bytes) -> bytes:
    """Leading blanks, level, optional xref and ``tag`` (a group each but the xref's), loosely delimited."""
    xref = rb"(?:" + XREF_5 + _LOOSE_D + rb")?"
    return _LEADING + rb"(" + _LOOSE_LEVEL + rb")" + _LOOSE_D + xref + rb"(" + tag + rb")"


# -- compiled patterns ------------------------------------------------------------------------------------

#: ``Line`` with 5.5.1's xref, tag and value; groups: level, xref, tag, value, EOL (``b""`` at the end).
LINE: Final = re.compile(
    rb"(" + LEVEL + rb")" + D + rb"(?:(" + XREF_5 + rb")" + D + rb")?(" + TAG_5 + rb")"
    rb"(?:" + D + rb"(" + LINE_VAL + rb"))?(" + EOL + rb"|)"
)
#: :data:`LINE` for decoded text (same groups).
LINE_TEXT: Final = re.compile(LINE.pattern.decode("ascii"))
_LINE_BODY_TEXT: Final = (
    rb"(" + LEVEL + rb")" + D + rb"(?:(" + XREF_5 + rb")" + D + rb")?(" + TAG_5 + rb")"
    rb"(?:" + D + rb"(" + LINE_VAL + rb"))?"
).decode("ascii")
#: Text that is :data:`LINE_TEXT` lines and nothing else (the last one may lack its terminator).
LINES_TEXT: Final = re.compile(
    rf"(?:{_LINE_BODY_TEXT}(?:{EOL.decode('ascii')}))*(?:{_LINE_BODY_TEXT})?"
)
#: One line of :data:`LINES_TEXT` for ``findall`` (groups: level, xref, tag, value; ``""`` when absent).
LINE_ITEM_TEXT: Final = re.compile(rf"{_LINE_BODY_TEXT}(?:{EOL.decode('ascii')}|\Z)")
#: :data:`LINE` as older programs write it (same groups).
LENIENT_LINE: Final = re.compile(
    _LEADING + rb"(" + _LOOSE_LEVEL + rb")" + _LOOSE_D + rb"(?:(" + XREF_5 + rb")" + _LOOSE_D + rb")?"
    rb"(" + TAG_5 + rb")(?:" + _LOOSE_D1 + rb"(" + LINE_VAL + rb"))?(" + EOL + rb"|)"
)
#: The level (group 1) at the start of a line as :data:`LENIENT_LINE` reads it (a quick look before a full
#: match).
LENIENT_LEVEL: Final = re.compile(_LEADING + rb"(" + _LOOSE_LEVEL + rb")" + _LOOSE_D)
#: The terminator at the end of a line (group 1; ``b""`` if none).
LINE_END: Final = re.compile(rb"(" + EOL + rb"|)\Z")
#: A terminator.
EOL_RE: Final = re.compile(EOL)
#: The tag (group 1) of a well-formed level-0 line at the start of a record.
RECORD_TAG: Final = re.compile(
    rb"0" + D + rb"(?:" + XREF_5 + D + rb")?(" + TAG_5 + rb")(?:" + EOL + rb"|" + D + rb"|\Z)"
)
#: The xref (group 1, or ``None``) of a well-formed level-0 line at the start of a record.
RECORD_XREF: Final = re.compile(
    rb"0" + D + rb"(?:(" + XREF_5 + rb")" + D + rb")?" + TAG_5 + rb"(?:" + EOL + rb"|" + D + rb"|\Z)"
)
#: Where the next record starts (a level-0 line, loosely).
NEXT_RECORD: Final = re.compile(rb"[\r\n]" + _LEADING + rb"0[ \t]")
#: ``HEAD.GEDC.VERS`` (group 1), found in the header's bytes before they are parsed.
HEAD_VERS: Final = re.compile(
    _LINE_START + _LEADING + rb"1" + D + rb"GEDC[ \t]*(?:" + EOL + rb")" + _LEADING + rb"2" + D + rb"VERS"
    + D + rb"(" + LINE_VAL + rb")"
)
#: ``HEAD.CHAR`` (group 1), found in the header's bytes before they are parsed.
HEAD_CHAR: Final = re.compile(
    _LINE_START + _LEADING + rb"1" + _LOOSE_D + rb"CHAR" + _LOOSE_D + rb"(" + LINE_VAL + rb")"
)
#: The extension tag (group 1) of every line of a record's bytes that has one (loosely, as the reader reads
#: lines; lower-case letters too, as 5.5.1 allows).
EXT_TAG_LINE: Final = re.compile(
    rb"(?:\A|(?<=[\r\n]))" + _LEADING + _LOOSE_LEVEL + _LOOSE_D + rb"(?:" + XREF_5 + _LOOSE_D + rb")?(_"
    + _TAGCHAR_5 + rb"+)"
)
#: gedcom-1 "Characters", production ``banned`` (text): C0 but tab, LF and CR; DEL; C1; surrogates;
#: U+FFFE and U+FFFF.
BANNED_7: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: A surrogate code point in decoded text: in the view of a UTF-16 file, one its decoder found unpaired.
SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: A 7.0 pointer in either case (bytes).
LOOSE_POINTER: Final = re.compile(_POINTER_ANY_CASE)

#: The same rules for decoded text: a pointer (7.0, either case), a 5.5.1 pointer, a 7.0 tag and xref.
POINTER_7_TEXT: Final = re.compile(_POINTER_ANY_CASE.decode("ascii"))
POINTER_5_TEXT: Final = re.compile(_POINTER_5.decode("ascii"))
TAG_7_TEXT: Final = re.compile(TAG_7.decode("ascii"))
XREF_7_TEXT: Final = re.compile(XREF_7.decode("ascii"))


def lenient_line_with_tag(tags: bytes) -> re.Pattern[bytes]:
    """A line (loosely, as :data:`LENIENT_LINE`) whose tag is one of ``tags`` (a regex alternation),
    found anywhere in a record's bytes; groups: level, tag, value.

    >>> p = lenient_line_with_tag(b"_UID|UID")
    >>> [m.groups() for m in p.finditer(b"0 @I1@ INDI\\n1 NAME x\\n 2  UID abc\\n1 _UIDX y")]
    [(b'2', b'UID', b'abc')]
    """
    return re.compile(
        rb"(?:\A|(?<=[\r\n]))" + _lenient_head(tags) + rb"(?:" + _LOOSE_D1 + rb"(" + LINE_VAL + rb"))?"
        rb"(?=[\r\n]|\Z)"
    )


def valid_lines_7(eol: bytes) -> re.Pattern[bytes]:
    """A run of lines that are ``Line`` exactly (7.0), each ended by ``eol`` (regex source), no CONC.

    gedcom-1: uppercase ``Tag`` and ``Xref``; ``LineVal`` a ``pointer`` or a ``lineStr``; CONC is not a 7.0
    tag.  What this does not match is read line by line, with warnings (the reader's slow path).

    >>> valid_lines_7(rb"\\n").match(b"0 @I1@ INDI\\n1 NOTE @@me\\n1 CONC x\\n").end()
    24
    """
    return re.compile(
        rb"(?:(?:" + LEVEL + rb")" + D + rb"(?:" + XREF_7 + D + rb")?(?!CONC(?!" + _TAGCHAR_5 + rb"))"
        rb"(?:" + TAG_7 + rb")(?:" + D + rb"(?:" + LINE_STR_7 + rb"|" + XREF_7 + rb")?)?" + eol + rb")*"
    )


def valid_lines_5(eol: bytes, stop: bytes) -> re.Pattern[bytes]:
    """A run of 5.x lines each ended by ``eol`` (regex source) whose value has at most 240 bytes, which
    keeps a line within 5.5.1's 255 characters (ch. 1 "Grammar"); ``stop`` is the first byte of ``eol``.

    >>> valid_lines_5(rb"\\n", rb"\\n").match(b"0 @N 1@ NOTE a@@b\\n1 CONC " + b"x" * 241 + b"\\n").end()
    18
    """
    return re.compile(
        rb"(?:(?:" + LEVEL + rb")" + D + rb"(?:" + XREF_5 + D + rb")?" + TAG_5 + rb"(?![^ " + stop + rb"])"
        rb"[^\r\n]{0,240}" + eol + rb")*"
    )


#: ``(end, lines, starts, numbers, tags)``: a run of well-formed lines, see :func:`record_scanner`
Scan = tuple[int, int, list[int], list[int], list[str]]


def _regex_scan(pattern: re.Pattern[bytes], eol: bytes, data: bytes, pos: int) -> Scan:
    end = pattern.match(data, pos).end()  # type: ignore[union-attr] # a * pattern always matches
    boundary = eol + b"0 "  # a level-0 line after a terminator: "0" then a space, in a well-formed line
    starts: list[int] = []
    numbers: list[int] = []
    tags: list[str] = []
    lines = 0
    piece = pos
    at = data.find(boundary, pos, end)
    while at >= 0:
        cut = at + len(eol)
        lines += data.count(eol, piece, cut)
        starts.append(cut)
        numbers.append(lines)
        tags.append(RECORD_TAG.match(data, cut).group(1).decode("ascii"))  # type: ignore[union-attr]
        piece = cut
        at = data.find(boundary, cut, end)
    return end, lines + data.count(eol, piece, end), starts, numbers, tags


def record_scanner(eol: bytes, *, gedcom7: bool, compiled: bool = True) -> Callable[[bytes, int], Scan]:
    """``scan(data, pos)``: the run of well-formed lines of ``data`` from ``pos`` that each end in ``eol``
    (``b"\\n"``, ``b"\\r\\n"``, or ``b"\\r"``, a CR not followed by LF) — what :func:`valid_lines_7` or
    :func:`valid_lines_5` match — as ``(end, lines, starts, numbers, tags)``: the run ends at ``end`` and
    has ``lines`` lines; ``starts`` are the offsets of its level-0 lines after ``pos`` (where the reader
    cuts records), ``numbers`` how many of the run's lines come before each, ``tags`` their tags.

    The C helper (``pidkit._speedups.gedcom_scan``) reads the same grammar in one pass, without the
    regular expression engine; ``compiled=False``, or no helper, takes the pattern.
    ``tests/test_gedcom_speedups.py`` compares the two on generated and real lines.

    >>> scan = record_scanner(b"\\n", gedcom7=True)
    >>> data = b"0 HEAD\\n1 GEDC\\n0 @I1@ INDI\\n0 TRLR\\n1 CONC x\\n"
    >>> scan(data, 0)
    (33, 4, [14, 26], [2, 3], ['INDI', 'TRLR'])
    >>> scan(data, 0) == record_scanner(b"\\n", gedcom7=True, compiled=False)(data, 0)
    True
    """
    if eol not in (b"\n", b"\r\n", b"\r"):
        raise ValueError(f"a GEDCOM line ends in CR-LF, CR or LF, not {eol!r}")
    helper = load_speedups() if compiled else None
    if helper is not None:
        return partial(helper.gedcom_scan, gedcom7, eol)
    # gedcom-1 EOL = %x0D [%x0A] / %x0A: in a CR file a CR followed by LF ends a CRLF line, which the slow
    # path reads (and counts) as one line.
    source = rb"\r(?!\n)" if eol == b"\r" else re.escape(eol)
    stop = rb"\r" if eol.startswith(b"\r") else rb"\n"
    pattern = valid_lines_7(source) if gedcom7 else valid_lines_5(source, stop)
    return partial(_regex_scan, pattern, eol)


# -- gedcom-2 payloads (7.0), and the 5.5.1 forms migrate reads (text) ------------------------------------

_CALENDAR_7: Final = r"(?:(?:GREGORIAN|JULIAN|FRENCH_R|HEBREW|_[A-Z0-9_]+) )?"
#: gedcom-2 ``date = [calendar D] [[day D] month D] year [D epoch]``
_DATE_7: Final = _CALENDAR_7 + r"(?:(?:[0-9]+ )?[A-Z0-9_]+ )?[0-9]+(?: (?:BCE|_[A-Z0-9_]+))?"
#: gedcom-2 ``DateValue = [ date / DatePeriod / dateRange / dateApprox ]``
DATE_VALUE_7: Final = re.compile(
    rf"|{_DATE_7}|(?:TO {_DATE_7}|FROM {_DATE_7}(?: TO {_DATE_7})?)"
    rf"|(?:BET {_DATE_7} AND {_DATE_7}|AFT {_DATE_7}|BEF {_DATE_7})|(?:ABT|CAL|EST) {_DATE_7}"
)
#: gedcom-2 ``DateExact = day D month D year`` (Gregorian months)
DATE_EXACT_7: Final = re.compile(r"[0-9]+ (?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC) [0-9]+")
#: gedcom-2 ``Age = [[ageBound D] ageDuration]`` (years, months, weeks, days in that order)
AGE_7: Final = re.compile(
    r"(?:[<>] )?(?:[0-9]+y(?: [0-9]+m)?(?: [0-9]+w)?(?: [0-9]+d)?|[0-9]+m(?: [0-9]+w)?(?: [0-9]+d)?"
    r"|[0-9]+w(?: [0-9]+d)?|[0-9]+d)"
)
#: 5.5.1 ``DATE_CALENDAR_ESCAPE`` (group 1: ``DJULIAN``), with the space after it
DATE_ESCAPE_5: Final = re.compile(r"@#([^@]*)@ ?")
#: 5.5.1's ROMAN and UNKNOWN calendars, written as words (group 1)
DATE_CALENDAR_WORDS_5: Final = re.compile(r"(?<![A-Z0-9_])(ROMAN|UNKNOWN)(?![A-Z0-9_])")
#: 5.5.1 ``DATE_DUAL`` year ``1699/00`` (group 1: the first year)
DATE_DUAL_5: Final = re.compile(r"\b([0-9]+)/[0-9]+\b")
#: 5.5.1 ``B.C.`` (and ``BC``, ``(B.C.)``) after a year
BC_5: Final = re.compile(r"\s*\(?B\.\s?C\.?\)?|\s*\bBC\b")
#: 5.5.1 ``INT <DATE> (<DATE_PHRASE>)`` (groups: date, phrase)
DATE_INT_5: Final = re.compile(r"INT (.*?)\s*\((.*)\)\s*", re.DOTALL)
#: 5.5.1 ``(<DATE_PHRASE>)`` alone (group 1: the phrase)
DATE_PHRASE_5: Final = re.compile(r"\((.*)\)", re.DOTALL)
#: 5.5.1 ``AGE_AT_EVENT`` read loosely (groups: bound, the numbers with their units in any order and case)
AGE_5: Final = re.compile(r"([<>]?)\s*((?:[0-9]+\s*[ymwd]?\s*)+)", re.IGNORECASE)
#: One number of :data:`AGE_5` and its unit (groups: number, unit or ``""``), units lower case
AGE_5_PART: Final = re.compile(r"([0-9]+)\s*([ymwd]?)")
#: gedcom-2 "Language": a BCP 47 tag as written in lower case (``en``, ``ca-ES``) — a 5.x file may have one
BCP47: Final = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
#: Characters that cannot stand in a media subtype token (RFC 2045 ``token``, kept simple)
MEDIA_TOKEN: Final = re.compile(r"[^a-z0-9.+-]")
#: A URL that names its scheme (``https://``), and a Windows drive path (``c:\``)
URL_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
URL_DRIVE: Final = re.compile(r"[A-Za-z]:[\\/]")
