"""Standard-library interop: uuid.UUID in and out, aware UTC datetimes, json hooks, coerce."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pidkit import Ark, GedcomUid, KeyType, RecordKey, RevisionId, Tid, TidClock, XarkId, inspect
from pidkit.errors import ArkError, GedcomUidError, RecordKeyError, TidError, XarkIdError
from pidkit.interop import VALUE_TYPES, JSONEncoder, coerce, json_default, object_hook

DATA = Path(__file__).parent / "data" / "vectors"
XARKID_VECTORS: list[dict[str, Any]] = json.loads((DATA / "xarkid.json").read_text(encoding="utf-8"))[
    "vectors"
]


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- uuid.UUID in and out ---------------------------------------------------------------------------------


@pytest.mark.parametrize("v", XARKID_VECTORS, ids=lambda v: v["compact"])
def test_xarkid_uuid_in_and_out(v: dict[str, Any]) -> None:
    g = uuid.UUID(v["guid"])
    x = XarkId.parse(v["compact"])
    assert x.guid == g
    assert XarkId.from_guid(g) == x
    assert coerce(XarkId, g) == x
    assert coerce(RevisionId, g) == RevisionId.parse(v["compact"])


def test_gedcom_uid_to_uuid() -> None:
    # Gedcom-L's _UID page's example: the first 32 digits are the UUID, the last 4 the checksum
    uid = GedcomUid.parse("161C15D03ECE47968211BBB2E9EE7F4FA5A6")
    assert uid.to_uuid() == uuid.UUID("161c15d0-3ece-4796-8211-bbb2e9ee7f4f")
    assert GedcomUid.parse(str(uuid.UUID(int=5))).to_uuid() == uuid.UUID(int=5)


@given(st.uuids(version=4))
def test_gedcom_uid_uuid_round_trip(u: uuid.UUID) -> None:
    assert GedcomUid.parse(str(u)).to_uuid() == u
    assert GedcomUid.from_bytes(u.bytes).to_uuid() == u


# --- every timestamp is an aware UTC datetime ----------------------------------------------------------


def _is_utc(t: dt.datetime) -> bool:
    return t.tzinfo is not None and t.utcoffset() == dt.timedelta(0)


@pytest.mark.parametrize("v", XARKID_VECTORS, ids=lambda v: v["compact"])
def test_xarkid_timestamp_is_utc(v: dict[str, Any]) -> None:
    t = XarkId.parse(v["compact"]).timestamp
    assert _is_utc(t)
    assert t == _utc(v["utc"])
    assert _is_utc(RevisionId.parse(v["compact"]).timestamp)


def test_tid_timestamp_is_utc() -> None:
    # the tid.mdx example decoded by hand: micros 1688137381887007 = 2023-06-30T15:03:01.887007Z
    t = Tid.parse("3jzfcijpj2z2a").timestamp
    assert _is_utc(t)
    assert t == dt.datetime(2023, 6, 30, 15, 3, 1, 887007, tzinfo=dt.UTC)
    assert _is_utc(TidClock().next().timestamp)


def test_new_ids_timestamps_are_utc_and_now() -> None:
    before = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    for t in (XarkId.new().timestamp, RevisionId.for_content({}).timestamp, TidClock().next().timestamp):
        assert _is_utc(t)
        assert before <= t <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)


@pytest.mark.parametrize("text", ["AYvP5WgA-_-_ASNFZ4mr", "3jzfcijpj2z2a"])
def test_inspect_timestamp_is_utc(text: str) -> None:
    report = inspect(text)
    assert report.timestamp is not None and _is_utc(report.timestamp)
    for reading in report.candidates:
        assert reading.timestamp is None or _is_utc(reading.timestamp)


# --- json ------------------------------------------------------------------------------------------------

VALUES: list[tuple[object, str]] = [
    (XarkId.parse("018bcfe5-6800-4fbf-8fbf-0123456789ab"), "AYvP5WgA-_-_ASNFZ4mr"),
    (RevisionId.parse("AXbFiygAAQIDBAUGBwgJ"), "AXbFiygAAQIDBAUGBwgJ"),
    (Tid.parse("3jzfcijpj2z2a"), "3jzfcijpj2z2a"),
    (RecordKey.parse("self"), "self"),
    (GedcomUid.parse("{550E8400-e29b-11d4-a716-446655440000}"), "{550E8400-e29b-11d4-a716-446655440000}"),
    (Ark.parse("https://n2t.net/ark:/12345/x5-4-xz-321?info"), "ark:12345/x5-4-xz-321"),
    (KeyType.parse("literal:self"), "literal:self"),
]


@pytest.mark.parametrize(
    ("value", "text"), VALUES, ids=lambda v: type(v).__name__ if not isinstance(v, str) else ""
)
def test_json_default_and_encoder(value: object, text: str) -> None:
    expected = json.dumps({"v": text})
    assert json.dumps({"v": value}, default=json_default) == expected
    assert json.dumps({"v": value}, cls=JSONEncoder) == expected


@pytest.mark.parametrize("bad", [object(), {1, 2}, dt.date(2020, 1, 1)], ids=["object", "set", "date"])
def test_json_default_refuses_others(bad: object) -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(bad, default=json_default)
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(bad, cls=JSONEncoder)


@pytest.mark.parametrize(
    ("value", "text"), VALUES, ids=lambda v: type(v).__name__ if not isinstance(v, str) else ""
)
def test_object_hook_round_trip(value: object, text: str) -> None:
    cls = type(value)
    loaded = json.loads(
        json.dumps({"v": value, "n": 1}, default=json_default), object_hook=object_hook({"v": cls})
    )
    assert loaded == {"v": coerce(cls, text), "n": 1}
    assert type(loaded["v"]) is cls


def test_object_hook_nested_and_null() -> None:
    text = '{"items": [{"id": "AYvP5WgA-_-_ASNFZ4mr"}, {"id": null}], "id": "AXbFiygAAQIDBAUGBwgJ"}'
    loaded = json.loads(text, object_hook=object_hook({"id": XarkId}))
    assert loaded == {
        "items": [
            {"id": XarkId.from_parts(unix_ms=1700000000000, random=0xFBFFBF0123456789AB)},
            {"id": None},
        ],
        "id": XarkId.from_parts(unix_ms=1609632000000, random=0x010203040506070809),
    }


def test_object_hook_errors_name_position() -> None:
    with pytest.raises(XarkIdError) as info:
        json.loads('{"id": "AYvP5WgA-_-_ASNFZ4m!"}', object_hook=object_hook({"id": XarkId}))
    assert info.value.position == 20
    with pytest.raises(TypeError, match="cannot make a XarkId from a list"):
        json.loads('{"id": [1]}', object_hook=object_hook({"id": XarkId}))
    with pytest.raises(TypeError, match="not a pidkit value type"):
        object_hook({"id": dt.datetime})


def test_value_types_cover_the_public_ones() -> None:
    assert set(VALUE_TYPES) == {XarkId, Tid, RecordKey, GedcomUid, Ark, KeyType}


# --- coerce ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "value", "expected"),
    [
        (XarkId, "AYvP5WgA-_-_ASNFZ4mr", "AYvP5WgA-_-_ASNFZ4mr"),
        (XarkId, "{018BCFE5-6800-4FBF-8FBF-0123456789AB}", "AYvP5WgA-_-_ASNFZ4mr"),
        (XarkId, uuid.UUID("018bcfe5-6800-4fbf-8fbf-0123456789ab"), "AYvP5WgA-_-_ASNFZ4mr"),
        (RevisionId, XarkId.parse("AYvP5WgA-_-_ASNFZ4mr"), "AYvP5WgA-_-_ASNFZ4mr"),
        (Tid, "3jzfcijpj2z2a", "3jzfcijpj2z2a"),
        (Tid, 0, "2222222222222"),
        (Tid, 1728652679052295174, "3jzfcijpj2z2a"),
        (RecordKey, "pre:fix", "pre:fix"),
        (RecordKey, Tid.parse("3jzfcijpj2z2a"), "3jzfcijpj2z2a"),
        (GedcomUid, " odd value ", " odd value "),
        (Ark, "ark:/12345/x5-4-xz-321", "ark:12345/x5-4-xz-321"),
        (KeyType, "nsid", "nsid"),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v)[:30],
)
def test_coerce_accepts(cls: type, value: object, expected: str) -> None:
    made: object = coerce(cls, value)
    assert type(made) is cls
    assert str(made) == expected


@pytest.mark.parametrize(
    ("cls", "value", "error", "position"),
    [
        (XarkId, "AYvP5WgA-_-_ASNFZ4m!", XarkIdError, 20),
        (XarkId, uuid.UUID("550e8400-e29b-11d4-a716-446655440000"), XarkIdError, 15),
        (Tid, "3jzfcijpj2z21", TidError, 13),
        (Tid, -1, TidError, None),
        (RecordKey, "a/b", RecordKeyError, 2),
        (GedcomUid, "a\nb", GedcomUidError, 2),
        (Ark, "ark:12345/x#y", ArkError, 12),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v)[:30],
)
def test_coerce_errors(cls: type, value: object, error: type[Exception], position: int | None) -> None:
    with pytest.raises(error) as info:
        coerce(cls, value)
    assert getattr(info.value, "position", None) == position


@pytest.mark.parametrize(
    ("cls", "value"),
    [(XarkId, 5), (XarkId, b"x" * 15), (Tid, True), (Tid, 1.0), (RecordKey, 1), (GedcomUid, None), (Ark, 1)],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)
def test_coerce_type_errors(cls: type, value: object) -> None:
    with pytest.raises(TypeError, match=f"cannot make a {cls.__name__}"):
        coerce(cls, value)


def test_coerce_unknown_type() -> None:
    with pytest.raises(TypeError, match="not a pidkit value type"):
        coerce(dt.datetime, "2020-01-01")


@given(st.integers(min_value=0, max_value=(1 << 120) - 1))
def test_xarkid_all_forms_coerce_equal(value: int) -> None:
    x = XarkId.from_int(value)
    assert coerce(XarkId, x.compact) == coerce(XarkId, x.guid) == coerce(XarkId, str(x.guid).upper()) == x
    assert json.loads(json.dumps([x], default=json_default)) == [x.compact]
