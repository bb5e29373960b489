"""The dump format: everything a store holds, as JSON Lines, to move it without reissuing an id.

The first line is the header, then every table's rows (:data:`pidkit.store.rows.TABLES`, parents
first, each table in primary-key order), one row per line::

    {"format":"pidkit-dump","version":1,"pidkit":"0.1.0","backend":"sqlite","schema":14,"readable_from":4,"counts":{…}}
    {"table":"naans","row":{"naan":"99999","name":"Test","created":"2024-05-01T12:00:00.000000Z"}}
    {"table":"minted","row":{"naan":"99999","id":"fk4x8d9m2q","minter":"m","position":0,…}}

Values are written as the store keeps them (times as ISO 8601 UTC text with ``Z``, flags as 0/1), so a
dump of a restored store equals the dump it was restored from after the header, whatever the backends.
API keys carry only their hashes: a secret is never in a store, so never in a dump.  Unlike
``pidkit export`` (bindings only), a dump holds the minted log, holds and minter counters: a store
restored from it never mints an id the source minted.

>>> line = row_line(TABLES[0], ("99999", "Test", "2024-05-01T12:00:00.000000Z"))
>>> line
'{"table":"naans","row":{"naan":"99999","name":"Test","created":"2024-05-01T12:00:00.000000Z"}}\\n'
>>> parse_row(line, 2)
('naans', ('99999', 'Test', '2024-05-01T12:00:00.000000Z'))
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .. import __version__
from ..ark.noid import Template
from ..errors import PidkitError, StoreError
from .changes import extra_from_text
from .records import check_text
from .rows import TABLES, Table, is_stored_time

__all__ = [
    "FORMAT",
    "READABLE_FROM",
    "VERSION",
    "DumpHeader",
    "check_readable",
    "header_line",
    "parse_header",
    "parse_row",
    "read_rows",
    "row_line",
]

FORMAT: Final = "pidkit-dump"
#: Version of this format (not of the schema: the header says which schema the rows follow).
VERSION: Final = 1
_BY_NAME: Final = {t.name: t for t in TABLES}
#: The schema since which the values a dump carries mean what they mean now, whatever the tables' columns
#: say: raise it to a migration's number when that migration changes what a carried value means (a
#: format, a unit) without adding a column.  None has so far.
_MEANINGS_SINCE: Final = 1
#: The oldest schema that reads a dump written now: the newest table or column a dump carries (and
#: :data:`_MEANINGS_SINCE`).  A store of that schema or newer restores it, though it was written by a newer
#: pidkit: every table and column in it is one that store knows (a dump naming any other is refused at
#: its line), so nothing in it is lost.
READABLE_FROM: Final = max(
    _MEANINGS_SINCE, *(t.since for t in TABLES), *(v for t in TABLES for v, _ in t.added.values())
)


@dataclass(frozen=True, slots=True)
class DumpHeader:
    """What the first line of a dump says: where it came from and how many rows of each table follow."""

    backend: str
    schema: int
    counts: Mapping[str, int]
    pidkit: str = __version__
    #: The oldest schema that reads it (``None``: :data:`READABLE_FROM`, or ``schema`` if older).
    readable_from: int | None = None

    @property
    def readable(self) -> int:
        """The oldest schema that reads this dump.

        >>> DumpHeader("sqlite", 2, {}).readable, DumpHeader("sqlite", 99, {}).readable == READABLE_FROM
        (2, True)
        """
        return min(self.schema, READABLE_FROM) if self.readable_from is None else self.readable_from


def header_line(header: DumpHeader) -> str:
    """The header line (with its ``\\n``).

    >>> header_line(DumpHeader("sqlite", 2, {"naans": 1}))  # doctest: +ELLIPSIS
    '{"format":"pidkit-dump",...,"schema":2,"readable_from":2,"counts":{"naans":1}}\\n'
    """
    obj = {
        "format": FORMAT,
        "version": VERSION,
        "pidkit": header.pidkit,
        "backend": header.backend,
        "schema": header.schema,
        "readable_from": header.readable,
        "counts": dict(header.counts),
    }
    return json.dumps(obj, separators=(",", ":")) + "\n"


def row_line(table: Table, values: tuple[Any, ...] | list[Any]) -> str:
    """One row of ``table`` as a dump line (with its ``\\n``)."""
    row = dict(zip(table.columns, values, strict=True))
    return json.dumps({"table": table.name, "row": row}, ensure_ascii=False, separators=(",", ":")) + "\n"


def _load(line: str, number: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise StoreError(f"not JSON ({exc.msg} at column {exc.colno})", line=number) from None
    except (RecursionError, ValueError) as exc:
        raise StoreError(f"not JSON we read ({type(exc).__name__})", line=number) from None


def parse_header(line: str) -> DumpHeader:
    """The header of a dump (its first line); :class:`~pidkit.errors.StoreError` if it is not one.

    >>> parse_header('{"format":"pidkit-dump","version":1,"pidkit":"0.1.0","backend":"sqlite","schema":2,'
    ...              '"counts":{}}').backend
    'sqlite'
    >>> parse_header('{"kind":"ark"}')
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: not a pidkit dump (no "format": "pidkit-dump" header) on line 1
    """
    obj = _load(line, 1)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise StoreError(f'not a pidkit dump (no "format": "{FORMAT}" header)', line=1)
    if obj.get("version") != VERSION:
        raise StoreError(f"dump format version {obj.get('version')!r} (this pidkit reads {VERSION})", line=1)
    counts = obj.get("counts")
    schema = obj.get("schema")
    if not isinstance(counts, dict) or not all(
        isinstance(k, str) and type(v) is int for k, v in counts.items()
    ):
        raise StoreError('header "counts" must map table names to row counts', line=1)
    if type(schema) is not int:
        raise StoreError('header "schema" must be an integer', line=1)
    readable = obj.get("readable_from", schema)  # a dump written before it was said: its own schema
    if type(readable) is not int or not 1 <= readable <= schema:
        raise StoreError(f'header "readable_from" must be an integer from 1 to the schema ({schema})', line=1)
    return DumpHeader(str(obj.get("backend", "")), schema, counts, str(obj.get("pidkit", "")), readable)


def check_readable(header: DumpHeader, schema: int) -> None:
    """Refuse (:class:`~pidkit.errors.StoreError`, line 1) a dump a store of ``schema`` cannot read: one
    whose header says it needs a newer schema.  A dump of a newer schema that an older one reads (its
    tables and columns all known to it) is restored; a row naming another table or column is then
    refused at its line, as in any dump.

    >>> check_readable(DumpHeader("sqlite", 99, {}, readable_from=4), 14)
    >>> check_readable(DumpHeader("sqlite", 99, {}, "9.0", readable_from=15), 14)
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: the dump needs schema 15 or newer (pidkit 9.0 wrote it, at schema 99), newer \
than this store's 14: restore it with that pidkit, or a newer one on line 1
    """
    if header.readable > schema:
        raise StoreError(
            f"the dump needs schema {header.readable} or newer (pidkit {header.pidkit or '?'} wrote it, at "
            f"schema {header.schema}), newer than this store's {schema}: restore it with that pidkit, or a "
            "newer one", line=1,
        )


#: What may put a character no store keeps (NUL, a lone surrogate: :func:`~pidkit.store.records.check_text`)
#: into a value of a dump line: the character itself, or a JSON escape of one.  A line without any
#: needs no check of its values one by one (a restore reads millions of lines); a line with one is
#: checked value by value, so the error names the column and the position.
_MAY_HOLD_UNSTORABLE: Final = re.compile(r"[\x00\ud800-\udfff]|\\u(?:0000|[dD][89a-fA-F])")


def _time(value: str) -> object:
    """A stored time: exactly :func:`~pidkit.store.rows.stored_time`'s form (the store compares and
    sorts times as text).

    >>> _time("2024-05-01T12:00:00Z")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: not a time as the store keeps it (YYYY-MM-DDTHH:MM:SS.ffffffZ)
    """
    if not is_stored_time(value):
        raise StoreError("not a time as the store keeps it (YYYY-MM-DDTHH:MM:SS.ffffffZ)")
    return value


def _fields(value: str) -> object:
    """A history row's ``before`` / ``after``: a JSON object (what :func:`history_from_row` reads).

    >>> _fields('[1]')
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: not a JSON object
    """
    fields = json.loads(value)
    if not isinstance(fields, dict):
        raise StoreError("not a JSON object")
    return fields


def _extra(value: str) -> object:
    """A binding's ``extra`` as :func:`~pidkit.store.changes.extra_from_text` reads it.

    >>> _extra("{}"), _extra('{"a":"1"}')
    ((), (('a', '1'),))
    """
    return () if value == "{}" else extra_from_text(value)  # "{}": none, most bindings


#: The columns whose text has a form, by table, and how the store reads each back: times, the JSON of
#: the extra elements and of the history's fields, a minter's template.  (Other text is any text.)
_FORMS: Final[Mapping[str, Mapping[str, Callable[[str], object]]]] = {
    "naans": {"created": _time},
    "shoulders": {"created": _time},
    "minters": {"template": Template.parse, "created": _time},
    "minted": {"minted_at": _time},
    "holds": {"created": _time},
    "bindings": {"tombstoned_at": _time, "created": _time, "updated": _time,
                 "extra": _extra},
    "api_keys": {"created": _time, "revoked_at": _time},
    "overrides": {"at": _time},
    "history": {"at": _time, "before": _fields, "after": _fields},
    "users": {"created": _time, "disabled_at": _time},
}  # fmt: skip

#: The integer columns that hold a yes or no (``bindings.passthrough``, ``users.admin``).
_FLAGS: Final = {"passthrough": (0, 1), "admin": (0, 1)}
#: The range of a column holding an integer: SQLite's INTEGER, PostgreSQL's bigint.
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def _may_hold_unstorable(line: str) -> bool:
    r"""Whether :data:`_MAY_HOLD_UNSTORABLE` is in ``line``, its search (as long as a JSON parse) spared
    on the common line: one that is ASCII (no raw surrogate) without NUL or a ``\u`` escape.

    >>> [_may_hold_unstorable(line) for line in ('{"a":"b"}', '{"a":"\ud800"}', '"é"', '"\u00e9"', '"\x00"')]
    [False, True, False, False, True]
    """
    if "\\u" not in line and "\x00" not in line and line.isascii():
        return False
    return _MAY_HOLD_UNSTORABLE.search(line) is not None


@dataclass(frozen=True, slots=True)
class _RowShape:
    """A table's columns as a dump of one schema carries them, and how each value is checked."""

    table: Table
    given: frozenset[str]  # the columns a row of that schema has
    defaults: tuple[tuple[str, Any], ...]  # columns added since, with the value migrations gave them
    checks: tuple[tuple[str, bool, bool], ...]  # (column, may be NULL, holds an integer), table order
    pick: Callable[[dict[str, Any]], tuple[Any, ...]]  # a row's values in table order
    #: The tuples of value types (one per column) :func:`_check_types` found right, so that a row of
    #: such types is known right at once (a table has few: its nullable columns' combinations).
    right_types: set[tuple[type, ...]]
    integers: tuple[tuple[int, str], ...]  # (position, column) of the columns holding an integer
    #: (position, column, how the store reads it back) of the columns whose text has a form (:data:`_FORMS`)
    forms: tuple[tuple[int, str, Callable[[str], object]], ...]


_SHAPES: dict[tuple[str, int | None], _RowShape] = {}


def _shape(table: Table, schema: int | None) -> _RowShape:
    """The :class:`_RowShape` of ``table`` in a dump of ``schema`` (``None``: the current one), made once."""
    shape = _SHAPES.get((table.name, schema))
    if shape is None:
        given = table.columns if schema is None else table.columns_at(schema)
        defaults = tuple((c, table.added[c][1]) for c in table.columns if c not in given)
        checks = tuple((c, c in table.nullable, c in table.integers) for c in table.columns)
        pick: Callable[[dict[str, Any]], tuple[Any, ...]] = operator.itemgetter(*table.columns)
        if len(table.columns) < 2:  # pragma: no cover - itemgetter of one column gives a value, not a tuple
            raise StoreError(f"table {table.name}: a dump row has at least two columns")
        integers = tuple((i, c) for i, c in enumerate(table.columns) if c in table.integers)
        own = _FORMS.get(table.name, {})
        forms = tuple((i, c, own[c]) for i, c in enumerate(table.columns) if c in own)
        shape = _SHAPES[(table.name, schema)] = _RowShape(
            table, frozenset(given), defaults, checks, pick, set(), integers, forms
        )
    return shape


def _check_types(shape: _RowShape, values: tuple[Any, ...], number: int) -> None:
    """Raise the :class:`~pidkit.errors.StoreError` of the first value (in table order) that is not what
    its column holds: a string, an integer where the column holds one, NULL only where allowed."""
    name = shape.table.name
    for (column, nullable, integer), value in zip(shape.checks, values, strict=True):
        if value is None:
            if not nullable:
                raise StoreError(f"{name}.{column} must not be null", line=number)
        elif integer:
            if type(value) is not int:
                raise StoreError(f"{name}.{column} must be an integer", line=number)
        elif type(value) is not str:
            raise StoreError(f"{name}.{column} must be a string", line=number)


def parse_row(line: str, number: int, schema: int | None = None) -> tuple[str, tuple[Any, ...]]:
    """``(table, values)`` of a row line: exactly the table's columns, each a string (checked as the
    store checks text), an integer where the column holds one, NULL only where allowed.

    ``schema`` is the header's: a dump of an older schema carries the columns of its time, and the
    values are returned with the columns added since filled in as the migrations fill them (a table
    added since is unknown to it).  ``None``: the current schema.

    >>> parse_row('{"table":"holds","row":{"naan":"9","id":"x"}}', 7)
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: holds row: missing created on line 7
    >>> parse_row('{"table":"naans","row":{"naan":"9","name":"a\\\\u0000b","created":"2024"}}', 3)
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: naans.name: character U+0000 not allowed in 'a\\x00b' on line 3 at position 2
    """
    obj = _load(line, number)
    if not isinstance(obj, dict) or set(obj) != {"table", "row"} or not isinstance(obj["row"], dict):
        raise StoreError('a dump line is {"table": NAME, "row": {COLUMN: VALUE, …}}', line=number)
    table = _BY_NAME.get(obj["table"]) if isinstance(obj["table"], str) else None
    if table is None or (schema is not None and table.since > schema):
        raise StoreError(f"unknown table {obj['table']!r}", line=number)
    row: dict[str, Any] = obj["row"]
    shape = _shape(table, schema)
    if row.keys() != shape.given:
        columns = [c for c in table.columns if c in shape.given]
        missing = [c for c in columns if c not in row]
        extra = [c for c in row if c not in shape.given]
        problems = [f"missing {', '.join(missing)}"] if missing else []
        problems += [f"unexpected {', '.join(extra)}"] if extra else []
        raise StoreError(f"{table.name} row: {', '.join(problems)}", line=number)
    for column, value in shape.defaults:
        row[column] = value
    values = shape.pick(row)
    types = tuple(map(type, values))
    if types not in shape.right_types:
        _check_types(shape, values, number)
        shape.right_types.add(types)
    for i, column in shape.integers:  # what both backends store (a larger one failed the restore there)
        low, high = _FLAGS.get(column, (_INT64_MIN, _INT64_MAX))
        if values[i] is not None and not low <= values[i] <= high:
            kind = "0 or 1" if column in _FLAGS else "a 64-bit integer"
            raise StoreError(f"{table.name}.{column} is out of range ({kind})", line=number)
    if _may_hold_unstorable(line):
        for (column, _, _), value in zip(shape.checks, values, strict=True):
            if type(value) is str:
                try:
                    check_text(value, f"{table.name}.{column}")
                except StoreError as exc:
                    raise StoreError(exc.message, text=exc.text, position=exc.position, line=number) from None
    for i, column, read in shape.forms:  # a row the store could not read back would break its commands
        if values[i] is not None:
            try:
                read(values[i])
            except (PidkitError, ValueError, RecursionError) as exc:  # (a JSONDecodeError is a ValueError)
                why = exc.message if isinstance(exc, PidkitError) else type(exc).__name__
                raise StoreError(f"{table.name}.{column} cannot be read back ({why})", text=values[i],
                                 line=number) from None  # fmt: skip
    return table.name, values


def read_rows(
    numbered: Iterable[tuple[int, str]], schema: int | None = None
) -> Iterator[tuple[int, str, tuple[Any, ...]]]:
    """``(line number, table, values)`` of each row line of ``numbered`` (a dump's numbered lines after
    its header; blank lines skipped), parsed by :func:`parse_row` one at a time as they are taken: a bad
    line raises its :class:`~pidkit.errors.StoreError` after every row before it was taken.

    (Parsing in a helper thread while the rows before were written was measured, 400,000 rows: no faster
    on PostgreSQL, slower on SQLite, whose calls take the GIL back after every row.)

    >>> t = "2024-05-01T12:00:00.000000Z"
    >>> list(read_rows([(2, '{"table":"holds","row":{"naan":"9","id":"x","created":"%s"}}' % t), (3, " ")]))
    [(2, 'holds', ('9', 'x', '2024-05-01T12:00:00.000000Z'))]
    >>> list(read_rows([(2, "[]")]))
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: a dump line is {"table": NAME, "row": {COLUMN: VALUE, …}} on line 2
    """
    for number, line in numbered:
        if line.strip():
            yield (number, *parse_row(line, number, schema))
