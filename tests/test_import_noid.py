"""NOID minter database import (pidkit.importers.noid) from databases the real Perl NOID 0.424 made.

Fixtures (``tools/build_noid_fixtures.py``): ``random/`` — ``dbcreate tst5.rdek long 99999``, 20 ids
minted, 2 holds, bindings; ``sequential/`` — ``dbcreate sq.sdd long 99999``, 10 ids minted, 1 hold,
bindings.  Each has the ``manifest.json`` of what NOID printed, which the import is compared with.
Reading ``noid.bdb`` needs the ``berkeleydb`` package (the ``noid`` extra).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from _importcheck import compact, mint_everything, space, tables
from pidkit import importers, noid
from pidkit.importers import ImportRefusedError, SourceError
from pidkit.importers.noid import read_noid
from pidkit.store import Principal, Store, open_store
from pidkit.store.rows import BINDING_COLUMNS

DATA = Path(__file__).parent / "data" / "importers" / "noid"
RANDOM = DATA / "random"
SEQUENTIAL = DATA / "sequential"


def _manifest(d: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads((d / "manifest.json").read_text())
    return out


@pytest.fixture
def sqlite_store() -> Iterator[Store]:
    with open_store("sqlite:///:memory:") as s:
        yield s


def _minted(store: Store) -> set[str]:
    return {f"ark:{r['naan']}/{r['id']}" for r in tables(store)["minted"]}


def _held(store: Store) -> set[str]:
    return {f"ark:{r['naan']}/{r['id']}" for r in tables(store)["holds"]}


def test_the_reader_sees_what_noid_wrote() -> None:
    db = read_noid(RANDOM)
    manifest = _manifest(RANDOM)
    assert db.admin["template"] == "tst5.rdek" and db.admin["naan"] == "99999"
    assert db.admin["generator_type"] == "random" and db.admin["oacounter"] == "20"
    issued = {i for i, e in db.ids.items() if e.circ and e.circ.startswith("i")}
    assert issued == set(manifest["minted"])
    assert {i for i, e in db.ids.items() if e.hold} == set(manifest["minted"]) | set(manifest["holds"])
    bound = {(i, k, v) for i, e in db.ids.items() for k, v in e.elements.items()}
    assert bound == {tuple(b) for b in manifest["bindings"]}
    assert db.idmaps == [(f"{e} {p}", r) for e, p, r in manifest["rules"]]  # the rule's own hold is not one


def test_pidkit_templates_read_noids_ids_and_check_characters() -> None:
    template = noid.Template.parse("tst5.rdek")
    for ident in _manifest(RANDOM)["minted"]:
        naan, blade = ident.split("/")
        assert template.id_at(template.ordinal_of(blade, naan), naan) == blade  # NCDA over NAAN/id


NOTE = "an element pidkit has no place for"  # what the fixture bound (now extra metadata)


def test_a_noid_element_name_the_store_refuses_needs_consent() -> None:
    from pidkit.importers.common import DumpBuilder
    from pidkit.importers.noid import NoidDatabase, _Id, database_report

    entry = _Id(circ="i|20240501120000|me/me|1", elements={"_t": "https://e.org/1", "my note": "x", "n": "y"})
    db = NoidDatabase("noid.bdb", {"naan": "99999"}, {"99999/fk41": entry}, [], [])
    [refused] = database_report(db, DumpBuilder("noid")).by_action("refused")
    assert refused.reason.startswith("element names the store refuses: my note (no whitespace")
    b = DumpBuilder("noid")
    [done] = database_report(db, b, drop_extra=True).outcomes
    assert (done.action, done.dropped) == ("imported", ("my note",))
    assert b.binding("ark:99999/fk41")[BINDING_COLUMNS.index("extra")] == '{"n":"y"}'


def test_a_rule_based_binding_refuses_the_import(store: Store) -> None:
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("noid", RANDOM, store)
    refused = caught.value.report.by_action("refused")
    assert [o.id for o in refused] == ["_t ^99999/tst5(\\d.)$"]  # the element "note" has a place now
    assert refused[0].where == "key ':/idmap/_t<TAB>^99999/tst5(\\d.)$'"
    assert "rule-based (:/idmap) binding has no place here" in refused[0].reason
    assert all(not rows for rows in tables(store).values())


def test_random_minter_imports_with_consent(store: Store) -> None:
    manifest = _manifest(RANDOM)
    report = importers.run("noid", RANDOM / "noid.bdb", store, drop_extra=True)
    first, second, third, fourth = manifest["minted"][:4]
    assert report.count("refused") == 0 and report.count("imported") == 22
    [rule] = report.by_action("skipped")
    assert rule.reason == "rule-based binding (-> https://example.org/rule/$1) left out"
    assert [o.dropped for o in report.outcomes if o.dropped] == []
    # every issued id, and the held id NOID let us bind (bound, it is in use): never a public held id
    assert _minted(store) == compact(manifest["minted"]) | {"ark:99999/tst5x12"}
    assert _held(store) == {"ark:99999/tst5900"}  # held, never issued nor bound
    held_bound = store.get_binding("ark:99999/tst5x12")
    assert held_bound is not None and held_bound.target == "https://example.org/held-then-bound"
    one = store.get_binding(f"ark:{first}")
    assert one is not None and (one.status, one.target) == ("public", "https://example.org/objects/1")
    assert (one.erc.who, one.erc.what) == ("Doe, Jane", "A report: 100% cotton")
    two = store.get_binding(f"ark:{second}")
    assert two is not None and (two.erc.who, two.erc.when) == ("Austin, Larry", "1952")
    three = store.get_binding(f"ark:{third}")
    assert three is not None and (three.status, three.target, three.erc.what) == (
        "reserved",
        None,
        "Reserved, not yet public",
    )
    four = store.get_binding(f"ark:{fourth}")
    assert four is not None and four.status == "public"
    assert four.extra_dict == {"note": NOTE}  # a NOID element that is not ERC: extra metadata
    [minter] = store.list_minters()
    assert (minter.name, minter.template, minter.counter) == ("noid-99999-tst5", "tst5.rdek", 0)
    assert store.check() == []


def test_the_random_minter_never_reissues_in_its_whole_space(store: Store) -> None:
    manifest = _manifest(RANDOM)
    importers.run("noid", RANDOM, store, drop_extra=True)
    full = space("tst5.rdek", "99999")
    old = compact(manifest["minted"]) | (compact(manifest["holds"]) & full)
    minted = mint_everything(store, "noid-99999-tst5", limit=290)
    assert not old & set(minted)
    assert set(minted) | old == full
    assert len(minted) == 290 - len(old)
    assert store.check() == []


def test_the_sequential_minter_continues_where_noid_stopped(store: Store) -> None:
    manifest = _manifest(SEQUENTIAL)
    report = importers.run("noid", SEQUENTIAL, store)
    assert report.count("imported") == 11
    assert "minter noid-99999-sq: template sq.sdd, sequential, counter 10 (NOID's oacounter)" in report.notes
    assert store.get_minter("noid-99999-sq").counter == 10
    bound = store.get_binding("ark:99999/sq04")
    assert bound is not None and (bound.target, bound.erc.who) == ("https://example.org/sq/5", "Kunze, John")
    assert store.mint("noid-99999-sq", 3) == [
        "ark:99999/sq10",
        "ark:99999/sq11",
        "ark:99999/sq13",
    ]  # sq12 held
    rest = mint_everything(store, "noid-99999-sq", limit=100)
    everything = {"ark:99999/sq10", "ark:99999/sq11", "ark:99999/sq13", *rest}
    assert not everything & (compact(manifest["minted"]) | compact(manifest["holds"]))
    assert everything | compact(manifest["minted"]) | compact(manifest["holds"]) == space("sq.sdd", "99999")
    assert store.check() == []


def test_a_rerun_keeps_everything(sqlite_store: Store) -> None:
    importers.run("noid", SEQUENTIAL, sqlite_store)
    sqlite_store.mint("noid-99999-sq", 2)
    again = importers.run("noid", SEQUENTIAL, sqlite_store)
    assert sum(again.restored.values()) == 0
    assert again.by_action("kept")[0].id == "99999/sq04"
    assert sqlite_store.get_minter("noid-99999-sq").counter == 12  # never set back


def test_a_dry_run_is_the_report_and_writes_nothing(store: Store) -> None:
    """The preview (``dry_run``): the report the import gives, refused records included (not raised),
    and the rows the source maps to; nothing written.  ``principal`` names the history rows."""
    refused = importers.run("noid", RANDOM, store, dry_run=True)
    assert [o.id for o in refused.by_action("refused")] == ["_t ^99999/tst5(\\d.)$"]
    assert all(not rows for rows in tables(store).values())
    preview = importers.run("noid", RANDOM, store, drop_extra=True, dry_run=True)
    assert all(not rows for rows in tables(store).values())
    assert "1 minter, 21 minted-log rows, 1 hold, 5 bindings" in preview.notes[-1]
    done = importers.run("noid", RANDOM, store, drop_extra=True, principal=Principal.user("root"))
    assert preview.outcomes == done.outcomes and preview.summary() == done.summary()
    assert done.restored["bindings"] == 5 and done.restored["history"] == 8  # 5 + NAAN, shoulder, minter
    assert [(h.operation, h.principal) for h in store.history("ark", "ark:99999/tst51q1")] == [
        ("merge", "user:root")
    ]
    assert [h.operation for h in store.history("naan", "99999")] == ["naan.add", "shoulder.add"]
    assert store.history("minter", "noid-99999-tst5")[0].principal == "user:root"
    assert store.check() == []
    again = importers.run("noid", RANDOM, store, drop_extra=True, dry_run=True)
    assert again.count("kept") == 5 and again.count("imported") == 17  # ids without a binding
    rerun = importers.run("noid", RANDOM, store, drop_extra=True, principal=Principal.user("root"))
    assert sum(rerun.restored.values()) == 0  # nothing new: no history row either


def test_unreadable_sources(tmp_path: Path, sqlite_store: Store) -> None:
    with pytest.raises(SourceError, match="no NOID database here"):
        importers.run("noid", tmp_path, sqlite_store)
    (tmp_path / "noid.bdb").write_text("not a database")
    with pytest.raises(SourceError, match=r"not a BerkeleyDB B-tree file NOID writes .* in '.*noid.bdb'"):
        importers.run("noid", tmp_path, sqlite_store)


def test_without_the_berkeleydb_package_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, sqlite_store: Store
) -> None:
    real = importlib.import_module

    def missing(name: str, package: str | None = None) -> ModuleType:
        if name.startswith("berkeleydb"):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(SourceError, match=r"needs the berkeleydb package: pip install 'pidkit\[noid\]'"):
        importers.run("noid", RANDOM, sqlite_store)


# -- a red-team review's findings -------------------------------------------------------------------
def _changed(tmp_path: Path, put: dict[str, str], *, duplicates: bool = False) -> Path:
    """A copy of the sequential fixture's ``noid.bdb`` with ``put`` written into it (keys and values as
    NOID writes them: UTF-8); ``duplicates``: a B-tree that keeps a second value of a key beside the first
    (BerkeleyDB's ``DB_DUP``, which NOID never sets)."""
    bdb = importlib.import_module("berkeleydb.db")
    path = tmp_path / "noid.bdb"
    source = bdb.DB()
    source.open(str(SEQUENTIAL / "noid.bdb"), None, bdb.DB_BTREE, bdb.DB_RDONLY)
    out = bdb.DB()
    if duplicates:
        out.set_flags(bdb.DB_DUP)
    out.open(str(path), None, bdb.DB_BTREE, bdb.DB_CREATE)
    cursor = source.cursor()
    item = cursor.first()
    while item is not None:
        out.put(*item)
        item = cursor.next()
    cursor.close()
    source.close()
    for key, value in put.items():
        out.put(key.encode(), value.encode())
    out.close()
    return path


@pytest.mark.parametrize("size", [4096, 8192])
def test_a_database_cut_short_is_refused_naming_it(tmp_path: Path, sqlite_store: Store, size: int) -> None:
    """Damage found only as the records are read (a page missing) was a traceback."""
    (tmp_path / "noid.bdb").write_bytes((SEQUENTIAL / "noid.bdb").read_bytes()[:size])
    said = r"(cannot be read|not a BerkeleyDB B-tree file) .* in '.*noid.bdb'"
    with pytest.raises(SourceError, match=said):
        importers.run("noid", tmp_path, sqlite_store)
    assert not any(tables(sqlite_store).values())


@pytest.mark.parametrize("counter", ["ten", "1" * 23, "-5"])
def test_an_oacounter_that_is_no_count_is_refused(tmp_path: Path, sqlite_store: Store, counter: str) -> None:
    _changed(tmp_path, {":/oacounter": counter})
    with pytest.raises(SourceError, match=r":/oacounter is not a count of minted ids"):
        importers.run("noid", tmp_path, sqlite_store)
    assert not any(tables(sqlite_store).values())


def test_a_key_written_twice_is_refused(tmp_path: Path, sqlite_store: Store) -> None:
    """A second value of a key replaced the first unseen (the target, an ERC element, the counter)."""
    _changed(tmp_path, {"99999/sq04\t_t": "https://example.org/second"}, duplicates=True)
    with pytest.raises(SourceError, match=r"record b'99999/sq04\\t_t' is in the file twice"):
        importers.run("noid", tmp_path, sqlite_store)


def test_two_elements_giving_one_erc_field_two_values_refuse_the_record(
    tmp_path: Path, sqlite_store: Store
) -> None:
    """``who`` beside ``erc.who`` (both read as the ERC's who): one value was lost unseen."""
    _changed(tmp_path, {"99999/sq04\twho": "Someone Else"})
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("noid", tmp_path, sqlite_store)
    [refused] = caught.value.report.by_action("refused")
    assert refused.id == "99999/sq04"
    assert refused.reason == "elements 'erc.who' and 'who' give the ERC's who two values"
    assert not any(tables(sqlite_store).values())
    _changed(tmp_path, {"99999/sq04\twho": "Kunze, John"})  # the same value twice: nothing is lost
    importers.run("noid", tmp_path, sqlite_store)
    b = sqlite_store.get_binding("ark:99999/sq04")
    assert b is not None and b.erc.who == "Kunze, John"


def test_an_issued_id_with_qualifiers_gives_out_the_name_it_qualifies(tmp_path: Path, store: Store) -> None:
    """NOID issued ``sq13/x``: ``sq13`` is given out with it (draft-kunze-ark-40 §2.5), so the minter that
    continues NOID's never issues it (it was dropped, and minted)."""
    _changed(tmp_path, {"99999/sq13/x\t:/c": "i|20240101000000|me|13", "99999/sq15.v2\t:/h": "1"})
    importers.run("noid", tmp_path, store)
    assert "ark:99999/sq13" in _minted(store)
    assert "ark:99999/sq15.v2" in _held(store)
    minted = store.mint("noid-99999-sq", 6)
    assert "ark:99999/sq13" not in minted and "ark:99999/sq15" not in minted


def test_the_naan_is_normalized_or_refused(tmp_path: Path, sqlite_store: Store) -> None:
    _changed(tmp_path, {":/naan": " 99999 "})
    with pytest.raises(SourceError, match=r":/naan is not a NAAN: NAAN must be betanumeric"):
        importers.run("noid", tmp_path, sqlite_store)
    assert not any(tables(sqlite_store).values())


def test_a_nul_in_an_extra_element_is_refused_naming_it(tmp_path: Path, store: Store) -> None:
    """The store's text rule reaches the extra elements too (SQLite stored the NUL JSON-escaped;
    PostgreSQL refused the row naming a line of pidkit's own dump)."""
    _changed(tmp_path, {"99999/sq05\tnote": "a\x00b"})
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("noid", tmp_path, store, drop_extra=True)
    [refused] = caught.value.report.by_action("refused")
    assert refused.id == "99999/sq05"
    assert refused.reason is not None
    assert refused.reason.startswith("extra.note: character U+0000 not allowed")


def test_ids_both_systems_gave_out_are_named(store: Store) -> None:
    """A store whose own minter issued NOID's first ids before the import: the report says so (the
    merge kept its minted-log rows silently); a rerun of the import names nothing of its own."""
    store.add_naan("99999")
    store.create_minter("mine", naan="99999", template="sq.sdd")
    assert store.mint("mine", 3) == ["ark:99999/sq00", "ark:99999/sq01", "ark:99999/sq02"]
    report = importers.run("noid", SEQUENTIAL, store)
    [note] = [n for n in report.notes if n.startswith("given out twice")]
    assert note == ("given out twice: 3 ids issued by the source and minted here too, by this store's "
                    "minters, before this import: ark:99999/sq00 (mine), ark:99999/sq01 (mine), "
                    "ark:99999/sq02 (mine)")  # fmt: skip
    again = importers.run("noid", SEQUENTIAL, store, dry_run=True)
    assert [n for n in again.notes if n.startswith("given out twice")] == [note]  # still pidkit's rows
