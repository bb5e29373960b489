"""RecordKey, KeyType and the NSID syntax: every interop line, the draft RFC's examples, properties."""

from __future__ import annotations

import pickle
import string
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pidkit.errors import PidkitError, RecordKeyError
from pidkit.record_key import KeyType, RecordKey, check_nsid, is_valid_nsid, is_valid_record_key

VECTORS = Path(__file__).parent / "data" / "vectors" / "atproto"


def interop_lines(name: str) -> list[str]:
    """Lines of an atproto interop file without blank and comment lines; other spaces are kept.

    A comment is ``#`` followed by a space (or ``#`` alone): ``#extra`` in the record key file is a vector.
    """
    lines = (VECTORS / name).read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line and line != "#" and not line.startswith("# ")]


def short(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}…({len(text)})"


RKEY_VALID = interop_lines("recordkey_syntax_valid.txt")
RKEY_INVALID = interop_lines("recordkey_syntax_invalid.txt")
NSID_VALID = interop_lines("nsid_syntax_valid.txt")
NSID_INVALID = interop_lines("nsid_syntax_invalid.txt")

# "RFC: Record Keys" (M. Perhats, 2024 draft; no public address, see specs/README.md), its "Examples": the
# draft's list, slightly different from specs/atproto/record-key.mdx's
SEED_VALID = ["1a2b3c", "self", "example.net", "~1.2-3_", "rDg8fH", "prefix:suffix", "_"]
SEED_INVALID = [
    ("alpha/beta", 6),
    (".", 1),
    ("..", 1),
    ("#extra", 1),
    ("any space", 4),
    ("any+space", 4),
    ("number[3]", 7),
    ("number(3)", 7),
    ('"quote"', 1),
    ("dHJ1ZQ==", 7),
]
ALLOWED = string.ascii_letters + string.digits + ".-_:~"


def test_vector_files_are_read() -> None:
    assert len(RKEY_VALID) == 16
    assert len(RKEY_INVALID) == 12
    assert len(NSID_VALID) == 25
    assert len(NSID_INVALID) == 27
    assert " one.two.three" in NSID_INVALID  # leading/trailing spaces are part of the vector


@pytest.mark.parametrize("text", RKEY_VALID, ids=[short(t) for t in RKEY_VALID])
def test_interop_record_key_valid(text: str) -> None:
    key = RecordKey.parse(text)
    assert str(key) == text
    assert is_valid_record_key(text)
    assert KeyType.parse("any").validate(text) == key


@pytest.mark.parametrize("text", RKEY_INVALID, ids=[short(t) for t in RKEY_INVALID])
def test_interop_record_key_invalid(text: str) -> None:
    with pytest.raises(RecordKeyError) as info:
        RecordKey.parse(text)
    assert info.value.text == text
    assert not is_valid_record_key(text)


@pytest.mark.parametrize("text", SEED_VALID)
def test_seed_valid(text: str) -> None:
    assert str(RecordKey.parse(text)) == text


@pytest.mark.parametrize(("text", "position"), SEED_INVALID, ids=[t for t, _ in SEED_INVALID])
def test_seed_invalid_names_position(text: str, position: int) -> None:
    with pytest.raises(RecordKeyError) as info:
        RecordKey.parse(text)
    assert info.value.position == position


def test_length_limits() -> None:
    assert len(str(RecordKey.parse("o" * 512))) == 512
    with pytest.raises(RecordKeyError, match="too long") as info:
        RecordKey.parse("o" * 513)
    assert info.value.position == 513
    with pytest.raises(RecordKeyError, match="empty"):
        RecordKey.parse("")


@pytest.mark.parametrize("text", ["self\n", "self\r\n", "\nself", "self "], ids=repr)
def test_no_whitespace_hole(text: str) -> None:
    with pytest.raises(RecordKeyError):
        RecordKey.parse(text)
    assert not is_valid_record_key(text)


def test_peer_accepts_trailing_newline_we_reject() -> None:
    """The atproto package checks record keys with ``re.match(...$)``: ``"self\\n"`` passes there."""
    from atproto_client.models import string_formats as sf  # the dev extra installs atproto
    peer = sf.validate_record_key.__wrapped__  # what the package runs when strict_string_format=True
    assert peer("self\n", None) == "self\n"
    with pytest.raises(RecordKeyError):
        RecordKey.parse("self\n")


def test_value_semantics() -> None:
    key = RecordKey.parse("Self")
    assert key != RecordKey.parse("self")  # case-sensitive
    assert key != "Self"
    assert repr(key) == "RecordKey('Self')"
    assert eval(repr(key), {"RecordKey": RecordKey}) == key
    assert pickle.loads(pickle.dumps(key)) == key
    assert len({key, RecordKey.parse("Self")}) == 1
    with pytest.raises(AttributeError):
        key._str = "x"


# --- NSID ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", NSID_VALID, ids=[short(t) for t in NSID_VALID])
def test_interop_nsid_valid(text: str) -> None:
    check_nsid(text)
    assert is_valid_nsid(text)


@pytest.mark.parametrize("text", NSID_INVALID, ids=[short(t) for t in NSID_INVALID])
def test_interop_nsid_invalid(text: str) -> None:
    with pytest.raises(RecordKeyError):
        check_nsid(text)
    assert not is_valid_nsid(text)


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("com.example.foo.*", 17),
        ("0two.example.foo", 1),
        ("com.example-.foo", 12),
        ("a-0.b-1.c-o", 10),
        ("one..three.x", 5),
    ],
)
def test_nsid_error_positions(text: str, position: int) -> None:
    with pytest.raises(RecordKeyError) as info:
        check_nsid(text)
    assert info.value.position == position


# --- key types -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["tid", "nsid", "any", "literal:self", "literal:~1.2-3_"])
def test_key_type_round_trip(text: str) -> None:
    kt = KeyType.parse(text)
    assert str(kt) == text
    assert KeyType(text) == kt
    assert eval(repr(kt), {"KeyType": KeyType}) == kt


@pytest.mark.parametrize(
    "text", ["", "TID", "literal:", "literal:.", "literal:a/b", "literal", "uuid", "any "]
)
def test_key_type_invalid(text: str) -> None:
    with pytest.raises(RecordKeyError):
        KeyType.parse(text)


@pytest.mark.parametrize(
    ("key_type", "key", "ok"),
    [
        ("tid", "3jzfcijpj2z2a", True),
        ("tid", "self", False),
        ("tid", "3JZFCIJPJ2Z2A", False),
        ("tid", "kjzfcijpj2z2a", False),
        ("nsid", "app.bsky.feed.post", True),
        ("nsid", "example.com", False),
        ("nsid", "com.example.fooBar.2", False),
        ("literal:self", "self", True),
        ("literal:self", "Self", False),
        ("literal:self", "self.", False),
        ("any", "3jzfcijpj2z2a", True),
        ("any", "pre:fix", True),
        ("any", "alpha/beta", False),
        ("nsid", "..", False),
    ],
)
def test_key_type_validate(key_type: str, key: str, ok: bool) -> None:
    kt = KeyType.parse(key_type)
    if ok:
        assert kt.validate(key) == RecordKey.parse(key)
        assert kt.validate(RecordKey.parse(key)) == RecordKey.parse(key)
    else:
        with pytest.raises(RecordKeyError) as info:
            kt.validate(key)
        assert info.value.text == key


# --- properties ------------------------------------------------------------------------------------


@given(st.text(alphabet=ALLOWED, min_size=1, max_size=600))
def test_allowed_alphabet(text: str) -> None:
    expected = len(text) <= 512 and text not in (".", "..")
    assert is_valid_record_key(text) == expected
    if expected:
        assert str(RecordKey.parse(text)) == text


@given(st.text(max_size=30))
def test_random_text_raises_only_pidkit_errors(text: str) -> None:
    error: PidkitError | None = None
    try:
        key = RecordKey.parse(text)
    except PidkitError as exc:
        error = exc
    if error is not None:
        assert error.text == text
    else:
        assert RecordKey.parse(str(key)) == key


@given(st.text(alphabet=ALLOWED, min_size=1, max_size=20), st.text(alphabet=ALLOWED, min_size=1, max_size=20))
def test_order_is_string_order(a: str, b: str) -> None:
    assume(a not in (".", "..") and b not in (".", ".."))
    assert (RecordKey.parse(a) < RecordKey.parse(b)) == (a < b)


@given(st.text(max_size=40))
def test_nsid_random_text_raises_only_record_key_errors(text: str) -> None:
    try:
        check_nsid(text)
    except RecordKeyError:
        assert not is_valid_nsid(text)
    else:
        assert is_valid_nsid(text)


def test_literal_key_type_error_names_the_whole_input() -> None:
    # regression: the error named the value ('a b' at 2) rather than the input given
    with pytest.raises(RecordKeyError) as err:
        KeyType.parse("literal:a b")
    assert (err.value.text, err.value.position) == ("literal:a b", 10)
