"""The ARK character rules (draft-kunze-ark-40 §2.3, §2.4.1, §3.1), each written once.

Used by the parser (:mod:`pidkit.ark.syntax`), NOID templates and minters (:mod:`pidkit.ark.noid`)
and the store (NAANs and shoulders it registers).

>>> check_naan("12345"), check_shoulder("fk4")
('12345', 'fk4')
"""

from __future__ import annotations

from typing import Final

from ..codecs import BETANUMERIC, first_bad_char
from ..errors import ArkError

__all__ = [
    "HYPHEN",
    "HYPHEN_LIKE",
    "LETTERS_DIGITS",
    "NAAN_ANY_CASE_PATTERN",
    "NAAN_AS_GIVEN_PATTERN",
    "NAAN_PATTERN",
    "NAME_CHARS",
    "PERCENT",
    "STRUCTURAL",
    "check_naan",
    "check_shoulder",
]

#: §3.1: letters, digits and seven more characters may appear in Name and Qualifiers …
LETTERS_DIGITS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
NAME_CHARS: Final = frozenset(LETTERS_DIGITS + "=~*+@_$")
#: … and four whose meanings are reserved: %-encoding, the (insignificant) hyphen, and the structural
#: characters '/' (hierarchy, §2.5.1) and '.' (variants, §2.5.2).
PERCENT: Final = "%"
HYPHEN: Final = "-"
STRUCTURAL: Final = "/."
#: §3.1 / §3.2 step 6: hyphen-like characters (U+2010 to U+2015) arrive in place of hyphens from pasted
#: text; they are accepted and removed together with hyphens.
HYPHEN_LIKE: Final = "\u2010\u2011\u2012\u2013\u2014\u2015"


#: :func:`check_naan`'s rule as a regular expression (the same in Python and ECMA-262), for what cannot
#: call it, such as the REST API's OpenAPI ``pattern``: a NAAN as a text may spell it, in any case (§3.2
#: step 4 lowercases it; :func:`check_naan` takes the lowercased form).  Built from ``BETANUMERIC``: its
#: digits as ``0-9``, then its consonants in both cases.
NAAN_ANY_CASE_PATTERN: Final = "[0-9" + BETANUMERIC[10:] + BETANUMERIC[10:].upper() + "]+"
#: The same with the hyphens and hyphen-like characters the parser reads in a NAAN and normalization
#: removes (§3.1, §3.2 steps 4 and 6): what the NAAN of an ARK as given may hold (``-`` last: literal).
NAAN_AS_GIVEN_PATTERN: Final = NAAN_ANY_CASE_PATTERN[:-2] + HYPHEN_LIKE + HYPHEN + "]+"
#: A normalized NAAN (what :func:`check_naan` returns) as a regular expression.
NAAN_PATTERN: Final = "[0-9" + BETANUMERIC[10:] + "]+"


def check_naan(naan: str) -> str:
    """A NAAN as it is registered and minted under: its normalized form (§2.3, §3.2 step 4), one or more
    betanumeric characters (digits and lowercase consonants but ``l``); kept a string, never a number.
    (:meth:`pidkit.ark.Ark.parse` also accepts uppercase and hyphens in what it reads, and normalizes.)

    >>> check_naan("12 45")
    Traceback (most recent call last):
    ...
    pidkit.errors.ArkError: NAAN must be betanumeric (0-9 and bcdfghjkmnpqrstvwxz) in '12 45' at position 3
    """
    if not naan:
        raise ArkError("empty NAAN", text=naan)
    bad = first_bad_char(naan, BETANUMERIC)
    if bad is not None:
        raise ArkError("NAAN must be betanumeric (0-9 and bcdfghjkmnpqrstvwxz)", text=naan, position=bad)
    return naan


def check_shoulder(shoulder: str) -> str:
    """A shoulder: one or more betanumeric characters (§2.4.1; by convention letters ending in a digit).

    >>> check_shoulder("fk-4")
    Traceback (most recent call last):
    ...
    pidkit.errors.ArkError: shoulder must be betanumeric in 'fk-4' at position 3
    """
    if not shoulder:
        raise ArkError("empty shoulder", text=shoulder)
    bad = first_bad_char(shoulder, BETANUMERIC)
    if bad is not None:
        raise ArkError("shoulder must be betanumeric", text=shoulder, position=bad)
    return shoulder
