"""Library.Link resource ids, and the Versa literate (Markdown) reader that feeds them.

Source: "From Records to Resources: the Library.Link resource ID generation algorithm" (U. Ogbuji, 2015),
https://github.com/zepheira/pybibframe/wiki/From-Records-to-Resources:-the-Library.Link-resource-ID-generation-algorithm
(not copied here: it states no licence; see ``docs/sources.md`` and ``docs/library-link.md``).
The recipe, for an ordered list of ``[key, value]`` string pairs:

1. serialize as compact JSON exactly as ``json.dumps(pairs, separators=(",", ":"))`` writes it
   (``ensure_ascii``: every non-ASCII character as lowercase ``\\uXXXX``, astral characters as surrogate
   pairs, lone surrogates escaped too — so the text is always ASCII; values that are JSON numbers,
   booleans or null as ``json.dumps`` writes them, :func:`json_scalar`);
2. MurmurHash3 x64-128, seed 0, of that text; keep the least significant 64 bits (``mmh3.hash64(s)[0]``);
3. write them as a signed 64-bit big-endian integer (8 bytes; two's complement is the same bit pattern);
4. base64url without padding: 11 characters.

Insertion order is kept (the type pair first), nothing is sorted or Unicode-normalized.

Speed: the optional C helper ``pidkit._speedups`` (``src/pidkit/_speedups.c``, built at install time when a
C compiler and the Python headers are there) does all four steps for the usual input — a list or tuple of
``[key, value]`` lists/tuples of ``str`` — about 10x faster than the reference recipe.  Without it, or with
``PIDKIT_PURE_PYTHON=1`` in the environment when pidkit is imported, the pure-Python code below computes the
same ids; it also handles every input the C helper passes on (list/tuple subclasses, and the errors, so
the :class:`~pidkit.errors.LlidError` messages are the same either way).  :data:`SPEEDUPS` tells which one
is in use.

>>> resource_id([["http://bibfra.me/purl/versa/type", "http://schema.org/Person"],
...              ["http://schema.org/name", "Augusta Ada King"]])
'xjgOrUFiw_o'

Versa literate Markdown (``# id [Type]`` headers, ``* key: value`` lists, an optional ``# @docheader``
section with ``@base`` / ``@schema``) is read by :func:`parse_versa`; :func:`resource_ids_from_versa`
computes one id per resource from the identifying keys you choose.
"""

from __future__ import annotations

import binascii
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from types import ModuleType
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import urljoin

import mmh3

from .codecs import b64url_decode, load_speedups
from .errors import LlidError

__all__ = [
    "LLID_LENGTH",
    "SPEEDUPS",
    "VERSA_TYPE",
    "JsonScalar",
    "Pairs",
    "Property",
    "Resource",
    "json_scalar",
    "parse_versa",
    "read_llid",
    "resource_id",
    "resource_ids",
    "resource_ids_from_versa",
    "versa_schema",
]

#: the Library.Link algorithm, "Generating the character string hash": 8 bytes in base64url without padding.
LLID_LENGTH: Final = 11
_LLID_BYTES: Final = 8
#: the Library.Link algorithm: the key of the resource-type pair (Versa vocabulary), always the first pair.
VERSA_BASE: Final = "http://bibfra.me/purl/versa/"
VERSA_TYPE: Final = VERSA_BASE + "type"

#: A value of a pair: any JSON scalar (``bool`` is an ``int``; see :func:`json_scalar`).
JsonScalar: TypeAlias = str | int | float | None
#: Ordered ``[key, value]`` pairs (lists or tuples), keys ``str``.
Pairs: TypeAlias = Sequence[Sequence[JsonScalar]]

_PAIR_TYPES: Final[frozenset[type]] = frozenset({list, tuple})
_pair_types_ok: Final = _PAIR_TYPES.issuperset
_pair_lengths_ok: Final = frozenset({2}).issuperset
_join_pair: Final = '","'.join
#: Bytes that ``json.dumps`` would escape inside an ASCII string (C0 controls, DEL, ``"`` and ``\\``).
_JSON_SPECIAL: Final = bytes(range(0x20)) + b'\x7f"\\'
#: base64 -> base64url (RFC 4648 §5).
_TO_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
_hash_bytes: Final = mmh3.hash_bytes
_hash64: Final = mmh3.hash64
_INF: Final = float("inf")
_b2a: Final = binascii.b2a_base64


def _json(pairs: Any) -> bytes:  # Any: callers may pass anything; it is checked here
    """The reference JSON text of ``pairs`` as ASCII bytes, validating the structure.

    Fast path: build ``[["k","v"],…]`` directly when no string needs escaping; otherwise (or on any
    doubt) use :func:`json.encoder.encode_basestring_ascii`, the very function ``json.dumps`` uses.
    """
    try:
        if (
            isinstance(pairs, (list, tuple))
            and _pair_types_ok(map(type, pairs))
            and _pair_lengths_ok(map(len, pairs))
        ):
            text = '[["' + '"],["'.join(map(_join_pair, pairs)) + '"]]'
            if text.isascii():
                raw = text.encode()
                # every '"' is one of ours (4 per pair; none for [], which thus takes the careful path)
                # and nothing else needs escaping
                if len(raw) - len(raw.translate(None, _JSON_SPECIAL)) == 4 * len(pairs):
                    return raw
    except TypeError:
        pass  # a non-string somewhere: the careful path names it
    return _json_careful(pairs)


def json_scalar(value: object, where: str = "value") -> str:
    """One JSON scalar exactly as ``json.dumps`` writes it (``ensure_ascii``), or :class:`LlidError`.

    * ``str`` (subclasses too): :func:`json.encoder.encode_basestring_ascii`, the function ``json.dumps``
      uses;
    * ``None``, ``True``, ``False``: ``null``, ``true``, ``false`` (a ``bool`` is not written as ``1``/``0``);
    * ``int`` (subclasses too): ``int.__repr__`` (as ``json.dumps``: ``224``, ``-5``, any size up to
      Python's int-to-text limit, beyond which it is refused as ``json.dumps`` refuses it);
    * ``float``: ``float.__repr__`` (``1e+100``, ``-0.0``, ``0.1``), as ``json.dumps``.  **NaN and the
      infinities are refused**: ``json.dumps`` would write ``NaN``/``Infinity``, which is not JSON
      (RFC 8259 §6), so other implementations of the recipe cannot write the same text (JavaScript's
      ``JSON.stringify`` writes ``null``) and the id could not be reproduced outside Python.

    Anything else (lists, dicts, bytes, …) is refused: a pair's value is one JSON scalar.

    >>> print(*[json_scalar(v) for v in ("é", 224, -0.0, 1e100, True, None)])
    "\\u00e9" 224 -0.0 1e+100 true null
    >>> json_scalar(float("nan"))
    Traceback (most recent call last):
    ...
    pidkit.errors.LlidError: value is nan: NaN and infinities are not JSON (RFC 8259 §6)
    """
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        try:
            return int.__repr__(value)
        except ValueError as exc:  # more digits than sys.get_int_max_str_digits(): json.dumps fails too
            raise LlidError(f"{where} is an int too large to write as JSON text: {exc}") from exc
    if isinstance(value, float):
        if value != value or value in (_INF, -_INF):
            raise LlidError(f"{where} is {value!r}: NaN and infinities are not JSON (RFC 8259 §6)")
        return float.__repr__(value)
    raise LlidError(
        f"{where} must be a JSON scalar (str, int, float, bool or None), got {type(value).__name__}"
    )


def _json_careful(pairs: object) -> bytes:
    """Validate ``pairs`` naming the bad pair, and serialize as ``json.dumps`` does (:func:`json_scalar`)."""
    if not isinstance(pairs, (list, tuple)):
        raise LlidError(f"pairs must be a list of [key, value] pairs, got {type(pairs).__name__}")
    parts = []
    for index, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise LlidError(f"pair {index} is not a [key, value] pair: {pair!r:.80}")
        key, value = pair
        if not isinstance(key, str):
            raise LlidError(f"pair {index}: key must be a str, got {type(key).__name__}")
        parts.append(f"[{encode_basestring_ascii(key)},{json_scalar(value, f'pair {index}: value')}]")
    return ("[" + ",".join(parts) + "]").encode("ascii")


def _encode(json_text: bytes) -> str:
    """The Library.Link algorithm's steps 2-4 for one JSON text: MurmurHash3 x64-128 (seed 0), low 64 bits,
    big-endian, base64url without padding.  :func:`_encode_many` is the same for many texts (tested to agree).

    >>> _encode(b'[["a","b"]]')
    'yFF3yU8UYM0'
    """
    # hash_bytes = the 128-bit result little-endian: bytes 0..7 are the low 64 bits; reversed = big-endian
    return _b2a(_hash_bytes(json_text)[7::-1], newline=False)[:LLID_LENGTH].translate(_TO_URLSAFE).decode()


def _encode_many(json_texts: Sequence[bytes | str]) -> list[str]:
    """:func:`_encode` of each text (ASCII ``bytes`` or ``str``), with steps 3-4 done once for all.

    Step 2: ``mmh3.hash64(text)[0]`` (the low 64 bits, signed); step 3: signed 64-bit big-endian, packed
    for all rows in one ``struct`` call, each followed by a zero pad byte so that every id is exactly 12
    base64 characters (9 bytes); step 4: one base64 pass, then the first 11 characters of each 12 (= the
    unpadded base64url of the 8 bytes).  Used by :func:`resource_ids` and :mod:`pidkit.bulk`.

    >>> _encode_many([b'[["a","b"]]', "[]"])
    ['yFF3yU8UYM0', 'zyUv3NDFd5E']
    """
    h64 = _hash64
    lows = [h64(t)[0] for t in json_texts]
    raw = struct.pack(">" + "qx" * len(lows), *lows)
    text = _b2a(raw, newline=False).translate(_TO_URLSAFE).decode("ascii")
    return [text[i : i + LLID_LENGTH] for i in range(0, len(text), 12)]


def _resource_id_python(pairs: Pairs) -> str:
    """:func:`resource_id` in pure Python: the fallback without the C helper, and its error path.

    >>> _resource_id_python([["a", "b"]])
    'yFF3yU8UYM0'
    """
    return _encode(_json(pairs))


def _resource_ids_python(many: Iterable[Pairs]) -> list[str]:
    """:func:`resource_ids` in pure Python (steps 2-4 for all the ids at once, :func:`_encode_many`).

    >>> _resource_ids_python([[["a", "b"]], []])
    ['yFF3yU8UYM0', 'zyUv3NDFd5E']
    """
    return _encode_many([_json(pairs) for pairs in many])


def _load_speedups() -> ModuleType | None:
    """The compiled helper, or ``None`` if it was not built or ``PIDKIT_PURE_PYTHON`` is set (not ``0``)."""
    speedups = load_speedups()
    if speedups is None:
        return None
    speedups._set_fallback(_resource_id_python)
    return speedups


_speedups: Final = _load_speedups()
#: ``True`` when the compiled helper ``pidkit._speedups`` computes the ids, ``False`` for pure Python.
SPEEDUPS: Final[bool] = _speedups is not None
_resource_id: Final[Callable[[Pairs], str]] = (
    _speedups.resource_id if _speedups is not None else _resource_id_python
)
_resource_ids: Final[Callable[[Iterable[Pairs]], list[str]]] = (
    _speedups.resource_ids if _speedups is not None else _resource_ids_python
)


def resource_id(pairs: Pairs) -> str:
    """The Library.Link resource id of ordered ``[key, value]`` pairs (11 base64url characters).

    Byte-identical to ``base64url(int64_be(mmh3.hash64(json.dumps(pairs, separators=(",", ":")))[0]))``
    without padding.  Keys must be ``str`` (property IRIs); a value may be any JSON scalar — ``str``,
    ``int``, ``float``, ``bool`` or ``None`` — written exactly as ``json.dumps`` writes it (the reference
    recipe and pybibframe hash ``["…/numberOfPages", 224]`` with a JSON number), except NaN and the
    infinities, which are refused (not JSON; see :func:`json_scalar`).  Anything else is an
    :class:`~pidkit.errors.LlidError` naming the pair index.  Computed by the C helper when it was built
    (:data:`SPEEDUPS`; it hands pairs with non-``str`` values to the pure-Python code), in pure Python
    otherwise; the ids and errors are the same.

    >>> resource_id([["http://bibfra.me/purl/versa/type", "http://schema.org/Person"],
    ...              ["http://schema.org/name", "Jonathan Bruce Postel"],
    ...              ["http://schema.org/birthDate", "1943-08-06"],
    ...              ["http://schema.org/deathDate", "1998-10-16"]])
    '65IMbTlnlOQ'
    >>> resource_id([["http://bibfra.me/purl/versa/numberOfPages", 224]])
    'cb6yQe6-dD4'
    >>> resource_id([["name", b"Ada"]])
    Traceback (most recent call last):
    ...
    pidkit.errors.LlidError: pair 0: value must be a JSON scalar (str, int, float, bool or None), got bytes
    """
    return _resource_id(pairs)


def resource_ids(many: Iterable[Pairs]) -> list[str]:
    """:func:`resource_id` of each list of pairs, as a list (the first bad one raises its error).

    >>> resource_ids([[["a", "b"]], [["a", "b"]], []])
    ['yFF3yU8UYM0', 'yFF3yU8UYM0', 'zyUv3NDFd5E']
    """
    return _resource_ids(many)


def read_llid(text: str) -> int:
    """The 64 bits a Library.Link resource id spells, as the signed integer the recipe wrote (step 3), or
    :class:`~pidkit.errors.LlidError`: the one check of an id's shape — 11 base64url characters without
    padding, canonical (the unused low bits of the last character zero).  A resource id is a hash, so
    nothing more can be verified.

    >>> read_llid("65IMbTlnlOQ")
    -1472100464942672668
    >>> read_llid("65IMbTlnlO!")
    Traceback (most recent call last):
    ...
    pidkit.errors.LlidError: invalid base64url character '!' in '65IMbTlnlO!' at position 11
    >>> read_llid("65IMbTlnlOR")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.LlidError: non-canonical base64url (unused trailing bits set) in '65IMbTlnlOR' ...
    """
    if len(text) != LLID_LENGTH:
        raise LlidError(
            f"a Library.Link resource id has {LLID_LENGTH} characters, got {len(text)}", text=text
        )
    return int.from_bytes(b64url_decode(text, _LLID_BYTES, error=LlidError), "big", signed=True)


# --- Versa literate Markdown ---------------------------------------------------------------------------

#: Where a property's value came from: ``<iri>`` (resource), ``"…"``/``'…'`` (text) or bare (unknown).
ValueKind = Literal["resource", "text", "unknown"]


@dataclass(frozen=True, slots=True)
class Property:
    """One ``* key: value`` line of a resource section, key expanded to a full IRI.

    >>> Property("http://schema.org/name", "Ada", "unknown", 3)
    Property(key='http://schema.org/name', value='Ada', kind='unknown', line=3, attributes=())
    """

    key: str
    value: str
    kind: ValueKind
    line: int
    #: Nested ``* key: value`` items under this property (Versa link attributes), keys expanded.
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource section (``# id [Type]``): expanded id and type, properties in document order.

    >>> r = parse_versa("# a [T]\\n* k: v\\n")[0]
    >>> r.id, r.type, r.get("k")
    ('a', 'T', ['v'])
    """

    id: str | None
    type: str | None
    properties: tuple[Property, ...]
    line: int

    def get(self, key: str) -> list[str]:
        """Every value of the property ``key`` (a full IRI, or the name as written if nothing expanded it).

        >>> parse_versa("# x\\n* k: 1\\n* k: 2\\n")[0].get("k")
        ['1', '2']
        """
        return [p.value for p in self.properties if p.key == key]


_HEADER: Final = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*")
_ITEM: Final = re.compile(r"([ \t]*)[*+-][ \t]+(.*)")
#: versa's Markdown reader (md.py in tools/py/reader/ of https://github.com/uogbuji/versa), its RESOURCE_PAT:
#: "ResourceID", "ResourceID [Type]", "[Type]" or "[]".
_RESOURCE: Final = re.compile(r"([^\s\[\]]+)?\s?(\[([^\s\[\]]*?)\])?")
#: versa md.py REL_PAT: ``prop: value`` where prop is ``<iri>`` or a name, value ``<iri>``, quoted or bare.
_REL: Final = re.compile(r"""(?:<(.+)>|([@\-_\w#/]+)):\s*(?:<(.+)>|"(.*)"|'(.*)'|(.*))""", re.DOTALL)
_ABBR: Final = re.compile(r"@([\-_\w]+)([#/@])(.+)", re.DOTALL)

#: @docheader keys (top level or inside ``@iri``/``@uri``) and what they set.
_BASE_KEYS: Final = frozenset({"@base"})
_SCHEMA_KEYS: Final = frozenset({"@schema", "@property", "@property-base", "@prop-base"})
_TYPE_BASE_KEYS: Final = frozenset({"@resource-type", "@resource-type-base"})
_IRI_SECTION_KEYS: Final = frozenset({"@iri", "@uri"})
_IGNORED_HEADER_KEYS: Final = frozenset({"@document", "@language", "@interpretations"})


@dataclass
class _Item:
    line: int
    indent: int
    text: str


@dataclass
class _Context:
    base: str | None = None
    schema: str | None = None
    type_base: str | None = None
    abbreviations: dict[str, str] | None = None

    def absolutize(self, ref: str, base: str | None) -> str:
        """RFC 3986 §5.2 reference resolution (as versa's ``iri.absolutize``); no base: unchanged."""
        return urljoin(base, ref) if base else ref

    def expand(self, name: str, base: str | None, line: int) -> str:
        """A property name or value: ``<iri>``, ``@abbr/rest`` / ``@abbr#rest``, or relative to ``base``."""
        if name.startswith("<") and name.endswith(">"):
            return self.absolutize(name[1:-1].strip(), base)
        m = _ABBR.fullmatch(name)
        if m is not None:
            prefix = (self.abbreviations or {}).get(m.group(1))
            if prefix is None:
                raise LlidError(f"unknown IRI abbreviation @{m.group(1)}", text=name, line=line)
            return prefix + m.group(2) + m.group(3)
        return self.absolutize(name, base)


def _strip_comments(text: str) -> str:
    """Blank out ``<!-- … -->`` comments, keeping line numbers; an unclosed comment runs to the end.

    One forward scan (linear time even for many unclosed ``<!--``).

    >>> _strip_comments("a<!-- x\\ny -->b<!-- open")
    'a\\nb'
    """
    out: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) >= 0:
        out.append(text[pos:start])
        end = text.find("-->", start + 4)
        stop = len(text) if end < 0 else end + 3
        out.append("\n" * text.count("\n", start, stop))
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def _split_rel(item: _Item) -> tuple[str, str, ValueKind]:
    m = _REL.fullmatch(item.text.strip())
    if m is None:
        raise LlidError("expected '* key: value'", text=item.text.strip(), line=item.line)
    prop = m.group(1) if m.group(1) is not None else m.group(2)
    prop = f"<{prop.strip()}>" if m.group(1) is not None else prop.strip()
    if m.group(3) is not None:
        return prop, m.group(3).strip(), "resource"
    if m.group(4) is not None:
        return prop, m.group(4), "text"
    if m.group(5) is not None:
        return prop, m.group(5), "text"
    return prop, (m.group(6) or "").strip(), "unknown"


def _sections(text: str) -> list[tuple[int, str, list[_Item]]]:
    """(line, header text, list items) per header; list items before any header are an error."""
    sections: list[tuple[int, str, list[_Item]]] = []
    for lineno, line in enumerate(_strip_comments(text).splitlines(), 1):
        header = _HEADER.fullmatch(line)
        if header is not None:
            sections.append((lineno, header.group(2), []))
            continue
        item = _ITEM.fullmatch(line)
        if item is None:
            continue  # prose, blank lines, anything that is not a list item
        if not sections:
            raise LlidError("list item before any '# resource' header", text=line, line=lineno)
        indent = len(item.group(1).expandtabs(4))
        sections[-1][2].append(_Item(lineno, indent, item.group(2)))
    return sections


def _nest(items: list[_Item]) -> list[tuple[_Item, list[_Item]]]:
    """Top-level items with the more-indented items under each."""
    out: list[tuple[_Item, list[_Item]]] = []
    for item in items:
        if out and item.indent > out[-1][0].indent:
            out[-1][1].append(item)
        else:
            out.append((item, []))
    return out


def _read_docheader(items: list[_Item], ctx: _Context) -> None:
    abbreviations: dict[str, str] = {}
    for item, children in _nest(items):
        key, value, _ = _split_rel(item)
        if key in _IRI_SECTION_KEYS:
            entries = [(child, *_split_rel(child)[:2]) for child in children]
        else:
            entries = [(item, key, value)]
        for entry, k, v in entries:
            if k in _BASE_KEYS:
                ctx.base = v
            elif k in _SCHEMA_KEYS:
                ctx.schema = v
            elif k in _TYPE_BASE_KEYS:
                ctx.type_base = v
            elif k in _IGNORED_HEADER_KEYS:
                pass
            elif k.startswith("@"):
                raise LlidError(f"unknown @docheader key {k}", text=entry.text.strip(), line=entry.line)
            else:
                abbreviations[k] = v
    ctx.abbreviations = abbreviations


def _docheader_context(sections: list[tuple[int, str, list[_Item]]]) -> _Context:
    """The context the ``# @docheader`` sections set (none: no base, no schema, no abbreviations)."""
    ctx = _Context()
    for _, header, items in sections:
        if header == "@docheader":
            _read_docheader(items, ctx)
    return ctx


def versa_schema(text: str) -> str | None:
    """The ``@schema`` IRI of a Versa document's ``# @docheader``, or ``None`` when it has none — then
    property names and types are hashed as written (``name``, not ``http://schema.org/name``), which gives
    other ids than the same data with ``@schema``.

    >>> versa_schema("# @docheader\\n* @schema: http://schema.org/\\n# x [T]\\n"), versa_schema("# x [T]\\n")
    ('http://schema.org/', None)
    """
    return _docheader_context(_sections(text)).schema


def parse_versa(text: str) -> list[Resource]:
    """Read Versa literate Markdown: one :class:`Resource` per ``#``/``##``/``###`` header.

    * ``# @docheader`` (optional): ``* @base: IRI`` (resource ids), ``* @schema: IRI`` (property names and,
      unless ``@resource-type`` is given, types; ``@property``, ``@property-base`` and ``@prop-base`` are
      older spellings), ``* @resource-type: IRI``; these may also sit nested under ``* @iri:``, where any
      other ``* abbr: IRI`` defines an abbreviation used as ``@abbr/rest`` or ``@abbr#rest``.
    * ``# id [Type]``, ``# id``, ``# [Type]`` or ``# []``: a resource; id resolved against ``@base``, type
      against ``@resource-type`` or ``@schema`` (RFC 3986 §5.2, as versa's reader).
    * ``* key: value``: a property in document order; ``<iri>`` values are resolved like ids, ``"…"`` or
      ``'…'`` values are text with the quotes removed, other values are taken stripped; nested list items
      are the property's attributes.  ``<!-- … -->`` comments and prose are ignored.

    Errors are :class:`~pidkit.errors.LlidError` naming the line.

    >>> doc = '''# @docheader
    ... * @schema: http://schema.org/
    ...
    ... # jon-postel [Person]
    ... * name: Jonathan Bruce Postel
    ... * birthDate: 1943-08-06
    ... '''
    >>> r = parse_versa(doc)[0]
    >>> r.id, r.type, r.get("http://schema.org/birthDate")
    ('jon-postel', 'http://schema.org/Person', ['1943-08-06'])
    """
    sections = _sections(text)
    ctx = _docheader_context(sections)
    type_base = ctx.type_base or ctx.schema
    resources: list[Resource] = []
    for lineno, header, items in sections:
        if header == "@docheader":
            continue
        m = _RESOURCE.fullmatch(header)
        if m is None:
            raise LlidError("expected '# id', '# id [Type]', '# [Type]' or '# []'", text=header, line=lineno)
        rid = ctx.absolutize(m.group(1), ctx.base) if m.group(1) else None
        rtype = ctx.expand(m.group(3), type_base, lineno) if m.group(3) else None
        props = []
        for item, children in _nest(items):
            key, value, kind = _split_rel(item)
            attrs = tuple(
                (
                    ctx.expand(k, ctx.schema, child.line),
                    ctx.expand(v, ctx.base, child.line) if vk == "resource" else v,
                )
                for child in children
                for k, v, vk in [_split_rel(child)]
            )
            if kind == "resource":
                value = ctx.expand(f"<{value}>", ctx.base, item.line)
            props.append(Property(ctx.expand(key, ctx.schema, item.line), value, kind, item.line, attrs))
        resources.append(Resource(rid, rtype, tuple(props), lineno))
    return resources


def resource_ids_from_versa(
    text: str, keys: Sequence[str], *, missing: Literal["error", "skip"] = "error"
) -> list[tuple[str, str]]:
    """``(resource id as written/resolved, Library.Link id)`` for each resource of a Versa document.

    The pairs hashed are the type pair first (``[VERSA_TYPE, type]``, if the resource has a type), then
    every property whose key is one of ``keys`` **in the document's order** (so the same document always
    gives the same id, whatever order ``keys`` come in; a key given twice in the document gives two pairs).
    ``keys`` are expanded like property names (``name`` with ``@schema: http://schema.org/`` is
    ``http://schema.org/name``); full IRIs work too.  Anonymous resources get ``""`` as their id.
    A resource without one of ``keys`` is an :class:`~pidkit.errors.LlidError` naming the key and the
    resource (its id and line): its id would silently hash fewer pairs (a mistyped key would hash the type
    alone).  With ``missing="skip"`` such a resource hashes the pairs it has.

    >>> doc = '''# @docheader
    ... * @schema: http://schema.org/
    ...
    ... # jon-postel [Person]
    ... * name: Jonathan Bruce Postel
    ... * birthDate: 1943-08-06
    ... * deathDate: 1998-10-16
    ... * gender: male
    ... '''
    >>> resource_ids_from_versa(doc, keys=["name", "birthDate", "deathDate"])
    [('jon-postel', '65IMbTlnlOQ')]
    >>> resource_ids_from_versa(doc, keys=["birthDate", "name"])
    [('jon-postel', '-7hP9d_Xo8M')]
    >>> resource_ids_from_versa(doc, keys=["name", "nosuch"])
    Traceback (most recent call last):
    ...
    pidkit.errors.LlidError: resource 'jon-postel' has no property 'http://schema.org/nosuch' (key 'nosuch') on line 4
    """  # noqa: E501
    if isinstance(keys, str):
        raise LlidError("keys must be a list of property names, not one string", text=keys)
    ctx = _docheader_context(_sections(text))
    wanted = {ctx.expand(k, ctx.schema, 0): k for k in keys}
    out = []
    for res in parse_versa(text):
        pairs: list[list[JsonScalar]] = [[VERSA_TYPE, res.type]] if res.type is not None else []
        pairs += [[p.key, p.value] for p in res.properties if p.key in wanted]
        if missing == "error":
            have = {p.key for p in res.properties}
            for iri, key in wanted.items():
                if iri not in have:
                    name = repr(res.id) if res.id else f"[{res.type or ''}] (anonymous)"
                    raise LlidError(
                        f"resource {name} has no property {iri!r} (key {key!r})", line=res.line
                    )
        out.append((res.id or "", resource_id(pairs)))
    return out
