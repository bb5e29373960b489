"""CSV of bindings: the same fields as the JSON Lines records (:mod:`pidkit.store.jsonl`), one column
each, so a CSV file is read by turning each row back into the JSON Lines record the store's one parser
(:func:`~pidkit.store.jsonl.parse_import_line`) checks.

The columns, in order: :data:`COLUMNS` — ``kind``, ``key``, ``text``, ``target``, the ERC as
``erc.who`` … ``erc.where``, the commitment as ``support.who`` … ``support.where``, ``passthrough``
(``true``/``false``), ``status``, ``tombstone_reason``, ``tombstoned_at``, ``created``, ``updated``,
``reason`` and ``extra`` (the other metadata as one JSON object).  An empty cell is "no value" (no
target, no reason, the time of the import).  Only ``text`` is required when reading; other columns may
be left out, in any order.

**Formula injection** (a spreadsheet running a cell as a formula): a cell the writer would start with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a ``'`` in front, and so is a cell
that starts with ``'`` itself; the reader removes one leading ``'``.  So every value comes back as it
was, and no cell of an export is a formula.

>>> from pidkit.store.records import Binding, Erc
>>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/", erc=Erc(what="=1+1"))
>>> row = binding_row(b)
>>> row[COLUMNS.index("erc.what")]
"'=1+1"
>>> import json
>>> json.loads(row_record(dict(zip(COLUMNS, row))))["erc"]["what"]
'=1+1'
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from typing import Final

from ..errors import StoreError
from .records import ERC_ELEMENTS, Binding

__all__ = ["COLUMNS", "binding_row", "csv_lines", "header_row", "read_csv_records", "row_record", "unquote"]

#: The CSV columns, in the order written.
COLUMNS: Final[tuple[str, ...]] = (
    "kind", "key", "text", "target",
    *(f"erc.{e}" for e in ERC_ELEMENTS), *(f"support.{e}" for e in ERC_ELEMENTS),
    "passthrough", "status", "tombstone_reason", "tombstoned_at", "created", "updated", "reason", "extra",
)  # fmt: skip
#: The first characters a spreadsheet may read as a formula (OWASP, "CSV injection").
_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r")
#: Columns whose empty cell means "no value" (``null`` in JSON Lines).
_OPTIONAL: Final = frozenset({"key", "target", "tombstone_reason", "tombstoned_at", "created", "updated",
                              "reason"})  # fmt: skip


def quote(cell: str) -> str:
    """``cell`` made safe for a spreadsheet: a ``'`` in front of a formula's first character (and of a
    leading ``'``, so :func:`unquote` gives every value back).

    >>> quote("=SUM(A1)"), quote("-5"), quote("'x"), quote("plain")
    ("'=SUM(A1)", "'-5", "''x", 'plain')
    """
    return "'" + cell if cell.startswith((*_FORMULA, "'")) else cell


def unquote(cell: str) -> str:
    """The value of a cell :func:`quote` wrote: its ``'`` removed where :func:`quote` put one (before a
    formula's first character or another ``'``), a hand-written leading ``'`` kept.

    >>> unquote("'=SUM(A1)"), unquote("''x"), unquote("plain"), unquote("'Tis the season")
    ('=SUM(A1)', "'x", 'plain', "'Tis the season")
    """
    return cell[1:] if cell.startswith("'") and cell[1:].startswith((*_FORMULA, "'")) else cell


def binding_row(b: Binding) -> list[str]:
    """The cells of ``b``, in :data:`COLUMNS` order, each :func:`quote`-d."""
    d = b.to_dict()
    cells: dict[str, object] = {
        **{k: v for k, v in d.items() if k not in ("erc", "support", "extra")},
        **{f"erc.{k}": v for k, v in b.erc.to_dict().items()},
        **{f"support.{k}": v for k, v in b.support.to_dict().items()},
        "passthrough": "true" if b.passthrough else "false",
        "extra": json.dumps(b.extra_dict, ensure_ascii=False, separators=(",", ":")) if b.extra else "",
    }
    return [quote("" if cells[c] is None else str(cells[c])) for c in COLUMNS]


def header_row() -> list[str]:
    """The header row (:data:`COLUMNS`)."""
    return list(COLUMNS)


def csv_lines(rows: Iterator[list[str]]) -> Iterator[str]:
    """Each row as one CSV text line (RFC 4180 quoting, ``\\r\\n`` line ends), for streaming.

    >>> list(csv_lines(iter([["a", 'b"c']])))
    ['a,"b""c"\\r\\n']
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow(row)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def row_record(row: Mapping[str, str]) -> str:
    """The JSON Lines record of one CSV row (column → cell), for the store's one parser; a cell that
    cannot be read raises :class:`~pidkit.errors.StoreError` naming its column.

    >>> json.loads(row_record({"text": "ark:99999/x", "target": "https://e.org/", "reason": ""}))
    {'text': 'ark:99999/x', 'target': 'https://e.org/'}
    """
    obj: dict[str, object] = {}
    erc: dict[str, str] = {}
    support: dict[str, str] = {}
    for column, raw in row.items():
        if column not in COLUMNS:
            raise StoreError(f"unknown column (the columns are {', '.join(COLUMNS)})", text=column)
        cell = unquote(raw or "")
        if column.startswith("erc."):
            erc[column[4:]] = cell
        elif column.startswith("support."):
            support[column[8:]] = cell
        elif column == "passthrough":
            if cell not in ("", "true", "false"):
                raise StoreError("column passthrough is true or false", text=cell)
            obj["passthrough"] = cell == "true"
        elif column == "extra":
            if cell:
                try:
                    obj["extra"] = json.loads(cell)
                except ValueError:
                    raise StoreError("column extra is a JSON object of names to strings", text=cell) from None
        elif cell or column not in _OPTIONAL:
            obj[column] = cell
    if erc:
        obj["erc"] = erc
    if support:
        obj["support"] = support
    return json.dumps(obj, ensure_ascii=False)


def read_csv_records(text: str) -> Iterator[tuple[int, str | StoreError]]:
    """``(line number, JSON Lines record)`` of each data row of a CSV text with a header row (the line
    a row starts on), or ``(line number, the error)`` for a row that cannot be read.

    >>> rows = list(read_csv_records("text,target\\nark:99999/x,https://e.org/\\nark:99999/y,a,b\\n"))
    >>> rows[0]
    (2, '{"text": "ark:99999/x", "target": "https://e.org/"}')
    >>> str(rows[1][1])
    'a row has 3 cells, the header 2'
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield 1, StoreError(f"not CSV ({exc})")
        return
    unknown = [c for c in header if c not in COLUMNS]
    if unknown or "text" not in header:
        problem = (f"unknown column {unknown[0]!r}" if unknown else "no 'text' column")
        yield 1, StoreError(f"{problem}: the header names columns of {', '.join(COLUMNS)}")
        return
    line = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield line, StoreError(f"not CSV ({exc})")
            return
        start, line = line, reader.line_num + 1
        if not any(cells):
            continue
        if len(cells) != len(header):
            yield start, StoreError(f"a row has {len(cells)} cells, the header {len(header)}")
            continue
        try:
            yield start, row_record(dict(zip(header, cells, strict=True)))
        except StoreError as exc:
            yield start, exc
