"""XarkId: 120-bit record ids (48-bit Unix milliseconds + 72 random bits) and revision ids.

Source: the XarkId page, https://xark.org/types/id.html (not copied here: it states no licence; see
``docs/sources.md``), and its reference implementation RT.XarkId, https://github.com/richardtallent/RT.XarkId;
where the page's GUID bit table and the reference code disagree, the reference wins (``docs/xarkid.md``:
"Byte 8 wins").

Forms (all parse to the same value, compare equal and hash equal):

* **compact** (canonical, ``str(x)``): the 15 bytes in base64url, RFC 4648 §5, without padding — exactly
  20 characters of ``A-Za-z0-9-_``.  Case-sensitive.
* **GUID**: the 128-bit GUID built by inserting the version nibble ``4`` and the variant nibble ``8`` (see the
  layout below), written as 32 hex digits.  :meth:`XarkId.parse` accepts it with or without the four dashes
  in the 8-4-4-4-12 positions, in any letter case, optionally wrapped in one pair of braces ``{…}``; nothing
  else (no whitespace, no ``urn:uuid:`` prefix, no stray dashes).  Output (:attr:`XarkId.guid`,
  :attr:`XarkId.hex`) is lowercase, as the XarkId page prefers.

>>> x = XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
>>> x
XarkId('AYvP5WgA-_-_ASNFZ4mr')
>>> x == XarkId.parse("018BCFE5-6800-4FBF-8FBF-0123456789AB")
True
>>> x == XarkId.parse("{018bcfe568004fbf8fbf0123456789ab}")
True
>>> x.timestamp.isoformat()
'2023-11-14T22:13:20+00:00'
>>> str(x.guid)
'018bcfe5-6800-4fbf-8fbf-0123456789ab'
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, Self, TypeAlias

from ._value import OrderedValue, SchemaInfo, type_error
from .codecs import B64URL_CHARS, UuidText, b64url_decode, b64url_encode, load_speedups, read_uuid_text
from .errors import PidkitError, TimestampRangeError, XarkIdError

__all__ = ["RevisionId", "XarkId"]

_Int: TypeAlias = int
_Bytes: TypeAlias = bytes

# --- the layout ----------------------------------------------------------------------------------------
#
# Native value (the XarkId page's "Data Structure (native)"), 120 bits, big-endian, 15 bytes:
#
#   bit  0                                47 48                                                         119
#       +----------------------------------+-------------------------------------------------------------+
#       |  Unix time, milliseconds (48)    |  random (72)                                                |
#       +----------------------------------+-------------------------------------------------------------+
#   byte  0    1    2    3    4    5        6    7    8    9    10   11   12   13   14
#
# GUID form (RT.XarkId ToGuid, RFC 9562 byte order), 128 bits:
#
#   GUID hex:  tttttttt-tttt-4RRR-8RRR-RRRRRRRRRRRR
#   bits  0-47   time (48)                    = native bits 0-47
#   bits 48-51   version nibble 0100b (4)
#   bits 52-63   random bits 0-11   (12)      = native bits 48-59
#   bits 64-67   variant nibble 1000b (8)     (byte 8's high nibble; the page's table says 56-59)
#   bits 68-127  random bits 12-71  (60)      = native bits 60-119
#
# The compact form encodes the native 15 bytes only, so the version/variant nibbles are not in it.

TIME_BITS: Final = 48
RANDOM_BITS: Final = 72
NBYTES: Final = 15
COMPACT_LEN: Final = 20  # 15 bytes * 8 / 6 bits per base64 character, no padding (RFC 4648 §5)
MAX_UNIX_MS: Final = (1 << TIME_BITS) - 1
MAX_RANDOM: Final = (1 << RANDOM_BITS) - 1
MAX_INT: Final = (1 << (TIME_BITS + RANDOM_BITS)) - 1

GUID_VERSION: Final = 0x4  # RFC 9562 §4.2, version 4
GUID_VARIANT_NIBBLE: Final = 0x8  # RT.XarkId: byte 8 = 1000b + 4 random bits (RFC 9562 §4.1 variant 10xx)
_RANDOM_LOW_BITS: Final = 60
_RANDOM_LOW_MASK: Final = (1 << _RANDOM_LOW_BITS) - 1
_GUID_FIXED: Final = (GUID_VERSION << 76) | (GUID_VARIANT_NIBBLE << 60)

_HEX: Final = frozenset("0123456789abcdefABCDEF")
_DASHES: Final = (8, 13, 18, 23)  # 0-based dash indices of the 8-4-4-4-12 form
_DASH_BEFORE_DIGIT: Final = (8, 12, 16, 20)  # a dash comes before these hex digits (0-based) when dashed
_VERSION_DIGIT: Final = 12  # 0-based index of the version nibble among the 32 hex digits
_VARIANT_DIGIT: Final = 16  # 0-based index of the variant nibble among the 32 hex digits
# well-formed XarkId GUID text in one of the accepted shapes (the slow path explains any mismatch)
_GUID_FAST: Final = re.compile(
    r"[0-9A-Fa-f]{12}4[0-9A-Fa-f]{3}8[0-9A-Fa-f]{15}"
    r"|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-8[0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}"
    r"|\{[0-9A-Fa-f]{12}4[0-9A-Fa-f]{3}8[0-9A-Fa-f]{15}\}"
    r"|\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-8[0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}\}"
)
_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
# JSON schema patterns (ECMA-262) of the GUID forms: the XarkId shape (version 4, variant nibble 8)
_HEX32_XARKID: Final = "[0-9A-Fa-f]{12}4[0-9A-Fa-f]{3}8[0-9A-Fa-f]{15}"
_DASHED_XARKID: Final = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-8[0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}"
#: JSON schema pattern of the canonical compact form: 20 base64url characters (RFC 4648 §5).
JSON_COMPACT_PATTERN: Final = "^[A-Za-z0-9_-]{20}$"
#: JSON schema pattern of every form :meth:`XarkId.parse` accepts: compact, or the GUID form (version nibble
#: 4, variant nibble 8) with or without dashes and braces.
JSON_PATTERN: Final = (
    f"^(?:[A-Za-z0-9_-]{{20}}|{_HEX32_XARKID}|{_DASHED_XARKID}"
    f"|\\{{{_HEX32_XARKID}\\}}|\\{{{_DASHED_XARKID}\\}})$"
)
#: The last millisecond :mod:`datetime` can show (9999-12-31T23:59:59.999Z), as Unix milliseconds.
_MAX_DATETIME_MS: Final = (_dt.datetime.max.replace(tzinfo=_dt.UTC) - _EPOCH) // _dt.timedelta(
    milliseconds=1
)


def _guid_int(value: int) -> int:
    """The 128-bit GUID of a 120-bit XarkId value (layout above)."""
    random = value & MAX_RANDOM
    return (
        ((value >> RANDOM_BITS) << 80)
        | _GUID_FIXED
        | ((random >> _RANDOM_LOW_BITS) << 64)
        | (random & _RANDOM_LOW_MASK)
    )


def _from_guid_int(guid: int) -> int:
    """The 120-bit XarkId value of a 128-bit GUID, dropping the version and variant nibbles (RT.XarkId)."""
    random = (((guid >> 64) & 0xFFF) << _RANDOM_LOW_BITS) | (guid & _RANDOM_LOW_MASK)
    return ((guid >> 80) << RANDOM_BITS) | random


def _digit_position(u: UuidText, index: int) -> int:
    """1-based position in the text of hex digit ``index`` (0-based among the 32) of UUID text ``u``."""
    dashes = sum(index >= group for group in _DASH_BEFORE_DIGIT) if u.dashed else 0
    return u.braced + index + dashes + 1


def _parse_guid_text(text: str, *, check_shape: bool) -> int:
    """Parse GUID text to a 128-bit int: UUID text by the one rule (:func:`pidkit.codecs.read_uuid_text`:
    32 hex, optional 8-4-4-4-12 dashes, optional braces), else a :class:`XarkIdError` saying where it
    breaks the rule.

    With ``check_shape`` the version nibble must be ``4`` and byte 8's high nibble ``8``.
    """
    u = read_uuid_text(text)
    if u is None:
        raise _not_uuid_text(text)
    if check_shape:
        version = (u.value >> 76) & 0xF
        if version != GUID_VERSION:
            raise XarkIdError(
                f"not a XarkId GUID: version nibble is {f'{version:x}'!r}, expected '4'",
                text=text,
                position=_digit_position(u, _VERSION_DIGIT),
            )
        variant = (u.value >> 60) & 0xF
        if variant != GUID_VARIANT_NIBBLE:
            raise XarkIdError(
                f"not a XarkId GUID: variant nibble is {f'{variant:x}'!r}, expected '8'",
                text=text,
                position=_digit_position(u, _VARIANT_DIGIT),
            )
    return u.value


def _not_uuid_text(text: str) -> XarkIdError:
    """The error for text that :func:`read_uuid_text` refuses, naming the first place it breaks the rule
    (diagnosis only: what is accepted is decided by ``read_uuid_text``)."""
    n = len(text)
    start, stop = 0, n
    if text.startswith("{"):
        if not text.endswith("}") or n == 1:
            return XarkIdError("'{' without a closing '}' at the end", text=text, position=1)
        start, stop = 1, n - 1
    elif text.endswith("}"):
        return XarkIdError("'}' without an opening '{'", text=text, position=n)
    elif n in (34, 38):
        return XarkIdError(
            f"a {n}-character GUID is braced: expected '{{', found {text[0]!r}", text=text, position=1
        )
    body_len = stop - start
    if body_len not in (32, 36):
        return XarkIdError(
            f"a GUID has 32 hex digits or 36 characters with dashes, got {body_len} characters", text=text
        )
    dashed = body_len == 36
    for i in range(start, stop):
        c = text[i]
        if dashed and (i - start) in _DASHES:
            if c != "-":
                return XarkIdError(f"expected '-', found {c!r}", text=text, position=i + 1)
        elif c not in _HEX:
            return XarkIdError(f"invalid hex digit {c!r}", text=text, position=i + 1)
    return XarkIdError("not GUID text", text=text)  # pragma: no cover - read_uuid_text accepts the rest


# --- fast generation -------------------------------------------------------------------------------------
# ``new()`` must be cheap: the random part comes from a pool of ready-made 12-character base64url strings
# (9 random bytes each = exactly 12 characters, so the base64 of a big urandom buffer is the concatenation of
# the per-id encodings), and the 8-character base64url of the current millisecond (6 bytes = exactly 8
# characters) is cached.  ``list.pop`` is atomic, so two threads never get the same random part; the pool
# is emptied in a forked child so parent and child never share random bits.
#
# With the C helper (``pidkit._speedups``, see :func:`pidkit.codecs.load_speedups`), ``XarkId.new`` is
# its ``xarkid_new``: the same clock (``time.time_ns()``'s, floored to ms), the same CSPRNG (``os.urandom``
# itself, pooled in C), the same result (only ``_compact`` set); ``_new_python`` is the pure-Python one.

_POOL_IDS: Final = 1024
_RANDOM_BYTES: Final = RANDOM_BITS // 8  # 9
_RANDOM_CHARS: Final = 12
_BULK_CLOCK_EVERY: Final = 128
_b64encode = base64.urlsafe_b64encode
_b64decode = base64.urlsafe_b64decode
_time_ns = time.time_ns
_urandom = os.urandom
_pool: list[str] = []
_clock: list[tuple[int, str]] = [(-1, "")]


def _random_strings(count: int) -> list[str]:
    chars = _b64encode(_urandom(_RANDOM_BYTES * count)).decode("ascii")
    return [chars[j : j + _RANDOM_CHARS] for j in range(0, _RANDOM_CHARS * count, _RANDOM_CHARS)]


def _pop_random() -> str:
    while True:
        try:
            return _pool.pop()
        except IndexError:
            _pool.extend(_random_strings(_POOL_IDS))


def _ms_prefix(ms: int) -> str:
    """The 8 base64url characters of a 48-bit millisecond count."""
    return _b64encode(ms.to_bytes(6, "big")).decode("ascii")


def _set_clock(ms: int) -> str:
    """Cache and return the prefix of millisecond ``ms`` (one tuple, so readers see a consistent pair)."""
    prefix = _ms_prefix(ms)
    _clock[0] = (ms, prefix)
    return prefix


def _now_ms() -> int:
    return _time_ns() // 1_000_000




class XarkId(OrderedValue):
    """A XarkId: 48-bit Unix milliseconds + 72 random bits, one 120-bit ``int`` key.

    Immutable, hashable, ordered by (time, random) — that is, by :attr:`int`.  Equality is only between
    values of the same type (:mod:`pidkit._value`): a string, or a :class:`RevisionId` with the same bits,
    is not equal.  ``XarkId(text)`` is :meth:`parse`, so the ``repr`` can be pasted back.

    >>> a = XarkId.from_parts(unix_ms=1609632000000, random=0x010203040506070809)
    >>> a
    XarkId('AXbFiygAAQIDBAUGBwgJ')
    >>> a < XarkId.from_parts(unix_ms=1609632000001, random=0)
    True
    >>> a == "AXbFiygAAQIDBAUGBwgJ"
    False
    """

    # ``_int`` is the key.  ``_compact`` caches the canonical string.  At least one is always set; ``new()``
    # sets only ``_compact`` (the int is decoded on first use), the other constructors only ``_int``.
    __slots__ = ("_compact", "_int")

    _int: int
    _compact: str
    _schema_info = SchemaInfo(
        "xarkid",
        JSON_PATTERN,
        JSON_COMPACT_PATTERN,
        "AYvP5WgA-_-_ASNFZ4mr",
    )

    # --- construction ---------------------------------------------------------------------------------

    def __new__(cls, text: str) -> Self:
        """Same as :meth:`parse` (so that ``repr`` round-trips), without the extra call.

        >>> XarkId("AAAAAAAAAAAAAAAAAAAA").int
        0
        """
        obj = _new_object(cls)
        _set_int(obj, _parse_int(text))
        return obj

    @classmethod
    def _of_int(cls, value: int) -> Self:
        obj = _new_object(cls)
        _set_int(obj, value)
        return obj

    @classmethod
    def _of_compact(cls, compact: str) -> Self:
        obj = _new_object(cls)
        _set_compact(obj, compact)
        return obj

    @classmethod
    def parse(cls, text: str) -> Self:
        """Parse the compact form (20 base64url characters) or the GUID form (see the module docstring).

        Raises :class:`~pidkit.errors.XarkIdError` naming the input and, where one applies, the 1-based
        position of the offending character (a character outside the alphabet, a misplaced dash, a GUID
        version nibble other than ``4``, a byte-8 high nibble other than ``8``).

        >>> XarkId.parse("AXbFiygAAQIDBAUGBwgJ").unix_ms
        1609632000000
        >>> XarkId.parse("AYvP5WgA-_-_ASNFZ4m!")
        Traceback (most recent call last):
        ...
        pidkit.errors.XarkIdError: invalid base64url character '!' in 'AYvP5WgA-_-_ASNFZ4m!' at position 20
        >>> XarkId.parse("0176c58b-2800-1010-8203-040506070809")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pidkit.errors.XarkIdError: not a XarkId GUID: version nibble is '1', expected '4' ... position 15
        """
        return cls._of_int(_parse_int(text))

    @classmethod
    def new(cls) -> Self:
        """A new XarkId: the current system time (``time.time_ns()``) and 72 bits from ``os.urandom``.

        >>> import time
        >>> before = time.time_ns() // 1_000_000
        >>> x = XarkId.new()
        >>> before <= x.unix_ms <= time.time_ns() // 1_000_000
        True
        """
        ms = _time_ns() // 1_000_000
        cached = _clock[0]
        prefix = cached[1] if cached[0] == ms else _set_clock(ms)
        try:
            random = _pool.pop()
        except IndexError:
            random = _pop_random()
        obj = _new_object(cls)
        _set_compact(obj, prefix + random)
        return obj

    @staticmethod
    def new_compact_strings(n: int) -> list[str]:
        """``n`` new XarkIds as compact strings, in bulk (the fast path of ``pidkit new xarkid -n``).

        One ``os.urandom`` call and one base64 call for the whole batch.  The system clock is read once
        every 128 ids (tens of microseconds apart), so every id carries the current millisecond.

        >>> ids = XarkId.new_compact_strings(3)
        >>> [len(s) for s in ids], len(set(ids))
        ([20, 20, 20], 3)
        """
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        chars = _b64encode(_urandom(_RANDOM_BYTES * n)).decode("ascii")
        out: list[str] = []
        for start in range(0, n, _BULK_CLOCK_EVERY):
            prefix = _ms_prefix(_now_ms())
            stop = min(n, start + _BULK_CLOCK_EVERY) * _RANDOM_CHARS
            out += [
                prefix + chars[j : j + _RANDOM_CHARS]
                for j in range(start * _RANDOM_CHARS, stop, _RANDOM_CHARS)
            ]
        return out

    @classmethod
    def new_many(cls, n: int) -> list[Self]:
        """``n`` new XarkIds (see :meth:`new_compact_strings`).

        >>> len(set(XarkId.new_many(100)))
        100
        """
        make = cls._of_compact
        return [make(s) for s in cls.new_compact_strings(n)]

    @classmethod
    def from_int(cls, value: int) -> Self:
        """From the 120-bit integer (time in the high 48 bits, random in the low 72).

        >>> XarkId.from_int(1 << 72).unix_ms
        1
        """
        if not 0 <= value <= MAX_INT:
            raise XarkIdError(f"a XarkId is a 120-bit unsigned integer, got {value}")
        return cls._of_int(value)

    @classmethod
    def from_bytes(cls, data: _Bytes) -> Self:
        """From the 15 native bytes (big-endian time, then random).

        >>> XarkId.from_bytes(bytes(15))
        XarkId('AAAAAAAAAAAAAAAAAAAA')
        """
        if len(data) != NBYTES:
            raise XarkIdError(f"a XarkId is {NBYTES} bytes, got {len(data)}")
        return cls._of_int(int.from_bytes(data, "big"))

    @classmethod
    def from_parts(cls, *, unix_ms: int, random: int) -> Self:
        """From the Unix time in milliseconds (48 bits) and the random part (72 bits).

        >>> XarkId.from_parts(unix_ms=1700000000000, random=0xFBFFBF0123456789AB)
        XarkId('AYvP5WgA-_-_ASNFZ4mr')
        """
        if not 0 <= unix_ms <= MAX_UNIX_MS:
            raise XarkIdError(f"unix_ms must fit in {TIME_BITS} bits, got {unix_ms}")
        if not 0 <= random <= MAX_RANDOM:
            raise XarkIdError(f"random must fit in {RANDOM_BITS} bits, got {random}")
        return cls._of_int((unix_ms << RANDOM_BITS) | random)

    @classmethod
    def from_guid(cls, guid: uuid.UUID | str, *, lossy: bool = False) -> Self:
        """From a GUID (a :class:`uuid.UUID` or GUID text as :meth:`parse` accepts it).

        By default the GUID must have the XarkId shape ``…-4xxx-8xxx-…`` (version nibble 4, byte 8's high
        nibble 8); any other GUID is rejected because it could not round-trip.  With ``lossy=True`` any
        GUID is accepted and, like RT.XarkId's ``XarkId(Guid)``, the version nibble and byte 8's high nibble
        are dropped and the remaining 120 bits are taken as they are.

        >>> g = uuid.UUID("0176c58b-2800-1010-0203-040506070809")
        >>> XarkId.from_guid(g)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pidkit.errors.XarkIdError: not a XarkId GUID: version nibble is '1', expected '4' in ...
        >>> XarkId.from_guid(g, lossy=True).guid
        UUID('0176c58b-2800-4010-8203-040506070809')
        """
        text = str(guid) if isinstance(guid, uuid.UUID) else guid
        value = _parse_guid_text(text, check_shape=not lossy)
        return cls._of_int(_from_guid_int(value))

    # --- views ----------------------------------------------------------------------------------------

    def _key(self) -> int:
        try:
            return self._int
        except AttributeError:
            value = int.from_bytes(_b64decode(self._compact), "big")
            _set_int(self, value)
            return value

    @property
    def compact(self) -> str:
        """The canonical 20-character base64url form (RFC 4648 §5, no padding); also ``str(x)``.

        >>> XarkId.from_int(0).compact
        'AAAAAAAAAAAAAAAAAAAA'
        """
        try:
            return self._compact
        except AttributeError:
            text = b64url_encode(self._int.to_bytes(NBYTES, "big"))
            _set_compact(self, text)
            return text

    @property
    def guid(self) -> uuid.UUID:
        """The GUID form (version nibble 4, byte 8 high nibble 8).

        >>> XarkId.from_int(0).guid
        UUID('00000000-0000-4000-8000-000000000000')
        """
        return uuid.UUID(int=_guid_int(self._key()))

    @property
    def hex(self) -> str:
        """The GUID form as 32 lowercase hex digits without dashes.

        >>> XarkId.parse("AYvP5WgA-_-_ASNFZ4mr").hex
        '018bcfe568004fbf8fbf0123456789ab'
        """
        return f"{_guid_int(self._key()):032x}"

    @property
    def unix_ms(self) -> int:
        """The embedded time: milliseconds since 1970-01-01T00:00:00Z.

        >>> XarkId.parse("AXbFiygAAQIDBAUGBwgJ").unix_ms
        1609632000000
        """
        return self._key() >> RANDOM_BITS

    @property
    def random(self) -> int:
        """The 72 random bits (or, for a :class:`RevisionId`, possibly a content checksum).

        >>> hex(XarkId.parse("AXbFiygAAQIDBAUGBwgJ").random)
        '0x10203040506070809'
        """
        return self._key() & MAX_RANDOM

    @property
    def timestamp(self) -> _dt.datetime:
        """The embedded time as an aware UTC :class:`datetime.datetime` (millisecond precision).

        The XarkId page requires it shown in UTC.  Times after 9999-12-31 (possible in 48 bits: up to the year
        10889) raise :class:`~pidkit.errors.TimestampRangeError` naming the id, as :mod:`datetime` cannot
        represent them; :attr:`unix_ms` still gives the time.

        >>> XarkId.parse("AXbFiygAAQIDBAUGBwgJ").timestamp
        datetime.datetime(2021, 1, 3, 0, 0, tzinfo=datetime.timezone.utc)
        >>> XarkId.parse("________________AAAA").timestamp  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pidkit.errors.TimestampRangeError: embedded time 281474976710655 ms is after 9999-12-31 ...
        """
        ms = self.unix_ms
        if ms > _MAX_DATETIME_MS:
            raise TimestampRangeError(
                f"embedded time {ms} ms is after 9999-12-31 (datetime cannot show it; unix_ms can)",
                text=str(self),
            )
        return _EPOCH + _dt.timedelta(milliseconds=ms)

    @property
    def bytes(self) -> _Bytes:
        """The 15 native bytes.

        >>> XarkId.parse("AXbFiygAAQIDBAUGBwgJ").bytes.hex()
        '0176c58b2800010203040506070809'
        """
        return self._key().to_bytes(NBYTES, "big")

    @property
    def int(self) -> _Int:
        """The 120-bit integer (the key for equality, hashing and ordering).

        >>> XarkId.parse("AAAAAAAAAAAAAAAAAAAB").int
        1
        """
        return self._key()

    # --- protocol (equality, hashing, ordering, immutability, pickling, pydantic: pidkit._value) ----------

    _cmp_key = _key

    def _repr_text(self) -> str:
        try:
            return self._compact
        except AttributeError:
            return self.compact

    def __str__(self) -> str:
        try:
            return self._compact
        except AttributeError:
            return self.compact

    @classmethod
    def _coerce(cls, value: object) -> Self:
        """Also a :class:`uuid.UUID` (:meth:`from_guid`) and another XarkId (e.g. a plain one for a
        :class:`RevisionId`)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, uuid.UUID):
            return cls.from_guid(value)
        if isinstance(value, XarkId):
            return cls._of_int(value._key())
        raise type_error(cls, value)


_new_object = object.__new__
_set_int: Callable[[XarkId, int], None] = XarkId.__dict__["_int"].__set__
_set_compact: Callable[[XarkId, str], None] = XarkId.__dict__["_compact"].__set__
#: ``XarkId.new`` in pure Python (what ``XarkId.new`` is without the C helper).
_new_python: Final[Callable[[type[XarkId]], XarkId]] = XarkId.__dict__["new"].__func__
#: ``XarkId.new_compact_strings`` in pure Python (what it is without the C helper).
_compact_strings_python: Final[Callable[[int], list[str]]] = XarkId.__dict__["new_compact_strings"].__func__
_speedups: Final = load_speedups()
#: ``True`` when ``XarkId.new`` is the C helper's ``xarkid_new``, ``False`` for pure Python.
SPEEDUPS: Final[bool] = _speedups is not None


if _speedups is not None:
    _speedups._xarkid_setup(XarkId, XarkId.__dict__["_compact"], _urandom)
    XarkId.new = classmethod(_speedups.xarkid_new)  # type: ignore[assignment,method-assign]
    XarkId.new_compact_strings = staticmethod(_speedups.xarkid_compact_strings)  # type: ignore[method-assign]
if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(after_in_child=_pool.clear)  # the C pool knows a fork by itself (pthread_atfork)


def _parse_int(text: str) -> int:
    """The 120-bit value of compact or GUID text (see :meth:`XarkId.parse`)."""
    if not isinstance(text, str):
        raise TypeError(f"XarkId text must be str, not {type(text).__name__}")
    n = len(text)
    if n == COMPACT_LEN:
        # fast path for well-formed input (20 characters = 120 bits exactly: no padding, no spare bits);
        # anything else goes through the codec's strict decoder, which names the bad character
        if B64URL_CHARS.issuperset(text):
            return int.from_bytes(_b64decode(text), "big")
        return int.from_bytes(b64url_decode(text, NBYTES, error=XarkIdError), "big")
    if n in (32, 34, 36, 38):
        if _GUID_FAST.fullmatch(text):
            return _from_guid_int(int(text.strip("{}").replace("-", ""), 16))
        return _from_guid_int(_parse_guid_text(text, check_shape=True))
    if n == 0:
        raise XarkIdError("empty XarkId", text=text)
    raise XarkIdError(
        f"expected a 20-character compact XarkId or a 32-hex-digit GUID, got {n} characters", text=text
    )


# --- revision ids --------------------------------------------------------------------------------------


def _normalize_newlines(value: Any) -> Any:
    """Recursively replace CR LF and lone CR by LF in every string (dict keys included)."""
    if isinstance(value, str):
        return value.replace("\r\n", "\n").replace("\r", "\n")
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            norm_key = _normalize_newlines(key)
            if norm_key in out:
                raise PidkitError(f"content keys {key!r} and another key collide after CR/LF normalization")
            out[norm_key] = _normalize_newlines(item)
        return out
    if isinstance(value, list | tuple):
        return [_normalize_newlines(item) for item in value]
    return value


class RevisionId(XarkId):
    """A XarkId for a record revision whose 72 random bits may carry a checksum of the record's content.

    The XarkId page leaves the checksum open; pidkit's decision (stable across serializations, line endings):

    1. The content is a JSON-compatible value (``dict`` with ``str`` keys, ``list``/``tuple``, ``str``,
       ``int``, ``float``, ``bool``, ``None``).
    2. Every string — dict keys and values, at any depth — has CR LF and then any lone CR replaced by LF.
    3. It is serialized as ``json.dumps(content, sort_keys=True, separators=(",", ":"),
       ensure_ascii=False, allow_nan=False)`` and encoded as UTF-8 (:meth:`canonical_bytes`).
    4. The checksum is the first 9 bytes (72 bits, big-endian) of the SHA-256 of those bytes.

    :meth:`for_content` puts the checksum in the random bits (time = now).  A revision id without a
    checksum stays valid: :meth:`matches` just returns ``False``.  Non-JSON values raise ``TypeError``,
    NaN/infinity ``ValueError`` (from :mod:`json`), keys that become equal after step 2 a
    :class:`~pidkit.errors.PidkitError`.

    >>> r = RevisionId.for_content({"name": "Ada\\r\\nLovelace"})
    >>> r.matches({"name": "Ada\\nLovelace"}), r.matches({"name": "Ada Lovelace"})
    (True, False)
    """

    __slots__ = ()

    @staticmethod
    def canonical_bytes(content: object) -> _Bytes:
        """The canonical serialization that the checksum hashes (see the class docstring).

        >>> RevisionId.canonical_bytes({"b": "x\\r\\ny", "a": [1, "é"]})
        b'{"a":[1,"\\xc3\\xa9"],"b":"x\\\\ny"}'
        """
        normalized = _normalize_newlines(content)
        text = json.dumps(
            normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        return text.encode("utf-8")

    @staticmethod
    def content_checksum(content: object) -> _Int:
        """The 72-bit content checksum: SHA-256 of :meth:`canonical_bytes`, first 9 bytes, big-endian.

        >>> RevisionId.content_checksum({}) == int(__import__("hashlib").sha256(b"{}").hexdigest()[:18], 16)
        True
        """
        digest = hashlib.sha256(RevisionId.canonical_bytes(content)).digest()
        return int.from_bytes(digest[:_RANDOM_BYTES], "big")

    @classmethod
    def for_content(cls, content: object) -> Self:
        """A new revision id: current time, random bits = the content checksum.

        >>> RevisionId.for_content([1, 2]).random == RevisionId.content_checksum([1, 2])
        True
        """
        return cls._of_int((_now_ms() << RANDOM_BITS) | cls.content_checksum(content))

    def matches(self, content: object) -> bool:
        """Whether the random bits are the checksum of ``content`` (``False`` for ids without a checksum).

        >>> RevisionId.new().matches({"a": 1})
        False
        """
        return self.random == self.content_checksum(content)

    def refresh(self, content: object) -> RevisionId:
        """The revision id for ``content``: ``self`` if it still matches, else :meth:`for_content`.

        >>> r = RevisionId.for_content("v1")
        >>> r.refresh("v1") is r, r.refresh("v2").matches("v2")
        (True, True)
        """
        if self.matches(content):
            return self
        return type(self).for_content(content)
