"""``pidkit dump`` / ``restore`` (issue 13): a store moves between backends without reissuing an id.

Every test runs on SQLite and on PostgreSQL; the round trip crosses them.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import hypothesis
import pytest
from hypothesis import strategies as st

from _schema import loads_entered, schema_objects, waits_for
from pidkit.errors import ExhaustedError, StoreError
from pidkit.noid import Minter
from pidkit.store import Erc, Store, open_store
from pidkit.store.dump import parse_row, read_rows
from pidkit.store.keys import ark_key
from pidkit.store.migrations import LATEST
from pidkit.store.records import check_text
from pidkit.store.rows import TABLES

NAAN = "99999"
T = "2026-11-30T00:00:00.000000Z"  # a stored time


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Callable[[], str]:
    count = iter(range(1000))
    return lambda: f"sqlite:///{tmp_path / f'other{next(count)}.db'}"


def _fill(store: Store) -> list[str]:
    """A store with every kind of row: minted-but-unbound ids, holds, tombstones, reserved ids, several
    minters, a forced binding, other id kinds, API keys (one revoked).  Returns the minted ids."""
    store.add_naan(NAAN, "Test", shoulders=["fk4", "b5"])
    store.add_naan("12345", "Other")
    store.create_minter("a", naan=NAAN, template="fk4.reedeedk", seed=3)
    store.create_minter("b", naan=NAAN, template="b5.sdd", seed=0)
    minted = store.mint("a", 40) + store.mint("b", 5)
    store.add_hold("a", Minter("fk4.reedeedk", NAAN, seed=3).mint_at(40))
    store.bind(minted[0], "https://example.org/0", erc=Erc(who="Austin, Larry", what="A\u2028Study"))
    store.bind(minted[1], None, status="reserved")
    store.bind(minted[2], "https://example.org/2", passthrough=True)
    store.tombstone(minted[3], "withdrawn")
    store.tombstone("ark:99999/fk4never", "withdrawn before it was minted")
    store.bind("ark:55555/x1", "https://example.org/forced", force=True)
    store.bind_id("tid", "3jzfcijpj2z2a", "https://example.org/tid")
    store.create_api_key(NAAN, label="all")
    revoked, _ = store.create_api_key(NAAN, "b5", label="b5")
    store.revoke_api_key(revoked.key_id)
    # schema 3: extra metadata, an unavailable binding, a deleted reserved id (held), history of it all
    store.bind(minted[4], "https://example.org/4", extra={"dc.title": "T\u2028itle", "app:x": "é"})
    store.bind(minted[5], "https://example.org/5", status="unavailable", reason="withdrawn by author")
    store.bind(minted[6], None, status="reserved")
    store.delete("ark", minted[6])
    # schema 4: back-office users (their password hashes travel, as API key hashes do), a user's own key
    store.add_user("ann", "correct horse battery", naan=NAAN, shoulder="fk4")
    store.add_user("root", "correct horse battery", naan=NAAN, admin=True)
    store.disable_user("root")
    store.create_api_key(NAAN, "fk4", label="ann's", owner="ann")
    return minted


def _dump(store: Store) -> list[str]:
    out = io.StringIO()
    store.dump(out)
    return split_lines_keeping_ends(out.getvalue())


def split_lines_keeping_ends(text: str) -> list[str]:
    """JSON Lines end at \\n only (a value may hold U+2028, which str.splitlines would split on)."""
    return [line + "\n" for line in text.split("\n")[:-1]]


def _columns(url: str, table: str) -> list[tuple[str, bool]]:
    """``(column, nullable)`` of ``table`` as the database itself describes it."""
    if url.startswith("sqlite:///"):
        import sqlite3

        lite = sqlite3.connect(url[len("sqlite:///") :])
        try:
            rows = lite.execute(f"PRAGMA table_info({table})").fetchall()
        finally:
            lite.close()
        return [(r[1], not r[3] and not r[5]) for r in rows]
    import psycopg

    with psycopg.connect(url) as conn:
        found = conn.execute(
            # a generated column (the bindings' full-text tsvector, migration 6) is the database's to
            # compute, never a dump's to carry
            "SELECT column_name, is_nullable = 'YES' FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER' "
            "ORDER BY ordinal_position",
            (table,),
        ).fetchall()
    return [(r[0], bool(r[1])) for r in found]


def test_tables_match_the_schema(new_url: Callable[[], str]) -> None:
    url = new_url()
    with open_store(url) as store:
        header = json.loads(_dump(store)[0])
        assert header["schema"] == store.schema_version()
    assert list(header["counts"]) == [t.name for t in TABLES]
    for table in TABLES:
        described = [(c, c in table.nullable) for c in table.columns]
        assert _columns(url, table.name) == described, table.name


def test_round_trip_across_backends_is_exact(
    new_url: Callable[[], str], sqlite_url: Callable[[], str]
) -> None:
    with open_store(sqlite_url()) as source:
        minted = _fill(source)
        first = _dump(source)
    with open_store(new_url()) as middle:
        report = middle.restore(first)
        assert report.total == sum(json.loads(first[0])["counts"].values())
        second = _dump(middle)
    with open_store(sqlite_url()) as last:
        last.restore(second)
        third = _dump(last)
    assert first[1:] == second[1:] == third[1:]
    assert json.loads(first[0])["counts"] == json.loads(second[0])["counts"]
    # minting on a restored store never returns an id minted (or held, tombstoned) on the source
    with open_store(sqlite_url()) as restored:
        restored.restore(second)
        fresh = restored.mint("a", 200) + restored.mint("b", 50)
        assert not set(fresh) & set(minted)
        assert "ark:99999/fk4never" not in fresh
        held = f"ark:{NAAN}/" + Minter("fk4.reedeedk", NAAN, seed=3).mint_at(40)
        assert held not in fresh
        assert restored.get_minter("a").counter >= 40 + 200
        b = restored.get_binding(minted[0])
        assert b is not None
        assert b.erc.what == "A\u2028Study"
        assert [k.label for k in restored.list_api_keys()] == ["all", "b5", "ann's"]
        assert [(u.name, u.active) for u in restored.list_users()] == [("ann", True), ("root", False)]
        assert restored.sign_in("ann", "correct horse battery", address="t")[0].name == "ann"
        assert restored.list_overrides()[0].key == "ark:55555/x1"


def _mint_to_the_end(store: Store, minter: str) -> list[str]:
    """Mint from ``minter`` one id at a time until it has none left (:class:`ExhaustedError`)."""
    fresh: list[str] = []
    while True:
        try:
            fresh += store.mint(minter, 1)
        except ExhaustedError:
            return fresh


def test_minting_the_rest_of_a_space_after_a_restore_reissues_nothing(
    new_url: Callable[[], str], sqlite_url: Callable[[], str]
) -> None:
    """After a restore (not a merge) into a fresh store of the other backend, minting the whole rest of a
    small space gives exactly the ids the source never minted, held or bound — the ones the source
    itself would still mint, in the same order — and never one the source minted.

    The space is ``b5`` and two digits (100 ids), shared by minter ``b`` (``b5.sdd``, sequential, from
    :func:`_fill`) and minter ``c`` (``b5.rdd``, random): ``c`` skips what ``b`` minted, and the reverse."""
    space = {f"ark:{NAAN}/" + Minter("b5.rdd", NAAN, seed=7).mint_at(i) for i in range(100)}
    assert len(space) == 100
    for source_url, target_url in [(sqlite_url(), new_url()), (new_url(), sqlite_url())]:
        with open_store(source_url) as source:
            minted = _fill(source)
            source.create_minter("c", naan=NAAN, template="b5.rdd", seed=7)
            c = source.mint("c", 20)
            minted += c
            source.bind(c[0], "https://example.org/c0")
            source.bind(c[1], None, status="reserved")
            source.tombstone(c[2], "withdrawn")
            source.bind(c[3], "https://example.org/c3", status="unavailable", reason="withdrawn")
            source.bind(c[4], None, status="reserved")
            source.delete("ark", c[4])  # a deleted reserved id stays held
            # c[5:] are minted but never bound; below, ids of the space never minted but held or bound
            unminted = sorted(space - set(minted))
            held = unminted[:3]
            source.add_hold("c", *held)
            bound = unminted[3:5]
            source.bind(bound[0], "https://example.org/bound-before-minting")
            source.tombstone(bound[1], "withdrawn before it was minted")
            taken = set(minted) | set(held) | set(bound)
            assert len(space - taken) == 100 - 5 - 20 - 3 - 2
            lines = _dump(source)
            assert source.check() == []
            source_rest = _mint_to_the_end(source, "c")
        with open_store(target_url) as target:
            target.restore(lines)
            assert target.check() == []
            rest = _mint_to_the_end(target, "c")
            with pytest.raises(ExhaustedError):
                target.mint("b", 1)  # everything b could still mint, c just did
            assert rest == source_rest  # the restored store mints exactly as the source would
            assert len(rest) == len(set(rest))
            assert set(rest) == space - taken
            assert not set(rest) & set(minted)
            assert not set(target.mint("a", 100)) & set(minted)
            assert target.check() == []


def test_restore_refuses_a_store_that_is_not_empty(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked before the restore locks any table (a store in use is refused at once, holding up no
    reader: the load that would lock them is never entered), and again once it holds them; the refusal
    leaves every row, index and trigger as it was."""
    with open_store(new_url()) as source:
        _fill(source)
        lines = _dump(source)
    url = new_url()
    with open_store(url) as target:
        target.add_naan("11111")
        made = schema_objects(url)
        entered = loads_entered(target, monkeypatch)
        with pytest.raises(StoreError, match="not empty"):
            target.restore(lines)
        assert entered == []
        assert [n.naan for n in target.list_naans()] == ["11111"]
        assert schema_objects(url) == made


def _paused(lines: list[str], reading: threading.Event, release: threading.Event,
            at: int = -1) -> Iterator[str]:
    """``lines``, pausing before line ``at`` (by default the last: every row but the last is in the
    restore's transaction) until ``release``, once ``reading`` is set."""
    for i, line in enumerate(lines):
        if i == at % len(lines):
            reading.set()
            release.wait(30)
        yield line


def _refused(write: Callable[[], object], said: list[str]) -> Callable[[], None]:
    """``write``, whose StoreError message is put in ``said`` (the write a restore made wrong)."""

    def run() -> None:
        try:
            write()
        except StoreError as exc:
            said.append(str(exc))

    return run


def test_a_mint_waits_for_a_merge_restore_and_skips_what_it_bound(new_url: Callable[[], str]) -> None:
    """A merge restore (every importer's) binds ids under any NAAN without the NAAN's lock: a mint begun
    while it runs waits for its commit, then skips the id it bound, instead of minting it too."""
    url = new_url()
    with open_store(url) as store:
        store.add_naan(NAAN, "T", shoulders=["fk4"])
        m = store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=7)
        reference = Minter(m.template, NAAN, seed=m.seed)
        ark, after = (f"ark:{NAAN}/{reference.mint_at(i)}" for i in range(2))
        with open_store(new_url()) as source:
            source.add_naan(NAAN, "T")
            source.bind(ark, "https://example.org/restored")
            lines = _dump(source)
        reading, release = threading.Event(), threading.Event()
        minted: list[str] = []
        assert waits_for(lambda: store.restore(_paused(lines, reading, release), merge=True), reading,
                         release, lambda: minted.extend(store.mint("m", 1)))  # fmt: skip
        assert minted == [after]
        b = store.get_binding(ark)
        assert b is not None and b.target == "https://example.org/restored"


@pytest.mark.parametrize("restored", ["hold", "binding"])
def test_a_merge_restore_and_a_write_under_its_naan_never_leave_a_held_ark_published(
    new_url: Callable[[], str], restored: str
) -> None:
    """A merge restore holding ``X`` beside a ``bind X/c`` (public), or binding ``X/c`` beside a ``hold
    X``: the restore takes the NAAN's lock before its check, so the write begun while it runs waits for
    its commit, then sees what it restored and is refused — never both committed (a held id given out)."""
    url = new_url()
    held, part = f"ark:{NAAN}/fk4x", f"ark:{NAAN}/fk4x/c"
    with open_store(url) as store:
        store.add_naan(NAAN, "T", shoulders=["fk4"])
        with open_store(new_url()) as source:
            source.add_naan(NAAN, "T")
            if restored == "hold":
                source.add_hold(NAAN, "fk4x")
            else:
                source.bind(part, "https://example.org/c")
            source.bind(f"ark:{NAAN}/fk4other", None, status="reserved")  # rows after the checked ones
            lines = _dump(source)
        reading, release = threading.Event(), threading.Event()
        write = ((lambda: store.bind(part, "https://example.org/c")) if restored == "hold"
                 else (lambda: store.add_hold(NAAN, "fk4x")))  # fmt: skip
        said: list[str] = []
        assert waits_for(lambda: store.restore(_paused(lines, reading, release), merge=True), reading,
                         release, _refused(write, said))  # fmt: skip
        assert store.check() == []
        assert len(said) == 1 and held in said[0], said
        assert (store.get_binding(part) is None) == (restored == "hold")


def test_a_merge_restore_and_an_import_beside_it_never_deadlock(new_url: Callable[[], str]) -> None:
    """Each locks NAANs as its chunks come: the restore holds ``B`` (its holds) and then wants ``A`` (its
    bindings), the import wants ``A`` then ``B`` in one chunk.  The import waits for the restore to end
    instead (PostgreSQL: the lock of the writes of several NAANs; SQLite: its one writer), and both
    commit — before, PostgreSQL broke the deadlock by failing one of them."""
    a, b = "11111", "99999"
    with open_store(new_url()) as source:
        source.add_naan(a, "A")
        source.add_naan(b, "B")
        source.add_hold(b, "fk4held")  # a holds row under B, restored before the bindings
        source.bind(f"ark:{a}/fk4restored", "https://example.org/r")
        lines = _dump(source)
    tables = [json.loads(line).get("table") for line in lines[1:]]
    after_bindings = 1 + max(i for i, t in enumerate(tables) if t == "bindings") + 1
    with open_store(new_url()) as store:
        store.add_naan(a, "A")
        store.add_naan(b, "B")
        reading, release = threading.Event(), threading.Event()
        imported = [json.dumps({"text": f"ark:{n}/fk4imported", "target": "https://example.org/i"})
                    for n in (a, b)]  # fmt: skip
        assert waits_for(
            lambda: store.restore(_paused(lines, reading, release, at=after_bindings), merge=True), reading,
            release, lambda: store.import_jsonl(imported, force=True),
        )
        assert {f"ark:{a}/fk4restored", f"ark:{a}/fk4imported", f"ark:{b}/fk4imported"} <= {
            x.key for x in store.list_bindings()}
        assert store.check() == []


@pytest.mark.postgres
def test_a_restore_never_holds_back_the_opening_of_another_store(new_postgres_url: Callable[[], str]) -> None:
    """A restore keeps its own store from being migrated, not every store of the database: a new store
    (whose first opening migrates it) opens while a restore into another one is under way."""
    with open_store(new_postgres_url()) as source:
        _fill(source)
        lines = _dump(source)
    reading, release = threading.Event(), threading.Event()
    with open_store(new_postgres_url()) as target:
        fresh = new_postgres_url()
        assert not waits_for(lambda: target.restore(_paused(lines, reading, release)), reading, release,
                             lambda: open_store(fresh).close(), patience=20)  # fmt: skip
        assert _dump(target)[1:] == lines[1:]
    with open_store(fresh) as new:
        assert new.schema_version() == LATEST


def test_merge_never_overwrites(new_url: Callable[[], str]) -> None:
    with open_store(new_url()) as source:
        minted = _fill(source)
        lines = _dump(source)
    with open_store(new_url()) as target:
        target.add_naan(NAAN, "Target's own name")
        target.bind(minted[0], "https://example.org/target-kept", force=True)
        report = target.restore(lines, merge=True)
        assert report.skipped["naans"] == 1
        assert report.skipped["bindings"] == 1
        assert target.get_naan(NAAN).name == "Target's own name"
        b = target.get_binding(minted[0])
        assert b is not None
        assert b.target == "https://example.org/target-kept"
        assert set(target.mint("a", 100)).isdisjoint(minted)


def test_a_merge_adds_no_history_or_override_to_a_binding_it_kept(new_url: Callable[[], str]) -> None:
    """The dump's history and overrides of a key the store binds already belong to another binding (in
    another store): the merge keeps the store's binding and its own record of it, and skips them (counted
    as skipped); the history of a binding the merge adds comes with it."""
    forced, mine, theirs = "ark:55555/x1", f"ark:{NAAN}/fk4mine", f"ark:{NAAN}/fk4theirs"
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        source.bind(mine, "https://example.org/source/mine")
        source.bind(mine, "https://example.org/source/mine-changed")
        source.bind(theirs, "https://example.org/source/theirs")
        source.bind(forced, "https://example.org/source/forced", force=True)
        lines = _dump(source)
        source_history = source.history("ark", theirs)
    with open_store(new_url()) as target:
        target.add_naan(NAAN)
        target.bind(mine, "https://example.org/target/mine")
        target.bind(forced, "https://example.org/target/forced", force=True)
        before = {ark: target.history("ark", ark) for ark in (mine, forced)}
        overrides = target.list_overrides(forced)
        report = target.restore(lines, merge=True)
        assert {ark: target.history("ark", ark) for ark in (mine, forced)} == before
        assert target.list_overrides(forced) == overrides
        assert report.skipped["bindings"] == 2
        assert report.skipped["history"] == 3  # mine's two rows and forced's one
        assert report.skipped["overrides"] == 1
        added = target.history("ark", theirs)  # the binding the merge added: its record, then the merge's
        assert added[:-1] == source_history and added[-1].operation == "merge"
        b = target.get_binding(mine)
        assert b is not None and b.target == "https://example.org/target/mine"


def test_a_merge_adds_no_history_of_an_id_the_dump_deleted_to_the_store_binding_of_it(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id bound reserved and deleted in the other store has history (and an override, when it was
    forced) in the dump but no binding: the store's own binding of that id keeps its record alone — for
    ARKs (held by the dump, so bound reserved here) and other kinds, whichever chunk of rows the dump's
    history falls in."""
    monkeypatch.setattr("pidkit.store.sql._CHUNK", 2)
    ark, forced, uuid = f"ark:{NAAN}/fk4gone", "ark:55555/gone", "0b9f2ec0-7f6e-4e2b-9a51-3d1f0f6c8e11"
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        source.bind(ark, None, status="reserved")
        source.bind(forced, None, status="reserved", force=True)
        source.bind_id("uuid", uuid, None, status="reserved")
        for key, kind in ((ark, "ark"), (forced, "ark"), (uuid, "uuid")):
            source.delete(kind, key)
        source.bind(f"ark:{NAAN}/fk4kept", "https://example.org/source")  # one the merge adds
        lines = _dump(source)
        added = source.history("ark", f"ark:{NAAN}/fk4kept")
    with open_store(new_url()) as target:
        target.add_naan(NAAN)
        target.bind(ark, None, status="reserved")  # reserved: the dump's hold of it may come (published:
        target.bind(forced, None, status="reserved", force=True)  # the merge is refused, as it should)
        target.bind_id("uuid", uuid, "https://example.org/target-uuid")
        ids = ((ark, "ark"), (forced, "ark"), (uuid, "uuid"))
        before = {key: target.history(kind, key) for key, kind in ids}
        overrides = target.list_overrides(forced)
        report = target.restore(lines, merge=True)
        assert {key: target.history(kind, key) for key, kind in ids} == before
        assert target.list_overrides(forced) == overrides
        assert report.skipped["history"] == 6 and report.skipped["overrides"] == 1
        assert target.history("ark", f"ark:{NAAN}/fk4kept")[:-1] == added


def test_postgres_a_merge_locks_no_binding_it_keeps(new_postgres_url: Callable[[], str]) -> None:
    """A binding of another kind than ARK that a merge keeps as the store's is read, not locked: a change
    to it while the merge runs goes through at once (ARKs wait for the NAAN's lock, as every bind does)."""
    uuid = "0b9f2ec0-7f6e-4e2b-9a51-3d1f0f6c8e11"
    with open_store(new_postgres_url()) as source:
        source.add_naan(NAAN)
        source.bind_id("uuid", uuid, "https://example.org/source")
        for i in range(3):
            source.bind(f"ark:{NAAN}/fk4m{i}", "https://example.org/m")
        lines = _dump(source)
    url = new_postgres_url()
    with open_store(url) as target, open_store(url) as other:
        target.add_naan(NAAN)
        target.bind_id("uuid", uuid, "https://example.org/target")
        reading, release = threading.Event(), threading.Event()
        assert not waits_for(lambda: target.restore(_paused(lines, reading, release), merge=True), reading,
                             release, lambda: other.bind_id("uuid", uuid, "https://example.org/changed"),
                             patience=10)  # fmt: skip
        b = other.get_id("uuid", uuid)
        assert b is not None and b.target == "https://example.org/changed"


def _twice(lines: list[str], key: str) -> list[str]:
    """``lines`` (a dump) with the bindings row of ``key`` repeated at the end of the bindings, changed
    (another target), and the header's count raised to match."""
    rows = [json.loads(line) for line in lines[1:]]
    at = max(i for i, r in enumerate(rows) if r["table"] == "bindings")
    row = next(r for r in rows if r["table"] == "bindings" and r["row"]["key"] == key)
    again = {"table": "bindings", "row": {**row["row"], "target": "https://example.org/again"}}
    header = json.loads(lines[0])
    header["counts"]["bindings"] += 1
    out = [json.dumps(header) + "\n", *lines[1:]]
    out.insert(at + 2, json.dumps(again) + "\n")
    return out


@pytest.mark.parametrize("chunk", [1000, 2], ids=["one chunk", "two chunks"])
def test_a_merge_refuses_a_dump_that_binds_a_key_twice(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A restore into an empty store refuses a dump binding one key twice (the primary key); a merge does
    too, naming both lines — in one chunk of rows or in two — instead of keeping the first silently and
    then taking the second's key for one the store kept."""
    monkeypatch.setattr("pidkit.store.sql._CHUNK", chunk)
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for i in range(3):
            source.bind(f"ark:{NAAN}/fk4t{i}", f"https://example.org/{i}")
        lines = _twice(_dump(source), f"ark:{NAAN}/fk4t0")
    first = next(n for n, line in enumerate(lines, 1) if f'"key":"ark:{NAAN}/fk4t0"' in line)
    last = next(n for n, line in enumerate(lines, 1) if "again" in line)
    with open_store(new_url()) as target:
        target.add_naan(NAAN)
        target.bind(f"ark:{NAAN}/fk4kept", "https://example.org/kept")
        expected = _dump(target)
        said = rf"ark:{NAAN}/fk4t0 is bound on line {first} too on line {last}"
        with pytest.raises(StoreError, match=said):
            target.restore(lines, merge=True)
        assert _dump(target)[1:] == expected[1:]


def test_a_merge_keeps_what_another_writer_binds_and_merges_what_it_deletes_meanwhile(
    new_postgres_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer, between the merge's start and its insert of a chunk, binds one of the dump's keys
    and deletes another (a reserved one the store had): the first keeps the other writer's binding and
    only its history, the second is merged with the dump's history.  (The two races cancel in a count of
    rows inserted: a merge that decided what it kept from a read before its insert gave the first key the
    dump's history and the second none.)  PostgreSQL: SQLite's one writer waits for the merge's end."""
    raced, freed = "AYvP5WgA-_-_ASNFZ4mr", "AYvP5WgA-_-_ASNFZ4ms"
    url = new_postgres_url()
    with open_store(new_postgres_url()) as source:
        source.bind_id("xarkid", raced, "https://example.org/dump-raced")
        source.bind_id("xarkid", freed, "https://example.org/dump-freed")
        source.bind_id("xarkid", "AYvP5WgA-_-_ASNFZ4mt", "https://example.org/dump-other")
        dumped_freed = source.history("xarkid", freed)
        lines = _dump(source)
    with open_store(url) as target, open_store(url) as other:
        target.bind_id("xarkid", freed, "https://example.org/reserved", status="reserved")
        theirs: list[object] = []
        insert = target._restore_chunk_by  # type: ignore[attr-defined]

        def racing_insert(cur: object, table: object, rows: object, *args: object, **kw: object) -> object:
            if not theirs and getattr(table, "name", None) == "bindings":
                other.bind_id("xarkid", raced, "https://example.org/theirs")  # committed meanwhile
                other.delete("xarkid", freed)
                theirs.extend(other.history("xarkid", raced))
            return insert(cur, table, rows, *args, **kw)

        monkeypatch.setattr(target, "_restore_chunk_by", racing_insert)
        report = target.restore(lines, merge=True)
        assert theirs, "the other writer never ran"
        kept, merged = target.get_id("xarkid", raced), target.get_id("xarkid", freed)
        assert kept is not None and kept.target == "https://example.org/theirs"
        assert target.history("xarkid", raced) == theirs
        assert merged is not None and merged.target == "https://example.org/dump-freed"
        history = target.history("xarkid", freed)
        assert [e for e in history if e in dumped_freed] == dumped_freed
        assert report.restored["bindings"] == 2 and report.skipped["bindings"] == 1


def _header(line: str, **fields: object) -> str:
    """A dump's header line with ``fields`` set."""
    return json.dumps({**json.loads(line), **fields}, separators=(",", ":")) + "\n"


def test_a_dump_of_a_newer_schema_that_this_one_reads_is_restored(new_url: Callable[[], str]) -> None:
    """A dump written at a newer schema whose tables and columns this pidkit all knows (its header says
    the oldest schema that reads it) is restored whole: moving a store to an older pidkit loses nothing.
    The dump this pidkit writes says so too."""
    with open_store(new_url()) as source:
        _fill(source)
        lines = _dump(source)
    header = json.loads(lines[0])
    assert header["schema"] == LATEST and header["readable_from"] <= LATEST
    with open_store(new_url()) as target:
        target.restore([_header(lines[0], schema=LATEST + 3), *lines[1:]])
        assert _dump(target)[1:] == lines[1:]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda ls: [*ls[:5], "{oops\n", *ls[5:]], "not JSON .* on line 6"),
        (lambda ls: [*ls[:5], '{"table":"holds","row":{"naan":"9"}}\n', *ls[5:]], "missing id, created"),
        (lambda ls: [*ls[:3], '{"table":"nope","row":{}}\n', *ls[3:]], "unknown table 'nope' on line 4"),
        (lambda ls: ls[:-7], "rows and header disagree"),
        (lambda ls: [ls[0], *ls[2:]], "naans: 1 of 2"),
        (lambda ls: ls[1:], "not a pidkit dump .* on line 1"),
        (lambda ls: [ls[0], *reversed(ls[1:])], "rows after"),
        (lambda ls: [_header(ls[0], schema=99, readable_from=99), *ls[1:]], "needs schema 99 or newer"),
        (lambda ls: [_header(ls[0], readable_from="4"), *ls[1:]], '"readable_from" must be an integer'),
        (lambda ls: [_header(ls[0], readable_from=LATEST + 1), *ls[1:]], '"readable_from" must be an'),
        (lambda ls: [_header(ls[0], schema=LATEST + 3), ls[1].replace('"created"', '"new":1,"created"'),
                     *ls[2:]], "unexpected new on line 2"),
        (
            lambda ls: [*ls[:2], ls[1].replace('"naan":"12345"', '"naan":"12345","x":1'), *ls[2:]],
            "unexpected x on line 3",
        ),
        (lambda ls: [*ls[:2], ls[1], *ls[2:]], "naans row refused: .* on line 3"),
    ],
    ids=[
        "not-json", "missing-column", "unknown-table", "cut-short", "count", "no-header",
        "out-of-order", "newer", "readable-not-int", "readable-past-schema", "newer-with-a-new-column",
        "extra-column", "duplicate",
    ],
)  # fmt: skip
def test_a_bad_dump_restores_nothing(
    new_url: Callable[[], str], damage: Callable[[list[str]], list[str]], message: str
) -> None:
    with open_store(new_url()) as source:
        _fill(source)
        lines = _dump(source)
    with open_store(new_url()) as target:
        with pytest.raises(StoreError, match=message):
            target.restore(damage(lines))
        counts = json.loads(_dump(target)[0])["counts"]
        assert set(counts.values()) == {0}, counts


def _long_dump(bound: int, held: int | None = None, minters: int = 1) -> list[str]:
    """A dump of ``bound`` public ARK bindings ``ark:99999/zx<i>`` with their history, ``minters`` minters
    and, with ``held``, a hold of ``zx<held>``: tables longer than a chunk of a restore."""
    from pidkit.store.dump import DumpHeader, header_line, row_line
    from pidkit.store.migrations import LATEST

    at = "2026-01-01T00:00:00.000000Z"
    rows: dict[str, list[tuple[object, ...]]] = {
        "naans": [(NAAN, "Test", at)],
        "minters": [(f"m{i}", NAAN, "zx.zd", 0, 0, at) for i in range(minters)],
        "holds": [] if held is None else [(NAAN, f"zx{held}", at)],
        "bindings": [
            ("ark", f"ark:{NAAN}/zx{i}", f"ark:{NAAN}/zx{i}", f"https://example.org/{i}", "", f"Item {i}", "",
             "", "", "", "", "", 0, "public", NAAN, "zx", None, None, None, "{}", at, at)
            for i in range(bound)
        ],
        "history": [
            (f"h{i:09d}", at, "cli:test", "create", "ark", f"ark:{NAAN}/zx{i}", None, None)
            for i in range(bound)
        ],
    }  # fmt: skip
    counts = {table.name: len(rows.get(table.name, [])) for table in TABLES}
    lines = [header_line(DumpHeader("sqlite", LATEST, counts))]
    for table in TABLES:
        lines += [row_line(table, row) for row in rows.get(table.name, [])]
    return lines


def _line_of(lines: list[str], text: str) -> int:
    """The number of the first line holding ``text``."""
    return next(n for n, line in enumerate(lines, 1) if text in line)


@pytest.mark.parametrize("case", ["duplicate", "not-json", "held", "unknown-naan"])
def test_a_refused_row_deep_in_a_long_table_is_named(new_url: Callable[[], str], case: str) -> None:
    """A bad row far into a table (past several chunks of a restore, which PostgreSQL streams to the
    server as they are read) is named by its own line, and nothing is restored."""
    key = f'"key":"ark:{NAAN}/zx4321"'
    if case == "duplicate":
        lines = _long_dump(5000)
        n = _line_of(lines, key) + 1
        lines.insert(n - 1, lines[n - 2])
        message = f"bindings row refused: .* on line {n}$"
    elif case == "not-json":
        lines = _long_dump(5000)
        n = _line_of(lines, key)
        lines[n - 1] = lines[n - 1][:40] + "\n"
        message = f"not JSON .* on line {n}$"
    elif case == "held":
        lines = _long_dump(5000, held=4321)
        n = _line_of(lines, key)
        message = f"bindings row refused: ark:{NAAN}/zx4321 is held: .* on line {n}$"
    else:  # a foreign key, which PostgreSQL checks at the end of a COPY, not at the row
        lines = _long_dump(10, minters=4500)
        n = _line_of(lines, '"name":"m4321"')
        lines[n - 1] = lines[n - 1].replace(f'"naan":"{NAAN}"', '"naan":"12345"')
        message = f"minters row refused: .* on line {n}$"
    with open_store(new_url()) as target:
        with pytest.raises(StoreError, match=message):
            target.restore(lines)
        counts = json.loads(_dump(target)[0])["counts"]
        assert set(counts.values()) == {0}, counts


def test_dump_streams_in_constant_memory(tmp_path: Path) -> None:
    """The dump of 50,000 minted ids (6.4 MB of text) is written row by row: the Python heap does not grow
    with it (its peak is about 0.5 MB, as for 200,000 ids)."""
    import tracemalloc

    url = f"sqlite:///{tmp_path / 'big.db'}"
    with open_store(url) as store:
        store.add_naan(NAAN)
        store.create_minter("z", naan=NAAN, template="z.zd", seed=0)
        for _ in store.mint_batches("z", 50_000, batch_size=50_000):
            pass
        tracemalloc.start()
        with open(os.devnull, "w") as sink:
            store.dump(sink)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 2_000_000, f"peak {peak:,} bytes"


def test_restore_streams_in_constant_memory(new_url: Callable[[], str], tmp_path: Path) -> None:
    """A restore of 40,000 rows (minted ids, bindings of half of them, their history), generated one line
    at a time, is read and written in chunks: the Python heap does not grow with the dump.  (Kept to
    40,000 rows because tracemalloc slows the restore fivefold; keeping every row, or only every line,
    would already take more than twice the bound.)"""
    import tracemalloc

    from pidkit.store.dump import DumpHeader, header_line, parse_header, row_line

    minted_n, bound_n = 20_000, 10_000
    with open_store(f"sqlite:///{tmp_path / 'model.db'}") as model:  # a real dump, to copy rows from
        model.add_naan(NAAN, "Test")
        model.create_minter("z", naan=NAAN, template="z.zd", seed=0)
        [ark] = model.mint("z", 1)
        model.bind(ark, "https://example.org/0", erc=Erc(who="Someone"), extra={"dc.title": "A title"})
        lines = _dump(model)
    header = parse_header(lines[0])
    rows: dict[str, list[dict[str, object]]] = {t.name: [] for t in TABLES}
    for line in lines[1:]:
        obj = json.loads(line)
        rows[obj["table"]].append(obj["row"])
    [minted], [binding] = rows.pop("minted"), rows.pop("bindings")  # the models of the generated rows
    [bound] = [h for h in rows["history"] if h["kind"] == "ark"]
    rows["history"].remove(bound)
    rows["minters"][0]["counter"] = minted_n
    generated_n = {"minted": minted_n, "bindings": bound_n, "history": bound_n}
    counts = {t.name: len(rows.get(t.name, [])) + generated_n.get(t.name, 0) for t in TABLES}

    def generated(table: str, i: int) -> dict[str, object]:
        key = f"ark:{NAAN}/zx{i}"
        if table == "minted":
            return {**minted, "id": f"zx{i}", "position": i}
        if table == "bindings":  # with the shoulder of its key (the store's check compares them)
            return {**binding, "key": key, "shoulder": ark_key(key).shoulder, "target": f"https://example.org/{i}"}
        return {**bound, "id": f"0zx{i:012d}", "key": key}

    def dump() -> Iterator[str]:
        yield header_line(DumpHeader(header.backend, header.schema, counts))
        for table in TABLES:
            for row in rows.get(table.name, []):
                yield row_line(table, [row[c] for c in table.columns])
            for i in range(generated_n.get(table.name, 0)):
                row = generated(table.name, i)
                yield row_line(table, [row[c] for c in table.columns])

    assert sum(counts.values()) > 40_000
    with open_store(new_url()) as store:
        tracemalloc.start()
        report = store.restore(dump())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert report.restored["minted"] == minted_n and report.restored["bindings"] == bound_n
        assert report.restored["history"] == counts["history"]  # every binding came with its history
        assert store.minted_count("z") == minted_n
        b = store.get_binding(f"ark:{NAAN}/zx{bound_n - 1}")
        assert b is not None and b.target == f"https://example.org/{bound_n - 1}"
        assert store.check() == []
    assert peak < 5_000_000, f"peak {peak:,} bytes"


def _pidkit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_cli_dump_and_restore(tmp_path: Path, new_url: Callable[[], str]) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    with open_store(source) as store:
        _fill(store)
    out = tmp_path / "store.jsonl"
    r = _pidkit("dump", "-o", str(out), "--db", source)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("dumped ")
    target = new_url()
    r = _pidkit("restore", str(out), "--db", target)
    assert r.returncode == 0, r.stderr
    assert "restored " in r.stderr
    r = _pidkit("restore", str(out), "--db", target)  # not empty any more
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: the store is not empty")
    r = _pidkit("restore", "-", "--merge", "--db", target, stdin=out.read_text(encoding="utf-8"))
    assert r.returncode == 0, r.stderr
    assert "already there, kept" in r.stderr
    lines = split_lines_keeping_ends(out.read_text(encoding="utf-8"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join([*lines[:4], "{oops\n", *lines[4:]]), encoding="utf-8")
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    r = _pidkit("restore", str(bad), "--db", fresh)
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: not JSON") and "on line 5" in r.stderr
    assert "Traceback" not in r.stderr


_TRICKY = st.sampled_from(["a", "\x00", "\ud800", "\udfff", "\u2028", "é", "\\", '"'])


@hypothesis.settings(max_examples=500, deadline=None)
@hypothesis.given(st.text(alphabet=_TRICKY | st.characters(), max_size=12))
def test_a_value_no_store_keeps_is_refused_raw_or_escaped(value: str) -> None:
    """parse_row checks values one by one only on a line that may hold NUL or a lone surrogate
    (dump._MAY_HOLD_UNSTORABLE); whether the value is in the line as it is or as JSON escapes
    (ensure_ascii), the answer is check_text's."""
    try:
        check_text(value, "naans.name")
        storable = True
    except StoreError:
        storable = False
    for ensure_ascii in (True, False):
        row = {"table": "naans", "row": {"naan": "9", "name": value, "created": T}}
        line = json.dumps(row, ensure_ascii=ensure_ascii)
        if storable:
            assert parse_row(line, 1)[1][1] == value
        else:
            with pytest.raises(StoreError, match=r"^naans\.name: character U\+"):
                parse_row(line, 1)


def _hold_line(i: int) -> str:
    return json.dumps({"table": "holds", "row": {"naan": NAAN, "id": f"h{i}", "created": T}})


def test_read_rows_in_order_then_the_bad_line() -> None:
    """Rows come in input order, every row before a bad line first, then its error with its number;
    blank lines are skipped."""
    n = 3017
    lines = [(i + 2, _hold_line(i)) for i in range(n)] + [(n + 2, ""), (n + 3, '{"table":"holds"}')]
    got: list[int] = []

    def take_all() -> None:
        for number, table, values in read_rows(lines):
            assert table == "holds" and values[1] == f"h{number - 2}"
            got.append(number)

    with pytest.raises(StoreError) as info:
        take_all()
    assert got == list(range(2, n + 2))
    assert info.value.line == n + 3


def test_restore_keeps_every_index_and_trigger(new_url: Callable[[], str]) -> None:
    """A restore into an empty store builds what it defers (SQLite's full-text index, PostgreSQL's
    secondary indexes) again at its end exactly as the migrations made them — and a restore refused
    half-way (a bad line after thousands of rows) rolls that back with its rows."""
    with open_store(new_url()) as source:
        _fill(source)
        source.create_minter("many", naan=NAAN, template="b5.sdddd", seed=1)
        source.import_jsonl(json.dumps({"text": ark, "target": f"https://example.org/{ark}"}) + "\n"
                            for ark in source.mint("many", 3000))  # one transaction, not 3,000
        lines = _dump(source)
    url = new_url()
    with open_store(url) as copy:
        made = schema_objects(url)
        assert any(row[0] == "index" and row[2] == "bindings" for row in made)
        with pytest.raises(StoreError) as info:
            copy.restore([*lines, '{"table": "holds"}\n'])
        assert info.value.line == len(lines) + 1
        assert schema_objects(url) == made and _dump(copy)[1:] == []
        copy.restore(lines)
        assert schema_objects(url) == made
        assert _dump(copy)[1:] == lines[1:]
