"""ARKs (draft-kunze-ark-40): parsing, anatomy, normalization and containment.

The value type is :class:`Ark` (defined in :mod:`pidkit.ark.syntax`); NOID check characters, templates
and minters are in :mod:`pidkit.ark.noid` (public name :mod:`pidkit.noid`); the character rules in
:mod:`pidkit.ark.chars`.

>>> from pidkit.ark import Ark, normalize
>>> Ark.parse("ark:/12345/x6np1wh8k") == Ark.parse("https://example.com/ark:12345/x6np1wh8k")
True
>>> normalize("ark:12345/x5-4-xz-321")
'ark:12345/x54xz321'
"""

from __future__ import annotations

from .syntax import (
    DEFAULT_RESOLVER,
    INFLECTIONS,
    MAX_LENGTH,
    SHARED_NAANS,
    Ark,
    SharedNaan,
    clean_pasted,
    normalize,
)

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
