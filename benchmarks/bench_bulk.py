"""Bulk column helpers (pidkit.bulk) against a straightforward per-row loop over the same library.

Goals (issue 7): the bulk helpers are at least 2x faster than the per-row loop a user would write with the
value types (``[str(XarkId.new()) for …]``, ``XarkId.parse`` in a try/except, ``str(XarkId.parse(s).guid)``,
``resource_id`` on pairs built per row), and Library.Link ids from columns are at least 4x faster than the
reference recipe (json.dumps + mmh3.hash64 + struct + base64) per row.  With the optional C helper
(``pidkit._speedups``) the whole table goes through one C call; in pure Python (no C compiler at install)
escaping two values with json's C escaper, one %-format and one hash per row already cost about a fifth of
the recipe.  The Library.Link rows say which one ran.  Every pair of results is checked equal before timing.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import mmh3

from benchmarks._harness import Result, once
from pidkit import XarkId, resource_id
from pidkit.bulk import (
    guids_to_xarkids,
    new_xarkids,
    resource_ids_from_columns,
    validate_xarkids,
    xarkids_to_guids,
)
from pidkit.errors import XarkIdError
from pidkit.llid import SPEEDUPS, VERSA_TYPE

PATH = "C helper" if SPEEDUPS else "pure Python (C helper not built)"
PERSON = "http://schema.org/Person"
NAME = "http://schema.org/name"
BIRTH = "http://schema.org/birthDate"


def reference(pairs: Any) -> str:
    """The Library.Link algorithm (``docs/library-link.md``) as everyone writes it."""
    text = json.dumps(pairs, separators=(",", ":"))
    return base64.urlsafe_b64encode(struct.pack(">q", mmh3.hash64(text)[0])).rstrip(b"=").decode()


def _loop_valid(column: list[str]) -> list[bool]:
    out = []
    for s in column:
        try:
            XarkId.parse(s)
        except XarkIdError:
            out.append(False)
        else:
            out.append(True)
    return out


def run(quick: bool) -> list[Result]:
    n = 20_000 if quick else 1_000_000
    repeat = 3
    results: list[Result] = []
    unit = "id"
    label = f"{n:,} rows"

    ours = once(lambda: new_xarkids(n), repeat=repeat) / n
    loop = once(lambda: [str(XarkId.new()) for _ in range(n)], repeat=repeat) / n
    results.append(
        Result(f"new XarkIds, {label}", "new_xarkids(n)", ours, "[str(XarkId.new()) ...]", loop, 0.5, unit)
    )

    column = new_xarkids(n)
    column[:: max(1, n // 100)] = ["AYvP5WgA-_-_ASNFZ4m!"] * len(column[:: max(1, n // 100)])  # 1% bad
    if validate_xarkids(column) != _loop_valid(column):
        raise SystemExit("validate_xarkids differs from XarkId.parse")
    ours = once(lambda: validate_xarkids(column), repeat=repeat) / n
    loop = once(lambda: _loop_valid(column), repeat=repeat) / n
    results.append(
        Result(
            f"validate, {label} (1% bad)",
            "validate_xarkids(col)",
            ours,
            "try XarkId.parse per row",
            loop,
            0.5,
            unit,
        )
    )

    good = new_xarkids(n)
    guids = [str(XarkId.parse(s).guid) for s in good]
    if xarkids_to_guids(good) != guids or guids_to_xarkids(guids) != good:
        raise SystemExit("bulk conversion differs from the value type")
    ours = once(lambda: xarkids_to_guids(good), repeat=repeat) / n
    loop = once(lambda: [str(XarkId.parse(s).guid) for s in good], repeat=repeat) / n
    results.append(
        Result(
            f"compact -> GUID, {label}",
            "xarkids_to_guids(col)",
            ours,
            "str(XarkId.parse(s).guid)",
            loop,
            0.5,
            unit,
        )
    )
    ours = once(lambda: guids_to_xarkids(guids), repeat=repeat) / n
    loop = once(lambda: [XarkId.parse(g).compact for g in guids], repeat=repeat) / n
    results.append(
        Result(
            f"GUID -> compact, {label}",
            "guids_to_xarkids(col)",
            ours,
            "XarkId.parse(g).compact",
            loop,
            0.5,
            unit,
        )
    )

    # Library.Link: a table with columns name / birthDate, pairs built per row
    names = [f"Person number {i} — née Ünal" if i % 10 == 0 else f"Person number {i}" for i in range(n)]
    births = [f"{1800 + i % 200}-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(n)]
    columns = {NAME: names, BIRTH: births}

    def per_row_pidkit() -> list[str]:
        return [
            resource_id([[VERSA_TYPE, PERSON], [NAME, a], [BIRTH, b]])
            for a, b in zip(names, births, strict=True)
        ]

    def per_row_reference() -> list[str]:
        return [
            reference([[VERSA_TYPE, PERSON], [NAME, a], [BIRTH, b]])
            for a, b in zip(names, births, strict=True)
        ]

    bulk = resource_ids_from_columns(columns, type=PERSON)
    if bulk != per_row_pidkit() or bulk[:1000] != per_row_reference()[:1000]:
        raise SystemExit("Library.Link ids from columns differ")
    ours = once(lambda: resource_ids_from_columns(columns, type=PERSON), repeat=repeat) / n
    loop = once(per_row_pidkit, repeat=repeat) / n
    ref = once(per_row_reference, repeat=repeat) / n
    results.append(
        Result(
            f"Library.Link ids, {label} (2 columns)",
            "resource_ids_from_columns",
            ours,
            "resource_id per row",
            loop,
            0.5,
            unit,
            note=f"10% of names non-ASCII; {PATH}",
        )
    )
    results.append(
        Result(
            f"Library.Link ids, {label} (2 columns)",
            "resource_ids_from_columns",
            ours,
            "reference recipe per row",
            ref,
            0.25,
            unit,
            note=f"identical ids; {PATH}",
        )
    )
    return results
