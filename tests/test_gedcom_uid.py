"""GedcomUid: PAF checksum vectors, classification, verbatim preservation, XarkId conversion, properties."""

from __future__ import annotations

import copy
import pickle
import re
import uuid
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pidkit.errors import GedcomUidError
from pidkit.gedcom_uid import GedcomUid, UidForm, paf_checksum
from pidkit.xarkid import XarkId

DATA = Path(__file__).parent / "data"


def load_paf_vectors() -> list[tuple[str, str, str]]:
    rows = []
    for line in (DATA / "vectors" / "paf_uid.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        value, status, source = line.split("\t")
        rows.append((value, status, source))
    return rows


PAF_VECTORS = load_paf_vectors()


def test_vector_file_read() -> None:
    assert len(PAF_VECTORS) == 9
    assert {status for _, status, _ in PAF_VECTORS} == {"valid", "no-checksum", "bad-checksum"}


@pytest.mark.parametrize(("value", "status", "source"), PAF_VECTORS, ids=[v[0] for v in PAF_VECTORS])
def test_paf_vector(value: str, status: str, source: str) -> None:
    uid = GedcomUid.parse(value)
    assert uid.form == UidForm(status), source
    assert uid.form == status  # StrEnum compares equal to its value
    assert str(uid) == value
    assert uid.bytes16 == bytes.fromhex(value[:32])
    if status == "valid":
        assert uid.checksum_ok is True
        assert GedcomUid.checksum(bytes.fromhex(value[:32])) == value[32:]
        assert uid.to_uuid() == uuid.UUID(value[:32])
    elif status == "bad-checksum":
        assert uid.checksum_ok is False
        assert GedcomUid.checksum(bytes.fromhex(value[:32])) != value[32:]
        assert uid.to_uuid() is None
    else:
        assert uid.checksum_ok is None
        assert uid.to_uuid() == uuid.UUID(value)


# checksums stated in the vector file's comments, and worked by hand from U2's formula
KNOWN_CHECKSUMS = [
    (bytes(16), "0000"),
    (b"\xff" * 16, "F078"),  # 16*255 mod 256 = 0xF0; 136*255 mod 256 = 0x78
    (bytes(range(16)), "78A8"),  # 120 = 0x78; sum (16-k)*k, k=0..15 = 680 mod 256 = 0xA8
    (bytes([1]) + bytes(15), "0110"),  # B1 = 1: weight 17 - 1 = 16
    (bytes(15) + bytes([1]), "0101"),  # B16 = 1: weight 17 - 16 = 1
    (bytes.fromhex("161C15D03ECE47968211BBB2E9EE7F4F"), "A5A6"),
]


@pytest.mark.parametrize(("data", "expected"), KNOWN_CHECKSUMS, ids=[d.hex() for d, _ in KNOWN_CHECKSUMS])
def test_known_checksums(data: bytes, expected: str) -> None:
    assert GedcomUid.checksum(data) == expected
    assert paf_checksum(data) == expected


@pytest.mark.parametrize("n", [0, 15, 17, 18])
def test_checksum_needs_16_bytes(n: int) -> None:
    with pytest.raises(GedcomUidError):
        GedcomUid.checksum(bytes(n))


# --- classification and verbatim preservation -------------------------------------------------------------

FORMS = [
    ("161c15d03ece47968211bbb2e9ee7f4fa5a6", UidForm.VALID),  # lowercase: classified, kept as written
    ("161C15D03ECE47968211BBB2E9EE7F4Fa5a6", UidForm.VALID),
    ("161C15D03ECE47968211BBB2E9EE7F4F0000", UidForm.BAD_CHECKSUM),
    ("161c15d03ece47968211bbb2e9ee7f4f", UidForm.NO_CHECKSUM),
    ("550e8400-e29b-11d4-a716-446655440000", UidForm.UUID),
    ("550E8400-E29B-11D4-A716-446655440000", UidForm.UUID),
    ("{550e8400-e29b-11d4-a716-446655440000}", UidForm.UUID),
    ("{550e8400e29b11d4a716446655440000}", UidForm.UUID),
    ("f096b664-5e40-40e2-bb72-c1664a46fe45", UidForm.UUID),
    # anything else is "other", still kept
    # U1: only the first 36 characters are significant
    ("161C15D03ECE47968211BBB2E9EE7F4FA5A6 ", UidForm.VALID),
    ("161C15D03ECE47968211BBB2E9EE7F4FA5A6X", UidForm.VALID),
    ("161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)", UidForm.VALID),
    ("161C15D03ECE47968211BBB2E9EE7F4F0000 (extra)", UidForm.BAD_CHECKSUM),
    ("550e8400-e29b-11d4-a716-446655440000 (extra)", UidForm.UUID),  # a dashed UUID is 36 characters
    ("550e8400-e29b-11d4-a716-446655440000}", UidForm.UUID),
    # anything else is "other", still kept
    (" 161C15D03ECE47968211BBB2E9EE7F4FA5A6", UidForm.OTHER),
    ("161C15D03ECE47968211BBB2E9EE7F4F (extra)", UidForm.OTHER),  # 32 digits + text: first 36 no form
    ("161C15D03ECE47968211BBB2E9EE7F4FA5A", UidForm.OTHER),
    ("161C15D03ECE47968211BBB2E9EE7F4G", UidForm.OTHER),
    ("550e8400-e29b-11d4-a716-44665544000", UidForm.OTHER),
    ("550e8400-e29b-11d4-a716446655440000", UidForm.OTHER),
    ("{550e8400-e29b-11d4-a716-446655440000", UidForm.OTHER),
    ("{{550e8400-e29b-11d4-a716-446655440000}}", UidForm.OTHER),
    ("urn:uuid:550e8400-e29b-11d4-a716-446655440000", UidForm.OTHER),
    ("AYvP5WgA-_-_ASNFZ4mr", UidForm.OTHER),
    ("I1", UidForm.OTHER),
    ("x", UidForm.OTHER),
    ("\u00e9t\u00e9 2024", UidForm.OTHER),
    ("a\tb", UidForm.OTHER),
]


@pytest.mark.parametrize(("text", "form"), FORMS, ids=[repr(t) for t, _ in FORMS])
def test_forms_and_verbatim(text: str, form: UidForm) -> None:
    uid = GedcomUid.parse(text)
    assert uid.form is form
    assert str(uid) == text
    assert uid.value == text
    assert GedcomUid.parse(str(uid)) == uid
    assert eval(repr(uid), {"GedcomUid": GedcomUid}) == uid
    if form is UidForm.OTHER:
        assert uid.bytes16 is None
        assert uid.to_uuid() is None
        assert uid.checksum_ok is None


BAD = [
    ("", None, "empty"),
    (" ", 1, "whitespace"),
    ("\t \t", 1, "whitespace"),
    ("abc\n", 4, "line break"),
    ("a\r\nb", 2, "line break"),
    ("\r", 1, "line break"),
    ("161C15D03ECE47968211BBB2E9EE7F4FA5A6\n", 37, "line break"),
]


@pytest.mark.parametrize(("text", "position", "fragment"), BAD, ids=[repr(b[0]) for b in BAD])
def test_unusable_values(text: str, position: int | None, fragment: str) -> None:
    with pytest.raises(GedcomUidError) as info:
        GedcomUid.parse(text)
    assert info.value.text == text
    assert info.value.position == position
    assert fragment in str(info.value)


def test_parse_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        GedcomUid.parse(b"I1")  # type: ignore[arg-type]


def test_uuid_forms_to_uuid() -> None:
    expected = uuid.UUID("550e8400-e29b-11d4-a716-446655440000")
    for text in (
        "550e8400-e29b-11d4-a716-446655440000",
        "550E8400-E29B-11D4-A716-446655440000",
        "{550e8400-e29b-11d4-a716-446655440000}",
        "{550e8400e29b11d4a716446655440000}",
        "550e8400e29b11d4a716446655440000",
    ):
        uid = GedcomUid.parse(text)
        assert uid.to_uuid() == expected, text
        assert uid.bytes16 == expected.bytes, text


# --- equality and identity ----------------------------------------------------------------------------


def test_equality_is_verbatim() -> None:
    a = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    b = GedcomUid.parse("161c15d03ece47968211bbb2e9ee7f4fa5a6")
    assert a != b
    assert a == GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    assert hash(a) == hash(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6"))
    assert a != "161C15D03ECE47968211BBB2E9EE7F4FA5A6"
    assert len({a, b, GedcomUid(str(a))}) == 2


def test_same_identity() -> None:
    paf = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    same = [
        "161c15d03ece47968211bbb2e9ee7f4fa5a6",
        "161C15D03ECE47968211BBB2E9EE7F4F",
        "161c15d0-3ece-4796-8211-bbb2e9ee7f4f",
        "{161C15D0-3ECE-4796-8211-BBB2E9EE7F4F}",
        "161C15D03ECE47968211BBB2E9EE7F4FA5A6 ",  # U1: the 37th character is not significant
        "161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)",
        "161c15d0-3ece-4796-8211-bbb2e9ee7f4f and more",
    ]
    for text in same:
        other = GedcomUid.parse(text)
        assert paf.same_identity(other), text
        assert other.same_identity(paf), text
    different = [
        "045D7A870C633045BE9710119FC387903581",
        "I1",
        " 161C15D03ECE47968211BBB2E9EE7F4FA5A6",
        "161C15D03ECE47968211BBB2E9EE7F4F0000",  # bad checksum: U4 rejected, all 36 significant
    ]
    for text in different:
        assert not paf.same_identity(GedcomUid.parse(text)), text
    assert GedcomUid.parse("I1").same_identity(GedcomUid.parse("I1"))
    assert not GedcomUid.parse("I1").same_identity(GedcomUid.parse("i1"))


def test_immutable_pickle_copy() -> None:
    uid = GedcomUid.parse(" odd ")
    with pytest.raises(AttributeError, match="immutable"):
        uid._text = "x"
    with pytest.raises(AttributeError, match="immutable"):
        del uid._form
    assert pickle.loads(pickle.dumps(uid)) == uid
    assert copy.copy(uid) is uid
    assert copy.deepcopy(uid) is uid


# --- new values and XarkIds ---------------------------------------------------------------------------

PAF_SHAPE = re.compile(r"[0-9A-F]{36}")
UUID_SHAPE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def test_new_is_valid_paf() -> None:
    seen = set()
    for _ in range(200):
        uid = GedcomUid.new()
        text = str(uid)
        assert PAF_SHAPE.fullmatch(text)
        assert uid.form is UidForm.VALID
        assert uid.checksum_ok is True
        u = uid.to_uuid()
        assert u is not None
        assert u.version == 4
        seen.add(text)
    assert len(seen) == 200


def test_new_uuid() -> None:
    uid = GedcomUid.new_uuid()
    assert UUID_SHAPE.fullmatch(str(uid))
    assert uid.form is UidForm.UUID
    assert uid.to_uuid() == uuid.UUID(str(uid))
    assert GedcomUid.new_uuid() != uid


def test_from_bytes() -> None:
    assert str(GedcomUid.from_bytes(bytes(range(16)))) == "000102030405060708090A0B0C0D0E0F78A8"


XARKID_CASES = [
    ("AYvP5WgA-_-_ASNFZ4mr", "018bcfe5-6800-4fbf-8fbf-0123456789ab"),
    ("AXbFiygAAQIDBAUGBwgJ", "0176c58b-2800-4010-8203-040506070809"),
]


@pytest.mark.parametrize(("compact", "guid"), XARKID_CASES)
def test_from_xarkid(compact: str, guid: str) -> None:
    x = XarkId.parse(compact)
    five = GedcomUid.from_xarkid(x)
    seven = GedcomUid.from_xarkid(x, gedcom7=True)
    assert str(five) == compact
    assert five.form is UidForm.OTHER
    assert str(seven) == guid
    assert seven.form is UidForm.UUID
    assert five.to_xarkid() == x
    assert seven.to_xarkid() == x
    assert GedcomUid.parse(guid.replace("-", "").upper()).to_xarkid() == x


@pytest.mark.parametrize(
    "text",
    [
        "I1",
        "550e8400-e29b-41d4-a716-446655440000",  # variant nibble a: not XarkId-shaped
        "550e8400-e29b-11d4-8716-446655440000",  # version 1
        "161C15D03ECE47968211BBB2E9EE7F4F0000",  # bad checksum: no reading
        "AYvP5WgA+/+/ASNFZ4mr",  # 20 chars, not base64url
    ],
)
def test_to_xarkid_none(text: str) -> None:
    assert GedcomUid.parse(text).to_xarkid() is None


# --- real files ---------------------------------------------------------------------------------------

UID_LINE = re.compile(r"\d+ (_UID|UID) (.+)")


def uid_values(path: Path) -> list[str]:
    text = path.read_bytes().decode("latin-1")  # UID values are ASCII; any 8-bit encoding reads them
    values = []
    for line in text.splitlines():
        m = UID_LINE.fullmatch(line.lstrip("\ufeff\xef\xbb\xbf \t"))
        if m:
            values.append(m.group(2))
    return values


REAL_FILES = [
    # (file, how many _UID/UID lines, the form of all of them)
    ("real/bach.ged", 47, UidForm.VALID),
    ("real/basic.ged", 5, UidForm.VALID),
    ("real/EnglishTudorRoyalFamily.ged", 268, UidForm.VALID),
    ("familysearch/maximal70.ged", 18, UidForm.UUID),
]


@pytest.mark.parametrize(("name", "count", "form"), REAL_FILES, ids=[f[0] for f in REAL_FILES])
def test_real_file_uids(name: str, count: int, form: UidForm) -> None:
    values = uid_values(DATA / "gedcom" / name)
    assert len(values) == count
    for v in values:
        uid = GedcomUid.parse(v)
        assert uid.form is form, v
        assert str(uid) == v


# --- properties ---------------------------------------------------------------------------------------


@given(st.binary(min_size=16, max_size=16))
def test_checksum_then_parse_is_valid(data: bytes) -> None:
    text = data.hex().upper() + GedcomUid.checksum(data)
    uid = GedcomUid.parse(text)
    assert uid.form is UidForm.VALID
    assert uid.bytes16 == data
    assert uid.to_uuid() == uuid.UUID(bytes=data)
    assert GedcomUid.from_bytes(data) == uid


@given(st.binary(min_size=16, max_size=16), st.integers(min_value=0, max_value=35), st.integers(1, 15))
def test_flipping_a_digit_breaks_the_checksum(data: bytes, index: int, delta: int) -> None:
    text = data.hex().upper() + GedcomUid.checksum(data)
    digit = (int(text[index], 16) + delta) % 16
    damaged = text[:index] + f"{digit:X}" + text[index + 1 :]
    assert damaged != text
    assert GedcomUid.parse(damaged).form is UidForm.BAD_CHECKSUM


@given(st.text(min_size=1).filter(lambda t: not t.isspace() and "\n" not in t and "\r" not in t))
def test_any_line_value_is_kept_verbatim(text: str) -> None:
    uid = GedcomUid.parse(text)
    assert str(uid) == text
    assert isinstance(uid.form, UidForm)
    assert (uid.bytes16 is None) == (uid.form is UidForm.OTHER)


@given(st.text())
def test_parse_raises_only_gedcom_uid_error(text: str) -> None:
    error: GedcomUidError | None = None
    try:
        uid = GedcomUid.parse(text)
    except GedcomUidError as exc:
        error = exc
    if error is None:
        assert str(uid) == text
    else:
        assert error.text == text
        assert text == "" or text.isspace() or "\n" in text or "\r" in text


def test_u1_extra_characters_are_not_significant_but_kept() -> None:
    # Seed U1: "Die ersten 36 Zeichen einer _UID beschreiben die Kennzeichnung. Ggfs. weitere vorhandene
    # Zeichen sind nicht signifikant."
    text = "161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)"
    uid = GedcomUid.parse(text)
    assert str(uid) == text  # never rewritten
    assert uid.significant == "161C15D03ECE47968211BBB2E9EE7F4FA5A6"
    assert uid.bytes16 == bytes.fromhex("161C15D03ECE47968211BBB2E9EE7F4F")
    assert uid.checksum_ok is True
    assert uid.to_uuid() == uuid.UUID("161c15d0-3ece-4796-8211-bbb2e9ee7f4f")
    assert uid.same_identity(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6"))
    assert uid != GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")  # equality stays verbatim
    dashed = GedcomUid.parse("550e8400-e29b-11d4-a716-446655440000/1")
    assert dashed.form is UidForm.UUID
    assert dashed.to_uuid() == uuid.UUID("550e8400-e29b-11d4-a716-446655440000")
    long_other = GedcomUid.parse("x" * 40)
    assert long_other.form is UidForm.OTHER
    assert not long_other.same_identity(GedcomUid.parse("x" * 36 + "yyyy"))


def test_bad_checksum_is_its_own_identity_and_only_probably_the_valid_one() -> None:
    # Seed: U4 (first 32 digits significant when the checksum is wrong) was "klar abgelehnt".
    valid = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    bad = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0000")
    assert not bad.same_identity(valid)
    assert not valid.same_identity(bad)
    assert bad.probably_same(valid)
    assert valid.probably_same(bad)
    assert bad.same_identity(GedcomUid.parse("161c15d03ece47968211bbb2e9ee7f4f0000"))
    assert bad.same_identity(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0000 extra"))
    assert not bad.same_identity(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0001"))
    assert bad.probably_same(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4F0001"))
    assert not bad.probably_same(GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F400000"))


@given(
    st.uuids().flatmap(
        lambda u: st.sampled_from([str(u), u.hex, "{" + str(u) + "}", "{" + u.hex + "}", str(u).upper()])
    )
    | st.text(st.sampled_from("0123456789abcdefABCDEF-{} g"), min_size=30, max_size=40)
)
def test_uuid_forms_follow_read_uuid_text(text: str) -> None:
    """GEDCOM UIDs read UUID text by the one rule (pidkit.codecs.read_uuid_text)."""
    from pidkit.codecs import read_uuid_text

    assume(text.strip() != "" and len(text) <= 36)
    read = read_uuid_text(text)
    uid = GedcomUid.parse(text)
    if len(text) == 36 and all(c in "0123456789abcdefABCDEF" for c in text):
        assert uid.form in (UidForm.VALID, UidForm.BAD_CHECKSUM)
    elif read is None:
        assert uid.form is UidForm.OTHER and uid.bytes16 is None
    else:
        assert uid.form is (UidForm.NO_CHECKSUM if not (read.dashed or read.braced) else UidForm.UUID)
        assert uid.bytes16 == read.value.to_bytes(16, "big")
