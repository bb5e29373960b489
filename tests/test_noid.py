"""pidkit.noid: NCDA vectors, NOID template sequences, minters that never mint twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pidkit import noid
from pidkit.errors import ExhaustedError, NoidError, PidkitError
from pidkit.noid import Minter, Template, check_char, verify

DATA = Path(__file__).parent / "data" / "vectors"
ALPHABET = "0123456789bcdfghjkmnpqrstvwxz"  # written out from NOID 0.424, not imported


def _ncda_vectors() -> list[tuple[str, str, str]]:
    rows = []
    for line in (DATA / "ncda.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        value, expected, source = line.split("\t")
        rows.append((value, expected, source))
    return rows


NCDA = _ncda_vectors()
CHECK_VECTORS = [(v, e) for v, e, _ in NCDA if e not in ("valid", "invalid")]
VERIFY_VECTORS = [(v, e == "valid") for v, e, _ in NCDA if e in ("valid", "invalid")]


def reference_check_char(zone: str) -> str:
    """NCDA written directly from the NOID documentation's description (slow, obviously right)."""
    total = 0
    for position, char in enumerate(zone, start=1):
        ordinal = ALPHABET.index(char) if char in ALPHABET else 0
        total += ordinal * position
    return ALPHABET[total % 29]


def test_vector_file_is_not_empty() -> None:
    assert len(CHECK_VECTORS) >= 2
    assert len(VERIFY_VECTORS) >= 5


@pytest.mark.parametrize(("zone", "expected"), CHECK_VECTORS, ids=[z for z, _ in CHECK_VECTORS])
def test_check_char_vectors(zone: str, expected: str) -> None:
    assert check_char(zone) == expected
    assert verify(zone + expected)


@pytest.mark.parametrize(("full", "valid"), VERIFY_VECTORS, ids=[f for f, _ in VERIFY_VECTORS])
def test_verify_vectors(full: str, valid: bool) -> None:
    assert verify(full) is valid


def test_worked_example_sum_891() -> None:
    # NOID 0.424: 13030/xf93gt2 -> sum 891, 891 mod 29 = 21 -> 'q'
    assert 891 % 29 == 21
    assert ALPHABET[21] == "q" == check_char("13030/xf93gt2")


@pytest.mark.parametrize("bad", ["", "x", "13030/xf93gt2", "13030/xf93gt2Q", "x" * 70000])
def test_verify_rejects(bad: str) -> None:
    assert verify(bad) is False


def test_check_char_counts_non_alphabet_characters_as_zero_but_keeps_their_position() -> None:
    assert check_char("/") == "0"
    assert check_char("é1") == ALPHABET[2]  # '1' at position 2
    assert check_char("L1") == ALPHABET[2]  # 'L' is not in the alphabet


def test_check_char_bounded() -> None:
    with pytest.raises(NoidError):
        check_char("0" * 70000)


@given(st.text(max_size=80))
def test_check_char_matches_reference(zone: str) -> None:
    assert check_char(zone) == reference_check_char(zone)


@given(st.text(max_size=80))
def test_verify_matches_reference(full: str) -> None:
    assert verify(full) == (len(full) >= 2 and reference_check_char(full[:-1]) == full[-1])


@given(st.text(alphabet=ALPHABET, min_size=1, max_size=27), st.data())
def test_ncda_detects_single_substitutions(zone: str, data: st.DataObject) -> None:
    full = zone + check_char(zone)
    i = data.draw(st.integers(0, len(full) - 1))
    replacement = data.draw(st.sampled_from(ALPHABET).filter(lambda c: c != full[i]))
    assert not verify(full[:i] + replacement + full[i + 1 :])


@given(st.text(alphabet=ALPHABET, min_size=2, max_size=27), st.data())
def test_ncda_detects_adjacent_transpositions(zone: str, data: st.DataObject) -> None:
    full = zone + check_char(zone)
    i = data.draw(st.integers(0, len(full) - 2))
    assume(full[i] != full[i + 1])
    swapped = full[:i] + full[i + 1] + full[i] + full[i + 2 :]
    assert not verify(swapped)


# --- templates -----------------------------------------------------------------------------------------


def test_tutorial_sequence_s_zd() -> None:
    t = Template.parse("s.zd")
    assert [t.id_at(i) for i in range(12)] == [
        "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
    ]  # fmt: skip
    assert t.id_at(99) == "s99"
    assert t.id_at(100) == "s100"


def test_tutorial_sequence_zeee() -> None:
    t = Template.parse(".zeee")
    head = [t.id_at(i) for i in range(31)]
    assert head[:3] == ["000", "001", "002"]
    assert head[9:12] == ["009", "00b", "00c"]
    assert head[28:31] == ["00z", "010", "011"]
    assert t.id_at(29**3 - 1) == "zzz"
    assert t.id_at(29**3) == "1000"
    assert t.id_at(29**4) == "10000"


def test_tutorial_template_f5_reedeedk() -> None:
    # NOID tutorial: a minter "13030/f5.reedeedk" produced 13030/f54x54g11.
    t = Template.parse("f5.reedeedk")
    ordinal = t.ordinal_of("f54x54g11", "13030")
    assert t.id_at(ordinal, naan="13030") == "f54x54g11"
    # d positions hold 0-9, e positions the 29 extended digits: 4 x 5 4 g 1 = e e d e e d
    expected = ((((4 * 29 + ALPHABET.index("x")) * 10 + 5) * 29 + 4) * 29 + ALPHABET.index("g")) * 10 + 1
    assert ordinal == expected


@pytest.mark.parametrize(
    ("text", "prefix", "mask", "generator", "has_check", "capacity"),
    [
        ("fk4.reedeedk", "fk4", "reedeedk", "r", True, 29 * 29 * 10 * 29 * 29 * 10),
        ("s.zd", "s", "zd", "z", False, None),
        (".zeee", "", "zeee", "z", False, None),
        ("sddd", "", "sddd", "s", False, 1000),
        ("b5.rdk", "b5", "rdk", "r", True, 10),
        ("x~y.sed", "x~y", "sed", "s", False, 290),
    ],
)
def test_template_parts(
    text: str, prefix: str, mask: str, generator: str, has_check: bool, capacity: int | None
) -> None:
    t = Template.parse(text)
    assert (t.prefix, t.mask, t.generator, t.has_check, t.capacity) == (
        prefix, mask, generator, has_check, capacity,
    )  # fmt: skip
    assert str(t) == text
    assert eval(repr(t), {"Template": Template}) == t
    assert hash(t) == hash(Template.parse(text))


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("", None),
        ("fk4.", 5),
        ("fk4.xeed", 5),
        ("fk4.r", 6),
        ("fk4.rk", 6),
        ("fk4.reekd", 8),
        ("fk4.reeq", 8),
        ("f/k.reed", 2),
        ("f k.reed", 2),
        ("fk4.REED", 5),
    ],
)
def test_template_errors(text: str, position: int | None) -> None:
    with pytest.raises(NoidError) as info:
        Template.parse(text)
    assert info.value.position == position
    assert info.value.text == text


def test_template_is_immutable() -> None:
    t = Template.parse(".sd")
    with pytest.raises(AttributeError):
        t._text = "x"
    for slot in ("_text", "_places", "_digits"):
        with pytest.raises(AttributeError, match="immutable"):
            delattr(t, slot)
    assert (str(t), t.capacity) == (".sd", 10)
    assert hash(t) == hash(Template.parse(".sd"))
    with pytest.raises(TypeError):
        Template()  # type: ignore[call-arg]


def test_id_at_out_of_range() -> None:
    with pytest.raises(NoidError, match="capacity"):
        Template.parse(".sd").id_at(10)
    with pytest.raises(NoidError, match="negative"):
        Template.parse(".sd").id_at(-1)


def test_check_without_naan_covers_the_id_alone() -> None:
    t = Template.parse("b.sdk")
    assert t.id_at(3) == "b3" + reference_check_char("b3")
    assert t.id_at(3, naan="12345") == "b3" + reference_check_char("12345/b3")


@pytest.mark.parametrize(
    ("template", "bad"),
    [(".sdd", "1"), (".sdd", "123"), (".sdd", "1b"), (".zd", "05"), ("x.sd", "y1"), (".sdk", "10")],
)
def test_ordinal_of_rejects(template: str, bad: str) -> None:
    with pytest.raises(NoidError):
        Template.parse(template).ordinal_of(bad)


TEMPLATES = ["fk4.reedeedk", ".sdd", "s.zd", ".zeee", "b.zedk", "q.sdedek"]


@given(st.sampled_from(TEMPLATES), st.integers(0, 10**9), st.sampled_from(["", "99999", "13030"]))
def test_ordinal_of_inverts_id_at(template: str, ordinal: int, naan: str) -> None:
    t = Template.parse(template)
    if t.capacity is not None:
        ordinal %= t.capacity
    new_id = t.id_at(ordinal, naan)
    assert t.ordinal_of(new_id, naan) == ordinal
    if t.has_check:
        assert verify(f"{naan}/{new_id}" if naan else new_id)


def test_unbounded_ids_never_repeat_and_sort_by_length_then_text() -> None:
    t = Template.parse(".zd")
    ids = [t.id_at(i) for i in range(2000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids, key=lambda s: (len(s), s))


# --- minters -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("template", [".rd", ".rdd", ".re", ".rde", "x.redk", ".rddd"])
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**64 - 1])
def test_random_minter_covers_the_capacity_exactly_once(template: str, seed: int) -> None:
    m = Minter(template, "99999", seed=seed)
    capacity = m.capacity
    assert capacity is not None
    ordinals = [m.ordinal_for(c) for c in range(capacity)]
    assert sorted(ordinals) == list(range(capacity))
    ids = [m.mint_at(c) for c in range(capacity)]
    assert len(set(ids)) == capacity
    assert m.exhausted(capacity)
    with pytest.raises(ExhaustedError, match="exhausted"):
        m.mint_at(capacity)


def test_random_minter_is_not_the_identity_and_depends_on_the_seed() -> None:
    a = [Minter(".rddd", "", seed=1).ordinal_for(c) for c in range(50)]
    b = [Minter(".rddd", "", seed=2).ordinal_for(c) for c in range(50)]
    assert a != list(range(50))
    assert a != b
    assert a == [Minter(".rddd", "", seed=1).ordinal_for(c) for c in range(50)]


@settings(max_examples=30)
@given(st.integers(0, 2**64 - 1), st.integers(0, 70728100 - 500))
def test_random_minter_large_capacity_distinct_and_verifying(seed: int, start: int) -> None:
    m = Minter(Template.parse("fk4.reedeedk"), "99999", seed=seed)
    ids = [m.mint_at(c) for c in range(start, start + 500)]
    assert len(set(ids)) == 500
    assert all(verify("99999/" + i) for i in ids)
    assert all(i.startswith("fk4") and len(i) == 10 for i in ids)


def test_huge_capacity_template() -> None:
    m = Minter(".r" + "e" * 40 + "k", "12345", seed=9)
    ids = {m.mint_at(c) for c in range(200)}
    assert len(ids) == 200
    assert all(verify("12345/" + i) for i in ids)


def test_sequential_minters_use_the_counter_as_ordinal() -> None:
    m = Minter("s.zd", "12345")
    assert [m.mint_at(c) for c in (0, 9, 10)] == ["s0", "s9", "s10"]
    assert m.ordinal_for(123456) == 123456
    assert not m.exhausted(10**30)
    assert m.remaining(5) is None
    s = Minter(".sdd", "")
    assert s.remaining(40) == 60
    assert s.ordinal_for(41) == 41


def test_minter_default_seed_is_random_and_readable() -> None:
    a, b = Minter(".rddddd", ""), Minter(".rddddd", "")
    assert a.seed != b.seed
    assert Minter(".rddddd", "", seed=a.seed).mint_at(7) == a.mint_at(7)
    assert "seed=" in repr(a)


@pytest.mark.parametrize("slot", ["_template", "_naan", "_seed", "_perm"])
def test_minter_is_immutable(slot: str) -> None:
    m = Minter(".rdd", "12345", seed=3)
    first = m.mint_at(0)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(m, slot, None)
    with pytest.raises(AttributeError, match="immutable"):
        delattr(m, slot)
    assert (m.naan, m.seed, m.mint_at(0)) == ("12345", 3, first)


def test_mint_batch_skips_holds() -> None:
    m = Minter(".sd", "")
    assert m.mint_batch(0, 3, holds={"1", "2"}) == (["0", "3", "4"], 5)
    assert m.mint_batch(5, 0) == ([], 5)
    with pytest.raises(ExhaustedError):
        m.mint_batch(8, 3)


def test_mint_batch_random_with_holds_is_distinct() -> None:
    m = Minter(".rdd", "", seed=3)
    held = {m.mint_at(c) for c in range(0, 100, 3)}
    ids, counter = m.mint_batch(0, 100 - len(held), holds=held)
    assert ids == [m.mint_at(c) for c in range(100) if c % 3]
    assert counter == 99  # counter 99 is held and not needed: the batch stops after counter 98
    assert set(ids).isdisjoint(held)
    assert len(set(ids)) == len(ids) == 100 - len(held)


@pytest.mark.parametrize("naan", ["1234L", "12 45", "ABC"])
def test_minter_rejects_bad_naan(naan: str) -> None:
    with pytest.raises(NoidError):
        Minter(".sd", naan)


def test_minter_errors_are_pidkit_errors() -> None:
    with pytest.raises(PidkitError):
        Minter(".sd", "").ordinal_for(-1)
    with pytest.raises(PidkitError):
        Minter("bad", "")


def test_public_names() -> None:
    assert noid.ALPHABET == ALPHABET
    assert {"Template", "Minter", "check_char", "verify"} <= set(noid.__all__)


def _reference_permutation(size: int, seed: int, x: int) -> int:
    """The documented construction (``pidkit.ark.noid._FeistelPermutation``), written out independently."""
    m64 = 2**64 - 1
    phi = 0x9E3779B97F4A7C15

    def splitmix64(z: int) -> int:
        z &= m64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
        return z ^ (z >> 31)

    keys = [splitmix64(seed * 8 + r + phi) for r in range(8)]
    bits = max(2, (size - 1).bit_length())
    hi_bits, lo_bits = bits // 2, bits - bits // 2

    def f(v: int, k: int, width: int) -> int:
        top: int = (((v + k) * phi) % 2**64) // 2 ** (64 - width)
        return top

    while True:
        left, right = divmod(x, 2**lo_bits)
        for i in range(4):
            left ^= f(right, keys[2 * i], hi_bits)
            right ^= f(left, keys[2 * i + 1], lo_bits)
        x = left * 2**lo_bits + right
        if x < size:
            return x


@pytest.mark.parametrize("template", [".rd", ".rdd", "fk4.reedeedk", ".reeeeeeeeeeeeeeeeeeeeeeeeeek"])
@given(seed=st.integers(0, 2**64 - 1), counter=st.integers(0, 10**6))
def test_random_order_is_the_documented_permutation(template: str, seed: int, counter: int) -> None:
    # Stored minters keep only (seed, counter): the permutation must never change.
    m = Minter(template, "99999", seed=seed)
    assert m.capacity is not None
    counter %= m.capacity
    assert m.ordinal_for(counter) == _reference_permutation(m.capacity, seed, counter)


def test_templates_order_by_text() -> None:
    a, b = Template.parse("a.sd"), Template.parse("b.sd")
    assert a < b
    assert b > a
    assert a <= Template.parse("a.sd")
    assert sorted([b, a]) == [a, b]


@given(
    bits=st.integers(2, 300),  # halves up to 150 bits: the inlined path and the wide one
    seed=st.integers(0, 2**64 - 1),
    data=st.data(),
)
def test_fast_walk_equals_the_plain_walk(bits: int, seed: int, data: st.DataObject) -> None:
    # The permutation is written twice: F inlined (halves of at most 64 bits) and the plain loop that
    # calls F; they must agree wherever both apply (issue 12: a fast twin is kept only with this test).
    from pidkit.ark.noid import _FeistelPermutation

    size = data.draw(st.integers(2 ** (bits - 1) + 1, 2**bits))
    perm = _FeistelPermutation(size, seed)
    for _ in range(5):
        x = data.draw(st.integers(0, size - 1))
        assert perm(x) == perm.walk_plain(x)
        assert perm(x) < size


def test_minter_naan_checked_by_the_ark_rule() -> None:
    with pytest.raises(PidkitError, match="NAAN must be betanumeric") as info:
        Minter(".sd", "12l45")
    assert info.value.position == 3
    assert Minter(".sd", "").naan == ""  # no NAAN: the check characters cover the id alone
