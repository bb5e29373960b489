"""Character encodings of GEDCOM files: byte-order marks, UTF-16 sniffing and ``HEAD.CHAR`` names.

GEDCOM 7.0 is always UTF-8 (gedcom-1 "Characters"; an initial U+FEFF may be present and means nothing).
Earlier versions name the character set in ``HEAD.CHAR``.  pidkit maps those names to Python codecs
as follows (:data:`CHARSETS`); where the name is ambiguous the choice is documented here:

=================================  ======================  =============================================
``HEAD.CHAR``                      codec                   note
=================================  ======================  =============================================
``UTF-8``, ``UTF8``                ``utf-8``               the GEDCOM 5.5.1 name
``UNICODE``, ``UTF-16``            ``utf-16-le``/``-be``   byte order from the BOM or from the first bytes
``ANSEL``                          ``gedcom``              the ``ansel`` package's GEDCOM flavour of ANSEL
``ASCII``                          ``ascii``
``ANSI``                           ``cp1252``              what Windows programs meant by "ANSI"
``IBM WINDOWS``                    ``cp1252``              Windows programs' name for it (read so by
                                                           other GEDCOM readers too)
``IBMPC``, ``IBM PC``              ``cp437``               the original IBM PC code page (not cp850)
``MACINTOSH``, ``MACROMAN``        ``mac_roman``
``LATIN1``, ``ISO-8859-1`` …       ``latin-1``
=================================  ======================  =============================================

The detected codec is only used to *decode payloads* for analysis and to *encode new lines*; lines read
from a file are written back as the very bytes that were read, so an imperfect codec never changes them.

>>> sniff(b"\\xef\\xbb\\xbf0 HEAD\\n")
Sniffed(bom=b'\\xef\\xbb\\xbf', codec='utf-8')
>>> sniff(b"0\\x00 \\x00H\\x00")
Sniffed(bom=b'', codec='utf-16-le')
>>> codec_for_charset("ANSI")
'cp1252'
"""

from __future__ import annotations

import codecs
from contextvars import ContextVar
from typing import Final, NamedTuple

import ansel

__all__ = [
    "CHARSETS",
    "DEFAULT_CODEC",
    "Sniffed",
    "codec_for_charset",
    "decode_replacing",
    "is_ascii_compatible",
    "sniff",
]

ansel.register()  # adds the "ansel" and "gedcom" codecs (codecs.register is idempotent for lookups)

#: Codec used when nothing says otherwise (GEDCOM 7.0 and 5.5.1's recommended UTF-8).
DEFAULT_CODEC: Final = "utf-8"

#: ``HEAD.CHAR`` values (upper-cased, spaces and dashes kept) → Python codec names.
CHARSETS: Final[dict[str, str]] = {
    "UTF-8": "utf-8",
    "UTF8": "utf-8",
    "UNICODE": "utf-16",
    "UTF-16": "utf-16",
    "UTF16": "utf-16",
    "ANSEL": "gedcom",
    "ASCII": "ascii",
    "ANSI": "cp1252",
    "IBM WINDOWS": "cp1252",
    "IBMWINDOWS": "cp1252",
    "CP1252": "cp1252",
    "WINDOWS-1252": "cp1252",
    "IBMPC": "cp437",
    "IBM PC": "cp437",
    "MACINTOSH": "mac_roman",
    "MACROMAN": "mac_roman",
    "LATIN1": "latin-1",
    "LATIN-1": "latin-1",
    "ISO-8859-1": "latin-1",
    "ISO8859-1": "latin-1",
}

#: The spans :func:`decode_replacing` is collecting (``None`` outside of it).
_REPLACED: ContextVar[list[tuple[int, int]] | None] = ContextVar("pidkit_gedcom_replaced", default=None)


def _replace_noted(exc: UnicodeError) -> tuple[str, int]:
    """The codec error handler of :func:`decode_replacing`: what ``replace`` does, the span noted."""
    spans = _REPLACED.get()
    if not isinstance(exc, UnicodeDecodeError) or spans is None:
        raise exc
    spans.append((exc.start, exc.end))
    return "\ufffd", exc.end


_REPLACE_NOTED: Final = "pidkit-gedcom-replace-noted"
codecs.register_error(_REPLACE_NOTED, _replace_noted)

_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class Sniffed(NamedTuple):
    """What the first bytes of a file say: its byte-order mark (kept verbatim) and codec, if they say one.

    ``codec`` is ``None`` for an ASCII-compatible file without BOM (the codec then comes from
    ``HEAD.CHAR``).
    """

    bom: bytes
    codec: str | None


def sniff(head: bytes) -> Sniffed:
    """Detect a byte-order mark, or UTF-16 without one, from the first bytes of a file.

    UTF-16 without BOM is recognized by a NUL byte next to the first character (a GEDCOM file starts
    with the ASCII digit ``0``), as in the gedcom7code ``char_utf16*-1.ged`` test files.

    >>> sniff(b"\\xfe\\xff\\x000")
    Sniffed(bom=b'\\xfe\\xff', codec='utf-16-be')
    >>> sniff(b"0 HEAD")
    Sniffed(bom=b'', codec=None)
    """
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return Sniffed(bom, codec)
    if len(head) >= 2:
        if head[0] != 0 and head[1] == 0:
            return Sniffed(b"", "utf-16-le")
        if head[0] == 0 and head[1] != 0:
            return Sniffed(b"", "utf-16-be")
    return Sniffed(b"", None)


def codec_for_charset(name: str) -> str | None:
    """The Python codec for a ``HEAD.CHAR`` value, or ``None`` if pidkit does not know the name.

    >>> codec_for_charset(" utf-8 ")
    'utf-8'
    >>> codec_for_charset("IBMPC")
    'cp437'
    >>> codec_for_charset("EBCDIC") is None
    True
    """
    return CHARSETS.get(name.strip().upper())


def decode_replacing(data: bytes, codec: str) -> tuple[str, list[tuple[int, int]]]:
    """``data`` decoded with ``codec``, every piece the codec cannot read replaced by U+FFFD (as the
    ``replace`` error handler does, the codec deciding where a piece ends), and the ``(start, end)`` byte
    spans of those pieces, in order.

    >>> decode_replacing(b"J\\xe9r\\xf4me", "utf-8")
    ('J\ufffdr\ufffdme', [(1, 2), (3, 4)])
    >>> decode_replacing(b"J\\x80r", "gedcom"), decode_replacing(b"ok", "ascii")
    (('J\ufffdr', [(1, 2)]), ('ok', []))
    """
    spans: list[tuple[int, int]] = []
    token = _REPLACED.set(spans)
    try:
        text = data.decode(codec, _REPLACE_NOTED)
    finally:
        _REPLACED.reset(token)
    return text, spans


def is_ascii_compatible(codec: str) -> bool:
    """Whether ``codec`` encodes ASCII as itself, one byte per character (then lines are split as bytes).

    >>> is_ascii_compatible("gedcom"), is_ascii_compatible("utf-16-le")
    (True, False)
    """
    return not codec.startswith("utf-16")
