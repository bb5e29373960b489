"""The keys the store files ids under: the canonical key of each id kind, ARK keys with their NAAN,
shoulder and ancestors, held blades, and the NOID minters behind the ``minters`` table.

The schemes' rules are their own modules' (:mod:`pidkit.ark`, :mod:`pidkit.ark.noid`, the value
types); this module asks them and shapes the answers into the store's columns.

>>> canonical("uuid", "0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F")
'0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from ..ark import Ark, noid
from ..ark.chars import STRUCTURAL
from ..ark.chars import check_naan as check_naan  # the store checks NAANs and shoulders by the ARK rules
from ..ark.chars import check_shoulder as check_shoulder
from ..ark.syntax import plain_normalized
from ..codecs import read_uuid_text, uuid_text
from ..errors import ParseError, StoreError
from ..gedcom_uid import GedcomUid
from ..llid import read_llid
from ..tid import Tid
from ..xarkid import XarkId
from .records import MinterInfo


class IdMaker(Protocol):
    """What the store needs from a NOID minter (``pidkit.noid.Minter``)."""

    def mint_at(self, counter: int) -> str: ...  # pragma: no cover - protocol

    def exhausted(self, counter: int) -> bool: ...  # pragma: no cover - protocol


@dataclass(frozen=True, slots=True)
class ArkKey:
    """A normalized ARK as the store keys it, with the parts it indexes and its ancestors' keys."""

    key: str
    naan: str
    shoulder: str | None
    ancestors: tuple[str, ...]


def ark_key(text: str) -> ArkKey:
    """Normalize ``text`` (draft-kunze-ark-40 §3.2) via ``pidkit.ark.Ark`` and return the store's key
    (a text already normalized, with a plain Name, is recognized without parsing:
    :func:`pidkit.ark.syntax.plain_normalized`).

    >>> ark_key("ark:99999/fk4x1"), ark_key("ark:/99999/fk4-x1/c") == ark_key("ark:99999/fk4x1/c")
    (ArkKey(key='ark:99999/fk4x1', naan='99999', shoulder='fk4', ancestors=()), True)
    """
    plain = plain_normalized(text)
    if plain is not None:
        return ArkKey(text, plain[0], plain[1] or None, ())

    ark = Ark.parse(text).normalize()
    shoulder = ark.shoulder or None
    return ArkKey(str(ark), str(ark.naan), shoulder, tuple(str(a) for a in ark.ancestors()))


#: The keys of the ARKs qualifying an ARK (draft-kunze-ark-40 §2.5: its Name followed by a structural
#: character, '/' or '.'; an ARK with qualifiers is contained in the ARK without them) are, in code point
#: order, those from ``key + QUALIFIED_LOW`` (inclusive) to ``key + QUALIFIED_HIGH`` (exclusive): '.' and
#: '/' are adjacent code points, so nothing else falls between.  A Name such a key begins with is given
#: out: a mint skips it (the SQL backends' ``_BOUND_OR_QUALIFIED``; tests/test_store.py shows that
#: ``fk4x1/c`` and ``fk4x1.v`` take ``fk4x1``, and ``fk4x10`` or ``fk4x1*x`` do not).
QUALIFIED_LOW: Final = min(STRUCTURAL)
QUALIFIED_HIGH: Final = chr(ord(max(STRUCTURAL)) + 1)


def passthrough_suffix(text: str, naan: str, normalized_suffix: str) -> str:
    """The rest of the ARK after a bound ancestor, spelled as the request spelled it where possible.

    Normalization (§3.2) drops hyphens and may reorder variants; the part passed through to a target is
    the requester's own text when it normalizes to the same suffix, else the normalized suffix.

    >>> passthrough_suffix("ark:/12345/x54xz321/page-2.v-1", "12345", "/page2.v1")
    '/page-2.v-1'
    >>> passthrough_suffix("ark:12345/x54.v2/c3", "12345", "/c3.v2")  # step 9 reorders; same meaning
    '.v2/c3'
    >>> passthrough_suffix("ark:12345/x54", "12345", "/c3")  # nothing to map: the normalized suffix
    '/c3'
    """
    qualifiers = Ark.parse(text).qualifiers
    structural = sum(normalized_suffix.count(c) for c in "/.")
    cut = len(qualifiers)
    for _ in range(structural):
        cut = max(qualifiers.rfind("/", 0, cut), qualifiers.rfind(".", 0, cut))
        if cut < 0:
            return normalized_suffix
    candidate = qualifiers[cut:]
    probe = Ark.parse(f"ark:{naan}/x{candidate}").normalize()
    return candidate if str(probe) == f"ark:{naan}/x{normalized_suffix}" else normalized_suffix


def uuid_key(text: str) -> str:
    """Canonical UUID (lowercase 8-4-4-4-12) of UUID text as :func:`pidkit.codecs.read_uuid_text` reads
    it — the rule ``inspect`` uses too: 32 hex digits, plain or dashed, optionally braced.

    >>> uuid_key("0e4a9c1e6b1f4c3a9d2b1a2b3c4d5e6f"), uuid_key("{0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F}")
    ('0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f', '0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f')
    """
    read = read_uuid_text(text)
    if read is None:
        raise ParseError(
            "not a UUID (32 hex digits, optionally dashed 8-4-4-4-12, optionally braced)", text=text
        )
    return uuid_text(read.value)


def llid_key(text: str) -> str:
    """A Library.Link resource id is kept as is once checked (11 base64url chars = 64 bits).

    >>> llid_key("AAAAAAAAAAA")
    'AAAAAAAAAAA'
    """
    read_llid(text)  # the one check of the shape (pidkit.llid)
    return text


def _xarkid_key(text: str) -> str:
    return str(XarkId.parse(text))


def _tid_key(text: str) -> str:
    return str(Tid.parse(text))


def _gedcom_uid_key(text: str) -> str:
    return str(GedcomUid.parse(text))


def _ark_only_key(text: str) -> str:
    return ark_key(text).key


_CANONICAL: Final[dict[str, Callable[[str], str]]] = {
    "ark": _ark_only_key,
    "xarkid": _xarkid_key,
    "tid": _tid_key,
    "gedcom-uid": _gedcom_uid_key,
    "llid": llid_key,
    "uuid": uuid_key,
}


def canonical(kind: str, text: str) -> str:
    """The canonical key of ``text`` read as ``kind`` (raises the scheme's ParseError, or StoreError for
    an unknown kind).

    >>> canonical("llid", "AAAAAAAAAAA")
    'AAAAAAAAAAA'
    >>> canonical("isbn", "x")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: unknown id kind (one of ark, xarkid, tid, gedcom-uid, llid, uuid) in 'isbn'
    """
    fn = _CANONICAL.get(kind)
    if fn is None:
        raise StoreError(f"unknown id kind (one of {', '.join(_CANONICAL)})", text=kind)
    return fn(text)


def readings(text: str) -> list[tuple[str, str]]:
    """Every ``(kind, key)`` that ``text`` can be read as.

    >>> ("llid", "AAECAwQFBgc") in readings("AAECAwQFBgc")
    True
    """
    out: list[tuple[str, str]] = []
    for kind, fn in _CANONICAL.items():
        try:
            out.append((kind, fn(text)))
        except ParseError:
            continue
    return out


def template_prefix(template: str) -> str:
    """Check a NOID template with ``pidkit.noid`` and return its prefix (the shoulder it mints on)."""
    return str(noid.Template.parse(template).prefix)


def minter_on(minters: Iterable[MinterInfo], naan: str, shoulder: str) -> MinterInfo | None:
    """The minter among ``minters`` that mints on ``shoulder`` of ``naan`` (its template's prefix), or
    ``None``: the one rule the REST API's and EZID's mint follow.

    >>> m = MinterInfo("m", "99999", "fk4.reedeedk", 7, 0)
    >>> minter_on([m], "99999", "fk4") is m, minter_on([m], "99999", "b5")
    (True, None)
    """
    return next((m for m in minters if m.naan == naan and template_prefix(m.template) == shoulder), None)


def template_shoulder(template: str, naan: str) -> str | None:
    """The ARK shoulder (draft-kunze-ark-40 §2.4.1, :attr:`pidkit.ark.Ark.shoulder`) of every id a
    NOID template mints, or ``None`` when its prefix does not fix one (then ids fall under
    several shoulders, or none).

    >>> template_shoulder("fk4.reedeedk", "99999"), template_shoulder("b.reedeedk", "99999")
    ('fk4', None)
    """
    prefix = template_prefix(template)
    if not prefix:
        return None
    return Ark.parse(f"ark:{naan}/{prefix}").normalize().shoulder or None


def check_char_problem(text: str, template: str) -> str | None:
    """What is wrong with the NOID check character of the ARK ``text`` for a minter of ``template``, or
    ``None``: only a template with a check character (``k``) whose prefix begins the ARK's normalized
    Name judges it (the minter mints on that Name's shoulder).

    >>> check_char_problem("ark:13030/c7x921j3k", "c7.reedeedk")
    "check character 'k' is wrong for template c7.reedeedk (expected 'h')"
    >>> check_char_problem("ark:13030/c7x921j3h", "c7.reedeedk"), check_char_problem("ark:13030/q1", "c7.rdk")
    (None, None)
    """
    parsed = noid.Template.parse(template)
    ark = Ark.parse(text).normalize()
    if not parsed.has_check or not ark.name.startswith(parsed.prefix) or ark.check_ok:
        return None
    expected = noid.check_char(ark.check_zone[:-1])
    return f"check character {ark.check_char!r} is wrong for template {template} (expected {expected!r})"


def blade(naan: str, text: str) -> str:
    """The id under ``naan`` that ``text`` names: a blade (``fk4x8d9m2q``) or an ARK, reduced to its
    identity by the one ARK normalization (draft-kunze-ark-40 §3.2: hyphens and hyphen-like
    characters do not count).

    >>> blade("99999", "fk4‐4x"), blade("99999", "https://n2t.net/ark:/99999/fk4-4x")
    ('fk44x', 'fk44x')
    """
    if "ark:" not in text.lower():
        text = f"ark:{naan}/{text}"
    ark = ark_key(text)
    if ark.naan != naan:
        raise StoreError(f"ARK is not under NAAN {naan}", text=text)
    name = ark.key[len(f"ark:{naan}/") :]
    if not name or "/" in name or "." in name:
        raise StoreError("not an id to hold (a blade such as fk4x8d9m2q, or an ARK)", text=text)
    return name


def make_minter(template: str, naan: str, seed: int) -> IdMaker:
    """The NOID minter for a stored minter state (the one place the store builds ids)."""
    minter: IdMaker = noid.Minter(noid.Template.parse(template), naan, seed=seed)
    return minter
