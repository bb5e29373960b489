"""The one base of pidkit's value types (``XarkId``, ``RevisionId``, ``Tid``, ``RecordKey``, ``KeyType``,
``GedcomUid``, ``Ark``, NOID ``Template``): what every value type does the same way, written once — as
packaging's ``_BaseVersion`` does for versions.

* **One key.**  A subclass gives :meth:`Value._cmp_key`; equality, hashing and (for :class:`OrderedValue`)
  ordering all use it.
* **Equality within one value type.**  ``a == b`` compares keys when both are of the same value type —
  the class that defines the key, :attr:`Value._value_type`; a subclass that keeps the key counts as its
  base (a ``RevisionId`` *is* a ``XarkId``: same bits, equal, same hash) — and returns ``NotImplemented``
  for anything else: a string, an ``int``, another value type (a TID and the record key with the same
  text are not equal).  ``isinstance`` of the value type rather than the exact class, because pidkit's
  own subclass (``RevisionId``) is a specialised XarkId, not another kind of id; as the key is the same,
  ``a == b`` still implies ``hash(a) == hash(b)``, and equality stays symmetric.  Ordering the same way:
  ``<`` between different value types raises :class:`TypeError`.
* **Immutable.**  Setting or deleting any attribute raises :class:`AttributeError` (``"… is immutable"``),
  as a frozen dataclass does (its ``FrozenInstanceError`` is an ``AttributeError``) and as Python does for
  any attribute that cannot be set; :class:`uuid.UUID` raises ``TypeError``, but ``AttributeError`` is what
  ``setattr`` callers (``hasattr``-style code, ``dataclasses.replace`` users) expect of "cannot set this".
  Constructors write their ``__slots__`` with ``object.__setattr__`` or the slot descriptor.
* **One constructor spelling.**  ``Type(text)`` is ``Type.parse(text)``, so the ``repr`` — always
  ``Type('…')`` — can be pasted back; :meth:`Value._repr_text` is the text it shows (``str(x)`` unless
  the type keeps its input verbatim).  Pickling goes through the same text; copies are the object itself.
* **pydantic v2**: :meth:`Value.__get_pydantic_core_schema__` builds the schema from the type's
  :class:`SchemaInfo` with ``pydantic_core`` imported only when pydantic asks, so the value modules never
  import :mod:`pidkit.pydantic` (which imports them) nor need pydantic installed.
* **Python values in**: :meth:`Value._coerce` is the rule for which Python values become the type (a
  ``str`` by default; ``XarkId`` also takes a :class:`uuid.UUID`, ``Tid`` an ``int``, …), used by
  :func:`pidkit.interop.coerce`, pydantic and SQLAlchemy.

>>> class Word(OrderedValue):
...     __slots__ = ("_w",)
...     _w: str
...     @classmethod
...     def parse(cls, text: str) -> "Word":
...         self = object.__new__(cls)
...         object.__setattr__(self, "_w", text.lower())
...         return self
...     def _cmp_key(self) -> str:
...         return self._w
...     def __str__(self) -> str:
...         return self._w
>>> a = Word("Ab")
>>> a, a == Word.parse("ab"), a < Word("b"), a == "ab"
(Word('ab'), True, True, False)
>>> a._w = "x"
Traceback (most recent call last):
...
AttributeError: Word is immutable (cannot set '_w')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple, NoReturn, Self, cast

from .errors import PidkitError

__all__ = ["OrderedValue", "SchemaInfo", "Value", "core_schema", "type_error"]


class SchemaInfo(NamedTuple):
    """What pydantic needs to know of a value type beyond parsing it (its JSON schema and error type)."""

    scheme: str  #: error type suffix: ``pidkit_<scheme>``
    pattern: str  #: every accepted text form (ECMA-262, advisory: the parser decides)
    out_pattern: str  #: the canonical string
    example: str
    json_int: bool = False  #: JSON integers accepted too (``Tid``)


_UINT64_MAX = (1 << 64) - 1


def type_error(cls: type, value: object) -> TypeError:
    """The :class:`TypeError` for a Python value that cannot become a ``cls``.

    >>> type_error(int, b"x")
    TypeError("cannot make a int from a bytes: b'x'")
    """
    return TypeError(f"cannot make a {cls.__name__} from a {type(value).__name__}: {value!r:.80}")


class Value:
    """Base of the value types (see the module docstring): key, equality, hash, immutability, repr,
    pickling, copying, coercion and the pydantic hook."""

    __slots__ = ()

    #: The value type whose values this one compares with: the nearest class (itself or a base) that
    #: defines :meth:`_cmp_key` (set for every subclass by :meth:`__init_subclass__`).
    _value_type: ClassVar[type[Value]]

    #: The pydantic schema data of a concrete value type (``None``: not usable as a pydantic field).
    _schema_info: ClassVar[SchemaInfo | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_cmp_key" in cls.__dict__ or not hasattr(cls, "_value_type"):
            cls._value_type = cls

    def __new__(cls, text: str) -> Self:
        """``Type(text)`` is ``Type.parse(text)`` (so that the ``repr`` can be pasted back)."""
        return cls.parse(text)

    @classmethod
    def parse(cls, text: str) -> Self:  # pragma: no cover - every value type defines it
        """Strictly parse ``text`` (each value type defines it)."""
        raise NotImplementedError

    def _cmp_key(self) -> Any:  # pragma: no cover - every value type defines it
        """The key for equality, hashing and ordering."""
        raise NotImplementedError

    def _repr_text(self) -> str:
        """The text ``repr`` and pickling pass to ``Type(…)``: ``str(self)`` unless a type keeps more."""
        return str(self)

    @classmethod
    def _coerce(cls, value: object) -> Self:
        """``value`` as a ``cls``: an instance as it is, a ``str`` through :meth:`parse`, else ``TypeError``
        (types that take more Python values extend this)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        raise type_error(cls, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, self._value_type):
            return NotImplemented
        return self._cmp_key() == other._cmp_key()  # type: ignore[no-any-return]

    def __hash__(self) -> int:
        return hash(self._cmp_key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_text()!r})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[Callable[[str], Self], tuple[str]]:
        return (type(self), (self._repr_text(),))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: object) -> Self:
        return self

    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: object) -> Any:
        """pydantic v2's hook (``x: XarkId`` in a model): :func:`core_schema` of this type.

        >>> XarkId = __import__("pidkit").XarkId
        >>> XarkId.__get_pydantic_core_schema__(XarkId, None)["type"]
        'function-plain'
        """
        return core_schema(cls)


class OrderedValue(Value):
    """A :class:`Value` whose scheme orders its values: ``<``, ``<=``, ``>``, ``>=`` by the key, between
    values of the same type only."""

    __slots__ = ()

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, self._value_type):
            return NotImplemented
        return self._cmp_key() < other._cmp_key()  # type: ignore[no-any-return]

    def __le__(self, other: object) -> bool:
        if not isinstance(other, self._value_type):
            return NotImplemented
        return self._cmp_key() <= other._cmp_key()  # type: ignore[no-any-return]

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, self._value_type):
            return NotImplemented
        return self._cmp_key() > other._cmp_key()  # type: ignore[no-any-return]

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, self._value_type):
            return NotImplemented
        return self._cmp_key() >= other._cmp_key()  # type: ignore[no-any-return]


# --- pydantic v2 (pydantic_core imported only when pydantic asks for a schema) ---------------------------

_schemas: dict[type, Any] = {}


def _info(cls: type) -> SchemaInfo:
    info = getattr(cls, "_schema_info", None) if isinstance(cls, type) and issubclass(cls, Value) else None
    if not isinstance(info, SchemaInfo):
        raise TypeError(f"{getattr(cls, '__name__', cls)!r} is not a pidkit value type")
    return info


def core_schema(cls: type) -> Any:
    """The pydantic core schema of a value type (cached per type).

    It validates every Python value :meth:`Value._coerce` takes (python mode) and the JSON forms (a
    string; for ``Tid`` also an integer), serializes to the canonical string in JSON mode (the object in
    python mode), has a JSON schema with a ``pattern`` and ``examples``, and reports bad input as error
    type ``pidkit_<scheme>`` with pidkit's message (``ctx`` has ``position``).

    >>> from pidkit import Tid
    >>> core_schema(Tid) is core_schema(Tid), core_schema(Tid)["type"]
    (True, 'function-plain')
    >>> core_schema(int)
    Traceback (most recent call last):
    ...
    TypeError: 'int' is not a pidkit value type
    """
    cached = _schemas.get(cls)
    if cached is not None:
        return cached
    info = _info(cls)
    from pydantic_core import PydanticCustomError
    from pydantic_core import core_schema as cs

    coerce = cast("type[Value]", cls)._coerce
    error_type = f"pidkit_{info.scheme}"

    def validate(value: Any) -> Any:
        try:
            return coerce(value)
        except PidkitError as exc:
            raise PydanticCustomError(
                error_type, "{message}", {"message": str(exc), "position": exc.position}
            ) from exc
        except TypeError as exc:
            raise PydanticCustomError(error_type + "_type", "{message}", {"message": str(exc)}) from exc

    def add_examples(schema: Any, handler: Any) -> Any:
        json_schema = handler.resolve_ref_schema(handler(schema))
        json_schema["examples"] = [info.example]
        return json_schema

    text = cs.str_schema(pattern=info.pattern)
    json_input = cs.union_schema([text, cs.int_schema(ge=0, le=_UINT64_MAX)]) if info.json_int else text
    serialize = cs.plain_serializer_function_ser_schema(
        str, when_used="json-unless-none", return_schema=cs.str_schema(pattern=info.out_pattern)
    )
    schema = cs.no_info_plain_validator_function(
        validate,
        json_schema_input_schema=json_input,
        serialization=serialize,
        metadata={"pydantic_js_functions": [add_examples]},
    )
    return _schemas.setdefault(cls, schema)
