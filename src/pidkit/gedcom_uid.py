"""GEDCOM ``_UID`` (5.x, Gedcom-L agreements U0–U9) and ``UID`` (GEDCOM 7) values.

Sources: Gedcom-L's ``_UID`` page, "GEDCOM/UID-Tag", https://wiki-de.genealogy.net/GEDCOM/UID-Tag (not copied
here: wiki text; see ``docs/sources.md``), and GEDCOM 7.0 ``g7:UID`` (``specs/gedcom7/``, Apache-2.0).

A value is **kept verbatim** — U7: "the first 36 characters of imported _UIDs must be exported unchanged";
GEDCOM 7: "used without modification, not even whitespace or letter case normalization" — so
``str(uid)`` is always exactly the text that was parsed, and equality is on that text.  Parsing only
*classifies* the value (:class:`UidForm`):

============== ===================================================================================
form           text
============== ===================================================================================
``valid``      36 hex digits: 16 bytes + the U2 checksum, which matches (PAF form)
``bad-checksum`` 36 hex digits whose last 4 are not the U2 checksum of the first 32
``no-checksum`` 32 hex digits
``uuid``       a UUID with dashes ``8-4-4-4-12``, optionally braced ``{…}``, or 32 hex digits in braces
``other``      any other non-empty text (still a legal value; kept)
============== ===================================================================================

Hex digits are classified case-insensitively (U2 recommends, and PAF writes, uppercase; lowercase is still
read).  **U1** (adopted): "Die ersten 36 Zeichen einer _UID beschreiben die Kennzeichnung.  Ggfs. weitere
vorhandene Zeichen sind nicht signifikant" — the first 36 characters are the identifier, any further ones
are not significant.  So a value longer than 36 characters whose first 36 are a 36-character form (36 hex
digits, PAF ``valid``/``bad-checksum``, or a dashed UUID, which is 36 characters too) is classified, read
(:attr:`~GedcomUid.bytes16`, :meth:`~GedcomUid.to_uuid`) and compared (:meth:`~GedcomUid.same_identity`)
on those 36 characters; ``str(uid)`` still gives the whole text, never shortened.  A longer value whose
first 36 characters are not such a form stays ``other`` and is compared on its whole text (nothing says
where its identifier ends; GEDCOM 7 ``UID`` values are compared verbatim anyway).

**U4 was rejected** ("klar abgelehnt"), so a ``bad-checksum`` value is *not* the identity of the valid value
with the same first 32 digits: all 36 of its characters are significant (U1, U7).  :meth:`same_identity`
compares a ``bad-checksum`` value only with values of the same 36 hex digits (case-insensitively, as every
hex form); :meth:`~GedcomUid.probably_same` reports the weaker first-32-digits match.
A value that is empty, only whitespace, or contains a line break cannot be a GEDCOM line value and raises
:class:`~pidkit.errors.GedcomUidError`.

>>> uid = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
>>> uid.form, uid.checksum_ok
(<UidForm.VALID: 'valid'>, True)
>>> GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA501").form
<UidForm.BAD_CHECKSUM: 'bad-checksum'>
>>> str(GedcomUid.parse("{550E8400-e29b-11d4-a716-446655440000}"))
'{550E8400-e29b-11d4-a716-446655440000}'
>>> extra = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)")  # U1
>>> extra.form, str(extra), extra.same_identity(uid)
(<UidForm.VALID: 'valid'>, '161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)', True)
"""

from __future__ import annotations

import enum
import os
import re
import uuid
from collections.abc import Callable
from typing import Final

from ._value import SchemaInfo, Value
from .codecs import load_speedups, read_uuid_text
from .errors import GedcomUidError, XarkIdError
from .xarkid import XarkId

__all__ = ["GedcomUid", "UidForm"]

# U2: 16 bytes B1..B16 as 32 hex digits + 2 checksum bytes as 4 hex digits = 36 characters.
PAF_DATA_DIGITS: Final = 32
PAF_LENGTH: Final = 36
_HEX36: Final = re.compile(r"[0-9A-Fa-f]{36}")
_XARKID_COMPACT: Final = re.compile(r"[A-Za-z0-9_-]{20}")
_LINE_BREAKS: Final = "\r\n"
#: A GEDCOM line value as a JSON schema pattern: not empty, not only whitespace, no line break.
JSON_PATTERN: Final = r"^[^\r\n]*\S[^\r\n]*$"


def paf_checksum(data: bytes) -> str:
    """The U2 checksum of 16 bytes as 4 uppercase hex digits (Fletcher-16 with modulus 256).

    U2: check byte 1 = (Σ Bₙ) mod 256, check byte 2 = (Σ (17 − n)·Bₙ) mod 256, n = 1 … 16.  (The GEDCOM 7
    note writes the weight as 16 − i; real files — PAF, Legacy — and U2 use 17 − n.)

    >>> paf_checksum(bytes(range(16)))
    '78A8'
    """
    if len(data) != 16:
        raise GedcomUidError(f"the U2 checksum is defined over 16 bytes, got {len(data)}")
    check1 = sum(data) % 256
    check2 = sum((17 - n) * b for n, b in enumerate(data, 1)) % 256
    return f"{check1:02X}{check2:02X}"


def _paf_strings(data: bytes) -> list[str]:
    """The PAF-form texts of ``len(data) // 16`` UUIDs v4 made of ``data``'s 16-byte blocks: the version and
    variant bits set as :func:`uuid.uuid4` sets them (RFC 9562 §5.4), then U2's hex digits and checksum.

    The C helper's ``paf_strings`` does exactly this (``tests/test_gedcom_speedups.py`` compares them).

    >>> _paf_strings(bytes(16))
    ['00000000000040008000000000000000C080']
    """
    buf = bytearray(data)
    out = []
    for i in range(0, len(buf) - 15, 16):
        buf[i + 6] = (buf[i + 6] & 0x0F) | 0x40  # version 4
        buf[i + 8] = (buf[i + 8] & 0x3F) | 0x80  # variant 10
        block = bytes(buf[i : i + 16])
        out.append(block.hex().upper() + paf_checksum(block))
    return out


_speedups: Final = load_speedups()
#: :func:`_paf_strings`, in C where the helper is built
_paf_texts: Final[Callable[[bytes], list[str]]] = _paf_strings if _speedups is None else _speedups.paf_strings


class UidForm(enum.StrEnum):
    """How a ``_UID``/``UID`` value is written (see the module docstring).

    >>> UidForm("no-checksum") is UidForm.NO_CHECKSUM
    True
    """

    VALID = "valid"
    BAD_CHECKSUM = "bad-checksum"
    NO_CHECKSUM = "no-checksum"
    UUID = "uuid"
    OTHER = "other"


def _check_value(text: str) -> None:
    """Reject what cannot be a GEDCOM line value: empty, whitespace only, a line break."""
    if not text:
        raise GedcomUidError("empty UID value", text=text)
    for i, c in enumerate(text, 1):
        if c in _LINE_BREAKS:
            raise GedcomUidError("line break in a UID value", text=text, position=i)
    if text.isspace():
        raise GedcomUidError("UID value is only whitespace", text=text, position=1)


def _classify(text: str) -> tuple[UidForm, bytes | None, str]:
    """Form, 16 bytes and the significant text: the whole value, or its first 36 characters (U1)."""
    form, data = _classify_whole(text)
    if form is UidForm.OTHER and len(text) > PAF_LENGTH:
        head = text[:PAF_LENGTH]
        # a 36-character form: 36 hex digits, or UUID text (36 characters of it are always 8-4-4-4-12)
        if _HEX36.fullmatch(head) or read_uuid_text(head) is not None:
            form, data = _classify_whole(head)
            return form, data, head
    return form, data, text


def _classify_whole(text: str) -> tuple[UidForm, bytes | None]:
    if _HEX36.fullmatch(text):
        data = bytes.fromhex(text[:PAF_DATA_DIGITS])
        ok = paf_checksum(data) == text[PAF_DATA_DIGITS:].upper()
        return (UidForm.VALID if ok else UidForm.BAD_CHECKSUM), data
    u = read_uuid_text(text)  # the one rule for UUID text (pidkit.codecs)
    if u is None:
        return UidForm.OTHER, None
    data = u.value.to_bytes(16, "big")
    if not u.dashed and not u.braced:  # 32 hex digits: the PAF form without its checksum
        return UidForm.NO_CHECKSUM, data
    return UidForm.UUID, data


class GedcomUid(Value):
    """One ``_UID``/``UID`` value, kept verbatim and classified.

    Equality and hashing are on the verbatim text (two differently written values are different UIDs,
    as other programs compare them as text); :meth:`same_identity` compares what identifies (the 16 bytes,
    on the first 36 characters, U1).
    ``GedcomUid(text)`` is :meth:`parse`.

    >>> a = GedcomUid.parse("CCB4110C14954A9E9B08EC0E8BB604C4D497")
    >>> b = GedcomUid.parse("ccb4110c-1495-4a9e-9b08-ec0e8bb604c4")
    >>> a == b, a.same_identity(b)
    (False, True)
    >>> a
    GedcomUid('CCB4110C14954A9E9B08EC0E8BB604C4D497')
    """

    __slots__ = ("_bytes16", "_form", "_significant", "_text")

    _text: str
    _form: UidForm
    _bytes16: bytes | None
    _significant: str
    _schema_info = SchemaInfo(
        "gedcom_uid", JSON_PATTERN, JSON_PATTERN, "161C15D03ECE47968211BBB2E9EE7F4FA5A6"
    )

    @classmethod
    def parse(cls, text: str) -> GedcomUid:
        """Keep ``text`` verbatim and classify it; raises for an empty, blank or multi-line value.

        >>> GedcomUid.parse("00000000000000000000000000000000").form
        <UidForm.NO_CHECKSUM: 'no-checksum'>
        >>> GedcomUid.parse("a\\nb")
        Traceback (most recent call last):
        ...
        pidkit.errors.GedcomUidError: line break in a UID value in 'a\\nb' at position 2
        """
        if not isinstance(text, str):
            raise TypeError(f"UID text must be str, not {type(text).__name__}")
        _check_value(text)
        form, data, significant = _classify(text)
        self = object.__new__(cls)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_form", form)
        object.__setattr__(self, "_bytes16", data)
        object.__setattr__(self, "_significant", significant)
        return self

    @staticmethod
    def checksum(data: bytes) -> str:
        """The U2 checksum of 16 bytes, 4 uppercase hex digits (see :func:`paf_checksum`).

        >>> GedcomUid.checksum(bytes.fromhex("161C15D03ECE47968211BBB2E9EE7F4F"))
        'A5A6'
        """
        return paf_checksum(data)

    @classmethod
    def from_bytes(cls, data: bytes) -> GedcomUid:
        """The PAF form of 16 bytes: 32 uppercase hex digits + the U2 checksum (U2's recommended form).

        >>> GedcomUid.from_bytes(bytes(16))
        GedcomUid('000000000000000000000000000000000000')
        """
        return cls(data.hex().upper() + paf_checksum(data))

    @classmethod
    def new(cls) -> GedcomUid:
        """A new value for GEDCOM 5.x ``_UID``: a UUID v4 (U5) in the PAF form with the U2 checksum.

        >>> uid = GedcomUid.new()
        >>> uid.form, len(str(uid)), uid.to_uuid().version
        (<UidForm.VALID: 'valid'>, 36, 4)
        """
        return cls.from_bytes(uuid.uuid4().bytes)

    @staticmethod
    def new_paf_strings(n: int) -> list[str]:
        """The text of ``n`` calls of :meth:`new`, made in bulk (``pidkit gedcom add-uids`` on large files):
        one ``os.urandom`` call for the batch, the UUID v4 version and variant bits set as
        :func:`uuid.uuid4` sets them (RFC 9562 §5.4), no value object built per id.

        >>> values = GedcomUid.new_paf_strings(3)
        >>> [GedcomUid.parse(v).form for v in values] == [UidForm.VALID] * 3
        True
        >>> {GedcomUid.parse(v).to_uuid().version for v in values}
        {4}
        """
        return _paf_texts(os.urandom(16 * n))

    @classmethod
    def new_uuid(cls) -> GedcomUid:
        """A new value for GEDCOM 7 ``UID``: a UUID v4 (RFC 9562 §4), dashed lowercase.

        >>> uid = GedcomUid.new_uuid()
        >>> uid.form, str(uid) == str(uid).lower(), uid.to_uuid().version
        (<UidForm.UUID: 'uuid'>, True, 4)
        """
        return cls(str(uuid.uuid4()))

    @classmethod
    def from_xarkid(cls, xarkid: XarkId, *, gedcom7: bool = False) -> GedcomUid:
        """A XarkId as a UID: its compact form for 5.x files, its GUID form for GEDCOM 7.

        The XarkId page: "Software must use the compact form when saving to GEDCOM files unless the GEDCOM
        variant supports the long UUID form"; GEDCOM 7's ``UID`` recommends a UUID.

        >>> x = XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
        >>> GedcomUid.from_xarkid(x)
        GedcomUid('AYvP5WgA-_-_ASNFZ4mr')
        >>> GedcomUid.from_xarkid(x, gedcom7=True)
        GedcomUid('018bcfe5-6800-4fbf-8fbf-0123456789ab')
        """
        return cls(str(xarkid.guid) if gedcom7 else xarkid.compact)

    # --- views ----------------------------------------------------------------------------------------

    @property
    def value(self) -> str:
        """The verbatim text (same as ``str(uid)``).

        >>> GedcomUid.parse(" odd value ").value
        ' odd value '
        """
        return self._text

    @property
    def significant(self) -> str:
        """The part of the value that identifies (U1): its first 36 characters when the value is longer
        and they are a 36-character form (see the module docstring), else the whole value.

        >>> GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)").significant
        '161C15D03ECE47968211BBB2E9EE7F4FA5A6'
        >>> GedcomUid.parse("550e8400-e29b-11d4-a716-446655440000/2").significant
        '550e8400-e29b-11d4-a716-446655440000'
        >>> GedcomUid.parse("not a hex value, but longer than thirty-six characters").significant
        'not a hex value, but longer than thirty-six characters'
        """
        return self._significant

    @property
    def form(self) -> UidForm:
        """The classification (:class:`UidForm`).

        >>> GedcomUid.parse("550e8400-e29b-11d4-a716-446655440000").form
        <UidForm.UUID: 'uuid'>
        """
        return self._form

    @property
    def bytes16(self) -> bytes | None:
        """The 16 bytes the hex forms spell, else ``None``.

        ``valid`` and ``bad-checksum``: the first 32 digits; ``no-checksum``: the 32 digits; ``uuid``: the 32
        digits without dashes or braces (of the :attr:`significant` first 36 characters, U1).

        >>> GedcomUid.parse("000102030405060708090A0B0C0D0E0F").bytes16 == bytes(range(16))
        True
        >>> GedcomUid.parse("I1").bytes16 is None
        True
        """
        return self._bytes16

    @property
    def checksum_ok(self) -> bool | None:
        """``True`` for ``valid``, ``False`` for ``bad-checksum``, ``None`` for forms without a checksum.

        >>> GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA501").checksum_ok
        False
        """
        if self._form is UidForm.VALID:
            return True
        if self._form is UidForm.BAD_CHECKSUM:
            return False
        return None

    def to_uuid(self) -> uuid.UUID | None:
        """The UUID where the reading is unambiguous, else ``None``.

        ``valid`` (the first 32 digits, confirmed by the checksum), ``no-checksum`` and ``uuid`` give a
        UUID; ``bad-checksum`` gives ``None`` (the data or the checksum is damaged, and which one is
        unknown), as does ``other``.  The UUID's version and variant are whatever the bytes say.

        >>> GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6").to_uuid()
        UUID('161c15d0-3ece-4796-8211-bbb2e9ee7f4f')
        >>> GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA501").to_uuid() is None
        True
        """
        if self._bytes16 is None or self._form is UidForm.BAD_CHECKSUM:
            return None
        return uuid.UUID(bytes=self._bytes16)

    def to_xarkid(self) -> XarkId | None:
        """The XarkId this value may hold: a 20-character compact XarkId, or a UUID (as :meth:`to_uuid`
        reads it) of the XarkId shape ``…-4xxx-8xxx-…``; else ``None``.

        The shape cannot tell a XarkId GUID from a random UUID v4 whose byte 8 happens to be ``8x`` (one in
        four), so a non-``None`` result from a hex form is a possible reading, not a certainty.

        >>> GedcomUid.parse("AYvP5WgA-_-_ASNFZ4mr").to_xarkid()
        XarkId('AYvP5WgA-_-_ASNFZ4mr')
        >>> GedcomUid.parse("018bcfe5-6800-4fbf-8fbf-0123456789ab").to_xarkid()
        XarkId('AYvP5WgA-_-_ASNFZ4mr')
        >>> GedcomUid.parse("550e8400-e29b-41d4-a716-446655440000").to_xarkid() is None
        True
        """
        try:
            if _XARKID_COMPACT.fullmatch(self._text):
                return XarkId.parse(self._text)
            as_uuid = self.to_uuid()
            return None if as_uuid is None else XarkId.from_guid(as_uuid)
        except XarkIdError:
            return None

    def same_identity(self, other: GedcomUid) -> bool:
        """Whether two values name the same record, on their :attr:`significant` part (U1).

        Two values with a valid or no checksum or in a UUID form: equal 16 bytes (case, dashes and braces
        do not matter).  A ``bad-checksum`` value: only another ``bad-checksum`` value with the same 36 hex
        digits (U4, which would let the first 32 digits stand for the value, was rejected; see
        :meth:`probably_same`).  Otherwise equal text.

        >>> a = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
        >>> a.same_identity(GedcomUid.parse("161c15d03ece47968211bbb2e9ee7f4f"))
        True
        >>> a.same_identity(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6 extra"))
        True
        >>> a.same_identity(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0000"))
        False
        >>> GedcomUid.parse("I1").same_identity(GedcomUid.parse("i1"))
        False
        """
        bad_self = self._form is UidForm.BAD_CHECKSUM
        bad_other = other._form is UidForm.BAD_CHECKSUM
        if bad_self or bad_other:
            return bad_self and bad_other and self._significant.upper() == other._significant.upper()
        if self._bytes16 is not None and other._bytes16 is not None:
            return self._bytes16 == other._bytes16
        return self._significant == other._significant

    def probably_same(self, other: GedcomUid) -> bool:
        """:meth:`same_identity`, or equal 16 bytes where one or both checksums are bad: a *probable*
        match (the data digits agree, but a damaged checksum may as well mean damaged data), to be
        reported as such and never merged silently.

        >>> a = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
        >>> a.probably_same(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0000"))
        True
        >>> a.probably_same(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F400000"))
        False
        """
        if self.same_identity(other):
            return True
        return self._bytes16 is not None and self._bytes16 == other._bytes16

    # --- protocol (equality, hashing, immutability, pickling, pydantic: pidkit._value) ---------------------

    def _cmp_key(self) -> str:
        return self._text  # verbatim: two differently written values are different UIDs

    def _repr_text(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text
