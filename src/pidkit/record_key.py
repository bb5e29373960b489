"""atproto record keys, record key types, and the NSID syntax that the ``nsid`` key type needs.

Source: the AT Protocol's "Record Key", https://atproto.com/specs/record-key (a copy, CC BY 4.0:
``specs/atproto/record-key.mdx``), the "RFC: Record Keys" draft (M. Perhats, 2024; no stable public address,
see ``specs/README.md``), and the atproto interop files ``nsid_syntax_valid.txt`` /
``nsid_syntax_invalid.txt`` for the NSID rules.

>>> RecordKey.parse("self")
RecordKey('self')
>>> RecordKey.parse("alpha/beta")
Traceback (most recent call last):
...
pidkit.errors.RecordKeyError: invalid record key character '/' in 'alpha/beta' at position 6
>>> KeyType.parse("literal:self").validate("self")
RecordKey('self')
>>> KeyType.parse("nsid").validate("app.bsky.feed.post")
RecordKey('app.bsky.feed.post')
"""

from __future__ import annotations

import re
from typing import Final

from ._value import OrderedValue, SchemaInfo, Value, type_error
from .errors import RecordKeyError, TidError
from .tid import Tid

__all__ = [
    "MAX_NSID_LENGTH",
    "MAX_RECORD_KEY_LENGTH",
    "RECORD_KEY_CHARS",
    "KeyType",
    "RecordKey",
    "check_nsid",
    "is_valid_nsid",
    "is_valid_record_key",
]

#: record-key.mdx "Record Key Syntax": "alphanumeric (``A-Za-z0-9``), period, dash, underscore, colon, or
#: tilde (``.-_:~``)".
RECORD_KEY_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_:~")
#: record-key.mdx "Record Key Syntax": "must have at least 1 and at most 512 characters".
MIN_RECORD_KEY_LENGTH: Final = 1
MAX_RECORD_KEY_LENGTH: Final = 512
#: record-key.mdx "Record Key Syntax": "the specific record key values ``.`` and ``..`` are not allowed".
FORBIDDEN_RECORD_KEYS: Final = frozenset({".", ".."})

#: record-key.mdx "Record Key Syntax" as a JSON schema pattern (ECMA-262).
JSON_PATTERN: Final = r"^(?!\.{1,2}$)[A-Za-z0-9._:~-]{1,512}$"

_RKEY_RE: Final = re.compile(r"[A-Za-z0-9._:~-]{1,512}")
_rkey_fullmatch: Final = _RKEY_RE.fullmatch


def _record_key_error(text: object) -> RecordKeyError:
    """The :class:`RecordKeyError` that names what is wrong with ``text`` (which failed the fast check)."""
    if not isinstance(text, str):
        return RecordKeyError(f"expected a str, got {type(text).__name__}")
    if len(text) < MIN_RECORD_KEY_LENGTH:
        return RecordKeyError("empty record key", text=text)
    for i, c in enumerate(text, 1):
        if c not in RECORD_KEY_CHARS:
            return RecordKeyError(f"invalid record key character {c!r}", text=text, position=i)
    if len(text) > MAX_RECORD_KEY_LENGTH:
        return RecordKeyError(
            f"record key too long: {len(text)} characters (at most {MAX_RECORD_KEY_LENGTH})",
            text=text,
            position=MAX_RECORD_KEY_LENGTH + 1,
        )
    if text in FORBIDDEN_RECORD_KEYS:
        return RecordKeyError(f"{text!r} is not allowed as a record key", text=text, position=1)
    raise RecordKeyError("internal: no error found", text=text)  # pragma: no cover


def is_valid_record_key(text: str) -> bool:
    """True if ``text`` is a record key (1–512 of ``A-Za-z0-9.-_:~``, not ``.``/``..``; anchored).

    >>> is_valid_record_key("pre:fix"), is_valid_record_key("self\\n"), is_valid_record_key("..")
    (True, False, False)
    """
    return _rkey_fullmatch(text) is not None and text not in FORBIDDEN_RECORD_KEYS


class RecordKey(OrderedValue):
    """An atproto record key: immutable, case-sensitive, hashed and ordered by its string.

    >>> sorted([RecordKey.parse("b"), RecordKey.parse("a"), RecordKey.parse("B")])
    [RecordKey('B'), RecordKey('a'), RecordKey('b')]
    >>> str(RecordKey.parse("~1.2-3_"))
    '~1.2-3_'
    """

    __slots__ = ("_str",)
    _str: str
    _schema_info = SchemaInfo("record_key", JSON_PATTERN, JSON_PATTERN, "3jzfcijpj2z2a")

    @classmethod
    def parse(cls, text: str) -> RecordKey:
        """Parse a record key (record-key.mdx "Record Key Syntax").

        >>> RecordKey.parse(".")
        Traceback (most recent call last):
        ...
        pidkit.errors.RecordKeyError: '.' is not allowed as a record key in '.' at position 1
        >>> RecordKey.parse("self\\n")
        Traceback (most recent call last):
        ...
        pidkit.errors.RecordKeyError: invalid record key character '\\n' in 'self\\n' at position 5
        """
        if text.__class__ is not str or _rkey_fullmatch(text) is None or text in FORBIDDEN_RECORD_KEYS:
            if isinstance(text, str) and is_valid_record_key(text):  # a str subclass
                text = str(text)
            else:
                raise _record_key_error(text)
        self = _new(RecordKey)
        _set_str(self, text)
        return self

    # --- protocol (equality, hashing, ordering, immutability, pickling, pydantic: pidkit._value) ----------

    def _cmp_key(self) -> str:
        return self._str

    def __str__(self) -> str:
        return self._str

    @classmethod
    def _coerce(cls, value: object) -> RecordKey:
        """Also a :class:`~pidkit.tid.Tid` (a TID is a record key)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str | Tid):
            return cls.parse(str(value))
        raise type_error(cls, value)


_new = object.__new__
_set_str = RecordKey.__dict__["_str"].__set__


# --- NSID syntax (atproto NSID spec; rules checked against the interop files) -------------------------

#: Whole NSID: at most 253 + 1 + 63 characters.  Only the total is checked: the interop file
#: nsid_syntax_valid.txt has a valid NSID whose domain authority is longer than 253 characters.
MAX_NSID_LENGTH: Final = 253 + 1 + 63
#: At least three segments: two or more for the reversed domain authority, one for the name.
MIN_NSID_SEGMENTS: Final = 3
#: Every segment: 1 to 63 characters (a DNS label).
MAX_NSID_SEGMENT_LENGTH: Final = 63
_ALNUM: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_LETTERS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
#: Domain authority segments: letters, digits, hyphen (no hyphen first or last).
_AUTHORITY_CHARS: Final = _ALNUM | {"-"}


def check_nsid(text: str) -> None:
    """Raise :class:`RecordKeyError` naming the first NSID rule ``text`` breaks.

    Rules: ASCII letters, digits, ``-`` and ``.`` only; at most 317 characters; at least 3 segments, each
    1–63 characters; domain authority segments (all but the last) of letters, digits and hyphens, not
    starting or ending with a hyphen, the first one not starting with a digit; the name (last segment)
    letters and digits only, starting with a letter.

    >>> check_nsid("com.example.fooBar")
    >>> check_nsid("com.example")
    Traceback (most recent call last):
    ...
    pidkit.errors.RecordKeyError: an NSID needs 3 or more segments, got 2 in 'com.example'
    >>> check_nsid("a-0.b-1.c-o")
    Traceback (most recent call last):
    ...
    pidkit.errors.RecordKeyError: NSID name: letters and digits only, not '-' in 'a-0.b-1.c-o' at position 10
    """
    if len(text) > MAX_NSID_LENGTH:
        raise RecordKeyError(f"NSID too long: {len(text)} characters (at most {MAX_NSID_LENGTH})", text=text)
    segments = text.split(".")
    if len(segments) < MIN_NSID_SEGMENTS:
        raise RecordKeyError(
            f"an NSID needs {MIN_NSID_SEGMENTS} or more segments, got {len(segments)}", text=text
        )
    start = 1  # 1-based position of the current segment's first character
    last = len(segments) - 1
    for index, seg in enumerate(segments):
        if not seg:
            raise RecordKeyError("empty NSID segment", text=text, position=start)
        if len(seg) > MAX_NSID_SEGMENT_LENGTH:
            raise RecordKeyError(
                f"NSID segment longer than {MAX_NSID_SEGMENT_LENGTH} characters",
                text=text,
                position=start + MAX_NSID_SEGMENT_LENGTH,
            )
        if index < last:
            _check_authority_segment(text, seg, start, first=index == 0)
        else:
            _check_name_segment(text, seg, start)
        start += len(seg) + 1


def _check_authority_segment(text: str, seg: str, start: int, *, first: bool) -> None:
    for i, c in enumerate(seg):
        if c not in _AUTHORITY_CHARS:
            raise RecordKeyError(f"invalid NSID character {c!r}", text=text, position=start + i)
    if seg[0] == "-" or seg[-1] == "-":
        pos = start if seg[0] == "-" else start + len(seg) - 1
        raise RecordKeyError("NSID domain segment may not start or end with '-'", text=text, position=pos)
    if first and seg[0].isdigit():
        raise RecordKeyError("NSID first segment may not start with a digit", text=text, position=start)


def _check_name_segment(text: str, seg: str, start: int) -> None:
    for i, c in enumerate(seg):
        if c not in _ALNUM:
            raise RecordKeyError(
                f"NSID name: letters and digits only, not {c!r}",
                text=text,
                position=start + i,
            )
    if seg[0] not in _LETTERS:
        raise RecordKeyError("NSID name must start with a letter", text=text, position=start)


def is_valid_nsid(text: str) -> bool:
    """True if ``text`` is a syntactically valid NSID (see :func:`check_nsid`).

    >>> is_valid_nsid("app.bsky.feed.post"), is_valid_nsid("com.example.fooBar.2")
    (True, False)
    """
    try:
        check_nsid(text)
    except RecordKeyError:
        return False
    return True


# --- record key types ----------------------------------------------------------------------------------

#: record-key.mdx: the key types a Lexicon record schema can name.
KEY_TYPES: Final = ("tid", "nsid", "literal", "any")
_LITERAL_PREFIX: Final = "literal:"
#: record-key.mdx "Record Key Types" as a JSON schema pattern (ECMA-262).
KEY_TYPE_JSON_PATTERN: Final = r"^(?:tid|nsid|any|literal:[A-Za-z0-9._:~-]{1,512})$"


class KeyType(Value):
    """A record key type: ``tid``, ``nsid``, ``literal:<value>`` or ``any`` (record-key.mdx).

    >>> KeyType.parse("literal:self")
    KeyType('literal:self')
    >>> KeyType.parse("tid").validate("3jzfcijpj2z2a")
    RecordKey('3jzfcijpj2z2a')
    >>> KeyType.parse("tid").validate("self")
    Traceback (most recent call last):
    ...
    pidkit.errors.RecordKeyError: not a TID (key type 'tid'): expected 13 characters, got 4 in 'self'
    """

    __slots__ = ("_kind", "_value")
    _kind: str
    _value: str | None
    _schema_info = SchemaInfo("key_type", KEY_TYPE_JSON_PATTERN, KEY_TYPE_JSON_PATTERN, "tid")

    @classmethod
    def parse(cls, text: str) -> KeyType:
        """Parse a key type; a ``literal:`` value must itself be a valid record key.

        >>> KeyType.parse("literal:")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pidkit.errors.RecordKeyError: literal key type needs a valid record key value: ... in 'literal:'
        >>> KeyType.parse("uuid")
        Traceback (most recent call last):
        ...
        pidkit.errors.RecordKeyError: unknown key type (not tid, nsid, literal:<value> or any) in 'uuid'
        """
        if not isinstance(text, str):
            raise RecordKeyError(f"expected a str, got {type(text).__name__}")
        value: str | None = None
        if text.startswith(_LITERAL_PREFIX):
            value = text[len(_LITERAL_PREFIX) :]
            try:
                RecordKey.parse(value)
            except RecordKeyError as exc:
                raise RecordKeyError(
                    f"literal key type needs a valid record key value: {exc.message}",
                    text=text,
                    position=None if exc.position is None else exc.position + len(_LITERAL_PREFIX),
                ) from exc
            kind = "literal"
        elif text in ("tid", "nsid", "any"):
            kind = text
        else:
            raise RecordKeyError("unknown key type (not tid, nsid, literal:<value> or any)", text=text)
        self = object.__new__(cls)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_value", value)
        return self

    @property
    def kind(self) -> str:
        """``"tid"``, ``"nsid"``, ``"literal"`` or ``"any"``.

        >>> KeyType.parse("literal:self").kind
        'literal'
        """
        return self._kind

    @property
    def value(self) -> str | None:
        """The fixed key of a ``literal:`` type, else ``None``.

        >>> KeyType.parse("literal:self").value
        'self'
        """
        return self._value

    def validate(self, key: str | RecordKey) -> RecordKey:
        """The record key, if it is valid and fits this type; else :class:`RecordKeyError`.

        >>> KeyType.parse("literal:self").validate("Self")
        Traceback (most recent call last):
        ...
        pidkit.errors.RecordKeyError: key type 'literal:self' needs exactly 'self' in 'Self'
        """
        rkey = key if isinstance(key, RecordKey) else RecordKey.parse(key)
        text = rkey._str
        kind = self._kind
        if kind == "tid":
            try:
                Tid.parse(text)
            except TidError as exc:
                raise RecordKeyError(
                    f"not a TID (key type 'tid'): {exc.message}", text=text, position=exc.position
                ) from exc
        elif kind == "nsid":
            try:
                check_nsid(text)
            except RecordKeyError as exc:
                raise RecordKeyError(
                    f"not an NSID (key type 'nsid'): {exc.message}", text=text, position=exc.position
                ) from exc
        elif kind == "literal" and text != self._value:
            raise RecordKeyError(f"key type {str(self)!r} needs exactly {self._value!r}", text=text)
        return rkey

    # --- protocol (equality, hashing, immutability, pickling, pydantic: pidkit._value) ---------------------

    def _cmp_key(self) -> tuple[str, str | None]:
        return (self._kind, self._value)

    def __str__(self) -> str:
        return self._kind if self._value is None else _LITERAL_PREFIX + self._value
