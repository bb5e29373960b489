"""XarkId and RevisionId: vectors through every constructor and view, strict parsing, properties."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
import pickle
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pidkit.errors import PidkitError, TimestampRangeError, XarkIdError
from pidkit.xarkid import RevisionId, XarkId

VECTOR_FILE = Path(__file__).parent / "data" / "vectors" / "xarkid.json"
DATA: dict[str, Any] = json.loads(VECTOR_FILE.read_text(encoding="utf-8"))
VECTORS: list[dict[str, Any]] = DATA["vectors"]
INVALID_COMPACT: list[str] = DATA["invalid_compact"]

MAX_MS = (1 << 48) - 1
MAX_RANDOM = (1 << 72) - 1
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

ms_st = st.integers(min_value=0, max_value=MAX_MS)
random_st = st.integers(min_value=0, max_value=MAX_RANDOM)
xarkid_st = st.builds(lambda ms, r: XarkId.from_parts(unix_ms=ms, random=r), ms_st, random_st)


def vid(v: dict[str, Any]) -> str:
    return str(v["compact"])


def expected_bytes(v: dict[str, Any]) -> bytes:
    return int(v["unix_ms"]).to_bytes(6, "big") + bytes.fromhex(v["random_hex"])


# --- vectors ---------------------------------------------------------------------------------------------


def constructions(v: dict[str, Any]) -> dict[str, XarkId]:
    guid = str(v["guid"])
    return {
        "parse(compact)": XarkId.parse(v["compact"]),
        "XarkId(compact)": XarkId(v["compact"]),
        "parse(guid)": XarkId.parse(guid),
        "parse(GUID upper)": XarkId.parse(guid.upper()),
        "parse(hex)": XarkId.parse(guid.replace("-", "")),
        "parse({guid})": XarkId.parse("{" + guid + "}"),
        "from_int": XarkId.from_int(int.from_bytes(expected_bytes(v), "big")),
        "from_bytes": XarkId.from_bytes(expected_bytes(v)),
        "from_parts": XarkId.from_parts(unix_ms=v["unix_ms"], random=int(v["random_hex"], 16)),
        "from_guid(UUID)": XarkId.from_guid(uuid.UUID(guid)),
        "from_guid(str)": XarkId.from_guid(guid),
        "from_guid(lossy)": XarkId.from_guid(uuid.UUID(guid), lossy=True),
    }


@pytest.mark.parametrize("v", VECTORS, ids=vid)
def test_vector_every_constructor_every_view(v: dict[str, Any]) -> None:
    made = constructions(v)
    for how, x in made.items():
        assert x.compact == v["compact"], how
        assert str(x) == v["compact"], how
        assert str(x.guid) == v["guid"], how
        assert x.guid == uuid.UUID(v["guid"]), how
        assert x.hex == v["guid"].replace("-", ""), how
        assert x.unix_ms == v["unix_ms"], how
        assert x.random == int(v["random_hex"], 16), how
        assert x.timestamp == dt.datetime.fromisoformat(v["utc"]), how
        assert x.timestamp.utcoffset() == dt.timedelta(0), how
        assert x.bytes == expected_bytes(v), how
        assert x.int == int.from_bytes(expected_bytes(v), "big"), how
        assert repr(x) == f"XarkId('{v['compact']}')", how
    # every construction is the same value, with the same hash
    assert len(set(made.values())) == 1
    assert len({hash(x) for x in made.values()}) == 1


@pytest.mark.parametrize("v", VECTORS, ids=vid)
def test_vector_guid_version_and_variant(v: dict[str, Any]) -> None:
    g = uuid.UUID(v["guid"])
    assert g.version == 4
    assert v["guid"][14] == "4"  # tttttttt-tttt-4RRR-8RRR-…
    assert v["guid"][19] == "8"


# --- invalid input ---------------------------------------------------------------------------------------

# expected 1-based positions (None: a length error, no single character to point at)
INVALID_POSITIONS: dict[str, int | None] = {
    "InvalidString": None,
    "AYvP5WgA+/+/ASNFZ4mr": 9,
    "AYvP5WgA-_-_ASNFZ4m=": 20,
    "AYvP5WgA-_-_ASNFZ4m": None,
    "AYvP5WgA-_-_ASNFZ4mrx": None,
    "AYvP5WgA-_-_ASNFZ4m!": 20,
}


def test_invalid_table_covers_the_vectors() -> None:
    assert set(INVALID_POSITIONS) == set(INVALID_COMPACT)


@pytest.mark.parametrize("text", INVALID_COMPACT)
def test_invalid_compact(text: str) -> None:
    with pytest.raises(XarkIdError) as info:
        XarkId.parse(text)
    assert info.value.text == text
    assert info.value.position == INVALID_POSITIONS[text]
    assert repr(text) in str(info.value)


BAD_GUIDS = [
    # (text, position, message fragment)
    ("018bcfe5-6800-1fbf-8fbf-0123456789ab", 15, "version nibble"),
    ("018bcfe5-6800-4fbf-9fbf-0123456789ab", 20, "variant nibble"),
    ("018bcfe5-6800-4fbf-afbf-0123456789ab", 20, "variant nibble"),
    ("018bcfe568001fbf8fbf0123456789ab", 13, "version nibble"),
    ("018bcfe568004fbfcfbf0123456789ab", 17, "variant nibble"),
    ("{018bcfe5-6800-0fbf-8fbf-0123456789ab}", 16, "version nibble"),
    ("{018bcfe5-6800-4fbf-0fbf-0123456789ab}", 21, "variant nibble"),
    ("018bcfe56-800-4fbf-8fbf-0123456789ab", 9, "expected '-'"),
    ("018bcfe5-6800-4fbf-8fbf-0123456789ag", 36, "invalid hex digit 'g'"),
    ("018bcfe5 6800-4fbf-8fbf-0123456789ab", 9, "expected '-'"),
    (" 018bcfe568004fbf8fbf0123456789ab ", 1, "expected '{'"),
    ("018bcfe568004fbf8fbf0123456789ab  ", 1, "expected '{'"),
    ("{018bcfe568004fbf8fbf0123456789a }", 33, "invalid hex digit ' '"),
    ("{018bcfe5-6800-4fbf-8fbf-0123456789ab)", 1, "'{' without"),
    ("018bcfe568004fbf8fbf0123456789ab}}", 34, "'}' without"),
    ("018bcfe5-6800-4fbf-8fbf-0123456789ab\n", None, "got 37 characters"),
    ("urn:uuid:018bcfe5-6800-4fbf-8fbf-0123456789ab", None, "got 45 characters"),
    ("", None, "empty"),
]


@pytest.mark.parametrize(("text", "position", "fragment"), BAD_GUIDS, ids=[repr(b[0]) for b in BAD_GUIDS])
def test_bad_guid_text(text: str, position: int | None, fragment: str) -> None:
    with pytest.raises(XarkIdError) as info:
        XarkId.parse(text)
    assert info.value.position == position
    assert info.value.text == text
    assert fragment in str(info.value)


def test_parse_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        XarkId.parse(b"AAAAAAAAAAAAAAAAAAAA")  # type: ignore[arg-type]


# --- GUID conversion -------------------------------------------------------------------------------------

LOSSY = [
    # (GUID not of the XarkId shape, the XarkId RT.XarkId's XarkId(Guid) gives: version nibble and byte 8's
    # high nibble dropped)
    ("018bcfe5-6800-1fbf-8fbf-0123456789ab", "AYvP5WgA-_-_ASNFZ4mr"),
    ("018bcfe5-6800-4fbf-afbf-0123456789ab", "AYvP5WgA-_-_ASNFZ4mr"),
    ("018bcfe5-6800-efbf-0fbf-0123456789ab", "AYvP5WgA-_-_ASNFZ4mr"),
    ("0176c58b-2800-1010-0203-040506070809", "AXbFiygAAQIDBAUGBwgJ"),
    ("00000000-0000-0000-0000-000000000000", "AAAAAAAAAAAAAAAAAAAA"),
    ("ffffffff-ffff-ffff-ffff-ffffffffffff", "_" * 20),
]


@pytest.mark.parametrize(("guid", "compact"), LOSSY)
def test_from_guid_lossy(guid: str, compact: str) -> None:
    with pytest.raises(XarkIdError) as info:
        XarkId.from_guid(uuid.UUID(guid))
    assert info.value.position == (15 if guid[14] != "4" else 20)
    assert info.value.text == guid
    with pytest.raises(XarkIdError):
        XarkId.from_guid(guid)
    with pytest.raises(XarkIdError):
        XarkId.parse(guid)
    assert str(XarkId.from_guid(uuid.UUID(guid), lossy=True)) == compact
    assert str(XarkId.from_guid(guid, lossy=True)) == compact
    assert str(XarkId.from_guid(guid.upper().replace("-", ""), lossy=True)) == compact


def test_from_guid_lossy_still_checks_syntax() -> None:
    with pytest.raises(XarkIdError) as info:
        XarkId.from_guid("018bcfe5-6800-1fbf-8fbf-0123456789ax", lossy=True)
    assert info.value.position == 36


# --- other constructors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [-1, 1 << 120])
def test_from_int_range(value: int) -> None:
    with pytest.raises(XarkIdError):
        XarkId.from_int(value)


@pytest.mark.parametrize("n", [14, 16, 0])
def test_from_bytes_length(n: int) -> None:
    with pytest.raises(XarkIdError):
        XarkId.from_bytes(bytes(n))


@pytest.mark.parametrize(("ms", "rnd"), [(-1, 0), (1 << 48, 0), (0, -1), (0, 1 << 72)])
def test_from_parts_range(ms: int, rnd: int) -> None:
    with pytest.raises(XarkIdError):
        XarkId.from_parts(unix_ms=ms, random=rnd)


def test_extremes() -> None:
    top = XarkId.from_parts(unix_ms=MAX_MS, random=MAX_RANDOM)
    assert str(top) == "_" * 20
    assert str(top.guid) == "ffffffff-ffff-4fff-8fff-ffffffffffff"
    with pytest.raises(OverflowError):
        _ = top.timestamp  # year 10889: beyond datetime, as documented


def test_timestamp_past_year_9999_is_a_pidkit_error_naming_the_id() -> None:
    last = XarkId.from_parts(unix_ms=253402300799999, random=0)  # 9999-12-31T23:59:59.999Z
    assert last.timestamp == dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC)
    past = XarkId.from_parts(unix_ms=253402300800000, random=7)
    with pytest.raises(TimestampRangeError, match=r"after 9999-12-31") as info:
        _ = past.timestamp
    assert isinstance(info.value, PidkitError) and isinstance(info.value, OverflowError)
    assert info.value.text == str(past) and repr(str(past)) in str(info.value)
    assert past.unix_ms == 253402300800000  # still usable


# --- value semantics -------------------------------------------------------------------------------------


def test_immutable() -> None:
    x = XarkId.new()
    with pytest.raises(AttributeError, match="immutable"):
        x._int = 5
    with pytest.raises(AttributeError, match="immutable"):
        x.foo = 5
    with pytest.raises(AttributeError, match="immutable"):
        del x._compact
    assert not hasattr(x, "__dict__")


def test_equality_only_between_xarkids() -> None:
    x = XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert x != "AYvP5WgA-_-_ASNFZ4mr"
    assert x != x.guid
    assert x != x.int
    with pytest.raises(TypeError):
        _ = x < "AYvP5WgA-_-_ASNFZ4mr"


def test_pickle_and_copy() -> None:
    for x in (XarkId.new(), XarkId.parse("AXbFiygAAQIDBAUGBwgJ"), RevisionId.for_content({"a": 1})):
        y = pickle.loads(pickle.dumps(x))
        assert y == x
        assert type(y) is type(x)
        assert str(y) == str(x)
        assert copy.copy(x) is x
        assert copy.deepcopy(x) is x


def test_repr_is_pasteable() -> None:
    x = XarkId.new()
    assert eval(repr(x), {"XarkId": XarkId}) == x
    r = RevisionId.for_content("x")
    assert repr(r).startswith("RevisionId('")
    assert eval(repr(r), {"RevisionId": RevisionId}) == r


# --- generation ------------------------------------------------------------------------------------------


def test_new_uses_current_time() -> None:
    before = time.time_ns() // 1_000_000
    x = XarkId.new()
    after = time.time_ns() // 1_000_000
    assert before <= x.unix_ms <= after
    assert len(str(x)) == 20
    # a new() value is the same as one built from its int (the int is decoded lazily)
    assert XarkId.from_int(x.int) == x
    assert str(XarkId.from_int(x.int)) == str(x)
    assert XarkId.parse(str(x)).int == x.int


def test_new_distinct() -> None:
    ids = [XarkId.new() for _ in range(10_000)]
    assert len(set(ids)) == 10_000
    assert len({str(x) for x in ids}) == 10_000


def test_new_many_and_strings() -> None:
    before = time.time_ns() // 1_000_000
    strings = XarkId.new_compact_strings(1000)
    many = XarkId.new_many(1000)
    after = time.time_ns() // 1_000_000
    assert len(set(strings)) == 1000
    assert len(set(many)) == 1000
    assert not set(strings) & {str(x) for x in many}
    for s in strings:
        x = XarkId.parse(s)
        assert before <= x.unix_ms <= after
    for x in many:
        assert before <= x.unix_ms <= after
    assert XarkId.new_compact_strings(0) == []
    with pytest.raises(ValueError):
        XarkId.new_compact_strings(-1)


def test_new_threads_distinct() -> None:
    results: list[list[str]] = [[] for _ in range(8)]

    def work(out: list[str]) -> None:
        out.extend(str(XarkId.new()) for _ in range(5000))

    threads = [threading.Thread(target=work, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    all_ids = [s for r in results for s in r]
    assert len(set(all_ids)) == len(all_ids) == 40_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_does_not_repeat_parent_randomness() -> None:
    XarkId.new()  # fill the pool
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(read_end)
        os.write(write_end, str(XarkId.new())[8:].encode())
        os._exit(0)
    os.close(write_end)
    child_random = os.read(read_end, 100).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    parent_random = str(XarkId.new())[8:]
    assert len(child_random) == 12
    assert child_random != parent_random


# --- properties ------------------------------------------------------------------------------------------


@given(xarkid_st)
def test_roundtrip_compact(x: XarkId) -> None:
    assert XarkId.parse(str(x)) == x
    assert hash(XarkId.parse(str(x))) == hash(x)


@given(xarkid_st)
def test_roundtrip_guid_forms(x: XarkId) -> None:
    g = str(x.guid)
    for form in (g, g.upper(), x.hex, x.hex.upper(), "{" + g + "}", "{" + x.hex + "}"):
        y = XarkId.parse(form)
        assert y == x
        assert hash(y) == hash(x)
    assert XarkId.from_guid(x.guid) == x
    assert XarkId.from_guid(x.guid, lossy=True) == x
    assert x.guid.version == 4
    assert x.guid.variant == uuid.RFC_4122


@given(ms_st, random_st)
def test_from_parts_roundtrip(ms: int, rnd: int) -> None:
    x = XarkId.from_parts(unix_ms=ms, random=rnd)
    assert (x.unix_ms, x.random) == (ms, rnd)
    assert XarkId.from_bytes(x.bytes) == x
    assert XarkId.from_int(x.int) == x
    assert x.bytes == ms.to_bytes(6, "big") + rnd.to_bytes(9, "big")


@given(xarkid_st, xarkid_st)
def test_ordering_is_time_then_random(a: XarkId, b: XarkId) -> None:
    ka, kb = (a.unix_ms, a.random), (b.unix_ms, b.random)
    assert (a < b) == (ka < kb)
    assert (a <= b) == (ka <= kb)
    assert (a > b) == (ka > kb)
    assert (a >= b) == (ka >= kb)
    assert (a == b) == (ka == kb)


@given(st.lists(xarkid_st, max_size=20))
def test_sorting(xs: list[XarkId]) -> None:
    assert [x.int for x in sorted(xs)] == sorted(x.int for x in xs)


near_miss_st = st.one_of(
    st.text(),
    st.text(alphabet=B64URL + "+/=! ", min_size=18, max_size=22),
    st.text(alphabet="0123456789abcdefABCDEF-{} ", min_size=30, max_size=40),
)


@given(near_miss_st)
def test_parse_raises_only_pidkit_errors(text: str) -> None:
    error: PidkitError | None = None
    try:
        x = XarkId.parse(text)
    except XarkIdError as exc:  # the only error type parse may raise
        error = exc
    if error is None:
        # anything accepted is one of the documented forms and round-trips
        assert len(text) in (20, 32, 34, 36, 38)
        assert XarkId.parse(str(x)) == x
    else:
        assert error.text == text
        assert error.position is None or 1 <= error.position <= len(text)


# --- revision ids ----------------------------------------------------------------------------------------


def sha72(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest()[:9], "big")


CANONICAL = [
    # (content, its canonical serialization written out by hand)
    ({}, b"{}"),
    ({"b": "x\r\ny", "a": 1}, b'{"a":1,"b":"x\\ny"}'),
    ({"note": "l1\rl2\r\nl3\n"}, b'{"note":"l1\\nl2\\nl3\\n"}'),
    ({"k\r\n": ["a\rb", {"z": None, "y": True}]}, b'{"k\\n":["a\\nb",{"y":true,"z":null}]}'),
    ({"name": "Jos\u00e9 \u00c5se"}, '{"name":"José Åse"}'.encode()),
    ([1, 2.5, "t"], b'[1,2.5,"t"]'),
    ("plain\r\ntext", b'"plain\\ntext"'),
]


@pytest.mark.parametrize(("content", "canonical"), CANONICAL, ids=[repr(c[1]) for c in CANONICAL])
def test_canonical_serialization(content: object, canonical: bytes) -> None:
    assert RevisionId.canonical_bytes(content) == canonical
    assert RevisionId.content_checksum(content) == sha72(canonical)
    r = RevisionId.for_content(content)
    assert r.random == sha72(canonical)
    assert r.matches(content)


def test_checksum_line_ending_and_key_order_invariant() -> None:
    variants = [
        {"title": "a\r\nb", "body": {"x": "1\r\n2", "y": ["p\r\nq"]}},
        {"title": "a\nb", "body": {"y": ["p\nq"], "x": "1\n2"}},
        {"body": {"x": "1\r2", "y": ["p\rq"]}, "title": "a\rb"},
    ]
    sums = {RevisionId.content_checksum(v) for v in variants}
    assert len(sums) == 1
    r = RevisionId.for_content(variants[0])
    assert all(r.matches(v) for v in variants)


def test_checksum_changes_with_content() -> None:
    base = {"title": "a", "n": 1}
    changed = [{"title": "b", "n": 1}, {"title": "a", "n": 2}, {"title": "a"}, {"title": "a", "n": 1, "x": 0}]
    r = RevisionId.for_content(base)
    for c in changed:
        assert RevisionId.content_checksum(c) != RevisionId.content_checksum(base)
        assert not r.matches(c)


def test_revision_time_is_now() -> None:
    before = time.time_ns() // 1_000_000
    r = RevisionId.for_content({"a": 1})
    after = time.time_ns() // 1_000_000
    assert before <= r.unix_ms <= after
    assert isinstance(r, RevisionId)
    assert isinstance(r, XarkId)


def test_refresh() -> None:
    r = RevisionId.for_content({"v": 1})
    assert r.refresh({"v": 1}) is r
    before = time.time_ns() // 1_000_000
    r2 = r.refresh({"v": 2})
    assert r2 != r
    assert isinstance(r2, RevisionId)
    assert r2.matches({"v": 2})
    assert not r2.matches({"v": 1})
    assert r2.unix_ms >= before


def test_revision_without_checksum_is_valid() -> None:
    r = RevisionId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert not r.matches({"anything": 1})
    assert isinstance(r.refresh({"anything": 1}), RevisionId)
    plain = RevisionId.new()
    assert not plain.matches({})
    assert isinstance(plain, RevisionId)


def test_revision_equals_xarkid_with_same_value() -> None:
    r = RevisionId.parse("AYvP5WgA-_-_ASNFZ4mr")
    x = XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert r == x
    assert hash(r) == hash(x)


def test_checksum_bad_content() -> None:
    with pytest.raises(TypeError):
        RevisionId.content_checksum({"a": object()})
    with pytest.raises(ValueError):
        RevisionId.content_checksum({"a": float("nan")})
    with pytest.raises(PidkitError):
        RevisionId.content_checksum({"a\r\nb": 1, "a\nb": 2})


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(alphabet="ab\n", max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(alphabet="xy\n", max_size=3), inner, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_crlf_variants_property(content: object) -> None:
    def to_crlf(v: object) -> object:
        if isinstance(v, str):
            return v.replace("\n", "\r\n")
        if isinstance(v, dict):
            return {to_crlf(k): to_crlf(i) for k, i in v.items()}
        if isinstance(v, list):
            return [to_crlf(i) for i in v]
        return v

    assert RevisionId.content_checksum(to_crlf(content)) == RevisionId.content_checksum(content)


# --- the GUID fast path against the one rule for UUID text (pidkit.codecs.read_uuid_text) ---------------

_GUID_NOISE = "0123456789abcdefABCDEF48-{} g\n"


@st.composite
def guid_like(draw: st.DrawFn) -> str:
    """GUID text in every shape, XarkId-shaped or not, sometimes with one character changed/added/dropped."""
    value = draw(st.integers(0, (1 << 128) - 1))
    if draw(st.booleans()):  # the XarkId shape: version nibble 4, byte 8's high nibble 8
        value = (value & ~(0xF << 76) & ~(0xF << 60)) | (4 << 76) | (8 << 60)
    h = f"{value:032x}"
    if draw(st.booleans()):
        h = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if draw(st.booleans()):
        h = h.upper()
    if draw(st.booleans()):
        h = "{" + h + "}"
    edit = draw(st.sampled_from(["none", "replace", "insert", "delete"]))
    i = draw(st.integers(0, len(h) - 1))
    c = draw(st.sampled_from(_GUID_NOISE))
    if edit == "replace":
        h = h[:i] + c + h[i + 1 :]
    elif edit == "insert":
        h = h[:i] + c + h[i:]
    elif edit == "delete":
        h = h[:i] + h[i + 1 :]
    return h


@given(guid_like())
def test_guid_fast_path_agrees_with_read_uuid_text(text: str) -> None:
    from pidkit import xarkid
    from pidkit.codecs import read_uuid_text

    plain = read_uuid_text(text)
    plain_ok = plain is not None and (plain.value >> 76) & 0xF == 4 and (plain.value >> 60) & 0xF == 8
    assert (xarkid._GUID_FAST.fullmatch(text) is not None) == plain_ok
    if plain_ok:
        assert plain is not None
        assert XarkId.parse(text).guid.int == plain.value
        assert XarkId.from_guid(text).guid.int == plain.value
    else:
        with pytest.raises(XarkIdError):
            XarkId.from_guid(text)


@given(st.integers(0, (1 << 120) - 1))
def test_compact_slot_and_int_slot_agree(value: int) -> None:
    """A XarkId holds its value in one of two slots (``new()`` sets only the compact string, the other
    constructors only the int; the other is derived on first use): both give the same value everywhere."""
    from pidkit.codecs import b64url_encode

    compact = b64url_encode(value.to_bytes(15, "big"))
    by_text, by_int = XarkId._of_compact(compact), XarkId._of_int(value)
    assert by_text == by_int and hash(by_text) == hash(by_int)
    assert not by_text < by_int and not by_int < by_text
    for view in ("int", "compact", "guid", "hex", "unix_ms", "random", "bytes"):
        assert getattr(XarkId._of_compact(compact), view) == getattr(XarkId._of_int(value), view), view
    assert str(XarkId._of_compact(compact)) == str(XarkId._of_int(value)) == compact
    assert repr(XarkId._of_compact(compact)) == repr(XarkId._of_int(value))
    assert pickle.loads(pickle.dumps(XarkId._of_compact(compact))) == by_int


@given(guid_like() | st.text(st.sampled_from("AYvP5WgA-_ASNFZ4mr!"), min_size=19, max_size=21))
def test_json_schema_pattern_agrees_with_parse(text: str) -> None:
    """The pattern pydantic publishes (pidkit.xarkid.JSON_PATTERN) accepts exactly what parse accepts."""
    import re

    from pidkit import xarkid

    try:
        XarkId.parse(text)
    except XarkIdError:
        parses = False
    else:
        parses = True
    assert (re.fullmatch(xarkid.JSON_PATTERN, text) is not None) == parses
