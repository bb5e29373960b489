"""NOID: the NCDA check character, templates and minters that never mint twice.

Three pieces, all pure (no files, no database — the store owns persistence):

* **NCDA** (NOID Check Digit Algorithm, NOID 0.424): :func:`check_char` and :func:`verify`.  Over the
  betanumeric alphabet ``0123456789bcdfghjkmnpqrstvwxz`` (R = 29, :data:`pidkit.codecs.BETANUMERIC`):
  multiply each character's ordinal by its 1-based position (characters outside the alphabet count 0 but
  still take a position), sum, and take ``alphabet[sum mod 29]``.  It detects every single-character error
  and every transposition of two adjacent characters within zones shorter than 29 characters.
* **Templates** ``prefix.mask`` with mask ``[rsz][de]+k?`` (:class:`Template`): ``r`` random order, ``s``
  sequential, ``z`` sequential and unbounded; ``d`` a digit (10), ``e`` an extended digit (29); ``k`` a
  final NCDA check character computed over ``NAAN/`` + the id.  :meth:`Template.id_at` is the deterministic
  ordinal → id mapping.
* **Minters** (:class:`Minter`): a counter → ordinal → id.  Sequential templates use the counter as the
  ordinal; random (``r``) templates walk a keyed full-period permutation of ``[0, capacity)``, so a minter
  is its ``(template, naan, seed)`` plus one integer counter, never repeats and never retries.

>>> check_char("13030/xf93gt2")
'q'
>>> verify("13030/xf93gt2q")
True
>>> t = Template.parse("fk4.reedeedk")
>>> t.capacity
70728100
>>> t.id_at(0, naan="99999")[:-1]
'fk4000000'
>>> verify("99999/" + t.id_at(0, naan="99999"))
True
>>> m = Minter(t, "99999", seed=42)
>>> ids = [m.mint_at(c) for c in range(3)]
>>> len(set(ids)), all(verify("99999/" + i) for i in ids)
(3, True)
"""

from __future__ import annotations

import secrets
from collections.abc import Container
from itertools import accumulate
from typing import Final, Literal

from .._value import OrderedValue
from ..codecs import BETANUMERIC, BETANUMERIC_VALUE
from ..errors import ArkError, ExhaustedError, NoidError
from .chars import NAME_CHARS, check_naan

__all__ = [
    "ALPHABET",
    "DIGIT_RADIX",
    "GENERATORS",
    "Minter",
    "Template",
    "check_char",
    "verify",
]

#: NCDA alphabet (NOID 0.424 "extended digits"); defined once in :mod:`pidkit.codecs`.
ALPHABET: Final = BETANUMERIC
_R: Final = len(ALPHABET)  # 29, a prime: what makes NCDA catch every single error and adjacent transposition

# --- NCDA ---------------------------------------------------------------------------------------------
# Table-driven, no per-character Python bytecode: the zone is encoded to bytes (one byte per character;
# non-ASCII becomes "?", which counts 0), bytes.translate maps every byte to its ordinal (0 for
# characters outside the alphabet), and the weighted sum  sum(ordinal_i * i)  is computed in C as the sum
# of the running totals of the reversed ordinals (ordinal_i appears in exactly i of them).
_ORDINAL_TABLE: Final = bytes(BETANUMERIC_VALUE.get(chr(b), 0) for b in range(256))
_MAX_ZONE: Final = 1 << 16


def check_char(zone: str) -> str:
    """The NCDA check character of ``zone`` (NOID 0.424, "NOID Check Digit Algorithm").

    ``zone`` is the string the check character protects, by convention ``NAAN/`` + the id
    (e.g. ``13030/xf93gt2``).  Characters outside the alphabet (``/``, uppercase letters, …) contribute 0
    but still occupy a position.

    >>> check_char("13030/xf93gt2")  # the NOID documentation's worked example: sum 891, 891 mod 29 = 21
    'q'
    >>> check_char("")
    '0'
    """
    if len(zone) > _MAX_ZONE:
        raise NoidError(f"check zone longer than {_MAX_ZONE} characters", text=zone)
    raw = zone.encode() if zone.isascii() else zone.encode("ascii", "replace")
    return ALPHABET[sum(accumulate(raw.translate(_ORDINAL_TABLE)[::-1])) % _R]


def verify(id: str) -> bool:
    """Whether the last character of ``id`` is the NCDA check character of the rest.

    ``id`` is a full check zone including its check character, e.g. ``13030/xf93gt2q``.  Never raises:
    anything too short or too long is simply not valid.

    >>> verify("13030/f54x54g11")
    True
    >>> verify("13030/f54x45g11")  # adjacent transposition
    False
    >>> verify("")
    False
    """
    if not 2 <= len(id) <= _MAX_ZONE:
        return False
    raw = id.encode() if id.isascii() else id.encode("ascii", "replace")
    # the same sum as check_char, over every character but the last (reversed, skipping the last)
    return ALPHABET[sum(accumulate(raw.translate(_ORDINAL_TABLE)[-2::-1])) % _R] == id[-1]


# --- templates -----------------------------------------------------------------------------------------

#: Generator (first mask character): r = random order, s = sequential, z = sequential and unbounded.
GENERATORS: Final = frozenset("rsz")
#: Mask digit types and their radix: d = decimal digit, e = extended (betanumeric) digit.
DIGIT_RADIX: Final[dict[str, int]] = {"d": 10, "e": _R}
#: Optional final mask character: append an NCDA check character.
CHECK_MASK_CHAR: Final = "k"
#: Characters allowed in a template prefix: those an ARK Name may use without reserved meaning
#: (draft-kunze-ark-40 §3.1: letters, digits and ``= ~ * + @ _ $``).
PREFIX_CHARS: Final = NAME_CHARS
_MAX_TEMPLATE: Final = 256

Generator = Literal["r", "s", "z"]


class Template(OrderedValue):
    """A NOID template ``prefix.mask``, mask ``[rsz][de]+k?`` (immutable; ordered and hashed by its text).

    ``id_at(ordinal)`` writes ``ordinal`` in the mixed radix the mask describes (``d`` = 10, ``e`` = 29,
    most significant first) after the prefix, then appends the check character for a ``k`` mask.  For a
    ``z`` (unbounded) mask the leftmost mask character is repeated as often as the ordinal needs, so
    ``.zd`` gives ``0 … 9, 10 … 99, 100 …`` and ``.zeee`` gives ``000 … zzz, 1000 …``.

    >>> t = Template.parse("s.zd")
    >>> [t.id_at(i) for i in (0, 9, 10, 99, 100)]
    ['s0', 's9', 's10', 's99', 's100']
    >>> t.capacity is None
    True
    >>> Template.parse("fk4.reedeedk")
    Template('fk4.reedeedk')
    """

    __slots__ = ("_check", "_digits", "_fixed", "_generator", "_places", "_prefix", "_text")

    _text: str
    _prefix: str
    _generator: Generator
    _digits: tuple[int, ...]
    _check: bool
    _fixed: int  # how many ids the mask holds at its written length
    _places: tuple[tuple[int, int], ...]  # (place value, radix) per mask position, most significant first

    @classmethod
    def parse(cls, text: str) -> Template:
        """Parse ``prefix.mask`` (the prefix and its dot may be omitted).

        >>> Template.parse(".zeee").mask
        'zeee'
        >>> Template.parse("f.xeed")
        Traceback (most recent call last):
        ...
        pidkit.errors.NoidError: mask must start with a generator r, s or z, not 'x' in 'f.xeed' at position 3
        """
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        if not text:
            raise NoidError("empty template", text=text)
        if len(text) > _MAX_TEMPLATE:
            raise NoidError(f"template longer than {_MAX_TEMPLATE} characters", text=text)
        dot = text.rfind(".")
        prefix, mask = text[: max(dot, 0)], text[dot + 1 :]
        for i, c in enumerate(prefix, 1):
            if c not in PREFIX_CHARS:
                raise NoidError(f"character {c!r} not allowed in a template prefix", text=text, position=i)
        base = dot + 2  # 1-based position of the mask's first character
        if not mask:
            raise NoidError("empty mask (expected [rsz][de]+k?)", text=text, position=base)
        if mask[0] not in GENERATORS:
            raise NoidError(
                f"mask must start with a generator r, s or z, not {mask[0]!r}", text=text, position=base
            )
        body = mask[1:]
        has_check = body.endswith(CHECK_MASK_CHAR)
        if has_check:
            body = body[:-1]
        if not body:
            raise NoidError(
                "mask needs at least one d or e after the generator", text=text, position=base + 1
            )
        for i, c in enumerate(body, base + 1):
            if c not in DIGIT_RADIX:
                hint = " (k only at the end)" if c == CHECK_MASK_CHAR else ""
                raise NoidError(f"mask character {c!r} is not d or e{hint}", text=text, position=i)
        self = object.__new__(cls)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_generator", mask[0])
        object.__setattr__(self, "_digits", tuple(DIGIT_RADIX[c] for c in body))
        object.__setattr__(self, "_check", has_check)
        digits = self._digits
        places, place = [], 1
        for radix in reversed(digits):
            places.append((place, radix))
            place *= radix
        object.__setattr__(self, "_fixed", place)
        object.__setattr__(self, "_places", tuple(reversed(places)))
        return self

    # --- views ---

    @property
    def prefix(self) -> str:
        """The literal prefix before the mask (``"fk4"`` in ``fk4.reedeedk``; may be empty).

        >>> Template.parse("fk4.reedeedk").prefix
        'fk4'
        """
        return self._prefix

    @property
    def mask(self) -> str:
        """The mask, generator included (``"reedeedk"``).

        >>> Template.parse("fk4.reedeedk").mask
        'reedeedk'
        """
        return self._text[len(self._text) - len(self._digits) - 1 - self._check :]

    @property
    def generator(self) -> Generator:
        """``"r"`` (random order), ``"s"`` (sequential) or ``"z"`` (sequential, unbounded).

        >>> Template.parse("x.sddd").generator
        's'
        """
        return self._generator

    @property
    def has_check(self) -> bool:
        """Whether ids end with an NCDA check character (mask ends in ``k``).

        >>> Template.parse(".zdk").has_check
        True
        """
        return self._check

    @property
    def capacity(self) -> int | None:
        """How many ids the template can make: the product of the radixes, or ``None`` for ``z``.

        >>> Template.parse(".rde").capacity
        290
        """
        return None if self._generator == "z" else self._fixed

    # --- ordinal <-> id ---

    def id_at(self, ordinal: int, naan: str = "") -> str:
        """The id with number ``ordinal`` (0-based) in this template's order.

        With a ``k`` mask the check character is computed over ``naan + "/" + id`` when ``naan`` is given
        (the NOID convention: the check zone starts at the NAAN), and over the id alone when it is not.

        >>> t = Template.parse(".zeee")
        >>> [t.id_at(i) for i in (0, 1, 28, 29, 24388, 24389)]
        ['000', '001', '00z', '010', 'zzz', '1000']
        >>> t = Template.parse("f5.reedeedk")  # the NOID tutorial's template: 13030/f54x54g11
        >>> t.id_at(t.ordinal_of("f54x54g11", "13030"), naan="13030")
        'f54x54g11'
        """
        if not isinstance(ordinal, int) or isinstance(ordinal, bool):
            raise TypeError(f"ordinal must be an int, got {type(ordinal).__name__}")
        if ordinal < 0:
            raise NoidError(f"negative ordinal {ordinal}", text=self._text)
        if ordinal < self._fixed:  # mixed radix, most significant first
            body = "".join([ALPHABET[ordinal // place % radix] for place, radix in self._places])
        elif self._generator != "z":
            message = f"ordinal {ordinal} outside the template's capacity {self._fixed}"
            raise NoidError(message, text=self._text)
        else:  # z: the leftmost mask character repeats as the id grows
            high, low = divmod(ordinal, self._fixed)
            radix, grown = self._digits[0], []
            while high:
                high, digit = divmod(high, radix)
                grown.append(ALPHABET[digit])
            body = "".join(reversed(grown)) + "".join(
                [ALPHABET[low // place % r] for place, r in self._places]
            )
        out = self._prefix + body
        if self._check:
            out += check_char(f"{naan}/{out}" if naan else out)
        return out

    def ordinal_of(self, id: str, naan: str = "") -> int:
        """The ordinal ``id`` has in this template (inverse of :meth:`id_at`); raises :class:`NoidError`.

        >>> t = Template.parse("fk4.reedeedk")
        >>> t.ordinal_of(t.id_at(123456, "99999"), "99999")
        123456
        >>> Template.parse(".zd").ordinal_of("07")
        Traceback (most recent call last):
        ...
        pidkit.errors.NoidError: leading '0' in a grown unbounded id in '07' at position 1
        """
        if not id.startswith(self._prefix):
            raise NoidError(f"id does not start with the template prefix {self._prefix!r}", text=id)
        body = id[len(self._prefix) :]
        start = len(self._prefix) + 1
        if self._check:
            if not body:
                raise NoidError("id has no check character", text=id)
            zone = f"{naan}/{id}" if naan else id
            if not verify(zone):
                raise NoidError("check character does not verify", text=id, position=len(id))
            body = body[:-1]
        width = len(self._digits)
        if len(body) < width or (len(body) > width and self._generator != "z"):
            raise NoidError(f"expected {width} mask characters after the prefix, got {len(body)}", text=id)
        extra = len(body) - width
        if extra and body[0] == "0":
            raise NoidError("leading '0' in a grown unbounded id", text=id, position=start)
        radixes = (self._digits[0],) * extra + self._digits
        value = 0
        for i, (c, radix) in enumerate(zip(body, radixes, strict=True), start):
            digit = BETANUMERIC_VALUE.get(c)
            if digit is None or digit >= radix:
                kind = "digit" if radix == 10 else "extended digit"
                raise NoidError(f"{c!r} is not a {kind}", text=id, position=i)
            value = value * radix + digit
        return value

    # --- value protocol (equality, hashing, ordering, immutability, pickling: pidkit._value) ---

    def _cmp_key(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text


# --- minters -------------------------------------------------------------------------------------------

_ROUNDS: Final = 4  # each round updates both halves, i.e. 8 Feistel half-rounds
_M64: Final = (1 << 64) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15  # odd 64-bit multiplier (2**64 / golden ratio)


def _mix64(x: int) -> int:
    """SplitMix64 finalizer: a 64-bit mixing function (used to derive round keys from the seed)."""
    x &= _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class _FeistelPermutation:
    """A keyed bijection on ``[0, size)``: an unbalanced Feistel network on ``bits`` bits, cycle-walked.

    ``x`` is split into a high part ``L`` (``bits // 2`` bits) and a low part ``R`` (the rest); each round
    does ``L ^= F(R)`` then ``R ^= F(L)`` (each step undoes itself, so the whole is a permutation of
    ``[0, 2**bits)`` whatever ``F`` is).  Applying it until the value falls below ``size`` ("cycle
    walking") restricts it to a permutation of ``[0, size)``; as ``2**bits < 2·size`` the expected number
    of walks is below 2.  ``F`` is a keyed multiplicative hash (the top bits of ``(v + key)·φ mod 2**64``),
    widened with SplitMix64 for halves over 64 bits (templates with more than 2**128 ids).  The round
    keys are ``k_r = splitmix64(seed·8 + r + φ)`` for ``r = 0 … 7``, round ``i`` using ``k_2i`` and
    ``k_2i+1``.

    This construction is part of every stored minter's state (the store keeps only seed and counter):
    changing it would make existing minters re-mint old ids.  ``tests/test_noid.py`` pins it against an
    independent implementation of this description.
    """

    __slots__ = ("_hi_bits", "_keys", "_lo_bits", "_pairs", "_size")

    def __init__(self, size: int, seed: int) -> None:
        bits = max(2, (size - 1).bit_length())
        self._size = size
        self._hi_bits = bits // 2
        self._lo_bits = bits - bits // 2
        self._keys = tuple(_mix64(seed * 2 * _ROUNDS + r + _GOLDEN) for r in range(2 * _ROUNDS))
        self._pairs = tuple(zip(self._keys[::2], self._keys[1::2], strict=True))

    @staticmethod
    def _f(value: int, key: int, width: int) -> int:
        if width <= 64:
            return (((value + key) * _GOLDEN) & _M64) >> (64 - width)
        out, have = 0, 0
        while have < width:  # very large domains: concatenate 64-bit mixes
            out = (out << 64) | _mix64(value ^ key ^ have)
            have += 64
        return out >> (have - width)

    def walk_plain(self, x: int) -> int:
        """The permutation as described above, ``F`` called per half-round: the reference that
        :meth:`__call__` (``F`` inlined, halves of at most 64 bits) is tested against."""
        hi_bits, lo_bits, size, f = self._hi_bits, self._lo_bits, self._size, self._f
        lo_mask = (1 << lo_bits) - 1
        while True:
            left, right = x >> lo_bits, x & lo_mask
            for k1, k2 in self._pairs:
                left ^= f(right, k1, hi_bits)
                right ^= f(left, k2, lo_bits)
            x = (left << lo_bits) | right
            if x < size:
                return x

    def __call__(self, x: int) -> int:
        hi_bits, lo_bits, size = self._hi_bits, self._lo_bits, self._size
        if lo_bits > 64:
            return self.walk_plain(x)
        # walk_plain with F inlined (at most 2**128 ids: every template in practice); equal to it by test
        lo_mask = (1 << lo_bits) - 1
        pairs = self._pairs
        hi_shift, lo_shift = 64 - hi_bits, 64 - lo_bits
        while True:
            left, right = x >> lo_bits, x & lo_mask
            for k1, k2 in pairs:
                left ^= (((right + k1) * _GOLDEN) & _M64) >> hi_shift
                right ^= (((left + k2) * _GOLDEN) & _M64) >> lo_shift
            x = (left << lo_bits) | right
            if x < size:
                return x


class Minter:
    """Mints ids from a :class:`Template` for a NAAN: counter → ordinal → id, never the same id twice.

    The minter is pure: the store persists ``(template, naan, seed, counter)`` and asks for
    ``mint_at(counter)``, then saves ``counter + 1``.  For ``s``/``z`` templates the ordinal is the counter;
    for ``r`` it is a keyed full-period permutation of ``[0, capacity)`` (a cycle-walking Feistel network
    keyed by ``seed``), so every counter below the capacity gives a different id and the whole capacity is
    used before the minter is exhausted.  ``seed`` defaults to 64 fresh random bits (read it back from
    :attr:`seed` to persist it).

    >>> m = Minter(Template.parse(".rd"), "99999", seed=7)
    >>> sorted(m.mint_at(c) for c in range(10))
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
    >>> m.exhausted(10)
    True
    """

    __slots__ = ("_naan", "_perm", "_seed", "_template")

    _template: Template
    _naan: str
    _seed: int
    _perm: _FeistelPermutation | None

    def __init__(self, template: Template | str, naan: str, *, seed: int | None = None) -> None:
        if isinstance(template, str):
            template = Template.parse(template)
        if naan:  # may be empty: then the check characters cover the id alone
            try:
                check_naan(naan)
            except ArkError as exc:
                raise NoidError(exc.message, text=naan, position=exc.position) from None
        if seed is None:
            seed = secrets.randbits(64)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise TypeError("seed must be a non-negative int")
        capacity = template.capacity
        perm = _FeistelPermutation(capacity, seed) if template.generator == "r" and capacity else None
        object.__setattr__(self, "_template", template)
        object.__setattr__(self, "_naan", naan)
        object.__setattr__(self, "_seed", seed)
        object.__setattr__(self, "_perm", perm)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"Minter(Template.parse({str(self._template)!r}), {self._naan!r}, seed={self._seed})"

    @property
    def template(self) -> Template:
        """The template.

        >>> Minter(".sd", "").template
        Template('.sd')
        """
        return self._template

    @property
    def naan(self) -> str:
        """The NAAN the check characters cover (may be empty).

        >>> Minter(".sd", "12345").naan
        '12345'
        """
        return self._naan

    @property
    def seed(self) -> int:
        """The permutation key (persist it with the counter).

        >>> Minter(".rd", "", seed=5).seed
        5
        """
        return self._seed

    @property
    def capacity(self) -> int | None:
        """The template's capacity (``None`` = unbounded).

        >>> Minter(".sdd", "").capacity
        100
        """
        return self._template.capacity

    def exhausted(self, counter: int) -> bool:
        """Whether a minter at ``counter`` has nothing left to mint.

        >>> m = Minter(".sd", "")
        >>> m.exhausted(9), m.exhausted(10), Minter(".zd", "").exhausted(10**9)
        (False, True, False)
        """
        capacity = self._template.capacity
        return capacity is not None and counter >= capacity

    def remaining(self, counter: int) -> int | None:
        """How many ids are left at ``counter`` (``None`` = unbounded), holds not counted.

        >>> Minter(".sd", "").remaining(3)
        7
        """
        capacity = self._template.capacity
        return None if capacity is None else max(0, capacity - counter)

    def ordinal_for(self, counter: int) -> int:
        """The template ordinal of the ``counter``-th mint (identity, or the keyed permutation for ``r``).

        Raises :class:`~pidkit.errors.ExhaustedError` once ``counter`` reaches the capacity.

        >>> Minter(".sdd", "").ordinal_for(42)
        42
        >>> Minter(".sd", "").ordinal_for(10)
        Traceback (most recent call last):
        ...
        pidkit.errors.ExhaustedError: minter exhausted: template '.sd' has made all 10 of its ids
        """
        if not isinstance(counter, int) or isinstance(counter, bool):
            raise TypeError(f"counter must be an int, got {type(counter).__name__}")
        if counter < 0:
            raise NoidError(f"negative counter {counter}", text=str(self._template))
        if self.exhausted(counter):
            raise ExhaustedError(
                f"minter exhausted: template {str(self._template)!r} has made all {self.capacity} of its ids"
            )
        return counter if self._perm is None else self._perm(counter)

    def mint_at(self, counter: int) -> str:
        """The id minted at ``counter``: ``template.id_at(ordinal_for(counter), naan)``.

        >>> Minter("f5.sd", "13030").mint_at(4)
        'f54'
        """
        return self._template.id_at(self.ordinal_for(counter), self._naan)

    def mint_batch(self, counter: int, n: int, holds: Container[str] = ()) -> tuple[list[str], int]:
        """Mint ``n`` ids from ``counter`` on, skipping held ids; return ``(ids, new_counter)``.

        All or nothing: if the minter runs out before ``n`` ids, :class:`~pidkit.errors.ExhaustedError`
        is raised and the caller keeps its old counter.

        >>> Minter(".sd", "").mint_batch(0, 3, holds={"1"})
        (['0', '2', '3'], 4)
        """
        if n < 0:
            raise NoidError(f"negative count {n}")
        if n:
            self.ordinal_for(counter)  # type and range checks of the first counter
        capacity, perm, id_at, naan = self.capacity, self._perm, self._template.id_at, self._naan
        ids: list[str] = []
        while len(ids) < n:
            if capacity is not None and counter >= capacity:
                raise ExhaustedError(
                    f"minter exhausted: template {str(self._template)!r} can make only {len(ids)} "
                    f"more of the {n} ids asked for"
                )
            new_id = id_at(counter if perm is None else perm(counter), naan)
            counter += 1
            if new_id not in holds:
                ids.append(new_id)
        return ids, counter
