"""Tid and TidClock: the atproto interop vectors, known values, properties, and the clock's guarantees."""

from __future__ import annotations

import itertools
import pickle
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pidkit.tid as tid_module
from pidkit.errors import PidkitError, TidError
from pidkit.tid import Tid, TidClock, is_valid_tid

VECTORS = Path(__file__).parent / "data" / "vectors" / "atproto"


def interop_lines(name: str) -> list[str]:
    """Lines of an atproto interop file without blank and comment lines; other spaces are kept.

    A comment is ``#`` followed by a space (or ``#`` alone): ``#extra`` in the record key file is a vector.
    """
    lines = (VECTORS / name).read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line and line != "#" and not line.startswith("# ")]


VALID = interop_lines("tid_syntax_valid.txt")
INVALID = interop_lines("tid_syntax_invalid.txt")

# The test's own encoder, written from tid.mdx (not the code under test).
ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"


def encode(micros: int, clock_id: int) -> str:
    value = (micros << 10) | clock_id
    return "".join(ALPHABET[(value >> (5 * (12 - i))) & 31] for i in range(13))


def decode(text: str) -> int:
    value = 0
    for c in text:
        value = value * 32 + ALPHABET.index(c)
    return value


def test_vector_files_are_not_empty() -> None:
    assert len(VALID) == 4
    assert len(INVALID) == 9


@pytest.mark.parametrize("text", VALID, ids=VALID)
def test_interop_valid(text: str) -> None:
    t = Tid.parse(text)
    assert str(t) == text
    assert t.int == decode(text)
    assert is_valid_tid(text)


@pytest.mark.parametrize("text", INVALID, ids=INVALID)
def test_interop_invalid(text: str) -> None:
    with pytest.raises(TidError) as info:
        Tid.parse(text)
    assert info.value.text == text
    assert not is_valid_tid(text)


@pytest.mark.parametrize(
    ("micros", "clock_id"),
    [
        (0, 0),
        (1, 0),
        (0, 1023),
        (1_688_137_381_887_007, 6),
        (1_700_000_000_000_000, 512),
        ((1 << 53) - 1, 1023),
    ],
    ids=["zero", "one-us", "max-clock", "tid.mdx-example", "2023-11", "max"],
)
def test_known_values(micros: int, clock_id: int) -> None:
    expected = encode(micros, clock_id)
    t = Tid.from_parts(micros=micros, clock_id=clock_id)
    assert str(t) == expected
    assert t.micros == micros
    assert t.clock_id == clock_id
    assert t.int == (micros << 10) | clock_id
    assert Tid.parse(expected) == t
    assert Tid.from_int((micros << 10) | clock_id) == t
    assert t.timestamp == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)


def test_spec_example_components() -> None:
    t = Tid.parse("3jzfcijpj2z2a")
    assert (t.micros, t.clock_id) == (decode("3jzfcijpj2z2a") >> 10, decode("3jzfcijpj2z2a") & 1023)
    assert t.timestamp.tzinfo is UTC


def test_from_datetime() -> None:
    dt = datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC)
    micros = (dt - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert str(Tid.from_datetime(dt, 7)) == encode(micros, 7)
    assert Tid.from_datetime(dt, 7).timestamp == dt
    with pytest.raises(TidError, match="timezone-aware"):
        Tid.from_datetime(datetime(2024, 1, 1))
    with pytest.raises(TidError, match="before the Unix epoch"):
        Tid.from_datetime(datetime(1969, 12, 31, tzinfo=UTC))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"micros": -1, "clock_id": 0}, "micros"),
        ({"micros": 1 << 53, "clock_id": 0}, "micros"),
        ({"micros": 0, "clock_id": 1024}, "clock_id"),
        ({"micros": 0, "clock_id": -1}, "clock_id"),
    ],
    ids=["negative-micros", "micros-54-bits", "clock-1024", "clock-negative"],
)
def test_from_parts_range(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(TidError, match=message):
        Tid.from_parts(**kwargs)


def test_from_int_range() -> None:
    assert str(Tid.from_int((1 << 64) - 1)) == "jzzzzzzzzzzzz"
    with pytest.raises(TidError):
        Tid.from_int(1 << 64)
    with pytest.raises(TidError):
        Tid.from_int(-1)


# --- the top bit and strict parsing ---------------------------------------------------------------


@pytest.mark.parametrize("first", list("234567ab"))
def test_top_bit_clear_first_chars(first: str) -> None:
    text = first + "222222222222"
    assert decode(text) < 1 << 63
    t = Tid.parse(text, strict=True)
    assert not t.high_bit


@pytest.mark.parametrize("first", list("cdefghij"))
def test_top_bit_set_first_chars(first: str) -> None:
    text = first + "222222222222"
    assert (1 << 63) <= decode(text) < 1 << 64  # fits in 64 bits, top bit set
    assert Tid.parse(text).high_bit  # the reference syntax accepts it
    with pytest.raises(TidError, match="top bit") as info:
        Tid.parse(text, strict=True)
    assert info.value.position == 1
    assert not is_valid_tid(text, strict=True)


@pytest.mark.parametrize("first", list("klmnopqrstuvwxyz"))
def test_65_bit_first_chars_rejected(first: str) -> None:
    text = first + "222222222222"
    assert decode(text) >= 1 << 64
    with pytest.raises(TidError, match="64 bits") as info:
        Tid.parse(text)
    assert info.value.position == 1


@pytest.mark.parametrize(
    "text",
    ["3jzfcijpj2z2a\n", "3jzfcijpj2z2\n", "\n3jzfcijpj2z2", " 3jzfcijpj2z2", "3jzfcijpj2z2a "],
    ids=["trailing-newline", "newline-as-13th", "leading-newline", "leading-space", "trailing-space"],
)
def test_no_whitespace_hole(text: str) -> None:
    with pytest.raises(TidError):
        Tid.parse(text)
    assert not is_valid_tid(text)


def test_error_names_position() -> None:
    with pytest.raises(TidError) as info:
        Tid.parse("3jzfcijpj2z21")
    assert info.value.position == 13
    assert "'1'" in str(info.value)


def test_peer_accepts_trailing_newline_we_reject() -> None:
    """The atproto package's validator uses ``re.match(...$)``: it lets ``"…\\n"`` through."""
    from atproto_client.models import string_formats as sf  # the dev extra installs atproto
    peer = sf.validate_tid.__wrapped__  # what the package runs when strict_string_format=True
    assert peer("3jzfcijpj2z2a\n", None) == "3jzfcijpj2z2a\n"
    with pytest.raises(TidError):
        Tid.parse("3jzfcijpj2z2a\n")


# --- value type ------------------------------------------------------------------------------------


def test_value_semantics() -> None:
    t = Tid.parse("3jzfcijpj2z2a")
    assert repr(t) == "Tid('3jzfcijpj2z2a')"
    assert eval(repr(t), {"Tid": Tid}) == t
    assert t != "3jzfcijpj2z2a"
    assert hash(t) == hash(Tid.parse("3jzfcijpj2z2a"))
    assert pickle.loads(pickle.dumps(t)) == t
    with pytest.raises(AttributeError):
        t._str = "2222222222222"
    with pytest.raises(TypeError):
        _ = t < "3jzfcijpj2z2b"


def test_str_subclass_input_gives_plain_str() -> None:
    class S(str):
        pass

    t = Tid.parse(S("3jzfcijpj2z2a"))
    assert type(str(t)) is str


# --- properties ------------------------------------------------------------------------------------

micros_st = st.integers(0, (1 << 53) - 1)
clock_st = st.integers(0, 1023)


@given(micros_st, clock_st)
def test_round_trip(micros: int, clock_id: int) -> None:
    t = Tid.from_parts(micros=micros, clock_id=clock_id)
    assert Tid.parse(str(t), strict=True) == t
    assert Tid.from_int(t.int) == t
    assert str(t) == encode(micros, clock_id)


@given(st.integers(0, (1 << 64) - 1))
def test_round_trip_any_64_bit(value: int) -> None:
    t = Tid.from_int(value)
    assert Tid.parse(str(t)).int == value


@given(st.tuples(micros_st, clock_st), st.tuples(micros_st, clock_st))
def test_order_is_time_order(a: tuple[int, int], b: tuple[int, int]) -> None:
    ta = Tid.from_parts(micros=a[0], clock_id=a[1])
    tb = Tid.from_parts(micros=b[0], clock_id=b[1])
    assert (ta < tb) == (a < b)
    assert (ta == tb) == (a == b)
    assert (str(ta) < str(tb)) == (ta.int < tb.int)


@given(st.text(max_size=20))
def test_parse_random_text_raises_only_pidkit_errors(text: str) -> None:
    try:
        t = Tid.parse(text)
    except PidkitError:
        pass  # the only errors it may raise
    else:
        assert str(t) == text


@given(st.text(alphabet=ALPHABET + "01-ABZ\n", min_size=13, max_size=13))
def test_parse_agrees_with_reference_regex(text: str) -> None:
    import re

    expected = re.fullmatch(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}", text) is not None
    assert is_valid_tid(text) == expected


# --- TidClock ------------------------------------------------------------------------------------------


def test_clock_threads_strictly_increasing_no_repeats() -> None:
    clock = TidClock()
    per_thread: list[list[Tid]] = [[] for _ in range(8)]

    def work(out: list[Tid]) -> None:
        for _ in range(10_000):
            out.append(clock.next())

    threads = [threading.Thread(target=work, args=(out,)) for out in per_thread]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for out in per_thread:
        assert len(out) == 10_000
        assert all(a < b for a, b in itertools.pairwise(out))
    everything = [t for out in per_thread for t in out]
    assert len(set(everything)) == 80_000
    assert {t.clock_id for t in everything} == {clock.clock_id}


def test_clock_same_microsecond_and_going_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([5_000, 5_000, 5_000, 3_000, 1_000, 9_000_000, 9_000_000])
    monkeypatch.setattr(tid_module, "_time_ns", lambda: next(readings) * 1000)
    clock = TidClock(3)
    got = [clock.next() for _ in range(7)]
    assert [t.micros for t in got] == [5_000, 5_001, 5_002, 5_003, 5_004, 9_000_000, 9_000_001]
    assert all(t.clock_id == 3 for t in got)


def test_clock_next_many_after_clock_went_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([10_000, 1_000, 1_000])
    monkeypatch.setattr(tid_module, "_time_ns", lambda: next(readings) * 1000)
    clock = TidClock(0)
    first = clock.next_str()
    bulk = clock.next_many(3000)  # crosses 1024-µs boundaries
    last = clock.next_str()
    assert bulk == [encode(10_001 + i, 0) for i in range(3000)]
    assert first < bulk[0]
    assert bulk[-1] < last
    assert Tid.parse(last).micros == 13_001


def test_clock_after_resumes_strictly_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tid_module, "_time_ns", lambda: 1_000_000_000)  # a clock far behind
    after = Tid.from_parts(micros=1_700_000_000_000_000, clock_id=77)
    clock = TidClock(after=after)
    assert clock.clock_id == 77
    nxt = clock.next()
    assert nxt > after
    assert nxt.micros == after.micros + 1
    other = TidClock(5, after=after).next()
    assert other.micros == after.micros + 1
    assert other.clock_id == 5


def test_clock_uses_wall_time() -> None:
    before = datetime.now(UTC)
    t = TidClock().next()
    after = datetime.now(UTC)
    assert before - timedelta(seconds=1) <= t.timestamp <= after + timedelta(seconds=1)


@pytest.mark.parametrize("bad", [-1, 1024, 1.5, "1", True])
def test_clock_id_validated(bad: object) -> None:
    with pytest.raises(TidError):
        TidClock(bad)  # type: ignore[arg-type]


def test_random_clock_ids_vary() -> None:
    assert len({TidClock().clock_id for _ in range(50)}) > 1


def test_next_many_edges() -> None:
    clock = TidClock(1)
    assert clock.next_many(0) == []
    with pytest.raises(TidError):
        clock.next_many(-1)
    ids = clock.next_many(5000)
    assert len(set(ids)) == 5000
    assert ids == sorted(ids)
    assert all(is_valid_tid(s, strict=True) and s.endswith(encode(0, 1)[-2:]) for s in ids)
