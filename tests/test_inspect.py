"""inspect(): every reading, ranked; the JSON contract of DESIGN.md."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pidkit import inspect
from pidkit.inspect import MAX_INPUT

DATA = Path(__file__).parent / "data" / "vectors"
XARK = json.loads((DATA / "xarkid.json").read_text())["vectors"]
CONTRACT_FIELDS = {"input", "scheme", "valid", "normalized", "timestamp", "candidates"}
SCHEMES = {"xarkid", "tid", "record-key", "gedcom-uid", "ark", "llid", "uuid", "gedcom-xref", "unknown"}


def _paf_lines() -> list[tuple[str, str]]:
    rows = []
    for line in (DATA / "paf_uid.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            value, status, _ = line.split("\t", 2)
            rows.append((value, status))
    return rows


@pytest.mark.parametrize("vec", [v for v in XARK if v["unix_ms"] > 0], ids=lambda v: v["compact"])
def test_xarkid_compact_and_guid_read_as_xarkid_with_utc_time(vec: dict[str, str]) -> None:
    for text in (vec["compact"], vec["guid"], vec["guid"].upper(), vec["guid"].replace("-", "")):
        report = inspect(text)
        assert report.scheme == "xarkid", text
        assert report.normalized == vec["compact"]
        assert report.to_json()["timestamp"] == vec["utc"]


def test_xarkid_with_implausible_time_is_still_a_candidate_but_noted() -> None:
    report = inspect("AAAAAAAAAAAAAAAAAAAA")  # unix_ms 0: 1970
    xark = [c for c in report.candidates if c.scheme == "xarkid"]
    assert xark and xark[0].notes
    assert xark[0].score < 90


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("3jzfcijpj2z2a", "2023-06-30T15:03:01.887007Z"),
        ("2222222222222", "1970-01-01T00:00:00.000000Z"),
    ],
)
def test_tid_reading_and_its_time(text: str, utc: str) -> None:
    report = inspect(text)
    tid = next(c for c in report.candidates if c.scheme == "tid")
    assert tid.to_json()["timestamp"] == utc
    # a TID is also a record key (DESIGN.md)
    assert "record-key" in [c.scheme for c in report.candidates]


def test_plausible_tid_is_best() -> None:
    assert inspect("3jzfcijpj2z2a").scheme == "tid"


@pytest.mark.parametrize(("value", "status"), _paf_lines(), ids=lambda v: str(v)[:12])
def test_paf_uid_vectors(value: str, status: str) -> None:
    report = inspect(value)
    readings = {c.scheme: c for c in report.candidates}
    if status == "valid":
        assert report.scheme == "gedcom-uid"
        assert report.valid
    elif status == "bad-checksum":
        assert readings["gedcom-uid"].valid is False
    else:  # 32 hex: a UUID-shaped value and a PAF value without checksum
        assert {"uuid", "gedcom-uid"} <= readings.keys()


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("ark:/12345/x5-4-xz-321", "ark:12345/x54xz321"),
        ("https://sneezy.dopey.com/ark:12345/x54--xz32-1", "ark:12345/x54xz321"),
        ("ARK:/12345/x6np1wh8k", "ark:12345/x6np1wh8k"),
    ],
)
def test_ark_reading_normalizes(text: str, normalized: str) -> None:
    report = inspect(text)
    assert report.scheme == "ark"
    assert report.normalized == normalized
    assert report.best is not None
    assert report.best.parts["shared_naan"] == "examples"


def test_plain_uuid() -> None:
    report = inspect("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")  # RFC 9562 example (v1): not a XarkId
    assert report.scheme == "uuid"
    assert report.best is not None and report.best.parts["version"] == 1


def test_llid_published_id_has_an_llid_reading() -> None:
    published = json.loads((DATA / "librarylink_published.json").read_text())
    for case in published:
        schemes = [c.scheme for c in inspect(case["id"]).candidates]
        assert "llid" in schemes


@pytest.mark.parametrize("text", ["", " ", "not an id!", "a b", "\x00", "@@"])
def test_unknown_reports_each_parsers_error(text: str) -> None:
    report = inspect(text)
    assert report.scheme == "unknown"
    assert report.valid is False
    assert report.errors
    out = report.to_json()
    assert out["candidates"] == [] and out["timestamp"] is None


def test_oversized_input_is_unknown_without_parsing() -> None:
    report = inspect("a" * (MAX_INPUT + 1))
    assert report.scheme == "unknown" and "input" in report.errors


@settings(max_examples=300)
@given(st.text(max_size=80))
def test_any_text_gives_a_contract_shaped_report(text: str) -> None:
    out = inspect(text).to_json()
    assert out.keys() >= CONTRACT_FIELDS
    assert out["scheme"] in SCHEMES
    json.dumps(out)  # JSON-serializable
    scores = [c["score"] for c in out["candidates"]]
    assert scores == sorted(scores, reverse=True)
    for c in out["candidates"]:
        assert {"scheme", "valid", "normalized", "timestamp"} <= c.keys()
        assert c["timestamp"] is None or c["timestamp"].endswith("Z")


# --- regressions from the spec review -------------------------------------------------------------------


@pytest.mark.parametrize("text", ["9AAAAAAAAAAAAAAAAAAA", "_" * 20, "-AAAAAAAAAAAAAAAAAAA"])
def test_xarkid_past_year_9999_has_no_timestamp_and_no_crash(text: str) -> None:
    report = inspect(text)
    xark = next(c for c in report.candidates if c.scheme == "xarkid")
    assert xark.timestamp is None
    assert xark.score < 90
    json.dumps(report.to_json())


@pytest.mark.parametrize(
    "text",
    [
        "0123456789abcdef_123456789abcdef",
        "０123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcde ",
    ],
)
def test_uuid_reading_needs_ascii_hex(text: str) -> None:
    assert "uuid" not in [c.scheme for c in inspect(text).candidates]


def test_tid_with_top_bit_set_is_noted_and_not_valid() -> None:
    # tid.mdx's regex allows a first character up to 'j'; 'c'..'j' (8..15) set bit 63, "always 0"
    reading = next(c for c in inspect("czzzzzzzzzzzz").candidates if c.scheme == "tid")
    assert reading.valid is False
    assert any("top bit" in n for n in reading.notes)
    assert next(c for c in inspect("bzzzzzzzzzzzz").candidates if c.scheme == "tid").valid


def test_xarkid_past_year_9999_is_read_without_a_time() -> None:
    report = inspect("________________AAAA")
    best = report.best
    assert best is not None and best.scheme == "xarkid" and best.timestamp is None
    assert best.parts["unix_ms"] == (1 << 48) - 1
    assert any("after the year 9999" in note for note in best.notes)
    assert report.to_json()["timestamp"] is None


# --- one rule for UUID text: inspect, the store's /id/ keys and GEDCOM UIDs agree (issue 12) ------------

def _uuid_spellings(u: uuid.UUID) -> st.SearchStrategy[str]:
    return st.sampled_from([str(u), u.hex, "{" + str(u) + "}", "{" + u.hex + "}", str(u).upper(), f" {u}"])


uuid_like = st.text(st.sampled_from("0123456789abcdefABCDEF-{} g"), min_size=30, max_size=40) | (
    st.uuids().flatmap(_uuid_spellings)
)


@given(uuid_like)
def test_inspect_and_store_uuid_key_agree(text: str) -> None:
    from pidkit.errors import ParseError
    from pidkit.store.keys import uuid_key

    reading = next((c for c in inspect(text).candidates if c.scheme == "uuid"), None)
    try:
        key: str | None = uuid_key(text)
    except ParseError:
        key = None
    assert (reading.normalized if reading is not None else None) == key


def test_braced_uuid_is_filed_under_its_canonical_text() -> None:
    from pidkit.store.keys import canonical, readings

    braced = "{0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F}"
    assert inspect(braced).scheme == "uuid"
    assert canonical("uuid", braced) == "0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f"
    assert ("uuid", "0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f") in readings(braced)


def test_llid_shape_is_checked_once() -> None:
    """inspect and the store's llid keys use pidkit.llid.read_llid (the same errors)."""
    from pidkit.errors import LlidError
    from pidkit.llid import read_llid
    from pidkit.store.keys import llid_key

    assert inspect("65IMbTlnlOQ").best is not None
    assert [c.parts for c in inspect("65IMbTlnlOQ").candidates if c.scheme == "llid"] == [
        {"int64": read_llid("65IMbTlnlOQ"), "hex": "eb920c6d396794e4"}
    ]
    for bad in ("65IMbTlnlOR", "65IMbTlnl+Q", "65IMbTlnlOQQ"):
        with pytest.raises(LlidError) as store_error:
            llid_key(bad)
        with pytest.raises(LlidError) as llid_error:
            read_llid(bad)
        assert str(store_error.value) == str(llid_error.value)
