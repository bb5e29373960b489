"""pydantic v2 support: pidkit values as model fields (optional: ``pip install pidkit[pydantic]``).

Only this module imports pydantic; the value types stay importable without it.  Each value type gets one
core schema (:func:`core_schema_for`) that

* **validates** from every Python value :func:`pidkit.interop.coerce` accepts (python mode: a ``XarkId``
  from its compact or GUID text or a :class:`uuid.UUID`, a ``Tid`` from its text or its ``int``, …) and
  from the JSON forms (a string; for ``Tid`` also an integer);
* **serializes** to the canonical string in JSON mode and keeps the object in python mode;
* has a **JSON schema** with a ``pattern`` and ``examples`` (validation mode: every accepted text form;
  serialization mode: the canonical form);
* reports bad input as a :class:`pydantic.ValidationError` whose error type is ``pidkit_<scheme>`` and
  whose message is pidkit's (naming the input and the 1-based position; ``ctx`` has ``position``).

Use the ``…Field`` aliases (``Annotated`` types, they work on any pidkit version), or the value types
themselves where they carry the ``__get_pydantic_core_schema__`` hook that delegates here.

>>> from pydantic import BaseModel, ValidationError
>>> class Row(BaseModel):
...     id: XarkIdField
...     rev: TidField | None = None
>>> row = Row.model_validate({"id": "018bcfe5-6800-4fbf-8fbf-0123456789ab", "rev": 0})
>>> row.id, row.rev
(XarkId('AYvP5WgA-_-_ASNFZ4mr'), Tid('2222222222222'))
>>> row.model_dump_json()
'{"id":"AYvP5WgA-_-_ASNFZ4mr","rev":"2222222222222"}'
>>> try:
...     Row(id="AYvP5WgA-_-_ASNFZ4m!")
... except ValidationError as exc:
...     print(exc.errors()[0]["type"], "|", exc.errors()[0]["msg"])
pidkit_xarkid | invalid base64url character '!' in 'AYvP5WgA-_-_ASNFZ4m!' at position 20
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Final, TypeAlias

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from .ark import Ark
from .codecs import B32S_ALPHABET
from .errors import PidkitError
from .gedcom_uid import GedcomUid
from .interop import coerce
from .record_key import KeyType, RecordKey
from .tid import FIRST_CHARS as TID_FIRST_CHARS
from .tid import Tid
from .xarkid import RevisionId, XarkId

__all__ = [
    "ArkField",
    "GedcomUidField",
    "KeyTypeField",
    "PidkitSchema",
    "RecordKeyField",
    "RevisionIdField",
    "TidField",
    "XarkIdField",
    "core_schema_for",
]

# --- JSON schema patterns (ECMA-262, as JSON Schema uses them); advisory — the parsers decide ----------

_HEX32: Final = "[0-9A-Fa-f]{32}"
_DASHED: Final = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-8[0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}"
_HEX32_XARKID: Final = "[0-9A-Fa-f]{12}4[0-9A-Fa-f]{3}8[0-9A-Fa-f]{15}"
#: XarkId: 20 base64url characters (RFC 4648 §5) — the canonical compact form.
XARKID_COMPACT_PATTERN: Final = "^[A-Za-z0-9_-]{20}$"
#: XarkId: compact, or the GUID form (version nibble 4, variant nibble 8) with or without dashes/braces.
XARKID_PATTERN: Final = (
    f"^(?:[A-Za-z0-9_-]{{20}}|{_HEX32_XARKID}|{_DASHED}|\\{{{_HEX32_XARKID}\\}}|\\{{{_DASHED}\\}})$"
)
#: tid.mdx "TID Syntax".
TID_PATTERN: Final = f"^[{TID_FIRST_CHARS}][{B32S_ALPHABET}]{{12}}$"
#: record-key.mdx "Record Key Syntax" (1–512 of ``A-Za-z0-9.-_:~``, not ``.`` or ``..``).
RECORD_KEY_PATTERN: Final = r"^(?!\.{1,2}$)[A-Za-z0-9._:~-]{1,512}$"
#: A GEDCOM line value: not empty, not only whitespace, no line break (any such text is a legal UID).
GEDCOM_UID_PATTERN: Final = r"^[^\r\n]*\S[^\r\n]*$"
#: draft-kunze-ark-40 §2: ``[https://NMA/]ark:[/]NAAN/Name…`` (the label in any case).
ARK_PATTERN: Final = r"^(?:\S*/)?[Aa][Rr][Kk]:/?[0-9A-Za-z-]+/\S+$"
#: ``str(ark)``: the compact form with the new label.
ARK_COMPACT_PATTERN: Final = r"^ark:[0-9A-Za-z-]+/\S+$"
#: record-key.mdx "Record Key Types".
KEY_TYPE_PATTERN: Final = r"^(?:tid|nsid|any|literal:[A-Za-z0-9._:~-]{1,512})$"

_UINT64_MAX: Final = (1 << 64) - 1


@dataclass(frozen=True)
class _Spec:
    scheme: str  # error type suffix
    pattern: str  # every accepted text form
    out_pattern: str  # the canonical string
    example: str
    json_int: bool = False  # JSON integers accepted (Tid)


_SPECS: Final[dict[type, _Spec]] = {
    XarkId: _Spec("xarkid", XARKID_PATTERN, XARKID_COMPACT_PATTERN, "AYvP5WgA-_-_ASNFZ4mr"),
    Tid: _Spec("tid", TID_PATTERN, TID_PATTERN, "3jzfcijpj2z2a", json_int=True),
    RecordKey: _Spec("record_key", RECORD_KEY_PATTERN, RECORD_KEY_PATTERN, "3jzfcijpj2z2a"),
    GedcomUid: _Spec(
        "gedcom_uid", GEDCOM_UID_PATTERN, GEDCOM_UID_PATTERN, "161C15D03ECE47968211BBB2E9EE7F4FA5A6"
    ),
    Ark: _Spec("ark", ARK_PATTERN, ARK_COMPACT_PATTERN, "ark:12345/x6np1wh8k"),
    KeyType: _Spec("key_type", KEY_TYPE_PATTERN, KEY_TYPE_PATTERN, "tid"),
}


def _spec(cls: type) -> _Spec:
    for base in cls.__mro__:
        spec = _SPECS.get(base)
        if spec is not None:
            return spec
    raise TypeError(f"{cls.__name__} is not a pidkit value type")


def _validator(cls: type, spec: _Spec) -> Callable[[Any], Any]:
    error_type = f"pidkit_{spec.scheme}"

    def validate(value: Any) -> Any:
        try:
            return coerce(cls, value)
        except PidkitError as exc:
            raise PydanticCustomError(
                error_type,
                "{message}",
                {"message": str(exc), "position": exc.position},
            ) from exc
        except TypeError as exc:
            raise PydanticCustomError(error_type + "_type", "{message}", {"message": str(exc)}) from exc

    return validate


def _text_schema(pattern: str, spec: _Spec) -> CoreSchema:
    text = core_schema.str_schema(pattern=pattern)
    if spec.json_int:
        return core_schema.union_schema([text, core_schema.int_schema(ge=0, le=_UINT64_MAX)])
    return text


_schemas: dict[type, CoreSchema] = {}


def core_schema_for(cls: type) -> CoreSchema:
    """The pydantic core schema of a pidkit value type (``XarkId``, ``RevisionId``, ``Tid``, ``RecordKey``,
    ``KeyType``, ``GedcomUid``, ``Ark``); what ``__get_pydantic_core_schema__`` returns.

    >>> from pydantic import TypeAdapter
    >>> from pidkit import Ark
    >>> ta = TypeAdapter(Annotated[Ark, PidkitSchema(Ark)])
    >>> ta.validate_python("ark:/12345/x5-4-xz-321") == Ark.parse("ark:12345/x54xz321")
    True
    >>> ta.json_schema()["pattern"]
    '^(?:\\\\S*/)?[Aa][Rr][Kk]:/?[0-9A-Za-z-]+/\\\\S+$'
    """
    cached = _schemas.get(cls)
    if cached is not None:
        return cached
    spec = _spec(cls)
    validate = _validator(cls, spec)

    def add_examples(schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema = handler.resolve_ref_schema(json_schema)
        json_schema["examples"] = [spec.example]
        return json_schema

    serialize = core_schema.plain_serializer_function_ser_schema(
        str, when_used="json-unless-none", return_schema=core_schema.str_schema(pattern=spec.out_pattern)
    )
    schema = core_schema.no_info_plain_validator_function(
        validate,
        json_schema_input_schema=_text_schema(spec.pattern, spec),
        serialization=serialize,
        metadata={"pydantic_js_functions": [add_examples]},
    )
    return _schemas.setdefault(cls, schema)


class PidkitSchema:
    """``Annotated`` marker that gives a pidkit value type its pydantic schema (:func:`core_schema_for`).

    >>> from pydantic import TypeAdapter
    >>> from pidkit import Tid
    >>> TypeAdapter(Annotated[Tid, PidkitSchema(Tid)]).dump_json(Tid.from_int(1))
    b'"2222222222223"'
    """

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        _spec(cls)  # fail early for a type without a schema
        self.cls = cls

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """pydantic's hook: the schema of :attr:`cls`.

        >>> PidkitSchema(Tid).__get_pydantic_core_schema__(Tid, None)["type"]
        'function-plain'
        """
        return core_schema_for(self.cls)

    def __repr__(self) -> str:
        return f"PidkitSchema({self.cls.__name__})"


XarkIdField: TypeAlias = Annotated[XarkId, PidkitSchema(XarkId)]
RevisionIdField: TypeAlias = Annotated[RevisionId, PidkitSchema(RevisionId)]
TidField: TypeAlias = Annotated[Tid, PidkitSchema(Tid)]
RecordKeyField: TypeAlias = Annotated[RecordKey, PidkitSchema(RecordKey)]
KeyTypeField: TypeAlias = Annotated[KeyType, PidkitSchema(KeyType)]
GedcomUidField: TypeAlias = Annotated[GedcomUid, PidkitSchema(GedcomUid)]
ArkField: TypeAlias = Annotated[Ark, PidkitSchema(Ark)]
