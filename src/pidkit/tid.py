"""atproto Timestamp Identifiers (TIDs) and a strictly increasing TID clock.

Source: the AT Protocol's "Timestamp Identifiers (TIDs)", https://atproto.com/specs/tid (a copy, CC BY 4.0:
``specs/atproto/tid.mdx``), and the "RFC: Record Keys" draft (M. Perhats, 2024; no stable public address,
see ``specs/README.md``).

A TID is a 64-bit integer written as 13 base32-sortable characters (alphabet
``234567abcdefghijklmnopqrstuvwxyz``, most significant digit first, no padding)::

    bit 63      62 ............................ 10   9 ........ 0
    +-----+-----------------------------------------+-------------+
    |  0  |  microseconds since the Unix epoch (53) | clock id(10)|
    +-----+-----------------------------------------+-------------+

13 characters carry 65 bits, so the first character holds bits 64..60.  Its value ``v`` decides the two top
bits: ``v < 8`` (``2``–``7``, ``a``, ``b``) keeps both bit 64 and bit 63 clear; ``8 <= v < 16``
(``c``–``j``) sets bit 63, the "top bit" that tid.mdx says "is always 0"; ``v >= 16`` (``k``–``z``) needs
bit 64 and does not fit in 64 bits at all.  The reference syntax
``^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$`` therefore only guarantees that the value fits
in 64 bits.  :meth:`Tid.parse` accepts exactly that syntax (interop);
``Tid.parse(text, strict=True)`` also enforces the layout rule and rejects a first character ``c``–``j``.

>>> t = Tid.parse("3jzfcijpj2z2a")
>>> t.micros, t.clock_id
(1688137381887007, 6)
>>> t.timestamp.isoformat()
'2023-06-30T15:03:01.887007+00:00'
>>> Tid.from_parts(micros=t.micros, clock_id=t.clock_id) == t
True
>>> Tid.parse("czzzzzzzzzzzz").high_bit
True
>>> Tid.parse("czzzzzzzzzzzz", strict=True)
Traceback (most recent call last):
...
pidkit.errors.TidError: top bit set (first character 'c' is above 'b') in 'czzzzzzzzzzzz' at position 1
"""

from __future__ import annotations

import builtins
import re
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from ._value import OrderedValue, SchemaInfo, type_error
from .codecs import B32S_ALPHABET, B32S_VALUE
from .errors import TidError

__all__ = ["CLOCK_ID_BITS", "MICROS_BITS", "TID_LENGTH", "Tid", "TidClock", "is_valid_tid"]

#: tid.mdx "TID Syntax": "length is always 13 ASCII characters".
TID_LENGTH: Final = 13
#: tid.mdx "TID Structure": "The next 53 bits represent microseconds since the UNIX epoch".
MICROS_BITS: Final = 53
#: tid.mdx "TID Structure": "The final 10 bits are a random 'clock identifier'".
CLOCK_ID_BITS: Final = 10
MAX_MICROS: Final = (1 << MICROS_BITS) - 1
MAX_CLOCK_ID: Final = (1 << CLOCK_ID_BITS) - 1
_MAX_INT: Final = (1 << 64) - 1
_TOP_BIT: Final = 1 << 63
#: tid.mdx "TID Syntax": "the first character must be one of ``234567abcdefghij``" (value fits in 64 bits).
FIRST_CHARS: Final = B32S_ALPHABET[:16]
#: The first characters that also keep the top bit 0 (tid.mdx "TID Structure": "The top bit is always 0").
STRICT_FIRST_CHARS: Final = B32S_ALPHABET[:8]

#: tid.mdx "TID Syntax" as a JSON schema pattern (ECMA-262).
JSON_PATTERN: Final = f"^[{FIRST_CHARS}][{B32S_ALPHABET}]{{12}}$"

#: tid.mdx reference regex, used with ``fullmatch`` (``$`` would let a trailing newline through).
_TID_RE: Final = re.compile(f"[{FIRST_CHARS}][{B32S_ALPHABET}]{{12}}")
_fullmatch: Final = _TID_RE.fullmatch
_strict_fullmatch: Final = re.compile(f"[{STRICT_FIRST_CHARS}][{B32S_ALPHABET}]{{12}}").fullmatch
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US: Final = timedelta(microseconds=1)

# Every 10-bit value as two base32-sortable characters: a 64-bit TID is its first character (bits 64..60)
# followed by six 10-bit groups, so encoding is one index and six table look-ups.
_PAIRS: Final = tuple(a + b for a in B32S_ALPHABET for b in B32S_ALPHABET)
# base32-sortable -> the digits int(..., 32) understands (0-9a-v), for a C-speed decode of a checked string.
_TO_INT32: Final = str.maketrans(B32S_ALPHABET, "0123456789abcdefghijklmnopqrstuv")

_time_ns = time.time_ns  # the clock's time source (tests replace it)


def _encode(value: int) -> str:
    """The 13-character base32-sortable form of a 64-bit int (no range check)."""
    p = _PAIRS
    return (
        B32S_ALPHABET[value >> 60]
        + p[(value >> 50) & 1023]
        + p[(value >> 40) & 1023]
        + p[(value >> 30) & 1023]
        + p[(value >> 20) & 1023]
        + p[(value >> 10) & 1023]
        + p[value & 1023]
    )


def _check(text: str, strict: bool) -> str:
    """Raise :class:`TidError` naming the first problem in ``text``; return it as a plain ``str`` if valid."""
    if not isinstance(text, str):
        raise TidError(f"expected a str, got {type(text).__name__}")
    if len(text) != TID_LENGTH:
        raise TidError(f"expected {TID_LENGTH} characters, got {len(text)}", text=text)
    first = text[0]
    if first not in B32S_VALUE:
        raise TidError(f"invalid base32-sortable character {first!r}", text=text, position=1)
    if first not in FIRST_CHARS:
        raise TidError(
            f"value does not fit in 64 bits (first character {first!r} is above 'j')", text=text, position=1
        )
    for i, c in enumerate(text[1:], 2):
        if c not in B32S_VALUE:
            raise TidError(f"invalid base32-sortable character {c!r}", text=text, position=i)
    if strict and first not in STRICT_FIRST_CHARS:
        raise TidError(
            f"top bit set (first character {first!r} is above 'b')",
            text=text,
            position=1,
        )
    return str(text)  # a str subclass that passed every check


def is_valid_tid(
    text: str, strict: bool = False, _fm: Any = _fullmatch, _sfm: Any = _strict_fullmatch
) -> bool:
    """True if ``text`` is a TID (the tid.mdx syntax, anchored; ``strict`` also needs the top bit 0).

    >>> is_valid_tid("3jzfcijpj2z2a"), is_valid_tid("3jzfcijpj2z2a\\n"), is_valid_tid("zzzzzzzzzzzzz")
    (True, False, False)
    """
    # the tid.mdx reference regex with fullmatch (anchored at both ends: no trailing-newline hole);
    # ``strict`` is not keyword-only and the matchers are bound as defaults: on CPython 3.11 either
    # costs ~60 ns per call here, a fifth of the whole check
    return (_sfm if strict else _fm)(text) is not None


class Tid(OrderedValue):
    """An atproto TID: immutable, hashed and ordered by its 13-character string (which sorts like its int).

    Build one with :meth:`parse`, :meth:`from_int`, :meth:`from_parts` or :meth:`from_datetime`, or take
    one from a :class:`TidClock`.

    >>> a, b = Tid.parse("3jzfcijpj2z2a"), Tid.from_int(1)
    >>> b < a, str(b), b
    (True, '2222222222223', Tid('2222222222223'))
    >>> a.int
    1728652679052295174
    """

    __slots__ = ("_str",)
    _str: str
    _schema_info = SchemaInfo("tid", JSON_PATTERN, JSON_PATTERN, "3jzfcijpj2z2a", json_int=True)

    @classmethod
    def parse(cls, text: str, strict: bool = False) -> Tid:
        """Parse a TID: 13 characters, first one of ``234567abcdefghij``, then 12 base32-sortable characters.

        The length is checked first, then the whole string must match (no trailing newline slips
        through).  ``strict=True`` also rejects a set top bit (first character ``c``–``j``).

        >>> Tid.parse("7777777777777")
        Tid('7777777777777')
        >>> Tid.parse("3jzfcijpj2z2a\\n")
        Traceback (most recent call last):
        ...
        pidkit.errors.TidError: expected 13 characters, got 14 in '3jzfcijpj2z2a\\n'
        >>> Tid.parse("3jzfcijpj2z21")
        Traceback (most recent call last):
        ...
        pidkit.errors.TidError: invalid base32-sortable character '1' in '3jzfcijpj2z21' at position 13
        """
        if text.__class__ is not str or (_strict_fullmatch if strict else _fullmatch)(text) is None:
            text = _check(text, strict)  # explains the problem, or returns a plain str of a str subclass
        self = _new(cls)
        _set_str(self, text)
        return self

    @classmethod
    def from_int(cls, value: int) -> Tid:
        """The TID of a 64-bit unsigned int (0 … 2**64-1; the top bit may be set, as :meth:`parse` allows).

        >>> Tid.from_int(0)
        Tid('2222222222222')
        """
        if not isinstance(value, int) or not 0 <= value <= _MAX_INT:
            raise TidError(f"a TID is a 64-bit unsigned int, got {value!r}")
        return _make(_encode(value))

    @classmethod
    def from_parts(cls, *, micros: int, clock_id: int) -> Tid:
        """The TID of ``micros`` (0 … 2**53-1, µs since the Unix epoch) and ``clock_id`` (0 … 1023).

        >>> Tid.from_parts(micros=1688137381887007, clock_id=6)
        Tid('3jzfcijpj2z2a')
        """
        if not isinstance(micros, int) or not 0 <= micros <= MAX_MICROS:
            raise TidError(f"micros must be an int in 0..{MAX_MICROS}, got {micros!r}")
        if not isinstance(clock_id, int) or not 0 <= clock_id <= MAX_CLOCK_ID:
            raise TidError(f"clock_id must be an int in 0..{MAX_CLOCK_ID}, got {clock_id!r}")
        return _make(_encode(micros << CLOCK_ID_BITS | clock_id))

    @classmethod
    def from_datetime(cls, dt: datetime, clock_id: int = 0) -> Tid:
        """The TID of an aware datetime (at or after the Unix epoch) and a clock id.

        >>> Tid.from_datetime(datetime(2023, 6, 30, 15, 3, 1, 887007, tzinfo=UTC), 6)
        Tid('3jzfcijpj2z2a')
        """
        if dt.tzinfo is None or dt.utcoffset() is None:
            raise TidError(f"need a timezone-aware datetime, got naive {dt.isoformat()}")
        micros = (dt - _EPOCH) // _ONE_US
        if micros < 0:
            raise TidError(f"{dt.isoformat()} is before the Unix epoch")
        return cls.from_parts(micros=micros, clock_id=clock_id)

    @property
    def int(self) -> int:
        """The 64-bit unsigned integer.

        >>> Tid.parse("222222222222a").int
        6
        """
        return int(self._str.translate(_TO_INT32), 32)

    @property
    def micros(self) -> builtins.int:
        """Microseconds since the Unix epoch (bits 62..10).

        >>> Tid.parse("2222222222322").micros
        1
        """
        return (self.int >> CLOCK_ID_BITS) & MAX_MICROS

    @property
    def clock_id(self) -> builtins.int:
        """The 10-bit clock identifier (bits 9..0).

        >>> Tid.parse("2222222222zzz").clock_id
        1023
        """
        return B32S_VALUE[self._str[11]] << 5 | B32S_VALUE[self._str[12]]

    @property
    def high_bit(self) -> bool:
        """True if the top bit is set (first character ``c``–``j``): valid syntax, not a conforming TID.

        >>> Tid.parse("3jzfcijpj2z2a").high_bit
        False
        """
        return self._str[0] not in STRICT_FIRST_CHARS

    @property
    def timestamp(self) -> datetime:
        """The embedded time as an aware UTC datetime (microsecond precision).

        >>> Tid.parse("2222222222222").timestamp
        datetime.datetime(1970, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
        """
        return _EPOCH + timedelta(microseconds=self.micros)

    # --- protocol (equality, hashing, ordering, immutability, pickling, pydantic: pidkit._value) ----------

    def _cmp_key(self) -> str:
        return self._str  # base32-sortable: the strings sort like the ints

    def __str__(self) -> str:
        return self._str

    @classmethod
    def _coerce(cls, value: object) -> Tid:
        """Also an ``int`` (:meth:`from_int`; a ``bool`` is not a TID)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, builtins.int) and not isinstance(value, bool):
            return cls.from_int(value)
        raise type_error(cls, value)


_new = object.__new__


_set_str = Tid.__dict__["_str"].__set__  # the slot's own setter (immutability applies to everyone else)


def _make(text: str) -> Tid:
    """A Tid from an already valid string (no checks)."""
    t = _new(Tid)
    _set_str(t, text)
    return t


def _prefix(hi: int) -> str:
    """The first 9 characters of every TID whose ``micros >> 10`` is ``hi``."""
    p = _PAIRS
    return (
        B32S_ALPHABET[hi >> 40]
        + p[(hi >> 30) & 1023]
        + p[(hi >> 20) & 1023]
        + p[(hi >> 10) & 1023]
        + p[hi & 1023]
    )


class TidClock:
    """A thread-safe source of strictly increasing TIDs with one clock id.

    Each TID's microseconds are ``max(now, previous + 1)``: if the system clock repeats a microsecond or goes
    back, the clock keeps counting from the last value, so the emitted times can run ahead of the wall clock
    for a while (by one µs per id minted faster than one per µs, or by the size of a backward clock step).
    ``clock_id`` defaults to a random 10-bit value from :mod:`secrets`; ``after=`` resumes strictly after a
    given TID (e.g. the last one stored), keeping its clock id unless one is given.

    >>> clock = TidClock(5, after=Tid.from_parts(micros=2**52, clock_id=5))
    >>> t = clock.next()
    >>> t.micros > 2**52, t.clock_id
    (True, 5)
    >>> a, b = clock.next_many(2)
    >>> str(t) < a < b
    True
    """

    __slots__ = ("_clock_id", "_hi", "_last", "_lock", "_prefix", "_suffix")

    def __init__(self, clock_id: int | None = None, *, after: Tid | None = None) -> None:
        if clock_id is None:
            clock_id = after.clock_id if after is not None else secrets.randbelow(MAX_CLOCK_ID + 1)
        if isinstance(clock_id, bool) or not isinstance(clock_id, int) or not 0 <= clock_id <= MAX_CLOCK_ID:
            raise TidError(f"clock_id must be an int in 0..{MAX_CLOCK_ID}, got {clock_id!r}")
        self._clock_id = clock_id
        self._suffix = _PAIRS[clock_id]
        self._lock = threading.Lock()
        self._last = after.micros if after is not None else -1
        self._hi = -1
        self._prefix = ""

    @property
    def clock_id(self) -> int:
        """This clock's 10-bit clock id.

        >>> TidClock(7).clock_id
        7
        """
        return self._clock_id

    def _reserve(self, n: int) -> int:
        """Reserve ``n`` consecutive microsecond values; return the first."""
        with self._lock:
            now = _time_ns() // 1000
            last = self._last
            first = now if now > last else last + 1
            end = first + n - 1
            if end > MAX_MICROS:
                raise TidError("the TID clock has run past 2**53-1 microseconds (year 2255)")
            self._last = end
        return first

    def next_str(self) -> str:
        """The next TID as its 13-character string (the fast path).

        >>> len(TidClock().next_str())
        13
        """
        with self._lock:
            m = _time_ns() // 1000
            if m <= self._last:
                m = self._last + 1
                if m > MAX_MICROS:
                    raise TidError("the TID clock has run past 2**53-1 microseconds (year 2255)")
            self._last = m
            hi = m >> 10
            if hi != self._hi:  # the first 9 characters change once every 1024 µs
                self._hi = hi
                self._prefix = _prefix(hi)
            return self._prefix + _PAIRS[m & 1023] + self._suffix

    def next(self) -> Tid:
        """The next TID, strictly greater than every TID this clock has given before.

        >>> c = TidClock()
        >>> c.next() < c.next()
        True
        """
        t = _new(Tid)
        _set_str(t, self.next_str())
        return t

    def next_many(self, n: int) -> list[str]:
        """``n`` consecutive TIDs as strings, strictly increasing (one lock, one clock reading).

        The microseconds run ``first, first+1, …``: a million ids take a million microseconds of the
        clock's future, which later calls catch up with (see the class notes).

        >>> ids = TidClock(0).next_many(3)
        >>> ids == sorted(set(ids)) and len(ids) == 3
        True
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TidError(f"n must be a non-negative int, got {n!r}")
        if n == 0:
            return []
        first = self._reserve(n)
        end = first + n  # exclusive
        p = _PAIRS
        suffixed = [q + self._suffix for q in p]
        out: list[str] = []
        m = first
        while m < end:
            hi = m >> 10
            stop = min(end - (hi << 10), 1024)
            prefix = _prefix(hi)
            out += [prefix + s for s in suffixed[m & 1023 : stop]]
            m = (hi << 10) + stop
        return out
