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

Use the value types themselves (``x: XarkId``: every value type carries the ``__get_pydantic_core_schema__``
hook, :class:`pidkit._value.Value`, which builds this schema with ``pydantic_core`` imported only then — the
value modules never import this module), or the ``…Field`` aliases (``Annotated`` types, same schema).

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

from typing import Annotated, Any, Final, TypeAlias

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema

from . import gedcom_uid, record_key, tid, xarkid
from ._value import core_schema
from .ark import Ark
from .ark import syntax as ark_syntax
from .gedcom_uid import GedcomUid
from .record_key import KeyType, RecordKey
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

# --- JSON schema patterns (ECMA-262, as JSON Schema uses them); advisory — the parsers decide.  Each is
# defined next to its scheme's parser; the names here are the public ones.

#: XarkId: 20 base64url characters (RFC 4648 §5) — the canonical compact form.
XARKID_COMPACT_PATTERN: Final = xarkid.JSON_COMPACT_PATTERN
#: XarkId: compact, or the GUID form (version nibble 4, variant nibble 8) with or without dashes/braces.
XARKID_PATTERN: Final = xarkid.JSON_PATTERN
#: tid.mdx "TID Syntax".
TID_PATTERN: Final = tid.JSON_PATTERN
#: record-key.mdx "Record Key Syntax" (1–512 of ``A-Za-z0-9.-_:~``, not ``.`` or ``..``).
RECORD_KEY_PATTERN: Final = record_key.JSON_PATTERN
#: A GEDCOM line value: not empty, not only whitespace, no line break (any such text is a legal UID).
GEDCOM_UID_PATTERN: Final = gedcom_uid.JSON_PATTERN
#: draft-kunze-ark-40 §2: ``[https://NMA/]ark:[/]NAAN/Name…`` (the label in any case).
ARK_PATTERN: Final = ark_syntax.JSON_PATTERN
#: ``str(ark)``: the compact form with the new label.
ARK_COMPACT_PATTERN: Final = ark_syntax.JSON_COMPACT_PATTERN
#: record-key.mdx "Record Key Types".
KEY_TYPE_PATTERN: Final = record_key.KEY_TYPE_JSON_PATTERN


def core_schema_for(cls: type) -> CoreSchema:
    """The pydantic core schema of a pidkit value type (``XarkId``, ``RevisionId``, ``Tid``, ``RecordKey``,
    ``KeyType``, ``GedcomUid``, ``Ark``); what their ``__get_pydantic_core_schema__`` returns (built by
    :func:`pidkit._value.core_schema`, cached per type).

    >>> from pydantic import TypeAdapter
    >>> from pidkit import Ark
    >>> ta = TypeAdapter(Annotated[Ark, PidkitSchema(Ark)])
    >>> ta.validate_python("ark:/12345/x5-4-xz-321") == Ark.parse("ark:12345/x54xz321")
    True
    >>> ta.json_schema()["pattern"] == ARK_PATTERN
    True
    """
    schema: CoreSchema = core_schema(cls)
    return schema


class PidkitSchema:
    """``Annotated`` marker that gives a pidkit value type its pydantic schema (:func:`core_schema_for`).

    >>> from pydantic import TypeAdapter
    >>> from pidkit import Tid
    >>> TypeAdapter(Annotated[Tid, PidkitSchema(Tid)]).dump_json(Tid.from_int(1))
    b'"2222222222223"'
    """

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        core_schema_for(cls)  # fail early for a type without a schema
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
