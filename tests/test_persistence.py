"""The persistence promise (issue 13): every change recorded in an append-only history, withdrawal
without forgetting (``unavailable``), deletion of never-public reserved ids (held for ever), partial
updates, extra metadata, ``check``.  Every store test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from _schema import earlier_build, raw_sql
from pidkit.errors import ConflictError, NotFoundError, StoreError
from pidkit.noid import Minter
from pidkit.store import (
    BindingChange,
    ChangedMeanwhileError,
    ImportRejectedError,
    Principal,
    ReservedAgainError,
    Status,
    Store,
    binding_version,
    change_from_patch,
    check_extra_name,
    open_store,
)

NAAN = "99999"
ALICE = Principal.api_key("a1b2c3d4e5f60718")


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_postgres_url()
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    s = open_store(url)
    s.add_naan(NAAN, "Test", shoulders=["fk4"])
    yield s
    assert s.check() == []  # every test leaves a consistent store
    s.close()



# -- history --------------------------------------------------------------------------------------------
def test_every_change_writes_one_history_row_naming_its_principal(store: Store) -> None:
    store.bind("ark:99999/fk4h1", "https://example.org/1", erc={"who": "W"}, principal=ALICE)
    store.bind("ark:99999/fk4-h1", "https://example.org/2", principal=Principal.user("ann"))
    store.bind("ark:99999/fk4h1", "https://example.org/2")  # changes nothing: writes nothing
    store.bind("ark:99999/fk4h1", status="unavailable", reason="withdrawn by author")
    store.tombstone("ark:99999/fk4h1", "gone for good", principal=ALICE)
    rows = store.history("ark", "ark:/99999/fk4-h1")
    assert [(r.operation, r.principal) for r in rows] == [
        ("create", str(ALICE)), ("update", "user:ann"), ("status", str(Principal.local())),
        ("tombstone", str(ALICE)),
    ]
    create, update, status, tomb = rows
    assert create.before is None and create.after is not None
    assert (create.after["target"], create.after["erc"]) == (
        "https://example.org/1", {"who": "W", "what": "", "when": "", "where": ""})
    assert (update.before, update.after) == (
        {"target": "https://example.org/1"}, {"target": "https://example.org/2"})
    assert (status.before, status.after) == (
        {"status": "public", "reason": None}, {"status": "unavailable", "reason": "withdrawn by author"})
    assert tomb.after is not None and tomb.after["status"] == "tombstoned"
    stamps = [r.at for r in rows]
    assert None not in stamps and stamps == sorted(s for s in stamps if s is not None)
    b = store.get_binding("ark:99999/fk4h1")
    assert b is not None and b.updated == tomb.at


def test_mint_hold_keys_naan_and_minter_changes_are_recorded(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=1, principal=ALICE)
    ids = store.mint("m", 5, batch_size=2, principal=ALICE)
    store.add_hold("m", Minter("fk4.reedeedk", NAAN, seed=1).mint_at(7))
    key, _ = store.create_api_key(NAAN, label="k")
    store.revoke_api_key(key.key_id)
    store.revoke_api_key(key.key_id)  # already revoked: no change, no row
    minter = store.history("minter", "m")
    assert [r.operation for r in minter] == ["minter.create", "mint", "mint", "mint"]
    assert [(r.before, r.after and r.after["minted"]) for r in minter[1:]] == [
        ({"counter": 0}, 2), ({"counter": 2}, 2), ({"counter": 4}, 1)]
    assert minter[1].after is not None and minter[1].after["first"] == ids[0]
    held = f"ark:{NAAN}/{Minter('fk4.reedeedk', NAAN, seed=1).mint_at(7)}"
    assert [r.operation for r in store.history("ark", held)] == ["hold"]
    assert [r.operation for r in store.history("api_key", key.key_id)] == ["apikey.create", "apikey.revoke"]
    assert [r.operation for r in store.history("naan", NAAN)] == ["naan.add", "shoulder.add"]


def test_history_is_append_only_in_the_database(store: Store) -> None:
    store.bind("ark:99999/fk4ap", "https://example.org/ap")
    for sql in ("UPDATE history SET principal = 'x'", "DELETE FROM history"):
        with pytest.raises(Exception, match="append-only"):
            raw_sql(store, sql)
    if store.backend == "postgresql":
        with pytest.raises(Exception, match="append-only"):
            raw_sql(store, "TRUNCATE history")
    assert [r.operation for r in store.history("ark", "ark:99999/fk4ap")] == ["create"]


def test_a_failed_change_writes_no_history(store: Store) -> None:
    store.bind("ark:99999/fk4f", "https://example.org/f")
    with pytest.raises(StoreError, match="needs a reason"):
        store.bind("ark:99999/fk4f", status="unavailable")
    with pytest.raises(StoreError, match="needs a target"):
        store.bind("ark:99999/fk4f", "")
    assert [r.operation for r in store.history("ark", "ark:99999/fk4f")] == ["create"]


# -- withdraw without forgetting ----------------------------------------------------------------------
def test_unavailable_is_reversible_and_tombstoned_is_not(store: Store) -> None:
    b = store.bind("ark:99999/fk4u", "https://example.org/u", extra={"dc.title": "U"})
    u = store.bind("ark:99999/fk4u", status="unavailable", reason="withdrawn by author")
    assert (u.status, u.reason) == ("unavailable", "withdrawn by author")
    assert (u.target, u.extra) == (b.target, b.extra)
    resolution = store.resolve("ark:99999/fk4u")
    assert resolution is not None and resolution.location is None  # no redirect while unavailable
    back = store.bind("ark:99999/fk4u", status="public")
    assert (back.status, back.reason, back.target) == ("public", None, b.target)
    with pytest.raises(StoreError, match="goes with status unavailable"):
        store.bind("ark:99999/fk4u", reason="why")
    store.tombstone("ark:99999/fk4u", "for good")
    for change in ({"status": "public"}, {"status": "unavailable", "reason": "r"}):
        with pytest.raises(ConflictError, match="tombstoned"):
            store.bind("ark:99999/fk4u", **change)  # type: ignore[arg-type]


def test_a_reserved_id_can_be_deleted_and_stays_held(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=5)
    first = Minter("fk4.reedeedk", NAAN, seed=5).mint_at(0)
    ark = f"ark:{NAAN}/{first}"
    store.bind(ark, None, status="reserved", erc={"what": "draft"})
    deleted = store.delete("ark", ark, principal=ALICE)
    assert deleted.erc.what == "draft" and store.get_binding(ark) is None
    assert ark not in store.mint("m", 3)  # held: never minted
    with pytest.raises(StoreError, match="held"):
        store.bind(ark, "https://example.org/x")  # never made public
    assert [(r.operation, r.after) for r in store.history("ark", ark)][-1] == ("delete", None)
    with pytest.raises(NotFoundError):
        store.delete("ark", ark)


def test_only_reserved_ids_never_published_can_be_deleted(store: Store) -> None:
    store.bind("ark:99999/fk4p", "https://example.org/p")
    with pytest.raises(ConflictError, match="this one is public"):
        store.delete("ark", "ark:99999/fk4p")
    # a store an earlier build wrote: public once, then reserved again — stays undeletable
    with earlier_build():
        store.bind("ark:99999/fk4p", status="reserved")
    with pytest.raises(ConflictError, match="was published"):
        store.delete("ark", "ark:99999/fk4p")
    # unavailable is published too (410 with its reason, to anyone): a review found it deletable once
    # reserved again, and the id then held
    store.bind("ark:99999/fk4w", None, status="reserved")
    store.bind("ark:99999/fk4w", "https://example.org/w", status="unavailable", reason="withdrawn")
    with earlier_build():
        store.bind("ark:99999/fk4w", status="reserved")
    with pytest.raises(ConflictError, match=r"this one is reserved, and was published"):
        store.delete("ark", "ark:99999/fk4w")
    store.bind_id("uuid", "2d9f3c64-0a4e-4b8e-9e0e-3f4a5b6c7d8e", None, status="reserved")
    assert store.delete("uuid", "2D9F3C64-0A4E-4B8E-9E0E-3F4A5B6C7D8E").kind == "uuid"
    assert [p.split(":")[1] for p in store.check()] == ["99999/fk4p", "99999/fk4w"]
    store.bind("ark:99999/fk4p", status="public")  # put right as check says
    store.bind("ark:99999/fk4w", status="unavailable", reason="withdrawn")


@pytest.mark.parametrize("published", ["public", "unavailable"])
def test_a_published_binding_is_never_reserved_again(store: Store, published: Status) -> None:
    """EZID's rule, the store's: once given out, an id answers for ever (its target, or 410 with a
    reason); reserved, it would answer 404 as if it never existed.  Refused for every kind, with a change
    of other fields too, and nothing is written."""
    ark, uuid = "ark:99999/fk4r", "2d9f3c64-0a4e-4b8e-9e0e-3f4a5b6c7d8e"
    reason = "withdrawn" if published == "unavailable" else None
    store.bind(ark, None, status="reserved")
    store.bind(ark, "https://example.org/r", status=published, reason=reason)  # reserved → published: fine
    store.bind_id("uuid", uuid, "https://example.org/u", status=published, reason=reason)
    before = store.get_binding(ark), store.history("ark", ark), store.history("uuid", uuid)
    with pytest.raises(ReservedAgainError, match=r"never reserved again .* in 'ark:99999/fk4r'"):
        store.bind(ark, "https://example.org/other", status="reserved")
    with pytest.raises(ReservedAgainError, match="in 'ark:99999/fk4-r'"):  # named as given
        store.change("ark", "ark:99999/fk4-r", change_from_patch({"status": "reserved"}))
    with pytest.raises(ReservedAgainError):
        store.bind_id("uuid", uuid, status="reserved")
    assert (store.get_binding(ark), store.history("ark", ark), store.history("uuid", uuid)) == before
    assert store.bind(ark, status="public", reason=None).status == "public"  # still free to publish
    assert store.check() == []


def test_a_change_on_condition_of_the_version_read_is_refused_once_it_changed(store: Store) -> None:
    """``if_version``: the change is made only if the binding is still the one read (its
    :func:`binding_version`), decided under the id's lock; otherwise nothing is written."""
    ark = "ark:99999/fk4v"
    seen = store.bind(ark, "https://example.org/v")
    store.bind(ark, erc={"who": "Other"})  # a change since it was read
    history = store.history("ark", ark)
    with pytest.raises(ChangedMeanwhileError, match="in 'ark:99999/fk4v'"):
        store.change("ark", ark, change_from_patch({"target": "https://example.org/w"}),
                     if_version=binding_version(seen))  # fmt: skip
    assert store.history("ark", ark) == history
    now = store.get_binding(ark)
    assert now is not None and now.target == "https://example.org/v"
    b = store.change("ark", ark, change_from_patch({"target": "https://example.org/w"}),
                     if_version=binding_version(now))  # fmt: skip
    assert (b.target, b.erc.who) == ("https://example.org/w", "Other")
    with pytest.raises(ChangedMeanwhileError):  # not bound at all
        store.change("ark", "ark:99999/fk4none", change_from_patch({"target": "https://example.org/n"}),
                     if_version=binding_version(b))  # fmt: skip
    assert store.get_binding("ark:99999/fk4none") is None


def test_a_reserved_binding_stays_reservable_until_published(store: Store) -> None:
    store.bind("ark:99999/fk4s", None, status="reserved")
    b = store.bind("ark:99999/fk4s", "https://example.org/s", status="reserved")  # reserved → reserved
    assert (b.status, b.target) == ("reserved", "https://example.org/s")


def test_an_import_never_reserves_a_published_binding_again(store: Store) -> None:
    """A line (whole, or ``--update``'s partial one) that would make a published binding reserved
    is refused, naming its line and the ARK, and nothing of the import stays: whether the binding was
    published before the import or by an earlier line of it."""
    store.bind("ark:99999/fk4i", "https://example.org/i")
    history = store.history("ark", "ark:99999/fk4i")
    whole = json.dumps({"text": "ark:99999/fk4i", "status": "reserved"})
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl([whole])
    assert caught.value.problems == ((1, "an identifier made public is never reserved again (withdraw it: "
                                         "unavailable, with a reason) in 'ark:99999/fk4i'"),)
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl(["", json.dumps({"text": "ark:99999/fk4-i", "status": "reserved"})], update=True)
    assert [n for n, _ in caught.value.problems] == [2]
    assert "never reserved again" in caught.value.problems[0][1]
    lines = [json.dumps({"text": "ark:99999/fk4j", "target": "https://example.org/j"}),
             json.dumps({"text": "ark:99999/fk4j", "status": "reserved"})]
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl(lines)
    assert [n for n, _ in caught.value.problems] == [2]
    assert store.get_binding("ark:99999/fk4j") is None
    b = store.get_binding("ark:99999/fk4i")
    assert b is not None and b.status == "public"
    assert store.history("ark", "ark:99999/fk4i") == history


def test_check_reports_a_binding_an_earlier_build_reserved_again(store: Store) -> None:
    """``check`` names each binding reserved after it was published, until it is published again."""
    store.bind("ark:99999/fk4k", "https://example.org/k")
    with earlier_build():
        store.bind("ark:99999/fk4k", status="reserved")
    assert store.check() == ["binding ark ark:99999/fk4k: reserved again after it was published (it answers "
                             "404 where it answered before: make it public again, or unavailable with a "
                             "reason)"]
    store.bind("ark:99999/fk4k", status="public")
    assert store.check() == []


# -- partial updates and extra metadata -----------------------------------------------------------------
def test_extra_metadata_is_set_changed_and_removed_by_name(store: Store) -> None:
    b = store.bind("ark:99999/fk4e", "https://example.org/e", extra={"dc.title": "T", "app.id": "7"})
    assert b.extra == (("app.id", "7"), ("dc.title", "T"))
    b = store.bind("ark:99999/fk4e", extra={"dc.title": "New", "app.id": None}, erc={"who": "W"})
    assert (b.extra_dict, b.erc.who, b.target) == ({"dc.title": "New"}, "W", "https://example.org/e")
    assert store.get_binding("ark:99999/fk4e") == b
    lines = b.to_anvl().splitlines()
    assert "dc.title: New" in lines and lines.index("dc.title: New") > lines.index("erc-support:")


@pytest.mark.parametrize(("name", "message"), [
    ("", "1 to 255"), ("x" * 256, "1 to 255"), ("_status", "reserved"), ("dc title", "whitespace"),
    ("a\u0085b", "whitespace"), ("who", "writes this name"), ("erc.who", "writes this name"),
    ("erc-support.who", "writes this name"),  # EZID's view writes the commitment by that name: not twice
    ("status", "writes this name"),
])  # fmt: skip
def test_extra_names_follow_one_rule(store: Store, name: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        check_extra_name(name)
    with pytest.raises(StoreError, match=message):
        store.bind("ark:99999/fk4n", "https://example.org/n", extra={name: "v"})
    assert store.get_binding("ark:99999/fk4n") is None


def test_merge_patch_semantics() -> None:
    assert change_from_patch({}) == BindingChange()
    c = change_from_patch({"target": None, "reason": None, "extra": None, "passthrough": None})
    assert (c.target, c.reason, c.clear_extra, c.passthrough) == ("", "", True, False)
    bads: list[dict[str, object]] = [
        {"status": None}, {"target": 3}, {"extra": ["x"]}, {"erc": {"who": 1}}, {"erc": {"how": "x"}}]
    for bad in bads:
        with pytest.raises(StoreError):
            change_from_patch(bad)


def test_change_applies_a_patch_keeping_what_it_does_not_name(store: Store) -> None:
    store.bind("ark:99999/fk4c", "https://example.org/c", erc={"who": "W", "what": "X"},
               extra={"a": "1", "b": "2"})
    patch = {"erc": {"what": None}, "extra": {"a": None}}
    b = store.change("ark", "ark:99999/fk4c", change_from_patch(patch))
    assert (b.erc.who, b.erc.what, b.extra_dict, b.target) == ("W", "", {"b": "2"}, "https://example.org/c")
    b = store.change("ark", "ark:99999/fk4c", change_from_patch({"extra": None}))
    assert b.extra == ()


def test_import_update_changes_only_what_each_line_names(store: Store) -> None:
    store.bind("ark:99999/fk4i1", "https://example.org/i1", erc={"who": "W"}, extra={"keep": "k"})
    lines = [
        json.dumps({"text": "ark:99999/fk4i1", "extra": {"dc.title": "T"}}),
        json.dumps({"text": "ark:99999/fk4i2", "target": "https://example.org/i2"}),
        json.dumps({"text": "ark:99999/fk4i1", "status": "unavailable", "reason": "moved"}),
    ]
    report = store.import_jsonl(lines, update=True, principal=ALICE)
    assert (report.created, report.updated) == (1, 2)
    b = store.get_binding("ark:99999/fk4i1")
    assert b is not None
    assert (b.erc.who, b.extra_dict) == ("W", {"dc.title": "T", "keep": "k"})
    assert (b.status, b.reason) == ("unavailable", "moved")
    assert [(r.operation, r.principal) for r in store.history("ark", "ark:99999/fk4i1")] == [
        ("create", str(Principal.local())), ("import", str(ALICE))]


def test_import_update_is_all_or_nothing(store: Store) -> None:
    store.tombstone("ark:99999/fk4t", "gone")
    lines = [json.dumps({"text": "ark:99999/fk4ok", "target": "https://example.org/ok"}),
             json.dumps({"text": "ark:99999/fk4t", "target": "https://example.org/t"}),
             json.dumps({"text": "ark:99999/fk4r", "status": "unavailable"})]
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(lines, update=True)
    assert [line for line, _ in info.value.problems] == [2, 3]
    assert store.get_binding("ark:99999/fk4ok") is None


def test_a_full_import_carries_extra_metadata_and_reasons(store: Store, tmp_path: Path) -> None:
    store.bind("ark:99999/fk4x", "https://example.org/x", extra={"dc.title": "T"})
    store.bind("ark:99999/fk4y", "https://example.org/y", status="unavailable", reason="r")
    exported = tmp_path / "e.jsonl"
    with exported.open("w", encoding="utf-8") as fp:
        store.export_jsonl(fp)
    with open_store(f"sqlite:///{tmp_path / 'other.db'}") as other:
        other.add_naan(NAAN)
        with exported.open(encoding="utf-8") as fp:
            other.import_jsonl(fp)
        assert other.get_binding("ark:99999/fk4x") == store.get_binding("ark:99999/fk4x")
        assert other.get_binding("ark:99999/fk4y") == store.get_binding("ark:99999/fk4y")
        assert [r.operation for r in other.history("ark", "ark:99999/fk4y")] == ["import"]
        assert other.check() == []


# -- check -------------------------------------------------------------------------------------------------
def test_check_lists_every_problem(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=2)
    minted = store.mint("m", 3)
    key, _ = store.create_api_key(NAAN)
    assert store.check() == []
    raw_sql(store, "UPDATE minters SET counter = 1 WHERE name = 'm'")
    blade = minted[0][len("ark:99999/"):]
    raw_sql(store, "INSERT INTO holds (naan, id, created) VALUES (?, ?, ?)", (NAAN, blade, "x"))
    # a public binding of the held id, written under the interface (so without history)
    raw_sql(store, "INSERT INTO bindings (kind, key, text, target, status, naan, shoulder, created, updated) "
                "VALUES ('ark', ?, ?, 'https://example.org/h', 'public', ?, 'fk4', 'x', 'x')",
         (minted[0], minted[0], NAAN))
    raw_sql(store, "UPDATE api_keys SET secret_hash = 'not-a-hash' WHERE key_id = ?", (key.key_id,))
    problems = store.check()
    assert any("minter m: counter 1, but position 2" in p for p in problems)
    assert any("minter m: 3 ids minted, more than its counter 1" in p for p in problems)
    assert f"binding {minted[0]}: public, but its id is held" in problems
    assert f"API key {key.key_id}: secret_hash is not a SHA-256 hex digest" in problems
    assert f"binding ark {minted[0]}: no history" in problems
    assert len(store.check(limit=2)) == 3
    # leave the store consistent for the fixture's own check
    raw_sql(store, "UPDATE minters SET counter = 3 WHERE name = 'm'")
    raw_sql(store, "DELETE FROM bindings WHERE key = ?", (minted[0],))
    raw_sql(store, "UPDATE api_keys SET secret_hash = ? WHERE key_id = ?", ("0" * 64, key.key_id))


# -- migrations ------------------------------------------------------------------------------------------
def test_a_store_newer_than_the_code_is_refused(url: str) -> None:
    with open_store(url) as s:
        raw_sql(s, "INSERT INTO schema_version (version, name, applied) VALUES (99, 'future', 'x')")
    with pytest.raises(StoreError, match="schema version 99, newer than this pidkit knows"):
        open_store(url)


def test_sqlite_history_triggers_exist(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    open_store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    conn.close()
    assert {"history_no_update", "history_no_delete"} <= names  # (the others keep the search index)


def test_the_longest_key_the_bindings_take_gets_its_history(store: Store) -> None:
    """PostgreSQL refuses an index entry over 2704 bytes: an id as long as the bindings' key index takes
    (a random key of 2,680 characters) is recorded in the history too."""

    import random

    alphabet = "0123456789bcdfghjkmnpqrstvwxz"
    ark = f"ark:{NAAN}/fk4" + "".join(random.Random(7).choice(alphabet) for _ in range(2_667))
    assert len(ark) == 2_680
    store.bind(ark, "https://example.org/long", force=True)
    store.bind(ark, status="unavailable", reason="long gone")
    assert [r.operation for r in store.history("ark", ark)] == ["create", "status"]
