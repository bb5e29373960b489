"""ANVL text (A Name-Value Language: ``label: value`` lines, email-header style), as ERC records use it
(draft-kunze-ark-40 §5.2 THUMP ``?info`` example, §5.3 "The Electronic Resource Citation").

A format, below the store and the web: it writes names and values, it knows no bindings.

§5.3: "Care should be taken to escape structural characters that appear in element names and values,
specifically, line terminators (both newlines and carriage returns) and, in element names, colons".
ANVL escapes with %-encoding, so ``%`` itself is encoded first to keep the escaping reversible.  Every
character any common reader takes for a line break is escaped — :data:`LINE_BREAKS`, the set Python's
``str.splitlines`` splits on (LF, CR, VT, FF, FS, GS, RS, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR),
as UTF-8 %-escapes — so one element is always one line.

>>> print(anvl_record([("erc", ""), ("who", "Austin, Larry"), ("what", "Line 1\\nLine 2")]), end="")
erc: (:unav)
who: Austin, Larry
what: Line 1%0ALine 2
>>> print("\\n".join(erc_segment("erc", {"who": "Kunze, John", "what": ""})))
erc:
who: Kunze, John
what: (:unav)
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Final

from .errors import PidkitError

__all__ = [
    "LINE_BREAKS",
    "UNAVAILABLE",
    "AnvlError",
    "anvl_line",
    "anvl_name",
    "anvl_record",
    "anvl_value",
    "erc_segment",
    "ezid_lines",
    "ezid_record",
    "ezid_unescape",
    "read_ezid_record",
]

#: ERC "value unavailable" code (§5.3), written for an empty value.
UNAVAILABLE: Final = "(:unav)"

#: Every character ``str.splitlines`` breaks a line at (and so does some reader of ANVL text).
LINE_BREAKS: Final = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
#: §5.3: line terminators are escaped in values (and '%', so the encoding is reversible) …
_VALUE_ESCAPES: Final = str.maketrans({c: urllib.parse.quote(c, safe="") for c in "%" + LINE_BREAKS})
#: … and colons too in element names.
_NAME_ESCAPES: Final = str.maketrans({c: urllib.parse.quote(c, safe="") for c in "%:" + LINE_BREAKS})


def anvl_value(value: str) -> str:
    """An ANVL value: surrounding whitespace dropped, ``%`` and every line break (:data:`LINE_BREAKS`)
    %-encoded, ``(:unav)`` if empty.

    >>> anvl_value("a\\r\\nb 100%")
    'a%0D%0Ab 100%25'
    >>> anvl_value("a\\u2028b\\x85c")
    'a%E2%80%A8b%C2%85c'
    >>> anvl_value("  ")
    '(:unav)'
    """
    value = value.strip()
    return value.translate(_VALUE_ESCAPES) if value else UNAVAILABLE


def anvl_name(name: str) -> str:
    """An ANVL element name with ``%``, ``:`` and every line break %-encoded.

    >>> anvl_name("dc:title")
    'dc%3Atitle'
    """
    return name.translate(_NAME_ESCAPES)


def anvl_line(name: str, value: str) -> str:
    """One ``name: value`` line.

    >>> anvl_line("who", "Kunze, John")
    'who: Kunze, John'
    """
    return f"{anvl_name(name)}: {anvl_value(value)}"


def anvl_record(pairs: Iterable[tuple[str, str]]) -> str:
    """ANVL lines for ``(name, value)`` pairs, each ending in a newline: the one writer of ANVL text.

    >>> anvl_record([("error", "404 Not found"), ("message", "no\\nsuch ARK")])
    'error: 404 Not found\\nmessage: no%0Asuch ARK\\n'
    """
    return "".join(anvl_line(name, value) + "\n" for name, value in pairs)


def erc_segment(label: str, elements: Mapping[str, str]) -> list[str]:
    """An ERC segment: its label line (``erc:`` / ``erc-support:``) and one line per element, in order.

    >>> erc_segment("erc-support", {"who": "UNT", "what": ""})
    ['erc-support:', 'who: UNT', 'what: (:unav)']
    """
    return [f"{anvl_name(label)}:", *(anvl_line(k, v) for k, v in elements.items())]


# -- EZID's ANVL (EZID API v2, "Request & response bodies") ---------------------------------------------
#: EZID's escapes: ``%``, CR and LF in values, and ``:`` too in names (its examples write
#: ``_target: http://…`` as is; a reader unescapes either), and the other one-byte line breaks of
#: :data:`LINE_BREAKS` (VT, FF, FS, GS, RS, NEL) so a reader splitting with
#: ``str.splitlines`` — EZID's documented Python client — gets one element per line.  EZID's ``%XX`` is a
#: code point below 256 (its unescape is ``chr(int(XX, 16))``), so U+2028 / U+2029 cannot be escaped and
#: are written as they are (docs/ezid.md).
_EZID_VALUE: Final = str.maketrans({c: f"%{ord(c):02X}" for c in "%\r\n\v\f\x1c\x1d\x1e\x85"})
_EZID_NAME: Final = str.maketrans({c: f"%{ord(c):02X}" for c in "%:\r\n\v\f\x1c\x1d\x1e\x85"})
_EZID_PERCENT: Final = re.compile(r"%([0-9A-Fa-f]{2})")
#: EZID's request bodies: lines end at CR LF, LF or CR (the documented Java reader's ``[\r\n]+``).
_EZID_LINES: Final = re.compile(r"\r\n|\r|\n")


class AnvlError(PidkitError):
    """An ANVL text that cannot be read: names the problem and the line.

    >>> str(AnvlError("no colon", text="who Proust", line=2))
    "no colon in 'who Proust' on line 2"
    """


def ezid_lines(text: str) -> list[str]:
    r"""The lines of an EZID ANVL text: split at CR LF, LF or CR only — never at the other characters
    ``str.splitlines`` splits at (U+2028, U+2029, U+0085, VT, FF …), which a value may hold as they are.

    >>> ezid_lines("a: 1\r\nb: x\u2028y\rc: 2")
    ['a: 1', 'b: x\u2028y', 'c: 2']
    """
    return _EZID_LINES.split(text)


def ezid_unescape(text: str) -> str:
    """Undo EZID's ``%XX`` escaping (two hex digits: one code point below 256, as EZID reads it).

    >>> ezid_unescape("a%3Ab%25%0Ac%e9")
    'a:b%\\nc\xe9'
    """
    return _EZID_PERCENT.sub(lambda m: chr(int(m[1], 16)), text) if "%" in text else text


def ezid_record(pairs: Iterable[tuple[str, str]]) -> str:
    """EZID's ANVL text for ``(name, value)`` pairs: ``name: value`` lines (``\\n`` after each), names and
    values escaped, nothing else changed (EZID never writes comments or continuation lines).  The first
    pair is the status line (``success``, ``error``).

    >>> print(ezid_record([("success", "ark:/99999/fk4x"), ("dc:title", "100% a\\r\\nb")]), end="")
    success: ark:/99999/fk4x
    dc%3Atitle: 100%25 a%0D%0Ab
    """
    return "".join(f"{name.translate(_EZID_NAME)}: {value.translate(_EZID_VALUE)}\n"
                   for name, value in pairs)


def read_ezid_record(text: str) -> dict[str, str]:
    """The elements of an EZID request body: ``name: value`` lines, ``#`` comment lines skipped, a line
    beginning with whitespace continuing the one before (joined by one space), empty lines skipped;
    names and values unescaped (:func:`ezid_unescape`) and stripped.  A name must not be empty nor
    repeated (EZID's dictionary is single-valued); a value may be empty (an update's "delete this
    element").  :class:`AnvlError` names the problem and the line.

    >>> read_ezid_record("# a comment\\nwho: Proust,\\n  Marcel\\r\\ndc%3Atitle: 100%25\\n")
    {'who': 'Proust, Marcel', 'dc:title': '100%'}
    >>> read_ezid_record("who: a\\nwho: b")
    Traceback (most recent call last):
    ...
    pidkit.anvl.AnvlError: element named twice in 'who' on line 2
    """
    out: dict[str, str] = {}
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(ezid_lines(text), 1):
        if line.startswith("#"):
            continue
        if line[:1].isspace() and line.strip():
            if not lines:
                raise AnvlError("a continuation line before any element", text=line, line=number)
            first, previous = lines[-1]
            lines[-1] = (first, f"{previous.rstrip()} {line.strip()}")
        elif line.strip():
            lines.append((number, line))
    for number, line in lines:
        raw_name, colon, raw_value = line.partition(":")
        if not colon:
            raise AnvlError("not a 'name: value' line (no colon)", text=line, line=number)
        name = ezid_unescape(raw_name).strip()
        if not name:
            raise AnvlError("an element without a name", text=line, line=number)
        if name in out:
            raise AnvlError("element named twice", text=name, line=number)
        out[name] = ezid_unescape(raw_value).strip()
    return out
