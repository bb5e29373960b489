"""Alphabets and codecs shared by every scheme.

Each alphabet is defined here once; the schemes import them.

* base64url — RFC 4648 §5 (``-`` and ``_`` for ``+`` and ``/``), used without padding by XarkId (20 chars
  for 15 bytes) and Library.Link (11 chars for 8 bytes).
* base32-sortable — atproto's ``234567abcdefghijklmnopqrstuvwxyz``, used by TIDs.
* NOID extended digits (betanumeric) — ``0123456789bcdfghjkmnpqrstvwxz`` (R = 29), used by NOID templates
  and the NCDA check character.
* ISO 8601 in UTC with ``Z`` — how pidkit writes every instant (``inspect``, the store, ``?info``).
* UUID text — the one rule for reading a UUID written as text (:func:`read_uuid_text`), used by every
  scheme, ``inspect``, GEDCOM and the store.
* The optional C helper ``pidkit._speedups`` — the one rule for whether it is used
  (:func:`load_speedups`), by Library.Link ids and ``XarkId.new()``.

>>> b64url_encode(bytes([0xfb, 0xff, 0xbf]))
'-_-_'
>>> b64url_decode("-_-_", 3)
b'\\xfb\\xff\\xbf'
>>> b32s_encode(0, 13)
'2222222222222'
>>> b32s_decode("2222222222223")
1
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import importlib
import os
import re
from types import ModuleType
from typing import Final, NamedTuple

from .errors import ParseError

__all__ = [
    "B32S_ALPHABET",
    "B32S_VALUE",
    "B64URL_ALPHABET",
    "B64URL_CHARS",
    "BETANUMERIC",
    "BETANUMERIC_VALUE",
    "UuidText",
    "b32s_decode",
    "b32s_encode",
    "b64url_decode",
    "b64url_encode",
    "first_bad_char",
    "iso_z",
    "load_speedups",
    "read_uuid_text",
    "uuid_text",
]

def load_speedups() -> ModuleType | None:
    """The compiled helper ``pidkit._speedups``, or ``None`` if it was not built or the environment
    variable ``PIDKIT_PURE_PYTHON`` is set (to anything but ``0``) when pidkit is imported.

    >>> import os
    >>> helper = load_speedups()
    >>> pure = os.environ.get("PIDKIT_PURE_PYTHON", "") not in ("", "0")
    >>> helper is None if pure else helper is None or helper.__name__ == "pidkit._speedups"
    True
    """
    if os.environ.get("PIDKIT_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        # by its full name, not ``from . import``: the extension is a leaf, and the value modules never
        # import the ``pidkit`` package (which imports them) for it
        return importlib.import_module("pidkit._speedups")
    except ImportError:
        return None


#: RFC 4648 §5 "URL and Filename safe" alphabet.
B64URL_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
B64URL_CHARS: Final = frozenset(B64URL_ALPHABET)

#: atproto base32-sortable alphabet (tid.mdx: "base32-sortable").
B32S_ALPHABET: Final = "234567abcdefghijklmnopqrstuvwxyz"
B32S_VALUE: Final[dict[str, int]] = {c: i for i, c in enumerate(B32S_ALPHABET)}

#: NOID "extended digits" (betanumeric): digits and consonants without ``l`` (NOID 0.424, NCDA), R = 29.
BETANUMERIC: Final = "0123456789bcdfghjkmnpqrstvwxz"
BETANUMERIC_VALUE: Final[dict[str, int]] = {c: i for i, c in enumerate(BETANUMERIC)}


def first_bad_char(text: str, allowed: frozenset[str] | str) -> int | None:
    """1-based position of the first character of ``text`` not in ``allowed``, or ``None``.

    >>> first_bad_char("ab!c", "abc")
    3
    >>> first_bad_char("abc", "abc") is None
    True
    """
    for i, c in enumerate(text, 1):
        if c not in allowed:
            return i
    return None


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 4648 §5).

    >>> b64url_encode(b"\\x00" * 15)
    'AAAAAAAAAAAAAAAAAAAA'
    """
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str, nbytes: int, *, error: type[ParseError] = ParseError) -> bytes:
    """Strict base64url decoding of exactly ``nbytes`` bytes, no padding accepted.

    Raises ``error`` naming the first character outside the alphabet, a wrong length, or
    non-canonical trailing bits.

    >>> b64url_decode("AAAAAAAAAAAAAAAAAAAA", 15) == bytes(15)
    True
    >>> b64url_decode("AAA=", 2)
    Traceback (most recent call last):
    ...
    pidkit.errors.ParseError: invalid base64url character '=' in 'AAA=' at position 4
    """
    expected = (nbytes * 8 + 5) // 6
    bad = first_bad_char(text, B64URL_CHARS)
    if bad is not None:
        raise error(f"invalid base64url character {text[bad - 1]!r}", text=text, position=bad)
    if len(text) != expected:
        raise error(f"expected {expected} base64url characters, got {len(text)}", text=text)
    pad = "=" * (-len(text) % 4)
    try:
        data = base64.urlsafe_b64decode(text + pad)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - alphabet and length checked above
        raise error(f"invalid base64url: {exc}", text=text) from exc
    if b64url_encode(data) != text:
        raise error("non-canonical base64url (unused trailing bits set)", text=text, position=len(text))
    return data


def b32s_encode(value: int, width: int) -> str:
    """Encode a non-negative int in base32-sortable, left-padded with ``2`` to ``width`` characters.

    >>> b32s_encode(31, 2)
    '2z'
    """
    chars = []
    for _ in range(width):
        chars.append(B32S_ALPHABET[value & 31])
        value >>= 5
    if value:
        raise OverflowError("value does not fit in the width")
    return "".join(reversed(chars))


def b32s_decode(text: str, *, error: type[ParseError] = ParseError) -> int:
    """Decode base32-sortable text to an int, naming the first bad character.

    >>> b32s_decode("2z")
    31
    """
    value = 0
    for i, c in enumerate(text, 1):
        v = B32S_VALUE.get(c)
        if v is None:
            raise error(f"invalid base32-sortable character {c!r}", text=text, position=i)
        value = (value << 5) | v
    return value


def iso_z(when: _dt.datetime, timespec: str = "microseconds") -> str:
    """``when`` (timezone-aware) as ISO 8601 in UTC with ``Z`` (RFC 3339 §5.6), to ``timespec``
    (:meth:`datetime.isoformat`'s).

    >>> eastern = _dt.timezone(_dt.timedelta(hours=-5))
    >>> iso_z(_dt.datetime(2024, 5, 1, 7, 0, tzinfo=eastern))
    '2024-05-01T12:00:00.000000Z'
    >>> iso_z(_dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=_dt.UTC), "milliseconds")
    '2024-05-01T12:00:00.123Z'
    """
    if when.tzinfo is not _dt.UTC:
        if when.tzinfo is None or when.utcoffset() is None:
            raise ValueError(f"a naive datetime has no place in time: {when.isoformat()}")
        when = when.astimezone(_dt.UTC)
    return when.isoformat(timespec=timespec)[:-6] + "Z"  # "+00:00" -> "Z"


#: UUID text: 32 ASCII hex digits (either case), plain or in RFC 9562 §4's 8-4-4-4-12 groups, optionally in
#: braces (the Microsoft registry form of a GUID).  Group 1 is the braced body, group 2 the bare one.
_UUID_HEX: Final = (
    r"[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
)
_UUID_TEXT: Final = re.compile(rf"\{{({_UUID_HEX})\}}|({_UUID_HEX})")


class UuidText(NamedTuple):
    """A UUID read from text by :func:`read_uuid_text`: its 128-bit value and how it was written."""

    value: int
    dashed: bool  #: written in the 8-4-4-4-12 groups
    braced: bool  #: wrapped in ``{…}``

    @property
    def rfc9562(self) -> bool:
        """Written exactly as RFC 9562 §4's string representation (dashed, no braces; either case).

        >>> read_uuid_text("{0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F}").rfc9562
        False
        """
        return self.dashed and not self.braced


def read_uuid_text(text: str) -> UuidText | None:
    """Read UUID text — the one rule pidkit has for it — or ``None`` when ``text`` is not UUID text.

    32 ASCII hex digits, either case, plain or dashed 8-4-4-4-12 (RFC 9562 §4), optionally in braces.
    Nothing else is UUID text: no spaces, no dashes elsewhere, no ``urn:uuid:`` prefix, no non-ASCII
    digits (unlike :class:`uuid.UUID`, which strips braces and dashes wherever they are).

    >>> u = read_uuid_text("0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F")
    >>> hex(u.value), u.dashed, u.braced, u.rfc9562
    ('0xe4a9c1e6b1f4c3a9d2b1a2b3c4d5e6f', True, False, True)
    >>> read_uuid_text("{0e4a9c1e6b1f4c3a9d2b1a2b3c4d5e6f}").braced
    True
    >>> read_uuid_text("0e4a9c1e-6b1f4c3a-9d2b-1a2b3c4d5e6f") is None
    True
    """
    m = _UUID_TEXT.fullmatch(text)
    if m is None:
        return None
    body = m[1] if m[1] is not None else m[2]
    return UuidText(int(body.replace("-", ""), 16), len(body) == 36, m[1] is not None)


def uuid_text(value: int) -> str:
    """The canonical text of a UUID: lowercase, dashed 8-4-4-4-12 (RFC 9562 §4).

    >>> uuid_text(0x0E4A9C1E6B1F4C3A9D2B1A2B3C4D5E6F)
    '0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f'
    """
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
