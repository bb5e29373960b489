"""A held ARK — deleted while reserved, or held from minting — is never published: no write binds it
public, unavailable or tombstoned, and no hold is put on an id bound published.  Each write path is
refused with the store unchanged (bind, tombstone, hold, JSON Lines import, EZID import, restore), on
both backends; reserving a held id stays allowed; ``check`` reports a store that breaks the rule.

Before this rule, ``bind --unavailable`` and ``tombstone`` of a held id, an import of one unavailable
or tombstoned, and ``hold`` of an id bound public all went through (a red-team finding): the deleted
reserved record's history, private until then, became readable by anyone.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _importcheck import tables
from _schema import raw_sql
from pidkit import importers
from pidkit.errors import ConflictError, StoreError
from pidkit.store import Store, open_store
from pidkit.store.records import ImportRejectedError, ReservedAgainError

NAAN = "99999"
HELD = f"ark:{NAAN}/fk4held"
#: The refusal's words up to its explanation, for a status.
REFUSED = "is held: it is never bound {status} ("


@pytest.fixture
def store(store: Store) -> Store:
    """The shared empty store (both backends, ``conftest.py``), with the NAAN and one held id."""
    store.add_naan(NAAN)
    store.add_hold(NAAN, "fk4held")
    return store



@pytest.mark.parametrize("status", ["public", "unavailable"])
def test_bind_refuses_to_publish_a_held_ark(store: Store, status: str) -> None:
    before = tables(store)
    reason = "withdrawn" if status == "unavailable" else None
    with pytest.raises(StoreError) as caught:
        store.bind(HELD, "https://example.org/h", status=status, reason=reason)  # type: ignore[arg-type]
    assert f"this ARK {REFUSED.format(status=status)}" in str(caught.value)
    assert caught.value.text == HELD
    assert tables(store) == before


def test_a_held_ark_may_be_reserved_but_not_then_withdrawn(store: Store) -> None:
    """Reserved again (EZID: create after delete), it stays unpublished: neither public nor unavailable,
    and its history stays private."""
    assert store.bind(HELD, "https://example.org/h", status="reserved").status == "reserved"
    before = tables(store)
    with pytest.raises(StoreError, match="never bound unavailable"):
        store.bind(HELD, status="unavailable", reason="withdrawn")
    with pytest.raises(StoreError, match="never bound public"):
        store.bind(HELD, status="public")
    assert tables(store) == before
    assert store.check() == []


def test_a_deleted_reserved_ark_is_not_tombstoned(store: Store) -> None:
    ark = f"ark:{NAAN}/fk4gone"
    store.bind(ark, "https://example.org/g", status="reserved", erc={"what": "private draft"})
    store.delete("ark", ark)
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.tombstone(ark, "never used")
    assert REFUSED.format(status="tombstoned") in str(caught.value)
    assert caught.value.text == ark
    assert tables(store) == before
    assert store.get_binding(ark) is None


def test_a_held_ark_never_bound_is_not_tombstoned(store: Store) -> None:
    before = tables(store)
    with pytest.raises(StoreError, match="never bound tombstoned"):
        store.tombstone(HELD, "never used")
    assert tables(store) == before


def test_an_ark_not_held_is_still_tombstoned_unbound(store: Store) -> None:
    """The refusal is the hold's alone: an ARK never bound nor held is tombstoned as before."""
    b = store.tombstone(f"ark:{NAAN}/fk4free", "withdrawn before use")
    assert b.status == "tombstoned"


@pytest.mark.parametrize("status", ["public", "unavailable", "tombstoned"])
def test_hold_refuses_an_ark_bound_published_and_holds_nothing(store: Store, status: str) -> None:
    ark = f"ark:{NAAN}/fk4out"
    store.bind(ark, "https://example.org/o")
    if status == "unavailable":
        store.bind(ark, status="unavailable", reason="withdrawn")
    elif status == "tombstoned":
        store.tombstone(ark, "withdrawn")
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.add_hold(NAAN, "fk4other", "fk4out")  # the first alone would be held: all or nothing
    assert f"{ark} is bound {status}: it was given out" in str(caught.value)
    assert caught.value.text == "fk4out"
    assert tables(store) == before


def test_hold_takes_an_ark_bound_reserved(store: Store) -> None:
    ark = f"ark:{NAAN}/fk4res"
    store.bind(ark, "https://example.org/r", status="reserved")
    assert store.add_hold(NAAN, ark) == 1
    with pytest.raises(StoreError, match="never bound public"):
        store.bind(ark, status="public")
    assert store.check() == []


@pytest.mark.parametrize("status", ["unavailable", "tombstoned"])
def test_an_import_binding_a_held_ark_withdrawn_is_refused_naming_its_line(store: Store, status: str) -> None:
    line: dict[str, Any] = {"text": HELD, "target": "https://example.org/h", "status": status}
    if status == "unavailable":
        line["reason"] = "withdrawn"
    else:
        line |= {"tombstone_reason": "withdrawn", "tombstoned_at": "2026-11-29T00:00:00Z"}
    _refused_as_line_2(store, line, f"{HELD} {REFUSED.format(status=status)}")


def _refused_as_line_2(store: Store, line: dict[str, Any], said: str) -> None:
    """An import of a good line and ``line`` is refused naming line 2 (``said`` begins its reason), and
    nothing is written."""
    lines = [json.dumps({"text": f"ark:{NAAN}/fk4ok", "target": "https://example.org/ok"}), json.dumps(line)]
    before = tables(store)
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl(lines)
    [(number, why)] = caught.value.problems
    assert number == 2
    assert why.startswith(said), why
    assert tables(store) == before


def test_an_ezid_download_binding_a_held_ark_unavailable_is_refused(store: Store, tmp_path: Path) -> None:
    dl = tmp_path / "dl.txt"
    dl.write_text(f":: ark:/{HELD[4:]}\n_status: unavailable | withdrawn\n_target: http://e.org/x\n")
    before = tables(store)
    with pytest.raises(StoreError, match="ark:99999/fk4held is held: it is never bound unavailable"):
        importers.run("ezid", dl, store)
    assert tables(store) == before


def _dump(build: Callable[[Store], object]) -> list[str]:
    with open_store("sqlite:///:memory:") as other:
        other.add_naan(NAAN)
        build(other)
        out = io.StringIO()
        other.dump(out)
    return out.getvalue().splitlines()


def _line_of(lines: list[str], table: str, text: str) -> int:
    return next(n for n, line in enumerate(lines, 1) if f'"table":"{table}"' in line and text in line)


@pytest.mark.parametrize(("write", "key", "said"), [
    (lambda s: s.tombstone(HELD, "withdrawn"), HELD, f"{HELD} {REFUSED.format(status='tombstoned')}"),
    (lambda s: s.bind(f"{HELD}/c", "https://example.org/c"), f"{HELD}/c",
     f"{HELD}/c qualifies {HELD}, which is held: it is never bound public ("),
], ids=["tombstoned", "qualifying"])  # fmt: skip
def test_a_merge_restore_publishing_a_held_ark_is_refused(
    store: Store, write: Callable[[Store], object], key: str, said: str
) -> None:
    """The dump's binding of the held ARK (tombstoned), or of an ARK qualifying it (public)."""
    lines = _dump(write)
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.restore(lines, merge=True)
    assert caught.value.line == _line_of(lines, "bindings", f'"{key}"')
    assert said in str(caught.value)
    assert tables(store) == before


def test_a_merge_restore_holding_an_ark_bound_unavailable_is_refused(store: Store) -> None:
    ark = f"ark:{NAAN}/fk4out"
    store.bind(ark, "https://example.org/o")
    store.bind(ark, status="unavailable", reason="withdrawn")
    lines = _dump(lambda s: s.add_hold(NAAN, "fk4out"))
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.restore(lines, merge=True)
    assert caught.value.line == _line_of(lines, "holds", '"fk4out"')
    assert f"{ark} is bound unavailable: it was given out" in str(caught.value)
    assert tables(store) == before


def test_a_merge_restore_keeps_a_held_ark_reserved_beside_the_dumps_withdrawn_row(store: Store) -> None:
    """A merge keeps the store's row: a held id bound reserved here stays so, and the dump's unavailable
    row of it is not written, so nothing is refused."""
    store.bind(HELD, "https://example.org/h", status="reserved")

    def withdrawn(s: Store) -> None:
        s.bind(HELD, "https://example.org/h")
        s.bind(HELD, status="unavailable", reason="withdrawn")

    store.restore(_dump(withdrawn), merge=True)
    b = store.get_binding(HELD)
    assert b is not None and b.status == "reserved"
    assert store.check() == []


@pytest.mark.parametrize("status", ["unavailable", "tombstoned"])
def test_check_reports_a_held_ark_bound_withdrawn(store: Store, status: str) -> None:
    """A store an earlier version wrote (it let ``bind --unavailable`` and ``tombstone`` through)."""
    store.bind(HELD, "https://example.org/h", status="reserved")
    reason = "reason" if status == "unavailable" else "tombstone_reason"
    stamp = ", tombstoned_at = updated" if status == "tombstoned" else ""
    sql = f"UPDATE bindings SET status = ?, {reason} = 'withdrawn'{stamp} WHERE key = ?"
    raw_sql(store, sql, (status, HELD))
    assert store.check() == [f"binding {HELD}: {status}, but its id is held"]
    if status == "unavailable":  # not put right by reserving it again: it was given out (docs/persistence.md)
        with pytest.raises(ReservedAgainError):
            store.bind(HELD, status="reserved")
        assert store.check() == [f"binding {HELD}: {status}, but its id is held"]


# -- the ARKs a held ARK contains (draft-kunze-ark-40 §2.5: an ARK with qualifiers is contained in the
# -- ARK without them): publishing one would give the held id out.
@pytest.mark.parametrize("qualified", ["/c", ".v2", "/c.v2", "/c/s"])
def test_bind_refuses_to_publish_an_ark_qualifying_a_held_one(store: Store, qualified: str) -> None:
    ark = HELD + qualified
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.bind(ark, "https://example.org/part")
    assert f"this ARK qualifies {HELD}, which is held: it is never bound public (" in str(caught.value)
    assert tables(store) == before
    assert store.bind(ark, "https://example.org/part", status="reserved").status == "reserved"
    with pytest.raises(StoreError, match=f"qualifies {HELD}, which is held: it is never bound tombstoned"):
        store.tombstone(ark, "withdrawn")
    assert store.check() == []


def test_an_ark_beside_a_held_one_is_not_covered(store: Store) -> None:
    """Only ``/`` and ``.`` qualify: a longer Name (``fk4held0``) and the held ARK's own ancestor
    (``fk4``… is no ARK it contains) are bound as ever."""
    assert store.bind(HELD + "0", "https://example.org/longer").status == "public"
    assert store.bind(f"ark:{NAAN}/fk4hel", "https://example.org/shorter").status == "public"
    assert store.check() == []


def test_hold_refuses_an_ark_a_published_binding_qualifies(store: Store) -> None:
    store.bind(f"ark:{NAAN}/fk4out.v2", "https://example.org/o")
    store.bind(f"ark:{NAAN}/fk4res/c", "https://example.org/r", status="reserved")
    store.bind(f"ark:{NAAN}/fk4out0", "https://example.org/longer")
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.add_hold(NAAN, "fk4out")
    said = f"ark:{NAAN}/fk4out is given out: ark:{NAAN}/fk4out.v2, which qualifies it, is bound public"
    assert said in str(caught.value)
    assert tables(store) == before
    assert store.add_hold(NAAN, "fk4res", "fk4out0x") == 2  # reserved parts; a Name beside a bound one


def test_an_import_publishing_an_ark_qualifying_a_held_one_is_refused(store: Store) -> None:
    line = {"text": f"{HELD}.v2/c", "target": "https://example.org/h"}
    said = f"{HELD}/c.v2 qualifies {HELD}, which is held: it is never bound public ("
    _refused_as_line_2(store, line, said)


def test_a_merge_restore_holding_an_ark_a_published_binding_qualifies_is_refused(store: Store) -> None:
    store.bind(f"ark:{NAAN}/fk4out/c", "https://example.org/o")
    lines = _dump(lambda s: s.add_hold(NAAN, "fk4beside", "fk4out"))
    before = tables(store)
    with pytest.raises(StoreError) as caught:
        store.restore(lines, merge=True)
    assert caught.value.line == _line_of(lines, "holds", '"fk4out"')
    assert f"ark:{NAAN}/fk4out is given out: ark:{NAAN}/fk4out/c, which qualifies it, is bound public" in str(
        caught.value
    )
    assert tables(store) == before


def test_check_reports_a_published_ark_qualifying_a_held_one(store: Store) -> None:
    """A store an earlier version wrote: it let ``X/c`` be bound public while ``X`` was held."""
    store.bind(f"{HELD}/c", "https://example.org/c", status="reserved")
    store.bind(f"{HELD}0", "https://example.org/longer")  # beside, not under: no problem
    raw_sql(store, "UPDATE bindings SET status = 'public' WHERE key = ?", (f"{HELD}/c",))
    assert store.check() == [f"binding {HELD}/c: public, but it qualifies {HELD}, which is held"]


def test_a_reserved_ark_a_published_binding_qualifies_is_not_deleted(store: Store) -> None:
    """Deleting leaves the id held; ``X`` given out through ``X/c`` is never held, so its reserved
    binding is kept (a ConflictError naming both), and nothing changes."""
    store.bind(f"ark:{NAAN}/fk4x/c", "https://example.org/c")
    store.bind(f"ark:{NAAN}/fk4x", "https://example.org/x", status="reserved")
    before = tables(store)
    with pytest.raises(ConflictError) as caught:
        store.delete("ark", f"ark:{NAAN}/fk4x")
    assert f"ark:{NAAN}/fk4x is given out: ark:{NAAN}/fk4x/c, which qualifies it, is bound public" in str(
        caught.value
    )
    assert tables(store) == before
    with pytest.raises(ReservedAgainError):  # the part stays given out, so X is never held
        store.bind(f"ark:{NAAN}/fk4x/c", status="reserved")
    store.bind(f"ark:{NAAN}/fk4y/c", None, status="reserved")  # a part never published: the deletion goes
    store.bind(f"ark:{NAAN}/fk4y", None, status="reserved")
    assert store.delete("ark", f"ark:{NAAN}/fk4y").status == "reserved"
    assert store.check() == []


def test_a_store_holding_a_tombstoned_held_ark_moves_as_docs_persistence_says(store: Store) -> None:
    """An earlier build let a held id be tombstoned: restore refuses the dump; with the id's holds line
    taken out and the header's count lowered, it is restored, check is clean, and the id stays taken."""
    store.bind(HELD, "https://example.org/h", status="reserved")
    raw_sql(store, "UPDATE bindings SET status = 'tombstoned', tombstone_reason = 'withdrawn', "
                "tombstoned_at = updated WHERE key = ?", (HELD,))  # fmt: skip
    out = io.StringIO()
    store.dump(out)
    lines = out.getvalue().splitlines()
    said = f"{HELD} is held: it is never bound tombstoned"
    with open_store("sqlite:///:memory:") as refused, pytest.raises(StoreError, match=said):
        refused.restore(lines)
    head = json.loads(lines[0])
    head["counts"]["holds"] -= 1
    edited = [json.dumps(head)] + [
        line for line in lines[1:] if not ('"table":"holds"' in line and '"fk4held"' in line)
    ]
    with open_store("sqlite:///:memory:") as moved:
        moved.restore(edited)
        assert moved.check() == []
        b = moved.get_binding(HELD)
        assert b is not None and b.status == "tombstoned"
        with pytest.raises(StoreError):
            moved.bind(HELD, "https://example.org/again")


def test_an_import_of_deep_arks_under_a_naan_with_holds_reads_them_in_bounded_statements(
    store: Store,
) -> None:
    """Each ARK is looked up with all its ancestors (2,000 for an ARK of 4,096 characters): a chunk of
    1,000 such lines in one statement overflowed SQLite's and PostgreSQL's parameter limits (a raw
    database error; a review finding).  One held deep ARK among them is still found."""
    deep = "/a" * 260
    lines = [json.dumps({"text": f"ark:{NAAN}/fk4d{i}{deep}", "target": "https://example.org/d"})
             for i in range(1000)]  # fmt: skip
    assert store.import_jsonl(lines).created == 1000
    store.bind(f"ark:{NAAN}/fk4e7{deep[:100]}", None, status="reserved")
    store.delete("ark", f"ark:{NAAN}/fk4e7{deep[:100]}")  # held, with its qualifiers
    late = json.dumps({"text": f"ark:{NAAN}/fk4e7{deep}", "target": "https://example.org/e"})
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl([*lines[:999], late])
    [(number, why)] = caught.value.problems
    assert number == 1000 and f"qualifies ark:{NAAN}/fk4e7{deep[:100]}, which is held" in why


def test_max_problems_must_be_positive(store: Store) -> None:
    """0 left no problem to list, and the import then wrote its later chunks (a review finding)."""
    with pytest.raises(StoreError, match=r"max_problems must be positive \(0\)"):
        store.import_jsonl(["not json"], max_problems=0)
