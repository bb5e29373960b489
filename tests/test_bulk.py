"""Bulk column helpers: generation, validation masks, compact<->GUID, Library.Link ids from columns."""

from __future__ import annotations

import base64
import importlib
import json
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import mmh3
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pidkit import Tid, TidClock, XarkId, bulk
from pidkit.bulk import (
    guids_to_xarkids,
    new_tids,
    new_xarkids,
    resource_ids,
    resource_ids_from_columns,
    validate_record_keys,
    validate_tids,
    validate_xarkids,
    xarkids_to_guids,
)
from pidkit.errors import LlidError, XarkIdError
from pidkit.llid import SPEEDUPS, VERSA_TYPE

DATA = Path(__file__).parent / "data" / "vectors"
XARKID = json.loads((DATA / "xarkid.json").read_text(encoding="utf-8"))
LLID: list[dict[str, Any]] = json.loads((DATA / "librarylink_published.json").read_text(encoding="utf-8"))


def _lines(name: str) -> list[str]:
    text = (DATA / "atproto" / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def reference_llid(pairs: Any) -> str:
    """The Library.Link algorithm (docs/library-link.md) as written there: json.dumps + mmh3.hash64 low
    64 bits + signed big-endian + base64url."""
    text = json.dumps(pairs, separators=(",", ":"))
    return base64.urlsafe_b64encode(struct.pack(">q", mmh3.hash64(text)[0])).rstrip(b"=").decode()


# --- generation ------------------------------------------------------------------------------------------


def test_new_xarkids() -> None:
    ids = new_xarkids(1000)
    assert len(set(ids)) == 1000
    assert all(validate_xarkids(ids, compact_only=True))
    guids = new_xarkids(10, form="guid")
    assert [XarkId.parse(g).guid.version for g in guids] == [4] * 10
    arr = new_xarkids(5, array=True)
    assert arr.dtype == np.dtype("<U20") and arr.shape == (5,)
    assert new_xarkids(3, form="guid", array=True).dtype == np.dtype("<U36")
    assert new_xarkids(0) == []
    with pytest.raises(ValueError, match="form"):
        new_xarkids(1, form="hex")  # type: ignore[call-overload]


def test_new_tids_strictly_increasing_across_calls() -> None:
    ids = new_tids(500) + new_tids(500)
    assert ids == sorted(set(ids))
    assert all(validate_tids(ids, strict=True))
    clock = TidClock(7)
    assert {Tid.parse(t).clock_id for t in new_tids(3, clock=clock)} == {7}
    assert new_tids(2, array=True).dtype == np.dtype("<U13")


# --- validation ------------------------------------------------------------------------------------------


def test_validate_xarkids_vectors() -> None:
    good = [v[k] for v in XARKID["vectors"] for k in ("compact", "guid")]
    good += [g.upper() for g in good if len(g) == 36] + ["{" + v["guid"] + "}" for v in XARKID["vectors"]]
    bad: list[str] = list(XARKID["invalid_compact"])
    bad += ["", "550e8400-e29b-41d4-a716-446655440000", "AYvP5WgA-_-_ASNFZ4mr\n", " AYvP5WgA-_-_ASNFZ4mr"]
    mask = validate_xarkids([*good, *bad, None, 1.5])
    assert mask == [True] * len(good) + [False] * (len(bad) + 2)
    assert validate_xarkids(good, compact_only=True) == [len(g) == 20 for g in good]


@given(st.lists(st.one_of(st.text(max_size=40), st.sampled_from(["AYvP5WgA-_-_ASNFZ4mr"]))))
def test_validate_xarkids_agrees_with_parse(values: list[str]) -> None:
    def parses(v: str) -> bool:
        try:
            XarkId.parse(v)
        except XarkIdError:
            return False
        return True

    assert validate_xarkids(values) == [parses(v) for v in values]


def test_validate_tids_and_record_keys_interop_files() -> None:
    valid, invalid = _lines("tid_syntax_valid.txt"), _lines("tid_syntax_invalid.txt")
    assert validate_tids(valid + invalid) == [True] * len(valid) + [False] * len(invalid)
    valid, invalid = _lines("recordkey_syntax_valid.txt"), _lines("recordkey_syntax_invalid.txt")
    assert validate_record_keys(valid + invalid) == [True] * len(valid) + [False] * len(invalid)


def test_numpy_in_numpy_out() -> None:
    col = np.array(["AYvP5WgA-_-_ASNFZ4mr", "nope", "018bcfe5-6800-4fbf-8fbf-0123456789ab"])
    mask = validate_xarkids(col)
    assert mask.dtype == np.bool_ and mask.tolist() == [True, False, True]
    assert validate_tids(np.array(["3jzfcijpj2z2a"])).tolist() == [True]
    assert validate_record_keys(np.array(["self", ".."], dtype=object)).tolist() == [True, False]
    guids = xarkids_to_guids(col[mask])
    assert guids.dtype == np.dtype("<U36")
    assert guids.tolist() == ["018bcfe5-6800-4fbf-8fbf-0123456789ab"] * 2
    back = guids_to_xarkids(guids)
    assert back.dtype == np.dtype("<U20") and back.tolist() == ["AYvP5WgA-_-_ASNFZ4mr"] * 2
    nulls = xarkids_to_guids(col, errors="null")
    assert nulls.dtype == object and nulls[1] is None


def test_other_columns() -> None:
    class ArrowLike:
        def to_pylist(self) -> list[str]:
            return ["AYvP5WgA-_-_ASNFZ4mr"]

    assert validate_xarkids(ArrowLike()) == [True]  # type: ignore[call-overload]
    assert validate_xarkids(("AYvP5WgA-_-_ASNFZ4mr",)) == [True]
    assert validate_xarkids(iter(["x"])) == [False]
    with pytest.raises(TypeError, match="one str"):
        validate_xarkids("AYvP5WgA-_-_ASNFZ4mr")


# --- conversion ------------------------------------------------------------------------------------------


def test_conversion_vectors() -> None:
    compact = [v["compact"] for v in XARKID["vectors"]]
    guids = [v["guid"] for v in XARKID["vectors"]]
    assert xarkids_to_guids(compact) == guids
    assert xarkids_to_guids(compact, dashes=False) == [g.replace("-", "") for g in guids]
    assert guids_to_xarkids(guids) == compact
    assert guids_to_xarkids([g.upper() for g in guids]) == compact
    # mixed forms take the per-row path and give the same answers
    assert xarkids_to_guids([compact[0], guids[1], compact[2]]) == guids
    assert guids_to_xarkids([compact[0], guids[1], "{" + guids[2] + "}"]) == compact


@given(st.lists(st.integers(min_value=0, max_value=(1 << 120) - 1), max_size=50))
def test_conversion_matches_the_value_type(values: list[int]) -> None:
    xs = [XarkId.from_int(v) for v in values]
    guids = xarkids_to_guids([x.compact for x in xs])
    assert guids == [str(x.guid) for x in xs]
    assert xarkids_to_guids([x.compact for x in xs], dashes=False) == [x.hex for x in xs]
    assert guids_to_xarkids(guids) == [x.compact for x in xs]


def test_conversion_errors_name_index_and_position() -> None:
    with pytest.raises(XarkIdError) as info:
        xarkids_to_guids(["AYvP5WgA-_-_ASNFZ4mr", "AYvP5WgA-_-_ASNFZ4m!"])
    assert info.value.message.startswith("index 1: ") and info.value.position == 20
    with pytest.raises(XarkIdError) as info:
        guids_to_xarkids(["018bcfe5-6800-4fbf-8fbf-0123456789ab", "018bcfe5-6800-1fbf-8fbf-0123456789ab"])
    assert info.value.message.startswith("index 1: ") and info.value.position == 15
    with pytest.raises(XarkIdError, match="index 0: expected a str, got NoneType"):
        xarkids_to_guids([None])
    with pytest.raises(XarkIdError, match="index 0: expected a str, got int"):
        guids_to_xarkids([5])
    assert guids_to_xarkids(["x", None, "AYvP5WgA-_-_ASNFZ4mr"], errors="null") == [
        None,
        None,
        "AYvP5WgA-_-_ASNFZ4mr",
    ]


# --- Library.Link ----------------------------------------------------------------------------------------


@contextmanager
def bulk_path(path: str) -> Iterator[None]:
    """Run resource_ids_from_columns on one path: ``c`` (the C helper) or ``python`` (without it)."""
    if path == "c":
        assert SPEEDUPS  # the "c" parameter is marked to run only with the C helper in use
        yield
    else:
        with mock.patch.object(bulk, "_speedups", None):
            yield


needs_c = pytest.mark.skipif(
    not SPEEDUPS, reason="the C helper is not in use (not built, or PIDKIT_PURE_PYTHON set)"
)
PATHS = [pytest.param("c", marks=needs_c), "python"]
any_char = st.characters(codec=None, exclude_categories=())  # all of Unicode, lone surrogates included
special_char = st.sampled_from([*'"\\%\x00\x1f\x7f\x80\xff\u2028', *"\ud800\udfff\U0001f4a9"])
column_text = st.text(st.one_of(any_char, special_char, st.characters(max_codepoint=0x7F)), max_size=20)


#: The published vectors a table row can express: a type pair, then at least one pair, all keys distinct.
TABLE_ROWS = [
    v
    for v in LLID
    if len(v["pairs"]) > 1
    and v["pairs"][0][0] == VERSA_TYPE
    and len({k for k, _ in v["pairs"]}) == len(v["pairs"])
]


def test_table_rows_are_most_published_vectors() -> None:
    assert len(TABLE_ROWS) >= len(LLID) // 2


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("v", TABLE_ROWS, ids=lambda v: v["expected"])
def test_columns_give_the_published_ids(v: dict[str, Any], path: str) -> None:
    pairs = v["pairs"]
    columns = {k: [value] for k, value in pairs[1:]}
    with bulk_path(path):
        assert resource_ids_from_columns(columns, type=pairs[0][1]) == [v["expected"]]


def test_column_of_pair_lists() -> None:
    assert resource_ids([v["pairs"] for v in LLID]) == [v["expected"] for v in LLID]
    assert resource_ids(np.array([v["pairs"] for v in LLID[:1]] + [[]], dtype=object)) == [
        LLID[0]["expected"],
        reference_llid([]),
    ]


@pytest.mark.parametrize("path", PATHS)
@given(
    rows=st.lists(st.tuples(column_text, column_text), min_size=1, max_size=20),
    rtype=st.one_of(st.none(), column_text),
    keys=st.lists(column_text, min_size=2, max_size=2),
)
def test_columns_match_the_reference_recipe(
    path: str, rows: list[tuple[str, str]], rtype: str | None, keys: list[str]
) -> None:
    keys = ["http://schema.org/name", 'odd "key" % with \\ and é'] if keys[0] == keys[1] else keys
    columns = {keys[0]: [a for a, _ in rows], keys[1]: [b for _, b in rows]}
    expected = []
    for a, b in rows:
        pairs = [[VERSA_TYPE, rtype]] if rtype is not None else []
        expected.append(reference_llid([*pairs, [keys[0], a], [keys[1], b]]))
    with bulk_path(path):
        assert resource_ids_from_columns(columns, type=rtype) == expected


@pytest.mark.parametrize("path", PATHS)
def test_columns_long_and_short_rows(path: str) -> None:
    """Rows on both sides of the C helper's stack buffer, in any order (its heap buffer grows, is reused)."""
    sizes = [10, 5_000, 100, 100_000, 3_000, 5, 2_040, 0, 300_000, 1]
    values = [('ab"\x7f—\U0001f600' * (s // 5 + 1))[:s] for s in sizes]
    single = [v[::-1] for v in values]
    columns = {"k": values, "single": single, "one more": ["x"] * len(sizes)}
    expected = [
        reference_llid([[VERSA_TYPE, "T"], ["k", a], ["single", b], ["one more", "x"]])
        for a, b in zip(values, single, strict=True)
    ]
    with bulk_path(path):
        assert resource_ids_from_columns(columns, type="T") == expected
        assert resource_ids_from_columns({"k": values}) == [reference_llid([["k", a]]) for a in values]


class StrSub(str):
    __slots__ = ()


class ListSub(list[Any]):
    pass


@pytest.mark.parametrize("path", PATHS)
def test_columns_of_other_types(path: str) -> None:
    expected = [reference_llid([["a", "x"], ["b", "y"]]), reference_llid([["a", "é"], ["b", "z"]])]
    with bulk_path(path):
        assert resource_ids_from_columns({"a": ("x", "é"), "b": iter(["y", "z"])}) == expected
        assert resource_ids_from_columns({"a": ListSub(["x", "é"]), "b": ["y", "z"]}) == expected
        assert resource_ids_from_columns({"a": [StrSub("x"), "é"], "b": ["y", StrSub("z")]}) == expected
        assert resource_ids_from_columns({"a": np.array(["x", "é"]), "b": ["y", "z"]}) == expected


@pytest.mark.parametrize("path", PATHS)
def test_columns_missing_values(path: str) -> None:
    columns: dict[str, list[str | None]] = {"name": ["Ada", "Bob"], "birthDate": ["1815-12-10", None]}
    with bulk_path(path):
        with pytest.raises(LlidError, match="row 1, key 'birthDate': value must be a str, got None"):
            resource_ids_from_columns(columns)
        assert resource_ids_from_columns(columns, missing="skip", type="T") == [
            reference_llid([[VERSA_TYPE, "T"], ["name", "Ada"], ["birthDate", "1815-12-10"]]),
            reference_llid([[VERSA_TYPE, "T"], ["name", "Bob"]]),
        ]
        with pytest.raises(LlidError, match="row 0, key 'n': value must be a str, got 1"):
            resource_ids_from_columns({"n": [1]}, missing="skip")


@needs_c
def test_ids_from_template_refuses_bad_arguments() -> None:
    """The C helper's column entry point checks its arguments (pidkit.bulk never passes these)."""
    speedups: Any = importlib.import_module("pidkit._speedups")
    frags = (b'[["a",', b"]]")
    assert speedups.ids_from_template(frags, (["x"],)) == [reference_llid([["a", "x"]])]
    assert speedups.ids_from_template((b"[]",), ()) == []  # no columns: no rows
    bad: list[tuple[Any, ...]] = [
        (frags,),
        (frags, (["x"],), None),
        ([b"[", b"]"], (["x"],)),
        (frags, [["x"]]),
        ((b"[",), (["x"],)),
        (("[", "]"), (["x"],)),
        ((b"[", b",", b"]"), (["x"], ["y", "z"])),
        (frags, (("x",),)),
        (frags, ([1],)),
    ]
    for args in bad:
        with pytest.raises((TypeError, ValueError)):
            speedups.ids_from_template(*args)


def test_columns_numpy_and_errors() -> None:
    col = np.array(["Jonathan Bruce Postel"])
    assert resource_ids_from_columns({"http://schema.org/name": col}) == [
        reference_llid([["http://schema.org/name", "Jonathan Bruce Postel"]])
    ]
    with pytest.raises(LlidError, match="has 2 values, the first column 1"):
        resource_ids_from_columns({"a": ["x"], "b": ["x", "y"]})
    with pytest.raises(LlidError, match="no columns"):
        resource_ids_from_columns({})
    with pytest.raises(LlidError, match="mapping"):
        resource_ids_from_columns([("a", ["x"])])  # type: ignore[arg-type]
    assert resource_ids_from_columns({"a": []}) == []
    # '%' in the type or a key is literal text, not a format directive
    assert resource_ids_from_columns({"50%s": ["x"]}, type="100%d") == [
        reference_llid([[VERSA_TYPE, "100%d"], ["50%s", "x"]])
    ]
