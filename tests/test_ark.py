"""pidkit.ark: parse, anatomy, §3.2 normalization, containment (draft-kunze-ark-40)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pidkit.ark import MAX_LENGTH, SHARED_NAANS, Ark, clean_pasted, normalize
from pidkit.ark import syntax as ark_syntax
from pidkit.errors import ArkError, PidkitError

DATA = Path(__file__).parent / "data" / "vectors"


def _groups() -> list[list[str]]:
    groups: list[list[str]] = [[]]
    for line in (DATA / "ark_equivalence.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if groups[-1]:
                groups.append([])
            continue
        groups[-1].append(line)
    return [g for g in groups if g]


GROUPS = _groups()
EQUIVALENT = [(g[0], line) for g in GROUPS for line in g]
ANATOMY: list[dict[str, Any]] = json.loads((DATA / "ark_anatomy.json").read_text(encoding="utf-8"))["cases"]


def test_vector_files_are_not_empty() -> None:
    assert len(GROUPS) >= 3
    assert ANATOMY


@pytest.mark.parametrize(("expected", "text"), EQUIVALENT, ids=[t for _, t in EQUIVALENT])
def test_equivalence_groups_normalize_to_first_line(expected: str, text: str) -> None:
    assert normalize(text) == expected
    assert Ark.parse(text) == Ark.parse(expected)
    assert hash(Ark.parse(text)) == hash(Ark.parse(expected))
    assert str(Ark.parse(text).normalize()) == expected


def test_different_groups_differ() -> None:
    for i, a in enumerate(GROUPS):
        for b in GROUPS[i + 1 :]:
            for x in a:
                for y in b:
                    assert normalize(x) != normalize(y)
                    assert Ark.parse(x) != Ark.parse(y)


@pytest.mark.parametrize("case", ANATOMY, ids=[c["input"] for c in ANATOMY])
def test_anatomy(case: dict[str, Any]) -> None:
    a = Ark.parse(case["input"])
    assert a.nma == case["nma"]
    assert a.naan == case["naan"]
    assert a.shoulder == case["shoulder"]
    assert a.blade == case["blade"]
    assert a.component_path == case["component_path"]
    assert a.variant_path == case["variant_path"]
    assert a.compact == case["compact"] == str(a)
    assert a.base == case["base_compact_name"]
    assert a.name == case["shoulder"] + case["blade"]
    assert a.qualifiers == case["component_path"] + case["variant_path"]


# --- the draft's own examples --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "http://example.org/rslvr/ark:12345/x6np1wh8k",  # §2.1: three synonyms
        "https://example.com/ark:12345/x6np1wh8k",
        "ark:12345/x6np1wh8k",
        "ark:/12345/x6np1wh8k",  # §2.2: old and new label
    ],
)
def test_nma_and_label_are_identity_inert(text: str) -> None:
    assert Ark.parse(text) == Ark.parse("ark:12345/x6np1wh8k")


@pytest.mark.parametrize(
    ("text", "nma", "label"),
    [
        ("http://example.org/rslvr/ark:12345/x6np1wh8k", "example.org/rslvr", "ark:"),
        ("https://example.com/ark:12345/x6np1wh8k", "example.com", "ark:"),
        ("ark:12345/x6np1wh8k", None, "ark:"),
        ("ark:/12345/x6np1wh8k", None, "ark:/"),
        ("ARK:/12345/x6np1wh8k", None, "ark:/"),
        ("https://digital.library.unt.edu/ark:/67531/metadc107835", "digital.library.unt.edu", "ark:/"),
        ("n2t.net/ark:67531/metadc107835?info", "n2t.net", "ark:"),  # §4.3: typed into a browser
        ("https://example.org:8080/a/b/ark:12345/x6", "example.org:8080/a/b", "ark:"),
    ],
)
def test_nma_and_label_parts(text: str, nma: str | None, label: str) -> None:
    a = Ark.parse(text)
    assert (a.nma, a.label) == (nma, label)


def test_hyphens_are_insignificant() -> None:
    # §3.1 example
    texts = ["ark:12345/x5-4-xz-321", "https://sneezy.dopey.com/ark:12345/x54--xz32-1", "ark:12345/x54xz321"]
    assert len({Ark.parse(t) for t in texts}) == 1
    assert Ark.parse(texts[0]).compact == "ark:12345/x5-4-xz-321"  # the spelling is kept as given …
    assert Ark.parse(texts[0]).name == "x54xz321"  # … the anatomy is of the normalized form
    assert Ark.parse(texts[0]).blade == "4xz321"


@pytest.mark.parametrize("hyphen", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015"])
def test_hyphen_like_characters_are_removed(hyphen: str) -> None:
    assert normalize(f"ark:12345/x5{hyphen}4xz321") == "ark:12345/x54xz321"
    assert normalize(f"ark:123{hyphen}45/x54xz321") == "ark:12345/x54xz321"


def test_hierarchy_ancestors() -> None:
    # §2.5.1: publishing ark:12345/x54/xz/321 is publishing three ARKs
    got = [str(a) for a in Ark.parse("ark:12345/x54/xz/321").ancestors()]
    assert got == ["ark:12345/x54/xz", "ark:12345/x54"]


def test_variant_ancestors() -> None:
    # §2.5.2: publishing ark:12345/x54.v18.fr.odf is publishing four ARKs
    got = [str(a) for a in Ark.parse("ark:12345/x54.v18.fr.odf").ancestors()]
    assert got == ["ark:12345/x54.v18.fr", "ark:12345/x54.v18", "ark:12345/x54"]


def test_component_and_variant_ancestors_longest_first() -> None:
    got = [str(a) for a in Ark.parse("https://example.org/ark:12345/x6np1wh8k/c3/s5.v7.xsl").ancestors()]
    assert got == [
        "ark:12345/x6np1wh8k/c3/s5.v7",
        "ark:12345/x6np1wh8k/c3/s5",
        "ark:12345/x6np1wh8k/c3",
        "ark:12345/x6np1wh8k",
    ]
    assert Ark.parse("ark:12345/x4z/x54.24").ancestors() == (
        Ark.parse("ark:12345/x4z/x54"),
        Ark.parse("ark:12345/x4z"),
    )


def test_ancestors_are_of_the_normalized_form() -> None:
    got = [str(a) for a in Ark.parse("ark:/12345/x5-4//c-3.pdf/").ancestors()]
    assert got == ["ark:12345/x54/c3", "ark:12345/x54"]


@pytest.mark.parametrize(
    ("text", "shoulder", "blade"),
    [
        ("ark:12345/x6np1wh8k/c2/s4.pdf", "x6", "np1wh8k"),  # §2.4.1: correct primordinal shoulder
        ("ark:12345/x6/np1wh8k/c2/s4.pdf", "x6", ""),  # the INCORRECT form: the Name is just x6
        ("ark:13030/tf5p30086k", "tf5", "p30086k"),
        ("ark:/13030/c7x921j3h", "c7", "x921j3h"),
        ("ark:14697/b12345x", "b1", "2345x"),
        ("ark:67531/metadc107835", "", "metadc107835"),  # vowels: no primordinal shoulder
        ("ark:12345/123", "", "123"),  # no consonant before the first digit
        ("ark:12345/bcd", "", "bcd"),  # no digit
        ("ark:12345/X6np", "", "X6np"),  # uppercase is not betanumeric
    ],
)
def test_shoulder_and_blade(text: str, shoulder: str, blade: str) -> None:
    a = Ark.parse(text)
    assert (a.shoulder, a.blade) == (shoulder, blade)


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("https://n2t.net/ark:/13030/c7x921j3h", True),  # the draft's references (ANVL)
        ("https://n2t.net/ark:/13030/c7n00zt1z", True),
        ("https://n2t.net/ark:/13030/c7sn0141m", True),
        ("https://n2t.net/ark:/13030/c7rr1pm49", True),
        ("https://n2t.net/ark:/13030/c7833mx7t", True),
        ("ark:13030/c7x921j3h/c3/s5.pdf", True),  # qualifiers are not covered
        ("ark:13030/c7x9-21j3h", True),  # hyphens are removed before checking
        ("ark:13030/c7x921j3x", False),
        ("ark:13030/c7x912j3h", False),  # transposition
    ],
)
def test_check_character(text: str, ok: bool) -> None:
    assert Ark.parse(text).check_ok is ok


def test_check_zone() -> None:
    a = Ark.parse("https://n2t.net/ARK:/13030/c7x921j3h/s1.v2?info")
    assert a.check_zone == "13030/c7x921j3h"
    assert a.check_char == "h"


@pytest.mark.parametrize(
    ("naan", "meaning", "resolves", "long_term"),
    [
        ("12345", "examples", "maybe", False),
        ("99152", "terms", "yes", True),
        ("99166", "agents", "yes", True),
        ("99999", "test ids", "maybe", False),
    ],
)
def test_shared_naans(naan: str, meaning: str, resolves: str, long_term: bool) -> None:
    a = Ark.parse(f"ark:{naan}/x6np1wh8k")
    assert a.shared_naan_meaning == meaning
    shared = SHARED_NAANS[naan]
    assert (shared.meaning, shared.expect_to_resolve, shared.long_term) == (meaning, resolves, long_term)
    assert a.shared_naan == shared


def test_unshared_naan() -> None:
    assert Ark.parse("ark:13030/c7x921j3h").shared_naan_meaning is None
    assert Ark.parse("ark:13030/c7x921j3h").shared_naan is None
    assert len(SHARED_NAANS) == 4


@pytest.mark.parametrize(
    ("text", "inflection", "known"),
    [
        ("https://n2t.net/ark:67531/metadc107835?info", "?info", True),
        ("ark:67531/metadc107835?", "?", True),
        ("ark:67531/metadc107835??", "??", True),
        ("ark:67531/metadc107835", "", False),
        ("ark:67531/metadc107835?format=json", "?format=json", False),
    ],
)
def test_inflections(text: str, inflection: str, known: bool) -> None:
    a = Ark.parse(text)
    assert (a.inflection, a.known_inflection) == (inflection, known)
    assert str(a) == "ark:67531/metadc107835"
    assert a == Ark.parse("ark:67531/metadc107835")


def test_naan_stays_a_string() -> None:
    a = Ark.parse("ark:01234/x6")
    assert a.naan == "01234"
    assert a != Ark.parse("ark:1234/x6")
    assert str(a) == "ark:01234/x6"


def test_long_naan_and_name_supported() -> None:
    naan = "b" * 16 + "0123456789"  # §2.3: at least 16 octets
    name = "x" + "0" * 300  # §3.1: at least 255 octets
    a = Ark.parse(f"ark:{naan}/{name}/c1.v2")
    assert (a.naan, a.name) == (naan, name)


# --- §3.2 normalization step by step -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "before", "after"),
    [
        (ark_syntax.remove_nma, "https://a.b/c/ark:12345/x", "ark:12345/x"),  # step 1
        (ark_syntax.remove_nma, "ark:12345/x", "ark:12345/x"),
        (ark_syntax.remove_query, "ark:12345/x?info", "ark:12345/x"),  # step 2
        (ark_syntax.remove_query, "ark:12345/x??", "ark:12345/x"),
        (ark_syntax.normalize_label, "aRk:/12345/x", "ark:12345/x"),  # step 3
        (ark_syntax.normalize_label, "ARK:12345/x", "ark:12345/x"),
        (ark_syntax.lowercase_naan, "ark:BC345/XY", "ark:bc345/XY"),  # step 4
        (ark_syntax.uppercase_percent_hex, "ark:12345/x%7d%2fab", "ark:12345/x%7D%2Fab"),  # step 5
        (ark_syntax.remove_hyphens, "ark:12-345/x-\u20134", "ark:12345/x4"),  # step 6
        (ark_syntax.remove_inflection, "ark:12345/x?info", "ark:12345/x"),  # step 7
        (ark_syntax.remove_inflection, "ark:12345/x", "ark:12345/x"),
        (ark_syntax.collapse_structural, "ark:12345//x//c3/./s5..pdf/", "ark:12345/x/c3/s5.pdf"),  # step 8
        (ark_syntax.collapse_structural, "ark:12345/.x./", "ark:12345/x"),
        (ark_syntax.move_variants_to_end, "ark:12345/x.v2/c3", "ark:12345/x/c3.v2"),  # step 9
        (ark_syntax.move_variants_to_end, "ark:12345/x/c3.v2", "ark:12345/x/c3.v2"),
    ],
)
def test_normalization_steps(step: Any, before: str, after: str) -> None:
    assert step(before) == after


def test_percent_case_normalized_other_case_kept() -> None:
    # §3.2 step 5: only the two characters after '%' change case; comparisons are case-sensitive.
    assert normalize("ark:12345/x%7dAb") == "ark:12345/x%7DAb"
    assert Ark.parse("ark:12345/x%7d") == Ark.parse("ark:12345/x%7D")
    assert Ark.parse("ark:12345/X6np") != Ark.parse("ark:12345/x6np")
    assert normalize("ark:12345/x%2D1") == "ark:12345/x%2D1"  # an encoded hyphen is not a hyphen


def test_naan_case_is_folded() -> None:
    # §3.2 step 4
    assert normalize("ark:BCD45/x6") == "ark:bcd45/x6"
    assert Ark.parse("ark:BCD45/x6") == Ark.parse("ark:bcd45/x6")
    assert Ark.parse("ark:BCD45/x6").naan == "BCD45"


def test_structural_characters() -> None:
    # §2.5.1, §2.5.2, §3.1: initial/final '/' and '.' are ignored, doubles collapse.
    assert normalize("ark:12345/x54/") == "ark:12345/x54"
    assert normalize("ark:12345/x54.") == "ark:12345/x54"
    assert normalize("ark:12345/x54//xz") == "ark:12345/x54/xz"
    assert normalize("ark:12345/x54..v18") == "ark:12345/x54.v18"
    assert normalize("ark:12345/x54/.v18") == "ark:12345/x54/v18"
    assert normalize("ark:12345//x54") == "ark:12345/x54"
    assert normalize("ark:12345/x54/-/xz") == "ark:12345/x54/xz"  # hyphens go first (step 6 < step 8)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ark:12345/x54.v2/c3", "ark:12345/x54/c3.v2"),
        ("ark:12345/x54.v1.v2/c3", "ark:12345/x54/c3.v1.v2"),
        ("ark:12345/x54.a/c3.b/d4.e", "ark:12345/x54/c3/d4.a.b.e"),
        ("ark:12345/x54/c3.v2/s5", "ark:12345/x54/c3/s5.v2"),
    ],
)
def test_step_9_moves_variants_to_the_end(text: str, expected: str) -> None:
    # §3.2 step 9 is ambiguous (move, or reject); pidkit moves, keeping the variants' order.
    assert normalize(text) == expected
    a = Ark.parse(text)
    assert a.normalize().variant_path.count("/") == 0
    assert a.normalize().component_path + a.normalize().variant_path == a.normalize().qualifiers


# --- anatomy is of the normalized form; qualifiers are verbatim (review finding 1) ------------------------


@pytest.mark.parametrize(
    ("text", "name", "qualifiers", "component_path", "variant_path", "base"),
    [
        # §2.5: a VariantPath is introduced and subdivided by '.', never contains '/' (step 9 moves it)
        ("ark:12345/x54.v2/c3", "x54", ".v2/c3", "/c3", ".v2", "ark:12345/x54"),
        # step 8: './' becomes '/', so '.y' is a component, not a variant
        ("ark:12345/x/.y", "x", "/.y", "/y", "", "ark:12345/x"),
        # step 8: a final '/' is removed, so there is no ComponentPath
        ("ark:12345/x/", "x", "/", "", "", "ark:12345/x"),
        # step 6: hyphens are removed from the Name (name == shoulder + blade) and the paths
        ("ark:12345/x5-4-xz-321/c-3.v-7", "x54xz321", "/c-3.v-7", "/c3", ".v7", "ark:12345/x54xz321"),
        ("ARK:/B2345/x6//c3..pdf.", "x6", "//c3..pdf.", "/c3", ".pdf", "ark:b2345/x6"),
    ],
)
def test_anatomy_is_of_the_normalized_form(
    text: str, name: str, qualifiers: str, component_path: str, variant_path: str, base: str
) -> None:
    a = Ark.parse(text)
    assert (a.name, a.qualifiers, a.component_path, a.variant_path, a.base) == (
        name,
        qualifiers,
        component_path,
        variant_path,
        base,
    )
    assert a.name == a.shoulder + a.blade
    assert a.normalized == a.base + a.component_path + a.variant_path


@pytest.mark.parametrize(
    ("text", "qualifiers"),
    [
        ("ark:/12345/x54xz321/page-2.v-1", "/page-2.v-1"),
        ("ark:12345/x54.v2/c3?info", ".v2/c3"),
        ("https://n2t.net/ark:12345/x-6/-/c3/", "/-/c3/"),
    ],
)
def test_qualifiers_are_verbatim(text: str, qualifiers: str) -> None:
    # pidkit.store.keys.passthrough_suffix relies on this: the requester's own spelling
    assert Ark.parse(text).qualifiers == qualifiers


# --- where the Name starts (review finding 2) ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "ark:12345/./x",
        "ark:12345/-/x",  # step 6 removes the hyphen, step 8 the '/' left at the start
        "ark:12345/-./x",
        "ark:12345/.-/x",
        "ark:12345/--//-.x",
        "ark:12345/--/x",
        "ark:12345/\u2010/x",  # hyphen-like characters (step 6)
        "ark:12345/\u2015.\u2013/x",
    ],
)
def test_leading_structural_and_hyphens_before_the_name(text: str) -> None:
    a = Ark.parse(text)
    assert a.normalized == "ark:12345/x"
    assert a == Ark.parse("ark:12345/x")
    assert (a.name, a.qualifiers) == ("x", "")
    assert Ark.parse(str(a)) == a


@pytest.mark.parametrize(
    ("text", "name", "qualifiers"),
    [
        ("ark:12345/-x", "x", ""),  # a hyphen inside the first segment belongs to it
        ("ark:12345/-x-/-.y-", "x", "/-.y-"),
        ("ark:12345/-/x-y/z", "xy", "/z"),
    ],
)
def test_name_after_leading_hyphens(text: str, name: str, qualifiers: str) -> None:
    a = Ark.parse(text)
    assert (a.name, a.qualifiers) == (name, qualifiers)


@pytest.mark.parametrize("text", ["ark:12345/-", "ark:12345/-/", "ark:12345/./-/.", "ark:12345/\u2014./"])
def test_no_name_when_only_structural_and_hyphens(text: str) -> None:
    with pytest.raises(ArkError, match="no Name") as info:
        Ark.parse(text)
    assert info.value.position == len("ark:12345/") + 1


# --- immutability (review finding 3) -------------------------------------------------------------------


@pytest.mark.parametrize("slot", ["_key", "_text", "_rest", "_naan"])
def test_ark_slots_cannot_be_set_or_deleted(slot: str) -> None:
    a = Ark.parse("ark:12345/x6np1wh8k")
    with pytest.raises(AttributeError, match="immutable"):
        setattr(a, slot, "ark:12345/y")
    with pytest.raises(AttributeError, match="immutable"):
        delattr(a, slot)
    assert hash(a) == hash(Ark.parse("ark:12345/x6np1wh8k"))
    assert str(a) == "ark:12345/x6np1wh8k"


def test_normalize_method_and_property_agree() -> None:
    a = Ark.parse("https://example.com/ARK:/12345/x6-np1wh8k/c3//s5.V7?info")
    assert a.normalized == "ark:12345/x6np1wh8k/c3/s5.V7"
    n = a.normalize()
    assert n == a
    assert n.text == a.normalized
    assert n.nma is None
    assert n.inflection == ""
    assert n.normalize() is n


# --- value type ----------------------------------------------------------------------------------------


def test_value_protocol() -> None:
    a = Ark.parse("ark:/12345/x6np1wh8k?info")
    assert repr(a) == "Ark('ark:/12345/x6np1wh8k?info')"
    assert eval(repr(a), {"Ark": Ark}).label == "ark:/"
    assert str(a) == "ark:12345/x6np1wh8k"
    assert a != "ark:12345/x6np1wh8k"
    assert pickle.loads(pickle.dumps(a)) == a
    assert pickle.loads(pickle.dumps(a)).text == a.text
    with pytest.raises(AttributeError):
        a._key = "x"
    with pytest.raises(TypeError):
        Ark()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Ark.parse(b"ark:12345/x")  # type: ignore[arg-type]


def test_ordering_is_by_normalized_form() -> None:
    texts = ["ark:12345/x6np1wh8k/c3", "ARK:/12345/x6", "https://a.b/ark:12345/b-1", "ark:99999/a0"]
    arks = sorted(Ark.parse(t) for t in texts)
    assert [a.normalized for a in arks] == sorted(normalize(t) for t in texts)
    assert Ark.parse("ark:12345/b1") < Ark.parse("ark:12345/x6")
    assert Ark.parse("ark:12345/x6") >= Ark.parse("ark:12345/x-6")
    assert Ark.parse("ark:12345/x6") <= Ark.parse("ark:12345/x-6")
    assert Ark.parse("ark:12345/x7") > Ark.parse("ark:12345/x-6")


def test_to_url() -> None:
    a = Ark.parse("https://example.org/ark:/12345/x6np1wh8k/c3?info")
    assert a.to_url() == "https://n2t.net/ark:12345/x6np1wh8k/c3"
    assert a.to_url("https://example.org/") == "https://example.org/ark:12345/x6np1wh8k/c3"
    assert Ark.parse(a.to_url("https://example.org/r")) == a


# --- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "words"),
    [
        ("", None, "empty"),
        ("12345/x6np1wh8k", 1, "label"),
        ("urn:ark:12345/x", 1, "label"),
        (" ark:12345/x", 1, "label"),
        ("ark:", 5, "no NAAN"),
        ("ark:/", 6, "no NAAN"),
        ("ark:/x6", 8, "no '/'"),  # just past the end
        ("ark:12345", 10, "no '/'"),
        ("ark:12345?info", 10, "no '/'"),
        ("ark:12345/", 11, "no Name"),
        ("ark:12345//", 11, "no Name"),
        ("ark:12345/--/", 11, "no Name"),  # hyphens only (ark:12345/--/c3 names c3: steps 6, 8)
        ("ark:12a45/x", 7, "betanumeric"),
        ("ark:12l45/x", 7, "betanumeric"),
        ("ark:12345/x6 np", 13, "not allowed"),
        ("ark:12345/x6\nnp", 13, "not allowed"),
        ("ark:12345/x6#a", 13, "not allowed"),
        ("ark:12345/x6é", 13, "not allowed"),
        ("ark:12345/x6%", 13, "hex"),
        ("ark:12345/x6%4", 13, "hex"),
        ("ark:12345/x6%4g", 13, "hex"),
        ("ark:12345/x6%4?", 13, "hex"),
        ("ark:12345/x6? info", 14, "query"),
        ("https:///ark:12345/x6", 9, "NMA"),
        ("https://ark:12345/x6", 9, "NMA"),
        ("https://exa mple.org/ark:12345/x6", 12, "NMA"),
        ("https://example.org/a b/ark:12345/x6", 22, "NMA"),
        ("https://example.org/x6", 1, "label"),
    ],
)
def test_parse_errors(text: str, position: int | None, words: str) -> None:
    with pytest.raises(ArkError) as info:
        Ark.parse(text)
    assert info.value.position == position
    assert info.value.text == text
    assert words in info.value.message
    with pytest.raises(ArkError):
        normalize(text)


def test_input_size_is_bounded() -> None:
    ok = "ark:12345/x" + "0" * (MAX_LENGTH - 11)
    assert len(Ark.parse(ok).name) == MAX_LENGTH - 10
    with pytest.raises(ArkError, match="longer than"):
        Ark.parse(ok + "0")
    with pytest.raises(ArkError, match="longer than"):
        Ark.parse("ark:" * 100_000)


# --- properties ----------------------------------------------------------------------------------------

_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=~*+@_$"
_HYPHENS = "-\u2010\u2011\u2012\u2013\u2014\u2015"
_piece = st.one_of(
    st.text(alphabet=_NAME_CHARS, min_size=1, max_size=4),
    st.sampled_from(list(_HYPHENS)),
    st.tuples(st.sampled_from("0123456789abcdefABCDEF"), st.sampled_from("0123456789abcdefABCDEF")).map(
        lambda t: "%" + "".join(t)
    ),
)
_segment = st.lists(_piece, min_size=1, max_size=4).map("".join)
_name = st.tuples(st.text(alphabet=_NAME_CHARS, min_size=1, max_size=3), _segment).map("".join)
_qualifiers = st.lists(
    st.tuples(st.text(alphabet="/.", min_size=1, max_size=2), _segment).map("".join), max_size=4
).map("".join)
_naan = st.text(alphabet="0123456789bcdfghjkmnpqrstvwxzBCDFGHJKMNPQRSTVWXZ-", min_size=1, max_size=8).filter(
    lambda s: s.strip("-") != ""
)


@st.composite
def arks(draw: st.DrawFn) -> str:
    """ARK text in all its forms: with/without NMA, either label in any case, hyphens, %-escapes …"""
    nma = draw(st.sampled_from(["", "https://example.org/", "http://n2t.net:80/r/", "n2t.net/"]))
    label = draw(st.sampled_from(["ark:", "ark:/", "ARK:", "Ark:/"]))
    lead = draw(st.sampled_from(["", "/", "."]))
    trail = draw(st.sampled_from(["", "/", ".", "./"]))
    query = draw(st.sampled_from(["", "?", "??", "?info", "?a=b"]))
    return f"{nma}{label}{draw(_naan)}/{lead}{draw(_name)}{draw(_qualifiers)}{trail}{query}"


@given(arks())
@example("ark:12345/x.-/b")
@example("ark:12345/x/-.b")
@example("ark:12345/x.a/-/b")
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert Ark.parse(once).normalized == once


@given(arks())
@example("ark:12345/x.-/b")
def test_parse_str_round_trip(text: str) -> None:
    a = Ark.parse(text)
    b = Ark.parse(str(a))
    assert b == a
    assert (b.naan, b.name, b.qualifiers) == (a.naan, a.name, a.qualifiers)
    assert Ark.parse(repr(a)[len("Ark(") + 1 : -2]).text == a.text


@given(arks())
def test_normalized_form_is_well_formed(text: str) -> None:
    n = Ark.parse(text).normalize()
    s = str(n)
    assert s.startswith("ark:")
    assert not any(h in s for h in _HYPHENS)
    assert "?" not in s
    for pair in ("//", "..", "./", "/."):
        assert pair not in s
    assert not s.endswith(("/", "."))
    assert "/" not in n.variant_path
    assert n.naan == n.naan.lower()
    assert n.shoulder + n.blade == n.name


@given(arks())
@example("ark:12345/x54.v2/c3")
@example("ark:12345/x/.y")
@example("ark:12345/-./x/")
def test_anatomy_agrees_with_the_normalized_form(text: str) -> None:
    a = Ark.parse(text)
    n = a.normalize()
    assert (a.name, a.shoulder, a.blade, a.component_path, a.variant_path, a.base) == (
        n.name,
        n.shoulder,
        n.blade,
        n.component_path,
        n.variant_path,
        n.base,
    )
    assert a.normalized == a.base + a.component_path + a.variant_path
    assert a.name == a.shoulder + a.blade
    assert not any(c in a.name for c in "/." + _HYPHENS)
    assert a.component_path == "" or a.component_path.startswith("/")
    assert "." not in a.component_path
    assert a.variant_path == "" or a.variant_path.startswith(".")
    assert "/" not in a.variant_path
    assert n.qualifiers == a.component_path + a.variant_path


@given(arks())
def test_ancestors_are_strictly_shorter_and_contain_the_base(text: str) -> None:
    a = Ark.parse(text)
    chain = a.ancestors()
    lengths = [len(str(x)) for x in chain]
    assert lengths == sorted(lengths, reverse=True)
    assert all(len(str(x)) < len(a.normalized) for x in chain)
    assert all(a.normalized.startswith(str(x)) for x in chain)
    if a.normalize().qualifiers:
        assert str(chain[-1]) == str(a.normalize()).split("/")[0] + "/" + a.normalize().name
    else:
        assert chain == ()


@given(st.text(max_size=60))
@example("ark:")
@example("https://ark:/")
def test_parse_random_text_raises_only_pidkit_errors(text: str) -> None:
    try:
        a = Ark.parse(text)
    except PidkitError:
        pass  # the only errors it may raise
    else:
        assert normalize(text) == a.normalized


@given(st.text(alphabet="ark:/.-%?htps0123456789bxAK", max_size=40))
def test_parse_ark_like_text_raises_only_ark_errors(text: str) -> None:
    error: ArkError | None = None
    try:
        a = Ark.parse(text)
    except ArkError as exc:
        error = exc
    if error is None:
        assert a.normalized.startswith("ark:")
    else:
        assert error.text == text
        assert error.position is None or 1 <= error.position <= len(text) + 1


# --- named constructor and pasted-text leniency --------------------------------------------------------


def test_from_parts() -> None:
    a = Ark.from_parts(naan="99999", name="fk4x8d9m2q", qualifiers="/c3.pdf")
    assert str(a) == "ark:99999/fk4x8d9m2q/c3.pdf"
    assert (a.naan, a.name, a.qualifiers, a.label, a.nma) == ("99999", "fk4x8d9m2q", "/c3.pdf", "ark:", None)
    assert Ark.from_parts(naan="12345", name="x6np1wh8k") == Ark.parse("ark:/12345/x6np1wh8k")


@pytest.mark.parametrize(
    ("parts", "position"),
    [
        ({"naan": "12345", "name": "x6/c3"}, 13),
        ({"naan": "12345", "name": "x6.pdf"}, 13),
        ({"naan": "12345", "name": ""}, 11),
        ({"naan": "12345", "name": "x6", "qualifiers": "c3"}, 13),
        ({"naan": "12345", "name": "x6", "qualifiers": "/c3?info"}, 16),
        ({"naan": "1234a", "name": "x6"}, 9),
    ],
)
def test_from_parts_errors(parts: dict[str, str], position: int) -> None:
    with pytest.raises(ArkError) as info:
        Ark.from_parts(**parts)
    assert info.value.position == position


@pytest.mark.parametrize(
    ("pasted", "expected"),
    [
        ("  ark:12345/x6np1wh8k\n", "ark:12345/x6np1wh8k"),
        ("ark:12345/x6np1-\n   wh8k", "ark:12345/x6np1wh8k"),
        ("https://example.org/ark:12345/x6np1\u2010\r\n\twh8k", "ark:12345/x6np1wh8k"),
    ],
)
def test_clean_pasted(pasted: str, expected: str) -> None:
    with pytest.raises(ArkError):
        Ark.parse(pasted)  # parse itself stays strict
    assert normalize(clean_pasted(pasted)) == expected


@given(arks())
def test_ancestors_equal_their_parsed_selves(text: str) -> None:
    for ancestor in Ark.parse(text).ancestors():
        again = Ark.parse(str(ancestor))
        assert again == ancestor
        assert (again.text, again.naan, again.name, again.qualifiers) == (
            ancestor.text, ancestor.naan, ancestor.name, ancestor.qualifiers,
        )  # fmt: skip
        assert ancestor.normalize() is ancestor


def test_many_ancestors_stay_cheap() -> None:
    a = Ark.parse("ark:12345/x" + "/a" * 2040)
    chain = a.ancestors()
    assert len(chain) == 2040
    assert str(chain[-1]) == "ark:12345/x"
    assert str(chain[0]) == "ark:12345/x" + "/a" * 2039
