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

import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["LINE_BREAKS", "UNAVAILABLE", "anvl_line", "anvl_name", "anvl_record", "anvl_value", "erc_segment"]

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
