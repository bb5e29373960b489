"""``pidkit.noid``, the public name of :mod:`pidkit.ark.noid` (NOID check characters, templates and
minters live with the ARK code).

>>> from pidkit import noid
>>> noid.check_char("13030/xf93gt2")
'q'
"""

from __future__ import annotations

from .ark.noid import ALPHABET, DIGIT_RADIX, GENERATORS, Minter, Template, check_char, verify

__all__ = ["ALPHABET", "DIGIT_RADIX", "GENERATORS", "Minter", "Template", "check_char", "verify"]
