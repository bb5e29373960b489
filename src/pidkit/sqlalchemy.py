"""SQLAlchemy 2 column types for pidkit values (optional: ``pip install pidkit[sqlalchemy]``).

Only this module imports SQLAlchemy.  Every type is a :class:`~sqlalchemy.types.TypeDecorator`: values
going in are made with :func:`pidkit.interop.coerce` (so a column compared with a string in a query —
``where(col == "…")`` or ``col.in_([...])`` — parses and converts that string too; bad text raises the
scheme's :class:`~pidkit.errors.PidkitError`, wrapped by SQLAlchemy in a ``StatementError``), values
coming out are pidkit objects, and ``NULL`` is ``None`` both ways.

* :class:`XarkIdUuid` — the GUID form in a native ``uuid`` column on PostgreSQL, ``CHAR(32)`` hex
  elsewhere.  ``ORDER BY`` gives time order: the GUID puts the 48-bit time first (PostgreSQL compares
  uuids bytewise, other databases the lowercase hex).
* :class:`XarkIdText` — the 20-character compact form.  ``ORDER BY`` is **not** time order (base64url's
  alphabet is not in ASCII order): use :class:`XarkIdUuid` to sort.
* :class:`TidText` — ``VARCHAR(13)``; time order (base32-sortable; ``COLLATE "C"`` on PostgreSQL).
* :class:`TidInteger` — ``BIGINT``; time order; a TID with the top bit set does not fit and is refused.
* :class:`RecordKeyText` — ``VARCHAR(512)``, byte order (``COLLATE "C"`` on PostgreSQL).
* :class:`GedcomUidText` — ``TEXT``, verbatim.
* :class:`ArkText` — ``TEXT``, the §3.2 normalized form, so equal ARKs are equal in SQL and
  ``col == "ark:/12345/x5-4-xz-321"`` matches every spelling.

``LIKE``-family operators (``col.startswith(…)``, ``contains``, ``like``) take plain strings: they compare
the stored text, so match against the stored form (e.g. a normalized ARK prefix).

>>> import sqlalchemy as sa
>>> from pidkit import Ark, XarkId
>>> engine = sa.create_engine("sqlite://")
>>> t = sa.Table("t", sa.MetaData(), sa.Column("id", XarkIdUuid, primary_key=True), sa.Column("ark", ArkText))
>>> t.metadata.create_all(engine)
>>> with engine.begin() as db:
...     _ = db.execute(t.insert(), [{"id": "AYvP5WgA-_-_ASNFZ4mr", "ark": "ark:/12345/x5-4-xz-321"}])
...     db.execute(sa.select(t).where(t.c.ark == "https://n2t.net/ark:12345/x54xz321")).one()
(XarkId('AYvP5WgA-_-_ASNFZ4mr'), Ark('ark:12345/x54xz321'))
"""

from __future__ import annotations

import uuid
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import operators
from sqlalchemy.sql.operators import OperatorType
from sqlalchemy.types import TypeDecorator, TypeEngine

from .ark import Ark
from .errors import TidError
from .gedcom_uid import GedcomUid
from .interop import coerce
from .record_key import MAX_RECORD_KEY_LENGTH, RecordKey
from .tid import TID_LENGTH, Tid
from .xarkid import COMPACT_LEN, XarkId

__all__ = ["ArkText", "GedcomUidText", "RecordKeyText", "TidInteger", "TidText", "XarkIdText", "XarkIdUuid"]

#: Operators whose right-hand side is a pattern or fragment of the stored text, not a whole value.
_TEXT_OPERATORS: Final = frozenset(
    {
        operators.like_op,
        operators.not_like_op,
        operators.ilike_op,
        operators.not_ilike_op,
        operators.startswith_op,
        operators.not_startswith_op,
        operators.endswith_op,
        operators.not_endswith_op,
        operators.contains_op,
        operators.not_contains_op,
        operators.concat_op,
    }
)


class _TextFragments:
    """Mixin: ``LIKE``-family operands stay plain strings (see the module docstring)."""

    def coerce_compared_value(self, op: OperatorType | None, value: Any) -> Any:
        if op in _TEXT_OPERATORS:
            return sa.String()
        return self


def _c_collation(dialect: Dialect, length: int | None) -> TypeEngine[Any] | None:
    """``VARCHAR(length) COLLATE "C"`` on PostgreSQL (byte order, whatever the database's locale)."""
    if dialect.name == "postgresql":
        return dialect.type_descriptor(sa.String(length, collation="C"))
    return None


class XarkIdUuid(_TextFragments, TypeDecorator[XarkId]):
    """A XarkId in a UUID column, as its GUID form: native ``uuid`` on PostgreSQL, ``CHAR(32)`` elsewhere.

    >>> XarkIdUuid().process_bind_param("AYvP5WgA-_-_ASNFZ4mr", sa.create_engine("sqlite://").dialect)
    UUID('018bcfe5-6800-4fbf-8fbf-0123456789ab')
    """

    impl = sa.Uuid
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(as_uuid=True)

    @property
    def python_type(self) -> type[XarkId]:
        """:class:`~pidkit.XarkId`.

        >>> XarkIdUuid().python_type.__name__
        'XarkId'
        """
        return XarkId

    def process_bind_param(self, value: object, dialect: Dialect) -> uuid.UUID | None:
        """The GUID of a XarkId (or of any value :func:`~pidkit.interop.coerce` makes one from).

        >>> XarkIdUuid().process_bind_param(None, sa.create_engine("sqlite://").dialect) is None
        True
        """
        return None if value is None else coerce(XarkId, value).guid

    def process_result_value(self, value: Any, dialect: Dialect) -> XarkId | None:
        """The XarkId of a stored GUID.

        >>> g = uuid.UUID("018bcfe5-6800-4fbf-8fbf-0123456789ab")
        >>> XarkIdUuid().process_result_value(g, sa.create_engine("sqlite://").dialect)
        XarkId('AYvP5WgA-_-_ASNFZ4mr')
        """
        return None if value is None else XarkId.from_guid(value)


class XarkIdText(_TextFragments, TypeDecorator[XarkId]):
    """A XarkId as its 20-character compact string (compact storage; does not sort by time).

    >>> XarkIdText().process_bind_param("018bcfe5-6800-4fbf-8fbf-0123456789ab", None)
    'AYvP5WgA-_-_ASNFZ4mr'
    """

    impl = sa.String(COMPACT_LEN)
    cache_ok = True

    @property
    def python_type(self) -> type[XarkId]:
        """:class:`~pidkit.XarkId`.

        >>> XarkIdText().python_type.__name__
        'XarkId'
        """
        return XarkId

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """``COLLATE "C"`` on PostgreSQL (case-sensitive, locale-independent comparison).

        >>> XarkIdText().load_dialect_impl(sa.create_engine("sqlite://").dialect)
        String(length=20)
        """
        return _c_collation(dialect, COMPACT_LEN) or self.impl_instance

    def process_bind_param(self, value: object, dialect: Dialect | None) -> str | None:
        """The compact form.

        >>> XarkIdText().process_bind_param(None, None) is None
        True
        """
        return None if value is None else coerce(XarkId, value).compact

    def process_result_value(self, value: Any, dialect: Dialect | None) -> XarkId | None:
        """The XarkId of a stored compact string.

        >>> XarkIdText().process_result_value("AYvP5WgA-_-_ASNFZ4mr", None)
        XarkId('AYvP5WgA-_-_ASNFZ4mr')
        """
        return None if value is None else XarkId.parse(value)


class TidText(_TextFragments, TypeDecorator[Tid]):
    """A TID as its 13-character string, which sorts like the TID (``COLLATE "C"`` on PostgreSQL).

    >>> TidText().process_bind_param(0, None)
    '2222222222222'
    """

    impl = sa.String(TID_LENGTH)
    cache_ok = True

    @property
    def python_type(self) -> type[Tid]:
        """:class:`~pidkit.Tid`.

        >>> TidText().python_type.__name__
        'Tid'
        """
        return Tid

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """``COLLATE "C"`` on PostgreSQL, so that ``ORDER BY`` is byte order (= TID order) in any locale.

        >>> TidText().load_dialect_impl(sa.create_engine("sqlite://").dialect)
        String(length=13)
        """
        return _c_collation(dialect, TID_LENGTH) or self.impl_instance

    def process_bind_param(self, value: object, dialect: Dialect | None) -> str | None:
        """The TID string.

        >>> TidText().process_bind_param("3jzfcijpj2z2a", None)
        '3jzfcijpj2z2a'
        """
        return None if value is None else str(coerce(Tid, value))

    def process_result_value(self, value: Any, dialect: Dialect | None) -> Tid | None:
        """The Tid of a stored string.

        >>> TidText().process_result_value("3jzfcijpj2z2a", None)
        Tid('3jzfcijpj2z2a')
        """
        return None if value is None else Tid.parse(value)


class TidInteger(TypeDecorator[Tid]):
    """A TID as its 64-bit integer in a ``BIGINT`` column (signed: a TID with the top bit set is refused).

    >>> TidInteger().process_bind_param("2222222222223", None)
    1
    >>> TidInteger().process_bind_param("czzzzzzzzzzzz", None)
    Traceback (most recent call last):
    ...
    pidkit.errors.TidError: top bit set: does not fit a signed BIGINT column in 'czzzzzzzzzzzz' at position 1
    """

    impl = sa.BigInteger
    cache_ok = True

    @property
    def python_type(self) -> type[Tid]:
        """:class:`~pidkit.Tid`.

        >>> TidInteger().python_type.__name__
        'Tid'
        """
        return Tid

    def process_bind_param(self, value: object, dialect: Dialect | None) -> int | None:
        """The TID's integer (0 … 2**63-1).

        >>> TidInteger().process_bind_param(None, None) is None
        True
        """
        if value is None:
            return None
        tid = coerce(Tid, value)
        if tid.high_bit:
            raise TidError("top bit set: does not fit a signed BIGINT column", text=str(tid), position=1)
        return tid.int

    def process_result_value(self, value: Any, dialect: Dialect | None) -> Tid | None:
        """The Tid of a stored integer.

        >>> TidInteger().process_result_value(1, None)
        Tid('2222222222223')
        """
        return None if value is None else Tid.from_int(value)


class RecordKeyText(_TextFragments, TypeDecorator[RecordKey]):
    """An atproto record key (case-sensitive; ``COLLATE "C"`` on PostgreSQL).

    >>> RecordKeyText().process_bind_param("self", None)
    'self'
    """

    impl = sa.String(MAX_RECORD_KEY_LENGTH)
    cache_ok = True

    @property
    def python_type(self) -> type[RecordKey]:
        """:class:`~pidkit.RecordKey`.

        >>> RecordKeyText().python_type.__name__
        'RecordKey'
        """
        return RecordKey

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """``COLLATE "C"`` on PostgreSQL.

        >>> RecordKeyText().load_dialect_impl(sa.create_engine("sqlite://").dialect)
        String(length=512)
        """
        return _c_collation(dialect, MAX_RECORD_KEY_LENGTH) or self.impl_instance

    def process_bind_param(self, value: object, dialect: Dialect | None) -> str | None:
        """The record key text.

        >>> RecordKeyText().process_bind_param(None, None) is None
        True
        """
        return None if value is None else str(coerce(RecordKey, value))

    def process_result_value(self, value: Any, dialect: Dialect | None) -> RecordKey | None:
        """The RecordKey of stored text.

        >>> RecordKeyText().process_result_value("self", None)
        RecordKey('self')
        """
        return None if value is None else RecordKey.parse(value)


class GedcomUidText(_TextFragments, TypeDecorator[GedcomUid]):
    """A GEDCOM ``_UID``/``UID`` value, stored verbatim (never rewritten, as U7 and GEDCOM 7 require).

    >>> GedcomUidText().process_bind_param("{550E8400-e29b-11d4-a716-446655440000}", None)
    '{550E8400-e29b-11d4-a716-446655440000}'
    """

    impl = sa.Text
    cache_ok = True

    @property
    def python_type(self) -> type[GedcomUid]:
        """:class:`~pidkit.GedcomUid`.

        >>> GedcomUidText().python_type.__name__
        'GedcomUid'
        """
        return GedcomUid

    def process_bind_param(self, value: object, dialect: Dialect | None) -> str | None:
        """The verbatim text.

        >>> GedcomUidText().process_bind_param(None, None) is None
        True
        """
        return None if value is None else str(coerce(GedcomUid, value))

    def process_result_value(self, value: Any, dialect: Dialect | None) -> GedcomUid | None:
        """The GedcomUid of stored text.

        >>> GedcomUidText().process_result_value("I1", None)
        GedcomUid('I1')
        """
        return None if value is None else GedcomUid.parse(value)


class ArkText(_TextFragments, TypeDecorator[Ark]):
    """An ARK stored in its §3.2 normalized form; values and query operands are normalized on the way in.

    What comes back is ``Ark.parse(normalized)``: equal to what was stored, without its NMA, label form,
    hyphens or inflection (keep the original text in another column if you need it).

    >>> ArkText().process_bind_param("https://n2t.net/ark:/12345/x5-4-xz-321?info", None)
    'ark:12345/x54xz321'
    """

    impl = sa.Text
    cache_ok = True

    @property
    def python_type(self) -> type[Ark]:
        """:class:`~pidkit.Ark`.

        >>> ArkText().python_type.__name__
        'Ark'
        """
        return Ark

    def process_bind_param(self, value: object, dialect: Dialect | None) -> str | None:
        """The normalized form.

        >>> ArkText().process_bind_param(None, None) is None
        True
        """
        return None if value is None else coerce(Ark, value).normalized

    def process_result_value(self, value: Any, dialect: Dialect | None) -> Ark | None:
        """The Ark of stored (normalized) text.

        >>> ArkText().process_result_value("ark:12345/x54xz321", None)
        Ark('ark:12345/x54xz321')
        """
        return None if value is None else Ark.parse(value)
