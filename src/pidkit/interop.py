"""Standard-library interop: which Python values each value type is made from, and :mod:`json` hooks.

:func:`coerce` makes a pidkit value from a Python value by the type's own rule (``Value._coerce``, the one
place per type that says which Python values it takes; pydantic and SQLAlchemy use the same);
:func:`json_default` / :class:`JSONEncoder` write every value type
as its canonical string; :func:`object_hook` turns chosen keys back into values when reading.

=================== =========================================================================================
type                accepted by :func:`coerce` (besides an instance of the type itself)
=================== =========================================================================================
``XarkId``          ``str`` (compact or GUID form, :meth:`XarkId.parse`), :class:`uuid.UUID`
                    (:meth:`XarkId.from_guid`), another ``XarkId`` (e.g. a plain one for a ``RevisionId``)
``Tid``             ``str`` (:meth:`Tid.parse`), ``int`` (:meth:`Tid.from_int`, not ``bool``)
``RecordKey``       ``str`` (:meth:`RecordKey.parse`), a ``Tid`` (a TID is a record key)
``GedcomUid``       ``str`` (kept verbatim, :meth:`GedcomUid.parse`)
``Ark``             ``str`` (compact or Mapping ARK, :meth:`Ark.parse`)
``KeyType``         ``str`` (:meth:`KeyType.parse`)
=================== =========================================================================================

Anything else is a :class:`TypeError`; a value of the right type but wrong text raises the scheme's
:class:`~pidkit.errors.PidkitError` (a :class:`ValueError` naming the input and the position).

>>> import json, uuid
>>> from pidkit import XarkId, Tid
>>> x = coerce(XarkId, uuid.UUID("018bcfe5-6800-4fbf-8fbf-0123456789ab"))
>>> text = json.dumps({"id": x, "tid": Tid.from_int(0)}, default=json_default)
>>> text
'{"id": "AYvP5WgA-_-_ASNFZ4mr", "tid": "2222222222222"}'
>>> json.loads(text, object_hook=object_hook({"id": XarkId, "tid": Tid}))
{'id': XarkId('AYvP5WgA-_-_ASNFZ4mr'), 'tid': Tid('2222222222222')}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast

from ._value import Value
from .ark import Ark
from .gedcom_uid import GedcomUid
from .record_key import KeyType, RecordKey
from .tid import Tid
from .xarkid import XarkId

__all__ = ["VALUE_TYPES", "JSONEncoder", "coerce", "json_default", "object_hook"]

#: The value types whose canonical string :func:`json_default` writes (``RevisionId`` is a ``XarkId``).
VALUE_TYPES: Final[tuple[type, ...]] = (XarkId, Tid, RecordKey, GedcomUid, Ark, KeyType)

T = TypeVar("T")


def coerce(cls: type[T], value: object) -> T:
    """``value`` as a ``cls`` (one of :data:`VALUE_TYPES`), from the Python values the table above lists.

    >>> from pidkit import RecordKey, Tid, XarkId
    >>> coerce(Tid, 0)
    Tid('2222222222222')
    >>> coerce(RecordKey, Tid.from_int(0))
    RecordKey('2222222222222')
    >>> coerce(XarkId, "AYvP5WgA-_-_ASNFZ4m!")
    Traceback (most recent call last):
    ...
    pidkit.errors.XarkIdError: invalid base64url character '!' in 'AYvP5WgA-_-_ASNFZ4m!' at position 20
    >>> coerce(Tid, True)
    Traceback (most recent call last):
    ...
    TypeError: cannot make a Tid from a bool: True
    """
    if not (isinstance(cls, type) and issubclass(cls, VALUE_TYPES)):
        raise TypeError(f"{getattr(cls, '__name__', cls)} is not a pidkit value type")
    value_type = cast("type[Value]", cls)
    return cast(T, value_type._coerce(value))  # each type's own rule (pidkit._value.Value._coerce)


def json_default(obj: object) -> str:
    """``default=`` for :func:`json.dumps`: a pidkit value as its canonical string (``str(value)``).

    ARKs are written in their compact form (``str(ark)``: new label, no NMA, no inflection); GEDCOM UIDs
    verbatim.  Anything else raises :class:`TypeError`, as :func:`json.dumps` expects.

    >>> import json
    >>> from pidkit import Ark, GedcomUid
    >>> json.dumps([Ark.parse("https://n2t.net/ark:/12345/x5-4?info"), GedcomUid.parse("I1")],
    ...            default=json_default)
    '["ark:12345/x5-4", "I1"]'
    >>> json.dumps(object(), default=json_default)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: Object of type object is not JSON serializable
    """
    if isinstance(obj, VALUE_TYPES):
        return str(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class JSONEncoder(json.JSONEncoder):
    """A :class:`json.JSONEncoder` that writes pidkit values as strings (``cls=`` for :func:`json.dumps`).

    >>> import json
    >>> from pidkit import Tid
    >>> json.dumps({"rev": Tid.from_int(1)}, cls=JSONEncoder)
    '{"rev": "2222222222223"}'
    """

    def default(self, o: object) -> Any:
        """Canonical string of a pidkit value, else :meth:`json.JSONEncoder.default` (which raises).

        >>> from pidkit import RecordKey
        >>> JSONEncoder().default(RecordKey.parse("self"))
        'self'
        """
        if isinstance(o, VALUE_TYPES):
            return str(o)
        return super().default(o)


def object_hook(fields: Mapping[str, type]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An ``object_hook=`` for :func:`json.loads` that makes ``fields[key]`` values of the named keys.

    Every JSON object (at any depth) is looked at; a key in ``fields`` whose value is not ``null`` goes
    through :func:`coerce`, so bad text raises the scheme's error (naming the input and the position), and
    a value of the wrong JSON type a :class:`TypeError`.  Other keys are left alone.

    >>> import json
    >>> from pidkit import Tid
    >>> json.loads('[{"rev": "2222222222223"}, {"rev": null, "n": 1}]', object_hook=object_hook({"rev": Tid}))
    [{'rev': Tid('2222222222223')}, {'rev': None, 'n': 1}]
    >>> json.loads('{"rev": "nope"}', object_hook=object_hook({"rev": Tid}))
    Traceback (most recent call last):
    ...
    pidkit.errors.TidError: expected 13 characters, got 4 in 'nope'
    """
    wanted = dict(fields)
    for cls in wanted.values():
        if not (isinstance(cls, type) and issubclass(cls, VALUE_TYPES)):
            raise TypeError(f"{cls!r} is not a pidkit value type")

    def hook(obj: dict[str, Any]) -> dict[str, Any]:
        for key, cls in wanted.items():
            value = obj.get(key)
            if value is not None:
                obj[key] = coerce(cls, value)
        return obj

    return hook
