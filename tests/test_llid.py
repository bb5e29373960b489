"""Library.Link resource ids: the published vectors, the reference recipe for any input, Versa Markdown."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import mmh3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pidkit.errors import LlidError
from pidkit.llid import VERSA_TYPE, parse_versa, resource_id, resource_ids, resource_ids_from_versa

DATA = Path(__file__).parent / "data" / "vectors"
PUBLISHED: list[dict[str, Any]] = json.loads(
    (DATA / "librarylink_published.json").read_text(encoding="utf-8")
)


def reference(pairs: Any) -> str:
    """seeds/002 written out plainly: compact JSON, MurmurHash3 x64-128 low 64 bits, int64 BE, base64url."""
    text = json.dumps(pairs, separators=(",", ":"))
    low64 = mmh3.hash64(text)[0]
    return base64.urlsafe_b64encode(struct.pack(">q", low64)).rstrip(b"=").decode("ascii")


def vector_id(v: dict[str, Any]) -> str:
    return str(v["expected"])


def test_published_file_is_read() -> None:
    assert len(PUBLISHED) == 8


@pytest.mark.parametrize("vector", PUBLISHED, ids=vector_id)
def test_published_vectors(vector: dict[str, Any]) -> None:
    pairs = vector["pairs"]
    assert json.dumps(pairs, separators=(",", ":")) == vector["plaintext"]  # the vector is self-consistent
    assert resource_id(pairs) == vector["expected"]
    assert resource_id([tuple(p) for p in pairs]) == vector["expected"]
    assert reference(pairs) == vector["expected"]


@pytest.mark.parametrize("vector", PUBLISHED, ids=vector_id)
def test_published_intermediates(vector: dict[str, Any]) -> None:
    low64 = mmh3.hash64(vector["plaintext"])[0]
    assert low64 == int(vector["low64_signed_hex"], 16)
    assert low64.to_bytes(8, "big", signed=True).hex() == vector["be_bytes"]


def test_bulk_matches_single() -> None:
    many = [v["pairs"] for v in PUBLISHED]
    assert resource_ids(many) == [v["expected"] for v in PUBLISHED]
    assert resource_ids([]) == []


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [["", ""]],
        [["name", 'Say "hi"']],
        [["path", "C:\\temp"]],
        [["ctl", "a\x00b\x1fc\x7f"]],
        [["tab", "a\tb\nc\r"]],
        [["name", "Ada Lovelace—Byron"]],
        [["name", "Zoë"], ["place", "Zürich"]],
        [["emoji", "\U0001f4a9"]],
        [["lone", "\ud800"], ["low", "\udc00x"]],
        [["bom", "\ufeff"], ["ls", "\u2028"]],
        [["slash", "</script>"]],
    ],
    ids=[
        "empty",
        "empty-strings",
        "quote",
        "backslash",
        "controls-and-del",
        "whitespace-escapes",
        "em-dash",
        "latin1",
        "astral",
        "lone-surrogates",
        "bom-ls",
        "slash-not-escaped",
    ],
)
def test_escaping_matches_reference(pairs: list[list[str]]) -> None:
    assert resource_id(pairs) == reference(pairs)
    assert resource_ids([pairs]) == [reference(pairs)]


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ("ab", "list of"),
        ({"a": "b"}, "list of"),
        ([["a", 1]], "pair 0: value must be a str"),
        ([["a", "b"], [2, "b"]], "pair 1: key must be a str"),
        ([["a", "b"], ["a"]], "pair 1 is not"),
        ([["a", "b", "c"]], "pair 0 is not"),
        ([["a", "b", "c"], ["d"]], "pair 0 is not"),
        (["ab"], "pair 0 is not"),
        ([{"a": 1, "b": 2}], "pair 0 is not"),
        ([["a", None]], "pair 0: value"),
        ([[b"a", "b"]], "pair 0: key"),
    ],
    ids=[
        "string",
        "dict",
        "int-value",
        "int-key",
        "short-pair",
        "long-pair",
        "long-short-compensating",
        "two-char-string-pair",
        "dict-pair",
        "none",
        "bytes",
    ],
)
def test_invalid_pairs(pairs: Any, message: str) -> None:
    with pytest.raises(LlidError, match=message):
        resource_id(pairs)
    with pytest.raises(LlidError):
        resource_ids([[["ok", "ok"]], pairs])


def test_str_subclass_values() -> None:
    class S(str):
        pass

    pairs = [[S("k"), S("v")]]
    assert resource_id(pairs) == reference(pairs)


# --- properties: every input agrees with the reference recipe -----------------------------------------

any_char = st.characters(codec=None, exclude_categories=())  # everything, lone surrogates included
ascii_heavy = st.sampled_from([chr(c) for c in range(0x80)])
some_text = st.one_of(st.text(any_char, max_size=30), st.text(ascii_heavy, max_size=30))
pairs_st = st.lists(st.tuples(some_text, some_text).map(list), max_size=6)


@given(pairs_st)
def test_matches_reference_for_any_unicode(pairs: list[list[str]]) -> None:
    assert resource_id(pairs) == reference(pairs)


@given(st.lists(pairs_st, max_size=5))
def test_bulk_matches_reference(many: list[list[list[str]]]) -> None:
    assert resource_ids(many) == [reference(p) for p in many]


@given(pairs_st)
def test_shape(pairs: list[list[str]]) -> None:
    rid = resource_id(pairs)
    assert len(rid) == 11
    assert set(rid) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


# --- Versa literate Markdown ---------------------------------------------------------------------------

SEED_DOC = """\
# @docheader

* @schema: http://schema.org/

# jon-postel [Person]

* name: Jonathan Bruce Postel
* birthDate: 1943-08-06
* gender: male
* description: {description}
""".format(
    description="Jonathan Bruce Postel was an American computer scientist who made many significant "
    "contributions to the development of the Internet, particularly with respect to standards."
)

SEED_DOC_DEATH = """\
# @docheader

* @iri:
    * @base: http://example.org/people/
    * @schema: http://schema.org/

<!-- the seed's second example: another database also records a deathDate -->

# jon-postel [Person]

* name: Jonathan Bruce Postel
* birthDate: 1943-08-06
* deathDate: 1998-10-16
* gender: male
"""

PUBLISHED_BY_ID = {v["expected"]: v for v in PUBLISHED}


def test_versa_seed_first_example() -> None:
    (res,) = parse_versa(SEED_DOC)
    assert res.id == "jon-postel"
    assert res.type == "http://schema.org/Person"
    assert [p.key for p in res.properties] == [
        "http://schema.org/name",
        "http://schema.org/birthDate",
        "http://schema.org/gender",
        "http://schema.org/description",
    ]
    assert res.get("http://schema.org/name") == ["Jonathan Bruce Postel"]
    # the published vector for [type, name, birthDate] of Jon Postel
    expected = "-7hP9d_Xo8M"
    assert PUBLISHED_BY_ID[expected]["pairs"] == [
        [VERSA_TYPE, "http://schema.org/Person"],
        ["http://schema.org/name", "Jonathan Bruce Postel"],
        ["http://schema.org/birthDate", "1943-08-06"],
    ]
    assert resource_ids_from_versa(SEED_DOC, keys=["name", "birthDate"]) == [("jon-postel", expected)]
    assert resource_ids_from_versa(SEED_DOC, keys=["birthDate", "name"]) == [("jon-postel", expected)]
    full = ["http://schema.org/name", "http://schema.org/birthDate"]
    assert resource_ids_from_versa(SEED_DOC, keys=full) == [("jon-postel", expected)]


def test_versa_seed_second_example() -> None:
    got = resource_ids_from_versa(SEED_DOC_DEATH, keys=["name", "birthDate", "deathDate"])
    assert got == [("http://example.org/people/jon-postel", "65IMbTlnlOQ")]


def test_versa_values_and_attributes() -> None:
    doc = """\
# @docheader
* @iri:
    * @base: http://example.org/
    * @schema: http://schema.org/
    * dc: http://purl.org/dc/terms

## book1 [Book]
* name: "  The Catcher in the Rye  "
* image: <cover.jpg>
* @dc/title: Catcher
* <http://example.org/p>: 'quoted'
* offers: $6.99
    * price: 6.99
    * priceCurrency: USD

### [Thing]
* name: anonymous
"""
    book, thing = parse_versa(doc)
    assert book.id == "http://example.org/book1"
    assert book.type == "http://schema.org/Book"
    props = {p.key: p for p in book.properties}
    assert props["http://schema.org/name"].value == "  The Catcher in the Rye  "
    assert props["http://schema.org/name"].kind == "text"
    assert props["http://schema.org/image"].value == "http://example.org/cover.jpg"
    assert props["http://schema.org/image"].kind == "resource"
    assert props["http://purl.org/dc/terms/title"].value == "Catcher"
    assert props["http://example.org/p"].value == "quoted"
    assert props["http://schema.org/offers"].attributes == (
        ("http://schema.org/price", "6.99"),
        ("http://schema.org/priceCurrency", "USD"),
    )
    assert props["http://schema.org/offers"].line == 12
    assert thing.id is None
    assert resource_ids_from_versa(doc, keys=["name"])[1][0] == ""


def test_versa_without_docheader_keeps_names() -> None:
    (res,) = parse_versa("# x [T]\n* k: v\n")
    pairs = [[VERSA_TYPE, "T"], ["k", "v"]]
    assert resource_ids_from_versa("# x [T]\n* k: v\n", keys=["k"]) == [("x", reference(pairs))]
    assert res.type == "T"


@pytest.mark.parametrize(
    ("doc", "line"),
    [
        ("* k: v\n# x\n", 1),
        ("# x\n\n* no colon here\n", 3),
        ("# a b c\n* k: v\n", 1),
        ("# @docheader\n* @bogus: x\n", 2),
        ("# x\n* @nope/name: v\n", 2),
    ],
    ids=["item-before-header", "no-colon", "bad-header", "unknown-header-key", "unknown-abbreviation"],
)
def test_versa_errors_name_the_line(doc: str, line: int) -> None:
    with pytest.raises(LlidError) as info:
        parse_versa(doc)
    assert info.value.line == line


def test_versa_keys_must_be_a_list() -> None:
    with pytest.raises(LlidError):
        resource_ids_from_versa(SEED_DOC, keys="name")


def test_del_is_escaped_like_json_dumps() -> None:
    # regression: DEL (U+007F) took the fast path unescaped; json.dumps writes \u007f
    pairs = [["a", "x\x7fy"]]
    text = json.dumps(pairs, separators=(",", ":"))
    assert "\\u007f" in text
    expected = base64.urlsafe_b64encode(struct.pack(">q", mmh3.hash64(text)[0])).rstrip(b"=").decode()
    assert resource_id(pairs) == expected
    assert resource_ids([pairs]) == [expected]


def test_unclosed_comments_run_to_the_end() -> None:
    # regression: a lazy <!--.*?--> regex rescanned to the end for every unclosed comment (quadratic;
    # the time bound is checked by the stress suite's scaling tests)
    assert parse_versa("<!--" * 1000) == []
    doc = "# a [Person]\n\n* name: A\n<!-- never closed\n# b [Person]\n\n* name: B\n"
    assert [r.id for r in parse_versa(doc)] == ["a"]
