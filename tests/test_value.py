"""The value types agree (pidkit._value): immutability, equality, hashing, order, repr, pickling, pydantic."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from typing import Any

import pytest
from pydantic import TypeAdapter

from _importgraph import graph, in_cycles
from pidkit import Ark, GedcomUid, KeyType, RecordKey, RevisionId, Tid, XarkId
from pidkit._value import OrderedValue, Value
from pidkit.noid import Template
from pidkit.pydantic import core_schema_for

#: Two different values of each value type, the first less than the second where the type is ordered.
PAIRS: list[tuple[type[Value], str, str]] = [
    (XarkId, "AYvP5WgA-_-_ASNFZ4mr", "AYvP5WgA-_-_ASNFZ4ms"),
    (RevisionId, "AXbFiygAAQIDBAUGBwgJ", "AYvP5WgA-_-_ASNFZ4mr"),
    (Tid, "2222222222222", "3jzfcijpj2z2a"),
    (RecordKey, "Self", "self"),
    (KeyType, "literal:self", "tid"),
    (GedcomUid, "161C15D03ECE47968211BBB2E9EE7F4FA5A6", " odd value "),
    (Ark, "https://n2t.net/ark:/12345/x5-4-xz-321?info", "ark:12345/x6np1wh8k"),
    (Template, "fk4.reedeedk", "s.zd"),
]
IDS = [cls.__name__ for cls, _, _ in PAIRS]
ORDERED = {XarkId, RevisionId, Tid, RecordKey, Ark, Template}
PYDANTIC_TYPES = [XarkId, RevisionId, Tid, RecordKey, KeyType, GedcomUid, Ark]


def test_every_value_type_is_covered() -> None:
    assert {c for c, _, _ in PAIRS} == {XarkId, RevisionId, Tid, RecordKey, KeyType, GedcomUid, Ark, Template}
    assert {c for c, _, _ in PAIRS if issubclass(c, OrderedValue)} == ORDERED


@pytest.mark.parametrize(("cls", "text", "other"), PAIRS, ids=IDS)
def test_setting_or_deleting_any_attribute_raises_attribute_error(
    cls: type[Value], text: str, other: str
) -> None:
    value = cls.parse(text)
    names = [*getattr(cls, "__slots__", ()), "anything_else"]
    for klass in type(value).__mro__:
        names += list(getattr(klass, "__slots__", ()))
    for name in names:
        with pytest.raises(AttributeError, match=f"{cls.__name__} is immutable"):
            setattr(value, name, "x")
        with pytest.raises(AttributeError, match=f"{cls.__name__} is immutable"):
            delattr(value, name)
    assert not hasattr(value, "__dict__")
    assert value == cls.parse(text)


@pytest.mark.parametrize(("cls", "text", "other"), PAIRS, ids=IDS)
def test_repr_is_pasteable_and_one_form(cls: type[Value], text: str, other: str) -> None:
    value = cls.parse(text)
    assert repr(value).startswith(f"{cls.__name__}('")
    pasted = eval(repr(value), {cls.__name__: cls})
    assert type(pasted) is cls and pasted == value and repr(pasted) == repr(value)
    assert cls(text) == value  # Type(text) is Type.parse(text)


@pytest.mark.parametrize(("cls", "text", "other"), PAIRS, ids=IDS)
def test_equality_and_hash_by_key_only_within_the_type(cls: type[Value], text: str, other: str) -> None:
    a, b, c = cls.parse(text), cls.parse(text), cls.parse(other)
    assert a == b and hash(a) == hash(b) and (a != b) is False
    assert a != c and (a == c) is False
    others = [v.parse(t) for v, t, _ in PAIRS if v._value_type is not cls._value_type]
    for foreign in (text, str(a), 0, None, object(), *others):
        assert a.__eq__(foreign) is NotImplemented
        assert a != foreign


ORDERED_PAIRS = [p for p in PAIRS if p[0] in ORDERED]
UNORDERED_PAIRS = [p for p in PAIRS if p[0] not in ORDERED]


@pytest.mark.parametrize(("cls", "text", "other"), ORDERED_PAIRS, ids=lambda v: getattr(v, "__name__", "-"))
def test_ordering_within_the_type(cls: type[OrderedValue], text: str, other: str) -> None:
    a, c = cls.parse(text), cls.parse(other)
    assert a < c and a <= c and c > a and c >= a and a <= a and a >= a
    assert sorted([c, a]) == [a, c]
    for foreign in (text, 0, *(v.parse(t) for v, t, _ in PAIRS if v._value_type is not cls._value_type)):
        with pytest.raises(TypeError):
            _ = a < foreign


@pytest.mark.parametrize(("cls", "text", "other"), UNORDERED_PAIRS, ids=lambda v: getattr(v, "__name__", "-"))
def test_unordered_types_refuse_ordering(cls: type[Value], text: str, other: str) -> None:
    with pytest.raises(TypeError):
        _ = cls.parse(text) < cls.parse(other)  # type: ignore[operator]


def test_revision_id_is_a_xarkid() -> None:
    """A subclass that keeps its base's key compares with it (same bits: equal, same hash, ordered)."""
    x, r = XarkId.parse("AYvP5WgA-_-_ASNFZ4mr"), RevisionId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert x == r and r == x and hash(x) == hash(r)
    assert XarkId.parse("AXbFiygAAQIDBAUGBwgJ") < r
    assert RevisionId._value_type is XarkId


def test_tid_and_record_key_of_the_same_text_differ() -> None:
    assert Tid.parse("3jzfcijpj2z2a") != RecordKey.parse("3jzfcijpj2z2a")
    with pytest.raises(TypeError):
        _ = Tid.parse("3jzfcijpj2z2a") < RecordKey.parse("3jzfcijpj2z2a")


@pytest.mark.parametrize(("cls", "text", "other"), PAIRS, ids=IDS)
def test_pickle_and_copy(cls: type[Value], text: str, other: str) -> None:
    value = cls.parse(text)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(value, protocol))
        assert type(back) is cls and back == value and repr(back) == repr(value)
    assert copy.copy(value) is value and copy.deepcopy(value) is value


@pytest.mark.parametrize("cls", PYDANTIC_TYPES, ids=lambda c: c.__name__)
def test_pydantic_hook_on_every_type(cls: type[Value]) -> None:
    assert "__get_pydantic_core_schema__" in dir(cls)
    adapter: TypeAdapter[Any] = TypeAdapter(cls)
    assert adapter.core_schema == core_schema_for(cls)
    text = next(t for c, t, _ in PAIRS if c is cls)
    assert adapter.validate_python(text) == cls.parse(text)


def test_template_has_no_pydantic_schema() -> None:
    with pytest.raises(TypeError, match="not a pidkit value type"):
        TypeAdapter(Template)


def test_value_modules_never_import_pidkit_pydantic() -> None:
    code = (
        "import sys, pidkit, pidkit.interop, pidkit.bulk, pidkit.noid\n"
        "from pydantic import TypeAdapter\n"
        "x = TypeAdapter(pidkit.XarkId).validate_python('AYvP5WgA-_-_ASNFZ4mr')\n"
        "print(x, 'pidkit.pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["AYvP5WgA-_-_ASNFZ4mr", "False"]


# --- import structure (issue 12): no cycle through the value modules -------------------------------------

#: The modules this test guards: the value types, their base, codecs, errors, and what sits on them.
GUARDED = (
    "pidkit", "pidkit._value", "pidkit.ark", "pidkit.ark.chars", "pidkit.ark.noid", "pidkit.ark.syntax",
    "pidkit.bulk", "pidkit.codecs", "pidkit.errors", "pidkit.gedcom_uid", "pidkit.inspect", "pidkit.interop",
    "pidkit.llid", "pidkit.noid", "pidkit.pydantic", "pidkit.record_key", "pidkit.sqlalchemy", "pidkit.tid",
    "pidkit.xarkid",
)


def test_no_import_cycle_through_the_value_modules() -> None:
    assert in_cycles([m for m in GUARDED if m in graph()]) == []
