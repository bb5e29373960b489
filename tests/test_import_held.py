"""A restore in merge mode — what every importer writes through — never binds a held id public (the
importer engineer's report: "neither merge restore nor bind() refuses a public binding of an id the
store already holds"; ``bind()`` refuses it since issue 13, ``Store.check()`` reports it).  The dump is
refused as a whole, naming its line, on both backends."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from _importcheck import tables
from pidkit import importers
from pidkit.errors import StoreError
from pidkit.store import Store, open_store


def _line_of(lines: list[str], table: str, text: str = "") -> int:
    return next(n for n, line in enumerate(lines, 1) if f'"table":"{table}"' in line and text in line)


def _dump(build: Callable[[Store], object]) -> list[str]:
    with open_store("sqlite:///:memory:") as other:
        build(other)
        out = io.StringIO()
        other.dump(out)
    return out.getvalue().splitlines()


def _bound_public(s: Store) -> None:
    s.add_naan("99999")
    s.bind("ark:99999/fk4x", "https://e.org/x")
    s.bind("ark:99999/fk4y", "https://e.org/y")


def test_a_dump_binding_a_held_id_public_is_refused(store: Store) -> None:
    store.add_naan("99999")
    store.add_hold("99999", "fk4y")
    before = tables(store)
    lines = _dump(_bound_public)
    number = _line_of(lines, "bindings", '"ark:99999/fk4y"')
    with pytest.raises(StoreError) as caught:
        store.restore(lines, merge=True)
    assert caught.value.line == number
    assert "ark:99999/fk4y is held: it is never bound public (" in str(caught.value)
    assert tables(store) == before  # all or nothing
    assert store.check() == []


def test_a_dump_holding_a_publicly_bound_id_is_refused(store: Store) -> None:
    _bound_public(store)
    before = tables(store)

    def held(s: Store) -> None:
        s.add_naan("99999")
        s.add_hold("99999", "fk4x")

    lines = _dump(held)
    number = _line_of(lines, "holds")
    with pytest.raises(StoreError) as caught:
        store.restore(lines, merge=True)
    assert caught.value.line == number
    assert "ark:99999/fk4x is bound public: it was given out" in str(caught.value)
    assert tables(store) == before
    assert store.check() == []


def test_a_dump_with_both_in_it_is_refused_into_an_empty_store(store: Store) -> None:
    def both(s: Store) -> None:
        s.add_naan("99999")
        s.add_hold("99999", "fk4z")

    lines = _dump(both)
    header, rows = lines[0], lines[1:]
    public = _dump(_bound_public)
    binding = public[_line_of(public, "bindings", '"ark:99999/fk4x"') - 1]
    forged = binding.replace("fk4x", "fk4z")
    history = [line for line in public if '"table":"history"' in line and "fk4x" in line][:1]

    head = json.loads(header)
    head["counts"]["bindings"] = 1
    head["counts"]["history"] = len(history)
    first_history = next((i for i, line in enumerate(rows) if '"table":"history"' in line), len(rows))
    rows[first_history:first_history] = [forged]  # the bindings come before the history
    rows += [h.replace("fk4x", "fk4z") for h in history]
    with pytest.raises(StoreError, match="ark:99999/fk4z is held"):
        store.restore([json.dumps(head), *rows])
    assert all(not r for r in tables(store).values())


def test_an_import_of_an_id_the_store_holds_is_refused(store: Store, tmp_path: Path) -> None:
    store.add_naan("99999")
    store.add_hold("99999", "fk4gt78tq")
    dl = tmp_path / "dl.txt"
    dl.write_text(":: ark:/99999/fk4gt78tq\n_status: public\n_target: http://e.org/x\n")
    with pytest.raises(StoreError, match="ark:99999/fk4gt78tq is held") as caught:
        importers.run("ezid", dl, store)
    assert caught.value.line is None  # a line of the dump the import made, not of the download: not named
    assert str(caught.value).startswith("the store refused the import, nothing was written: bindings row")
    assert store.get_binding("ark:99999/fk4gt78tq") is None
    assert store.check() == []
