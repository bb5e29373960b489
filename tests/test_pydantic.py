"""pydantic v2: pidkit values as model fields (validation, serialization, JSON schema, errors)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from pidkit import Ark, GedcomUid, KeyType, RecordKey, RevisionId, Tid, XarkId
from pidkit.pydantic import (
    ArkField,
    GedcomUidField,
    KeyTypeField,
    PidkitSchema,
    RecordKeyField,
    RevisionIdField,
    TidField,
    XarkIdField,
    core_schema_for,
)

DATA = Path(__file__).parent / "data" / "vectors"
XARKID_VECTORS: list[dict[str, Any]] = json.loads((DATA / "xarkid.json").read_text(encoding="utf-8"))[
    "vectors"
]


def _lines(name: str) -> list[str]:
    text = (DATA / "atproto" / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


class Record(BaseModel):
    id: XarkIdField
    rev: TidField | None = None
    rkey: RecordKeyField | None = None
    uid: GedcomUidField | None = None
    ark: ArkField | None = None
    key_type: KeyTypeField | None = None
    revision: RevisionIdField | None = None


def rec(**data: object) -> Record:
    """``Record(**data)`` without pydantic's mypy plugin (fields accept more than their annotated type)."""
    return Record.model_validate(data)


# --- validation from every accepted form -----------------------------------------------------------------


@pytest.mark.parametrize("v", XARKID_VECTORS, ids=lambda v: v["compact"])
def test_xarkid_from_every_form(v: dict[str, Any]) -> None:
    expected = XarkId.from_parts(unix_ms=v["unix_ms"], random=int(v["random_hex"], 16))
    for form in (
        v["compact"],
        v["guid"],
        v["guid"].upper(),
        "{" + v["guid"] + "}",
        v["guid"].replace("-", ""),
    ):
        assert rec(id=form).id == expected
        assert Record.model_validate_json(json.dumps({"id": form})).id == expected
    assert rec(id=uuid.UUID(v["guid"])).id == expected
    assert rec(id=expected).id is expected


def test_tid_from_string_and_int() -> None:
    # tid.mdx example; its int computed from the base32-sortable digits by hand in test_tid's vectors
    assert rec(id="AYvP5WgA-_-_ASNFZ4mr", rev="3jzfcijpj2z2a").rev == Tid.parse("3jzfcijpj2z2a")
    assert rec(id="AYvP5WgA-_-_ASNFZ4mr", rev=0).rev == Tid.parse("2222222222222")
    assert Record.model_validate_json('{"id": "AYvP5WgA-_-_ASNFZ4mr", "rev": 1}').rev == Tid.parse(
        "2222222222223"
    )


@pytest.mark.parametrize("text", _lines("tid_syntax_valid.txt"))
def test_tid_interop_valid(text: str) -> None:
    assert str(TypeAdapter(TidField).validate_python(text)) == text


@pytest.mark.parametrize("text", _lines("tid_syntax_invalid.txt"))
def test_tid_interop_invalid(text: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(TidField).validate_python(text)


@pytest.mark.parametrize("text", _lines("recordkey_syntax_valid.txt"))
def test_record_key_interop_valid(text: str) -> None:
    assert str(TypeAdapter(RecordKeyField).validate_json(json.dumps(text))) == text


@pytest.mark.parametrize("text", _lines("recordkey_syntax_invalid.txt"))
def test_record_key_interop_invalid(text: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(RecordKeyField).validate_json(json.dumps(text))


def test_other_fields() -> None:
    r = rec(
        id="AYvP5WgA-_-_ASNFZ4mr",
        rkey=Tid.parse("3jzfcijpj2z2a"),
        uid="{550E8400-e29b-11d4-a716-446655440000}",
        ark="https://n2t.net/ark:/12345/x5-4-xz-321?info",
        key_type="literal:self",
        revision="AXbFiygAAQIDBAUGBwgJ",
    )
    assert r.rkey == RecordKey.parse("3jzfcijpj2z2a")
    assert r.uid == GedcomUid.parse("{550E8400-e29b-11d4-a716-446655440000}")
    assert r.ark == Ark.parse("ark:12345/x54xz321")
    assert r.key_type == KeyType.parse("literal:self")
    assert type(r.revision) is RevisionId


# --- serialization ---------------------------------------------------------------------------------------


def test_json_mode_is_canonical_python_mode_keeps_objects() -> None:
    r = rec(
        id="018bcfe5-6800-4fbf-8fbf-0123456789ab",
        rev=0,
        rkey="self",
        uid="I1",
        ark="https://n2t.net/ark:/12345/x5-4-xz-321?info",
        key_type="tid",
    )
    assert json.loads(r.model_dump_json()) == {
        "id": "AYvP5WgA-_-_ASNFZ4mr",
        "rev": "2222222222222",
        "rkey": "self",
        "uid": "I1",
        "ark": "ark:12345/x5-4-xz-321",
        "key_type": "tid",
        "revision": None,
    }
    dumped = r.model_dump()
    assert dumped["id"] == XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert type(dumped["id"]) is XarkId and type(dumped["rev"]) is Tid and type(dumped["ark"]) is Ark
    assert r.model_dump(mode="json")["id"] == "AYvP5WgA-_-_ASNFZ4mr"
    assert Record.model_validate_json(r.model_dump_json()) == r


@given(st.integers(min_value=0, max_value=(1 << 120) - 1), st.integers(min_value=0, max_value=(1 << 63) - 1))
def test_round_trip_property(x: int, t: int) -> None:
    r = rec(id=XarkId.from_int(x), rev=Tid.from_int(t))
    assert Record.model_validate_json(r.model_dump_json()) == r
    assert Record.model_validate(r.model_dump()) == r


# --- errors ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "error_type", "message", "position"),
    [
        (
            "id",
            "AYvP5WgA-_-_ASNFZ4m!",
            "pidkit_xarkid",
            "invalid base64url character '!' in 'AYvP5WgA-_-_ASNFZ4m!' at position 20",
            20,
        ),
        ("rev", "3jzfcijpj2z21", "pidkit_tid", "invalid base32-sortable character '1'", 13),
        ("rkey", "..", "pidkit_record_key", "'..' is not allowed as a record key", 1),
        ("uid", "a\nb", "pidkit_gedcom_uid", "line break in a UID value", 2),
        ("ark", "ark:12345/x#y", "pidkit_ark", "character '#' not allowed", 12),
    ],
    ids=["xarkid", "tid", "record-key", "gedcom-uid", "ark"],
)
def test_errors_carry_pidkit_message_and_position(
    field: str, value: str, error_type: str, message: str, position: int
) -> None:
    data = {"id": "AYvP5WgA-_-_ASNFZ4mr", field: value}
    with pytest.raises(ValidationError) as info:
        Record.model_validate(data)
    (err,) = info.value.errors()
    assert err["type"] == error_type
    assert err["loc"] == (field,)
    assert message in err["msg"]
    assert err["ctx"]["position"] == position
    assert message in str(info.value)


@pytest.mark.parametrize("value", [5, 1.5, [1], b"AYvP5WgA-_-_ASNFZ4mr"], ids=repr)
def test_wrong_python_type(value: object) -> None:
    with pytest.raises(ValidationError) as info:
        Record.model_validate({"id": value})
    assert info.value.errors()[0]["type"] == "pidkit_xarkid_type"


def test_json_number_for_xarkid_is_refused() -> None:
    with pytest.raises(ValidationError):
        Record.model_validate_json('{"id": 5}')


# --- JSON schema -----------------------------------------------------------------------------------------


SCHEMA_CASES = [
    (
        XarkIdField,
        [
            "AYvP5WgA-_-_ASNFZ4mr",
            "018bcfe5-6800-4fbf-8fbf-0123456789ab",
            "{018BCFE568004FBF8FBF0123456789AB}",
        ],
        ["AYvP5WgA-_-_ASNFZ4m!", "550e8400-e29b-41d4-a716-446655440000"],
    ),
    (RecordKeyField, ["self", "pre:fix", "..."], [".", "..", "a/b", ""]),
    (GedcomUidField, ["I1", " x "], ["", " ", "a\nb"]),
    (ArkField, ["ark:12345/x54xz321", "https://n2t.net/ark:/12345/x5-4"], ["12345/x5", "ark:12345"]),
    (KeyTypeField, ["tid", "literal:self"], ["literal:", "TID"]),
]


@pytest.mark.parametrize(
    ("field", "good", "bad"), SCHEMA_CASES, ids=["xarkid", "rkey", "uid", "ark", "key-type"]
)
def test_json_schema_pattern_and_examples(field: Any, good: list[str], bad: list[str]) -> None:
    schema = TypeAdapter(field).json_schema()
    assert schema["type"] == "string"
    pattern = re.compile(schema["pattern"])
    for text in good:
        assert pattern.search(text), text
    for text in bad:
        assert not pattern.search(text), text
    (example,) = schema["examples"]
    assert pattern.search(example)
    TypeAdapter(field).validate_python(example)  # the example is valid


def test_json_schema_tid_accepts_string_or_integer() -> None:
    schema = TypeAdapter(TidField).json_schema()
    string, integer = schema["anyOf"]
    assert re.fullmatch(string["pattern"].strip("^$"), "3jzfcijpj2z2a")
    assert integer == {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}
    assert schema["examples"] == ["3jzfcijpj2z2a"]


def test_serialization_schema_is_the_canonical_form() -> None:
    schema = TypeAdapter(XarkIdField).json_schema(mode="serialization")
    assert schema["pattern"] == "^[A-Za-z0-9_-]{20}$"
    assert TypeAdapter(TidField).json_schema(mode="serialization")["type"] == "string"


def test_model_schema() -> None:
    props = Record.model_json_schema()["properties"]
    assert props["id"]["examples"] == ["AYvP5WgA-_-_ASNFZ4mr"]
    assert props["rev"]["anyOf"][-1] == {"type": "null"}


# --- hooks and packaging ---------------------------------------------------------------------------------


def test_pidkit_schema_refuses_other_types() -> None:
    with pytest.raises(TypeError, match="not a pidkit value type"):
        PidkitSchema(int)
    with pytest.raises(TypeError, match="not a pidkit value type"):
        core_schema_for(str)


def test_core_schema_is_cached_per_type() -> None:
    assert core_schema_for(XarkId) is core_schema_for(XarkId)
    assert core_schema_for(RevisionId) is not core_schema_for(XarkId)


@pytest.mark.parametrize(
    "cls", [XarkId, RevisionId, Tid, RecordKey, GedcomUid, Ark, KeyType], ids=lambda c: c.__name__
)
def test_bare_value_type_as_field(cls: type) -> None:
    """``x: XarkId`` works: every value type carries ``__get_pydantic_core_schema__`` (pidkit._value)."""
    assert hasattr(cls, "__get_pydantic_core_schema__"), f"{cls.__name__} has no pydantic hook"
    assert TypeAdapter(cls).core_schema == core_schema_for(cls)


def test_pidkit_imports_without_pydantic() -> None:
    code = (
        "import sys; sys.modules['pydantic'] = None; sys.modules['pydantic_core'] = None\n"
        "import pidkit, pidkit.interop, pidkit.bulk\n"
        "print(pidkit.XarkId.parse('AYvP5WgA-_-_ASNFZ4mr').guid)\n"
        "try:\n    import pidkit.pydantic\nexcept ImportError:\n    print('no pydantic')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["018bcfe5-6800-4fbf-8fbf-0123456789ab", "no", "pydantic"]
