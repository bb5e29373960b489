"""ARK syntax: parse, anatomy, normalization and containment (draft-kunze-ark-40 §2, §3).

::

    [https://NMA/]ark:[/]NAAN/Name[Qualifiers][?inflection]          (§2)

    https://example.org/ark:12345/x6np1wh8k/c3/s5.v7.xsl
            \\_________/ \\__/\\___/\\_/\\_____/\\____/\\_____/
               NMA     Label NAAN |  Blade  Parts Variants
                                Shoulder

:class:`Ark` keeps what it was given (NMA, label form, NAAN and Name+Qualifiers with their case and
hyphens: :attr:`Ark.text`, :attr:`Ark.compact`, :attr:`Ark.qualifiers`) and compares, hashes and orders
by the **normalized** form of §3.2; its anatomy (Name, shoulder, blade, ComponentPath, VariantPath) is
that of the normalized form.  So ``ark:/12345/x5-4-xz-321`` and
``https://sneezy.dopey.com/ark:12345/x54--xz32-1`` are equal, with the same anatomy.
:func:`normalize` implements the nine steps of §3.2, one small function per step.

>>> a = Ark.parse("https://example.org/ark:12345/x6np1wh8k/c3/s5.v7.xsl")
>>> a.nma, a.naan, a.shoulder, a.blade, a.component_path, a.variant_path
('example.org', '12345', 'x6', 'np1wh8k', '/c3/s5', '.v7.xsl')
>>> str(a)
'ark:12345/x6np1wh8k/c3/s5.v7.xsl'
>>> normalize("ARK:/12345/x5-4-xz-321")
'ark:12345/x54xz321'
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from .._value import OrderedValue, SchemaInfo
from ..codecs import BETANUMERIC, BETANUMERIC_VALUE
from ..errors import ArkError
from .chars import (
    HYPHEN,
    HYPHEN_LIKE,
    LETTERS_DIGITS,
    NAAN_AS_GIVEN_PATTERN,
    NAAN_PATTERN,
    NAME_CHARS,
    PERCENT,
    STRUCTURAL,
)
from .noid import verify as _ncda_verify

__all__ = [
    "DEFAULT_RESOLVER",
    "INFLECTIONS",
    "MAX_LENGTH",
    "SHARED_NAANS",
    "Ark",
    "SharedNaan",
    "clean_pasted",
    "normalize",
]

# --- the rules, as named constants ---------------------------------------------------------------------

#: Longest input accepted, in characters.  §3.1 asks receivers to support at least 255 octets of
#: Name + Qualifiers and §2.3 at least 16 octets of NAAN; 4096 leaves room for long NMAs and qualifiers
#: while bounding the work any input can cause (everything here is linear in the input anyway).
MAX_LENGTH: Final = 4096

#: §2.2: the new label form (generate this) and the old one (recognize in perpetuity).
LABEL: Final = "ark:"
OLD_LABEL: Final = "ark:/"

# §3.1 Name characters, hyphens and structural characters: pidkit.ark.chars.
_NAME_REPERTOIRE: Final = NAME_CHARS | frozenset(PERCENT + HYPHEN + STRUCTURAL + HYPHEN_LIKE)
_HEX: Final = frozenset("0123456789abcdefABCDEF")

#: §2.3: NAANs are betanumeric (digits and consonants without 'l'); uppercase is accepted because §3.2
#: step 4 lowercases the NAAN.  Hyphens are accepted everywhere (§3.1: always ignored).
_NAAN_CHARS: Final = (
    frozenset(BETANUMERIC_VALUE)
    | frozenset(c.upper() for c in BETANUMERIC_VALUE if c.isalpha())
    | frozenset(HYPHEN + HYPHEN_LIKE)
)

#: §1.3 / §4.3: the inflections: "?info" (metadata, must be supported) and the older '?' and '??'.
INFLECTIONS: Final = ("?info", "??", "?")

#: Characters of an NMA host[:port] and of its optional path (RFC 3986 unreserved, sub-delims, ':', '@').
_HOST_CHARS: Final = frozenset(LETTERS_DIGITS + ".-[]:")
_PATH_CHARS: Final = frozenset(LETTERS_DIGITS + "-._~!$&'()*+,;=:@%/")
#: Visible ASCII, allowed in a query string (inflection).
_QUERY_CHARS: Final = frozenset(chr(c) for c in range(0x21, 0x7F))
_SCHEMES: Final = ("https://", "http://")

# Whole-part validators (fast path; on a mismatch a character loop finds the position to report).
_REST_RE: Final = re.compile(
    "(?:["
    + re.escape("".join(sorted(NAME_CHARS)) + HYPHEN + STRUCTURAL + HYPHEN_LIKE)
    + "]|%[0-9A-Fa-f]{2})*"
)
_NAAN_RE: Final = re.compile("[" + re.escape("".join(sorted(_NAAN_CHARS))) + "]*")
_QUERY_RE: Final = re.compile("[\\x21-\\x7e]*")
#: Where the Name starts: after any leading structural characters and segments made only of hyphens
#: (both vanish in §3.2 steps 6 and 8, so ``ark:12345/-./x`` names ``x`` like ``ark:12345/./x``).
#: Always matches; linear (each repetition consumes a structural character).
_NAME_SPAN_RE: Final = re.compile("(?:[" + re.escape(HYPHEN + HYPHEN_LIKE) + "]*[./])*([^./]*)")
_HOST_RE: Final = re.compile("[" + re.escape("".join(sorted(_HOST_CHARS))) + "]*")
_PATH_RE: Final = re.compile("[" + re.escape("".join(sorted(_PATH_CHARS))) + "]*")

#: A compact ARK that is already its own §3.2 normalized form with a plain Name (:func:`plain_normalized`):
#: the new label, a lowercase betanumeric NAAN without hyphens, a Name of §3.1 name characters only (no
#: hyphen, '%', structural character or inflection).  Group 1 is the NAAN, group 2 the Name.
_PLAIN_NORMALIZED_RE: Final = re.compile(
    "ark:([" + BETANUMERIC + "]+)/([" + re.escape("".join(sorted(NAME_CHARS))) + "]+)"
)
#: §2.4.1 first-digit convention on a Name of name characters: betanumeric consonants, then a digit.
_PLAIN_SHOULDER_RE: Final = re.compile("[" + BETANUMERIC.lstrip("0123456789") + "]+[0-9]")

#: draft-kunze-ark-40 §2 as a JSON schema pattern: ``[https://NMA/]ark:[/]NAAN/Name…`` (label in any case,
#: the NAAN as the parser reads it: any case, hyphens): every text the parser accepts matches it.
JSON_PATTERN: Final = r"^(?:\S*/)?[Aa][Rr][Kk]:/?" + NAAN_AS_GIVEN_PATTERN + r"/\S+$"
#: ``str(ark)`` as a JSON schema pattern: the compact form with the new label and a normalized NAAN.
JSON_COMPACT_PATTERN: Final = "^ark:" + NAAN_PATTERN + r"/\S+$"

#: Where :meth:`Ark.to_url` points by default: N2T, the resolver of last resort (§3.3).
DEFAULT_RESOLVER: Final = "https://n2t.net/"


class SharedNaan(NamedTuple):
    """A NAAN shared by all ARK-assigning organizations (§2.3, "Four NAANs shared …")."""

    naan: str
    meaning: str
    purpose: str
    expect_to_resolve: str
    long_term: bool


#: §2.3, Table 2: the four shared NAANs, their immutable meaning, whether to expect them to resolve and
#: whether they are OK for long-term reference.
SHARED_NAANS: Final[dict[str, SharedNaan]] = {
    "12345": SharedNaan(
        "12345",
        "examples",
        "Example ARKs appearing in documentation; not viable for long term reference.",
        "maybe",
        False,
    ),
    "99152": SharedNaan(
        "99152",
        "terms",
        "ARKs for controlled vocabulary and ontology terms; resolve to term definitions.",
        "yes",
        True,
    ),
    "99166": SharedNaan(
        "99166",
        "agents",
        "ARKs for people, groups and institutions as agents; resolve to agent definitions.",
        "yes",
        True,
    ),
    "99999": SharedNaan(
        "99999",
        "test ids",
        "ARKs for test, development or experimental purposes; not viable for long term reference.",
        "maybe",
        False,
    ),
}

# --- §3.2 normalization, one function per step ---------------------------------------------------------
# Each step takes and returns the ARK string; `normalize` runs them in order on validated input.

_HYPHENS_RE: Final = re.compile("[" + re.escape(HYPHEN + HYPHEN_LIKE) + "]")
_PERCENT_RE: Final = re.compile(r"%[0-9a-fA-F]{2}")
_STRUCTURAL_RUN_RE: Final = re.compile(r"([./])[./]+")
_SEGMENT_RE: Final = re.compile(r"[./][^./]*")


def _find_label(text: str) -> int:
    """Index of the label: 0 for a compact ARK, else just after the first '/ark:' (case-insensitive)."""
    if text[:4].lower() == LABEL:
        return 0
    return text.lower().find("/" + LABEL) + 1


def remove_nma(text: str) -> str:
    """Drop the NMA: everything up to the first '/ark:'.

    >>> remove_nma("https://example.org/rslvr/ark:12345/x6np1wh8k")
    'ark:12345/x6np1wh8k'
    """
    # draft-kunze-ark-40 §3.2 step 1
    return text[_find_label(text) :]


def remove_query(text: str) -> str:
    """Drop any URI query string (from the first literal '?' to the end).

    >>> remove_query("ark:12345/x6np1wh8k?info")
    'ark:12345/x6np1wh8k'
    """
    # draft-kunze-ark-40 §3.2 step 2
    q = text.find("?")
    return text if q < 0 else text[:q]


def normalize_label(text: str) -> str:
    """Turn the first case-insensitive 'ark:/' or 'ark:' into 'ark:'.

    >>> normalize_label("ARK:/12345/x6np1wh8k")
    'ark:12345/x6np1wh8k'
    """
    # draft-kunze-ark-40 §3.2 step 3
    i = 0 if text[:4].lower() == LABEL else text.lower().find(LABEL)
    if i < 0:
        return text
    end = i + len(LABEL)
    if text[end : end + 1] == "/":
        end += 1
    return text[:i] + LABEL + text[end:]


def lowercase_naan(text: str) -> str:
    """Lowercase the NAAN (the part after 'ark:' up to the next '/').

    >>> lowercase_naan("ark:B2345/X6")
    'ark:b2345/X6'
    """
    # draft-kunze-ark-40 §3.2 step 4
    start = len(LABEL)
    end = text.find("/", start)
    if end < 0:
        end = len(text)
    return text[:start] + text[start:end].lower() + text[end:]


def uppercase_percent_hex(text: str) -> str:
    """Uppercase the two hex digits after every '%'; the case of all other letters is kept.

    >>> uppercase_percent_hex("ark:12345/x%7dY")
    'ark:12345/x%7DY'
    """
    # draft-kunze-ark-40 §3.2 step 5
    if PERCENT not in text:
        return text
    return _PERCENT_RE.sub(lambda m: m.group(0).upper(), text)


def remove_hyphens(text: str) -> str:
    """Remove every hyphen and every hyphen-like character U+2010 to U+2015.

    >>> remove_hyphens("ark:12345/x5-4\u2010xz\u2015321")
    'ark:12345/x54xz321'
    """
    # draft-kunze-ark-40 §3.2 step 6 (and §3.1: hyphens are identity inert)
    if HYPHEN not in text and text.isascii():
        return text  # nothing to remove (the hyphen-likes are non-ASCII)
    return _HYPHENS_RE.sub("", text)


def remove_inflection(text: str) -> str:
    """Remove a known inflection ('?info', '??', '?') at the end of the string.

    Inflections all begin with '?', so after step 2 there is none left; the step is kept for
    completeness and costs one ``endswith``.

    >>> remove_inflection("ark:12345/x6np1wh8k??")
    'ark:12345/x6np1wh8k'
    """
    # draft-kunze-ark-40 §3.2 step 7
    for inflection in INFLECTIONS:
        if text.endswith(inflection):
            return text[: -len(inflection)]
    return text


def _split_after_naan(text: str) -> tuple[str, str]:
    """``('ark:NAAN/', 'Name+Qualifiers')`` (the slash after the NAAN is not structural, §2.5.1)."""
    cut = text.find("/", len(LABEL))
    if cut < 0:
        return text, ""
    return text[: cut + 1], text[cut + 1 :]


def _collapse(rest: str) -> str:
    """Step 8 on the part after ``NAAN/``: runs of '/' and '.' become their first character; then
    initial and final ones go."""
    if "//" in rest or "/." in rest or "./" in rest or ".." in rest:
        rest = _STRUCTURAL_RUN_RE.sub(r"\1", rest)
    return rest.strip(STRUCTURAL)


def collapse_structural(text: str) -> str:
    """Normalize '/' and '.': initial and final ones removed, two in a row replaced by the first.

    The slash after the NAAN is not part of the Name (§2.5.1), so it is kept.

    >>> collapse_structural("ark:12345//x54/./xz//321.")
    'ark:12345/x54/xz/321'
    """
    # draft-kunze-ark-40 §3.2 step 8
    head, rest = _split_after_naan(text)
    return head + _collapse(rest)


def _move_variants(rest: str) -> str:
    """Step 9 on a collapsed Name+Qualifiers: stable partition into Name, '/…' parts, '.…' parts."""
    dot = rest.find(".")
    if dot < 0 or rest.find("/", dot) < 0:
        return rest  # no period followed later by a slash: already Name + ComponentPath + VariantPath
    first = min(i for i in (rest.find("/"), dot) if i >= 0)
    name, segments = rest[:first], _SEGMENT_RE.findall(rest, first)
    components = "".join(s for s in segments if s[0] == "/")
    variants = "".join(s for s in segments if s[0] == ".")
    return name + components + variants


def move_variants_to_end(text: str) -> str:
    """Move components that have a period on the left and a slash on the right to the end.

    §3.2 step 9 lets an implementation either move such a component (with its period) "to the end of
    the Name part" or throw the ARK out as malformed.  pidkit **moves** them, and reads "the end of the
    Name part" as the end of the whole Name + Qualifiers string: every ``.variant`` segment that is
    followed somewhere by a ``/component`` segment goes after the last component, variants keeping
    their relative order.  The result always has the §2.5 form Name ComponentPath VariantPath, and no
    character is lost.

    >>> move_variants_to_end("ark:12345/x54.v2/c3")
    'ark:12345/x54/c3.v2'
    >>> move_variants_to_end("ark:12345/x54.v1.v2/c3/s5.pdf")
    'ark:12345/x54/c3/s5.v1.v2.pdf'
    """
    # draft-kunze-ark-40 §3.2 step 9
    head, rest = _split_after_naan(text)
    return head + _move_variants(rest)


def normalize(text: str) -> str:
    """The normalized form of the ARK ``text`` for lexical comparison (§3.2, all nine steps).

    ``text`` is first checked by :meth:`Ark.parse` (raises :class:`~pidkit.errors.ArkError`).  The
    result has no NMA and no inflection, the new label, a lowercase NAAN, uppercase %-escapes, no
    hyphens and tidy structural characters; it is itself a valid ARK and normalizing it again changes
    nothing.  Comparisons of normalized ARKs are case-sensitive.

    >>> normalize("https://sneezy.dopey.com/ark:12345/x54--xz32-1")
    'ark:12345/x54xz321'
    >>> normalize("http://example.org/rslvr/ARK:/12345/x6np1wh8k/?info")
    'ark:12345/x6np1wh8k'
    """
    Ark.parse(text)  # validate: the steps below assume a well-formed ARK
    return _normalize_valid(text)


def _normalize_valid(text: str) -> str:
    text = remove_nma(text)  # step 1
    text = remove_query(text)  # step 2
    text = normalize_label(text)  # step 3
    text = lowercase_naan(text)  # step 4
    text = uppercase_percent_hex(text)  # step 5
    text = remove_hyphens(text)  # step 6
    text = remove_inflection(text)  # step 7
    text = collapse_structural(text)  # step 8
    return move_variants_to_end(text)  # step 9


def plain_normalized(text: str) -> tuple[str, str] | None:
    """``(NAAN, shoulder)`` of ``text`` when it is a compact ARK already in normalized form with a plain
    Name (no qualifiers, no inflection), else ``None``: the fast path of bulk work (imports), which then
    knows without parsing that ``Ark.parse(text).normalize()`` is ``text`` itself, with that NAAN and
    :attr:`Ark.shoulder` (``""`` for none) and no :meth:`Ark.ancestors`.  ``None`` decides nothing:
    such a text goes through :meth:`Ark.parse`, which accepts it or says what is wrong.

    >>> plain_normalized("ark:99999/fk4x8d9m2q"), plain_normalized("ark:67531/metadc107835")
    (('99999', 'fk4'), ('67531', ''))
    >>> plain_normalized("ark:/99999/fk4x8d9m2q"), plain_normalized("ark:99999/fk4-x"), plain_normalized("x")
    (None, None, None)
    """
    if len(text) > MAX_LENGTH:
        return None
    m = _PLAIN_NORMALIZED_RE.fullmatch(text)
    if m is None:
        return None
    shoulder = _PLAIN_SHOULDER_RE.match(m[2])
    return m[1], "" if shoulder is None else shoulder[0]


# --- leniency for pasted text (a separate, explicit step; parse itself is strict) ----------------------


def clean_pasted(text: str) -> str:
    r"""Remove the whitespace that line wrapping leaves in pasted ARKs (spaces, tabs, newlines, …).

    §3.1 invites implementations to normalize "common invalid characters … found in ARKs copy pasted
    from processed text", including removing whitespace.  :meth:`Ark.parse` never does this itself (a
    space is an error there); call this first when the input comes from running text.  Hyphen-like
    characters need no cleaning: parse accepts them and normalization removes them.

    >>> clean_pasted("  ark:12345/x6np1-\n   wh8k \n")
    'ark:12345/x6np1-wh8k'
    >>> normalize(clean_pasted("ark:12345/x6np1\u2010\n wh8k"))
    'ark:12345/x6np1wh8k'
    """
    return "".join(text.split())


# --- parsing -------------------------------------------------------------------------------------------


def _fail(message: str, text: str, position: int | None = None) -> ArkError:
    return ArkError(message, text=text, position=position)


def _check_nma(text: str, start: int, end: int) -> None:
    """Validate ``text[start:end]`` as host[:port][/path] (§2.1: the host/port part of a URL)."""
    slash = text.find("/", start, end)
    host_end = end if slash < 0 else slash
    if host_end <= start:
        raise _fail("empty NMA host before '/ark:'", text, start + 1)
    if _HOST_RE.fullmatch(text, start, host_end) and _PATH_RE.fullmatch(text, host_end, end):
        return
    for i in range(start, host_end):
        if text[i] not in _HOST_CHARS:
            raise _fail(f"character {text[i]!r} not allowed in an NMA host", text, i + 1)
    for i in range(host_end, end):
        if text[i] not in _PATH_CHARS:
            raise _fail(f"character {text[i]!r} not allowed in an NMA path", text, i + 1)


def _check_percent(text: str, i: int, end: int) -> None:
    if i + 2 >= end or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
        raise _fail("'%' must be followed by two hex digits (§3.1 %-encoding)", text, i + 1)


def _leading_consonants(name: str) -> int:
    i = 0
    while i < len(name) and name[i] in BETANUMERIC_VALUE and not name[i].isdigit():
        i += 1
    return i


class Ark(OrderedValue):
    """An ARK (draft-kunze-ark-40): compared, hashed and ordered by its §3.2 normalized form.

    Two kinds of parts:

    * **as given** (the spelling received, case and hyphens kept): :attr:`text`, :attr:`nma`,
      :attr:`label`, :attr:`naan`, :attr:`qualifiers` (verbatim, e.g. for suffix passthrough),
      :attr:`inflection` and :attr:`compact` (= ``str(ark)``: the new label, no NMA, no inflection,
      the rest as given);
    * **of the normalized form** (§3.2, the identity; what :meth:`normalize` returns): :attr:`name`
      (``= shoulder + blade``), :attr:`shoulder`, :attr:`blade`, :attr:`component_path`,
      :attr:`variant_path`, :attr:`base`, :attr:`check_zone`, :attr:`normalized` and :meth:`ancestors`,
      with ``normalized == base + component_path + variant_path``.

    ``Ark.parse(str(a)) == a``, with the same parts except NMA, label and inflection.

    >>> a = Ark.parse("ark:/12345/x5-4-xz-321?info")
    >>> a == Ark.parse("https://sneezy.dopey.com/ark:12345/x54--xz32-1")
    True
    >>> a.label, a.name, a.inflection, str(a), a.normalized
    ('ark:/', 'x54xz321', '?info', 'ark:12345/x5-4-xz-321', 'ark:12345/x54xz321')
    >>> a
    Ark('ark:/12345/x5-4-xz-321?info')
    """

    __slots__ = ("_key", "_label", "_naan", "_name_end", "_nma", "_query", "_rest", "_text")

    _text: str
    _nma: str | None
    _label: str
    _naan: str
    _rest: str  # Name + Qualifiers as given (between 'NAAN/' and any '?')
    _name_end: int  # where the given Name ends in _rest (the given qualifiers start)
    _query: str
    _key: str
    _schema_info = SchemaInfo("ark", JSON_PATTERN, JSON_COMPACT_PATTERN, "ark:12345/x6np1wh8k")

    @classmethod
    def parse(cls, text: str) -> Ark:
        """Parse a compact (``ark:NAAN/Name…``, old label ``ark:/`` too, any case) or Mapping ARK
        (``https://NMA/ark:…``; the scheme may be omitted, as in ``n2t.net/ark:…``).

        Raises :class:`~pidkit.errors.ArkError` naming the input and the 1-based position for: empty or
        over-long input, no label, an empty or non-betanumeric NAAN, no Name, a character outside the
        §3.1 repertoire (other characters must be %-encoded), or a '%' not followed by two hex digits.
        Whitespace is never accepted (clean pasted text before parsing).

        >>> Ark.parse("ark:12345/x6np1wh8k").blade
        'np1wh8k'
        >>> Ark.parse("ark:12345/x6np1wh8k/c3#p2")
        Traceback (most recent call last):
        ...
        pidkit.errors.ArkError: character '#' not allowed in an ARK (%-encode it) in 'ark:12345/x6np1wh8k/c3#p2' at position 23
        """  # noqa: E501
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        if not text:
            raise _fail("empty input", text)
        if len(text) > MAX_LENGTH:
            raise _fail(f"longer than {MAX_LENGTH} characters", text)

        # §2.1 / §3.2 step 1: the NMA is everything up to the first '/ark:'.
        label_at = _find_label(text)
        nma: str | None = None
        if label_at < 0 or (label_at == 0 and text[:4].lower() != LABEL):
            raise _fail("no 'ark:' label (expected ark:NAAN/Name or https://NMA/ark:NAAN/Name)", text, 1)
        if label_at > 0:
            lowered = text[:8].lower()
            scheme = next((s for s in _SCHEMES if lowered.startswith(s)), "")
            _check_nma(text, len(scheme), label_at - 1)
            nma = text[len(scheme) : label_at - 1]

        # §2.2: new label 'ark:' or old label 'ark:/', in any case.
        naan_at = label_at + len(LABEL)
        label = LABEL
        if text[naan_at : naan_at + 1] == "/":
            label, naan_at = OLD_LABEL, naan_at + 1

        # Inflection / query string: from the first '?' (§3.2 step 2).
        q = text.find("?", naan_at)
        end = len(text) if q < 0 else q
        if q >= 0 and not _QUERY_RE.fullmatch(text, end + 1):
            for i in range(end + 1, len(text)):
                if text[i] not in _QUERY_CHARS:
                    raise _fail(f"character {text[i]!r} not allowed in a query string", text, i + 1)

        # §2.3: NAAN up to the next '/', betanumeric, at least one character.
        slash = text.find("/", naan_at, end)
        naan_end = end if slash < 0 else slash
        if not _NAAN_RE.fullmatch(text, naan_at, naan_end):
            for i in range(naan_at, naan_end):
                if text[i] not in _NAAN_CHARS:
                    raise _fail(f"NAAN character {text[i]!r} is not betanumeric (§2.3)", text, i + 1)
        naan = text[naan_at:naan_end]
        if not naan.strip(HYPHEN + HYPHEN_LIKE):
            raise _fail("no NAAN after the label", text, naan_at + 1)
        if slash < 0:
            raise _fail("no '/' and Name after the NAAN", text, naan_end + 1)

        # §3.1: Name and Qualifiers repertoire, %-encoding.
        rest_at = slash + 1
        if not _REST_RE.fullmatch(text, rest_at, end):
            for i in range(rest_at, end):
                c = text[i]
                if c not in _NAME_REPERTOIRE:
                    raise _fail(f"character {c!r} not allowed in an ARK (%-encode it)", text, i + 1)
                if c == PERCENT:
                    _check_percent(text, i, end)
        rest = text[rest_at:end]

        # §2.4: the Name runs to the first structural character; leading structural characters and
        # hyphen-only segments are not part of it (they vanish in §3.2 steps 6 and 8).
        name_start, name_end = _NAME_SPAN_RE.match(rest).span(1)  # type: ignore[union-attr]
        if not rest[name_start:name_end].strip(HYPHEN + HYPHEN_LIKE):
            raise _fail("no Name after the NAAN", text, rest_at + 1)

        self = object.__new__(cls)
        set_ = object.__setattr__
        set_(self, "_text", text)
        set_(self, "_nma", nma)
        set_(self, "_label", label)
        set_(self, "_naan", naan)
        set_(self, "_rest", rest)
        set_(self, "_name_end", name_end)
        set_(self, "_query", text[end:])
        set_(self, "_key", _normalize_valid(f"{LABEL}{naan}/{rest}"))
        return self

    @classmethod
    def from_parts(cls, *, naan: str, name: str, qualifiers: str = "") -> Ark:
        """The compact ARK ``ark:NAAN/Name+Qualifiers`` built from its parts (validated by :meth:`parse`).

        ``qualifiers`` must start with '/' or '.' (or be empty); ``name`` must not contain either.

        >>> Ark.from_parts(naan="99999", name="fk4x8d9m2q", qualifiers="/c3.pdf")
        Ark('ark:99999/fk4x8d9m2q/c3.pdf')
        """
        text = f"{LABEL}{naan}/{name}{qualifiers}"
        for i, c in enumerate(name, len(LABEL) + len(naan) + 2):
            if c in STRUCTURAL:
                raise _fail(f"a Name cannot contain {c!r} (it starts the qualifiers)", text, i)
        if not name:
            raise _fail("no Name", text, len(LABEL) + len(naan) + 2)
        if qualifiers and qualifiers[0] not in STRUCTURAL:
            raise _fail("qualifiers must start with '/' or '.'", text, len(text) - len(qualifiers) + 1)
        if "?" in text:
            raise _fail(
                "'?' cannot be part of a Name or qualifier (it starts an inflection)",
                text,
                text.find("?") + 1,
            )
        return cls.parse(text)

    # --- parts as given ---

    @property
    def text(self) -> str:
        """The text this ARK was parsed from.

        >>> Ark.parse("ark:/12345/x6np1wh8k").text
        'ark:/12345/x6np1wh8k'
        """
        return self._text

    @property
    def nma(self) -> str | None:
        """The Name Mapping Authority, host[:port] plus any path before '/ark:' (``None`` if compact).

        >>> Ark.parse("http://example.org/rslvr/ark:12345/x6np1wh8k").nma
        'example.org/rslvr'
        """
        return self._nma

    @property
    def label(self) -> str:
        """``"ark:"`` (new form) or ``"ark:/"`` (old form), whichever was given (in lowercase).

        >>> Ark.parse("ARK:/12345/x6np1wh8k").label
        'ark:/'
        """
        return self._label

    @property
    def naan(self) -> str:
        """The NAAN as given (a string, never a number: ``01234`` stays ``01234``).

        >>> Ark.parse("ark:01234/x6").naan
        '01234'
        """
        return self._naan

    @property
    def qualifiers(self) -> str:
        """Everything after the Name up to any '?' (ComponentPath and VariantPath), verbatim as given, or
        ``""``.

        This is the requester's own spelling (hyphens, doubled or trailing structural characters and
        variants before components are all kept), e.g. for suffix passthrough; the §2.5 parts of the
        normalized form are :attr:`component_path` and :attr:`variant_path`.

        >>> Ark.parse("ark:12345/x6np1wh8k/c3/s5.v7.xsl").qualifiers
        '/c3/s5.v7.xsl'
        >>> Ark.parse("ark:12345/x54.v-2/c3/").qualifiers
        '.v-2/c3/'
        """
        return self._rest[self._name_end :]

    @property
    def inflection(self) -> str:
        """The query string as given, from its '?' (``"?info"``, ``"?"``, ``"??"``), or ``""``.

        >>> Ark.parse("ark:12345/x6np1wh8k?info").inflection
        '?info'
        """
        return self._query

    @property
    def known_inflection(self) -> bool:
        """Whether :attr:`inflection` is one the draft defines (``?info``, ``?``, ``??``).

        >>> Ark.parse("ark:12345/x6??").known_inflection
        True
        """
        return self._query in INFLECTIONS

    @property
    def compact(self) -> str:
        """The Compact ARK ``ark:NAAN/Name+Qualifiers`` (new label, no NMA, no inflection) = ``str(self)``.

        >>> Ark.parse("https://example.org/ark:/12345/x6np1wh8k/c3?info").compact
        'ark:12345/x6np1wh8k/c3'
        """
        return f"{LABEL}{self._naan}/{self._rest}"

    # --- parts of the normalized form ---

    @property
    def normalized(self) -> str:
        """The §3.2 normalized form (the comparison key).

        >>> Ark.parse("ark:/12345/X6-np").normalized
        'ark:12345/X6np'
        """
        return self._key

    def normalize(self) -> Ark:
        """The normalized ARK (§3.2): no NMA, no inflection, new label, hyphens removed, …

        >>> Ark.parse("https://example.com/ARK:/12345/x6-np1wh8k?info").normalize()
        Ark('ark:12345/x6np1wh8k')
        """
        if self._text == self._key:
            return self
        return Ark.parse(self._key)

    def _normalized_name(self) -> str:
        rest = _split_after_naan(self._key)[1]
        cut = len(rest)
        for c in STRUCTURAL:
            i = rest.find(c)
            if 0 <= i < cut:
                cut = i
        return rest[:cut]

    def _normalized_qualifiers(self) -> str:
        rest = _split_after_naan(self._key)[1]
        return rest[len(self._normalized_name()) :]

    @property
    def name(self) -> str:
        """The Name of the normalized form (§2.4: up to the first '/' or '.'; hyphens removed).

        ``name == shoulder + blade``; the Name as spelled is in :attr:`text` and :attr:`compact`.

        >>> Ark.parse("ark:12345/x6np1wh8k.v7").name
        'x6np1wh8k'
        >>> Ark.parse("ark:/12345/-/x5-4-xz-321").name
        'x54xz321'
        """
        return self._normalized_name()

    @property
    def shoulder(self) -> str:
        """The primordinal shoulder of the normalized Name: consonants up to and including the first digit
        (§2.4.1 "first-digit convention"), or ``""`` when the Name does not start that way.

        ``shoulder + blade`` is the normalized Name (hyphens removed).

        >>> Ark.parse("ark:12345/x6np1wh8k").shoulder, Ark.parse("ark:13030/tf5p30086k").shoulder
        ('x6', 'tf5')
        >>> Ark.parse("ark:67531/metadc107835").shoulder
        ''
        """
        name = self._normalized_name()
        i = _leading_consonants(name)
        if i == 0 or i == len(name) or not name[i].isdigit():
            return ""
        return name[: i + 1]

    @property
    def blade(self) -> str:
        """The normalized Name after the shoulder (the whole Name when there is no shoulder).

        >>> Ark.parse("ark:12345/x5-4-xz-321").blade
        '4xz321'
        """
        return self._normalized_name()[len(self.shoulder) :]

    @property
    def component_path(self) -> str:
        """The ComponentPath of the normalized form (§2.5: ``/c3/s5``, introduced and subdivided by
        '/'), or ``""``.

        Normalization (§3.2 step 9) moves a variant that was followed by a component to the end, so
        ``ark:12345/x54.v2/c3`` has ComponentPath ``/c3`` and VariantPath ``.v2``.

        >>> Ark.parse("ark:12345/x6np1wh8k/c3/s5.v7.xsl").component_path
        '/c3/s5'
        >>> Ark.parse("ark:12345/x54.v2/c3").component_path
        '/c3'
        """
        q = self._normalized_qualifiers()
        dot = q.find(".")
        return q if dot < 0 else q[:dot]

    @property
    def variant_path(self) -> str:
        """The VariantPath of the normalized form (§2.5: ``.v7.xsl``, introduced and subdivided by '.';
        never contains '/'), or ``""``.

        ``normalized == "ark:" + NAAN + "/" + name + component_path + variant_path`` (NAAN lowercased).

        >>> Ark.parse("ark:12345/x6np1wh8k/c3/s5.v7.xsl").variant_path
        '.v7.xsl'
        >>> Ark.parse("ark:12345/x54.v2/c3").variant_path
        '.v2'
        """
        q = self._normalized_qualifiers()
        dot = q.find(".")
        return "" if dot < 0 else q[dot:]

    @property
    def base(self) -> str:
        """The Base Compact Name ``ark:NAAN/Name`` of the normalized form (a prefix of :attr:`normalized`).

        >>> Ark.parse("https://example.org/ark:/12345/x6-np1wh8k/c3").base
        'ark:12345/x6np1wh8k'
        """
        return _split_after_naan(self._key)[0] + self._normalized_name()

    @property
    def check_zone(self) -> str:
        """The string a NOID check character covers: normalized ``NAAN/Name`` (the last character of the
        Name being the check character itself, when there is one).

        >>> Ark.parse("https://n2t.net/ark:/13030/c7x921j3h/s1.pdf").check_zone
        '13030/c7x921j3h'
        """
        head = _split_after_naan(self._key)[0]
        return head[len(LABEL) :] + self._normalized_name()

    @property
    def check_char(self) -> str:
        """The last character of the normalized Name: the check character, *if* the ARK has one.

        >>> Ark.parse("ark:13030/c7x921j3h").check_char
        'h'
        """
        return self._normalized_name()[-1]

    @property
    def check_ok(self) -> bool:
        """Whether :attr:`check_char` is the NCDA check character of the rest of :attr:`check_zone`.

        Only meaningful for ARKs minted with a NOID ``k`` template; about 1 in 29 other ARKs verify by
        chance.

        >>> Ark.parse("ark:/13030/c7x921j3h").check_ok, Ark.parse("ark:/13030/c7x921j3k").check_ok
        (True, False)
        """
        return _ncda_verify(self.check_zone)

    @property
    def shared_naan(self) -> SharedNaan | None:
        """The :data:`SHARED_NAANS` entry for this ARK's NAAN, or ``None``.

        >>> Ark.parse("ark:99999/fk4x").shared_naan.meaning
        'test ids'
        """
        return SHARED_NAANS.get(self.check_zone.split("/", 1)[0])

    @property
    def shared_naan_meaning(self) -> str | None:
        """``"examples"``, ``"terms"``, ``"agents"`` or ``"test ids"`` for a shared NAAN, else ``None``.

        >>> Ark.parse("ark:12345/x6np1wh8k").shared_naan_meaning
        'examples'
        >>> Ark.parse("ark:13030/c7x921j3h").shared_naan_meaning is None
        True
        """
        shared = self.shared_naan
        return None if shared is None else shared.meaning

    # --- containment and resolution ---

    def ancestors(self) -> tuple[Ark, ...]:
        """The ARKs that contain this one (§2.5), longest first, each normalized.

        Every ancestor is the normalized ARK cut just before one of its qualifier's structural
        characters, so variants are peeled off first (right to left), then components, and the Base
        Compact Name comes last (§2.5.1: ``ark:12345/x54/xz/321`` implies ``…/x54/xz`` and ``…/x54``;
        §2.5.2: ``ark:12345/x54.v18.fr.odf`` implies ``….v18.fr``, ``….v18`` and ``…/x54``).  This is
        the order a resolver tries for suffix passthrough.

        >>> [str(a) for a in Ark.parse("ark:12345/x6np1wh8k/c3/s5.v7.xsl").ancestors()]
        ['ark:12345/x6np1wh8k/c3/s5.v7', 'ark:12345/x6np1wh8k/c3/s5', 'ark:12345/x6np1wh8k/c3', 'ark:12345/x6np1wh8k']
        >>> Ark.parse("ark:12345/x6np1wh8k").ancestors()
        ()
        """  # noqa: E501
        head, rest = _split_after_naan(self._key)
        naan = head[len(LABEL) : -1]
        name_len = len(self._normalized_name())
        out: list[Ark] = []
        for i in range(len(rest) - 1, name_len - 1, -1):
            if rest[i] in STRUCTURAL:
                # A normalized ARK cut before a structural character is itself normalized: no re-parse.
                out.append(Ark._normalized(naan, rest[:i], name_len))
        return tuple(out)

    @classmethod
    def _normalized(cls, naan: str, rest: str, name_len: int) -> Ark:
        """Build an Ark from the parts of an already normalized ARK (internal; no validation)."""
        self = object.__new__(cls)
        text = f"{LABEL}{naan}/{rest}"
        for slot, value in (
            ("_text", text),
            ("_nma", None),
            ("_label", LABEL),
            ("_naan", naan),
            ("_rest", rest),
            ("_name_end", name_len),
            ("_query", ""),
            ("_key", text),
        ):
            object.__setattr__(self, slot, value)
        return self

    def to_url(self, resolver: str = DEFAULT_RESOLVER) -> str:
        """A Mapping ARK: ``resolver`` (a base URL; a missing final '/' is added) + the compact form.

        >>> Ark.parse("ark:/12345/x6np1wh8k").to_url()
        'https://n2t.net/ark:12345/x6np1wh8k'
        >>> Ark.parse("ark:12345/x6np1wh8k").to_url("https://example.org/rslvr")
        'https://example.org/rslvr/ark:12345/x6np1wh8k'
        """
        if not resolver.endswith("/"):
            resolver += "/"
        return resolver + self.compact

    # --- value protocol (equality, hashing, ordering, immutability, pickling, pydantic: pidkit._value) ---

    def _cmp_key(self) -> str:
        return self._key  # the §3.2 normalized form

    def _repr_text(self) -> str:
        return self._text  # as given: Ark(repr text) keeps the NMA, label form and inflection

    def __str__(self) -> str:
        return self.compact
