"""Helpers of the importer tests: a store's rows read from its own dump, the ids it minted or holds,
and minting a minter's whole remaining space.  (The store's invariants are checked by the store
itself: ``Store.check()``, what ``pidkit check`` runs.)"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable

from pidkit.errors import ExhaustedError
from pidkit.store import Store
from pidkit.store.dump import parse_row
from pidkit.store.rows import TABLES

_COLUMNS = {t.name: t.columns for t in TABLES}


def tables(store: Store) -> dict[str, list[dict[str, object]]]:
    """Every row of every table, from the store's dump."""
    out = io.StringIO()
    store.dump(out)
    rows: dict[str, list[dict[str, object]]] = defaultdict(list)
    for number, line in enumerate(out.getvalue().splitlines()[1:], 2):
        name, values = parse_row(line, number)
        rows[name].append(dict(zip(_COLUMNS[name], values, strict=True)))
    return rows


def minted_and_held(store: Store) -> set[str]:
    """``NAAN/id`` of every id in the minted log or held."""
    rows = tables(store)
    return {f"{r['naan']}/{r['id']}" for r in [*rows["minted"], *rows["holds"]]}


def mint_everything(store: Store, minter: str, limit: int) -> list[str]:
    """Mint from ``minter`` one id at a time until it is exhausted (at most ``limit`` ids; more is a
    failure): its whole remaining space, as compact ARKs."""
    out: list[str] = []
    while True:
        try:
            out.extend(store.mint(minter, 1))
        except ExhaustedError:
            return out
        assert len(out) <= limit, f"minter {minter} minted more than {limit} ids"


def space(template: str, naan: str) -> set[str]:
    """Every id a bounded template makes, as compact ARKs."""
    from pidkit import noid

    t = noid.Template.parse(template)
    assert t.capacity is not None
    return {f"ark:{naan}/{t.id_at(i, naan)}" for i in range(t.capacity)}


def compact(ids: Iterable[str]) -> set[str]:
    """``NAAN/id`` spellings as compact ARKs (``ark:NAAN/id``)."""
    return {i if i.startswith("ark:") else f"ark:{i}" for i in ids}
