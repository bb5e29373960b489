"""The back office's Find in the store (issue 14), on SQLite and PostgreSQL: every filter, sorting, keyset
pages and their boundaries, the scope pushed into SQL (counts included), the full-text index kept in step
by insert / update / withdraw / tombstone / delete / restore, a dump without the index, and migration 6
filling the index of a store that already holds bindings."""

from __future__ import annotations

import datetime as _dt
import io
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pidkit.errors import StoreError
from pidkit.store import Erc, Scope, Search, Store, open_store
from pidkit.store.migrations import LATEST, load
from pidkit.store.search import COUNT_CAP, ark_prefix, parse_day
from pidkit.store.sql import SqlStore

A, B = "99999", "12346"
ANN = Scope(A)  # NAAN A
CARL = Scope(A, "b5")  # NAAN A, shoulder b5 only
BOB = Scope(B)  # NAAN B
ROOT = Scope(A, admin=True)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A function giving fresh, empty store URLs on one backend."""
    if request.param == "postgres":
        new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_postgres_url
    made: list[str] = []

    def new_url() -> str:
        made.append(str(tmp_path / f"store{len(made)}.db"))
        return f"sqlite:///{made[-1]}"

    return new_url


def _populate(s: Store) -> None:
    s.add_naan(A, "A", shoulders=["fk4", "b5"])
    s.add_naan(B, "B", shoulders=["x5"])
    s.bind(f"ark:{A}/fk4one", "https://example.org/Books/1",
           erc=Erc(who="Austin, Jane", what="Harbour of Bergen"), extra={"dc.subject": "Maritime history"})
    s.bind(f"ark:{A}/fk4two", "https://example.org/maps/2", erc=Erc(who="Brahe, Tycho", what="Star atlas"))
    s.bind(f"ark:{A}/b5three", "https://museum.example.net/maps/3", erc=Erc(what="Harbour of Riga"))
    s.bind(f"ark:{A}/b5four", None, status="reserved", erc=Erc(what="Draft harbour survey"))
    s.bind(f"ark:{B}/x5secret", None, status="reserved", erc=Erc(what="Harbour secret of B"))
    s.bind(f"ark:{B}/x5gone", "https://example.org/b/maps", erc=Erc(what="B's harbour"))
    s.bind(f"ark:{B}/x5gone", status="unavailable", reason="B withdrew it")


@pytest.fixture
def store(backend: Callable[[], str]) -> Iterator[Store]:
    with open_store(backend()) as s:
        _populate(s)
        yield s


def keys(store: Store, scope: Scope = ROOT, **search: object) -> list[str]:
    return [b.key for b in store.find_bindings(scope, Search(**search)).bindings]  # type: ignore[arg-type]


def test_ark_in_any_spelling_as_exact_or_prefix(store: Store) -> None:
    for spelling in ("ark:/99999/fk4one", "ark:99999/fk4one", "https://n2t.net/ark:/99999/fk4-one",
                     "ARK:/99999/fk4-o-n-e", " ark:99999/fk4one "):  # fmt: skip
        assert keys(store, ark=spelling) == ["ark:99999/fk4one"], spelling
    assert keys(store, ark="ark:/99999/fk4") == ["ark:99999/fk4one", "ark:99999/fk4two"]
    assert keys(store, ark="ark:/99999/") == keys(store, ark="99999/") == keys(store, ark="ark:99999")
    assert len(keys(store, ark="ark:/99999/")) == 4
    assert keys(store, ark="ark:/99999/fk4t") == ["ark:99999/fk4two"]
    assert keys(store, ark="ark:99999/FK4") == []  # keys are case-sensitive past the NAAN
    assert keys(store, ark="ark:/99999/fk4one/") == ["ark:99999/fk4one"]


def test_target_substring_any_case(store: Store) -> None:
    assert keys(store, target="maps/") == ["ark:99999/b5three", "ark:99999/fk4two"]
    assert keys(store, target="maps") == ["ark:12346/x5gone", "ark:99999/b5three", "ark:99999/fk4two"]
    assert keys(store, target="BOOKS/1") == ["ark:99999/fk4one"]  # any case
    assert keys(store, target="/b") == ["ark:12346/x5gone", "ark:99999/fk4one"]  # 2 characters: no trigram
    assert keys(store, target="museum.example.net/maps/3") == ["ark:99999/b5three"]
    assert keys(store, target='"maps') == [] and keys(store, target="%") == []  # literal, no wildcard


def test_text_all_words_prefix_on_the_last(store: Store) -> None:
    assert keys(store, text="harbour") == ["ark:12346/x5gone", "ark:12346/x5secret", "ark:99999/b5four",
                                          "ark:99999/b5three", "ark:99999/fk4one"]  # fmt: skip
    assert keys(store, text="Harbour Berg") == ["ark:99999/fk4one"]  # prefix on the last word
    assert keys(store, text="berg harbour") == []  # only the last word is a prefix
    assert keys(store, text="maritime") == ["ark:99999/fk4one"]  # extra metadata values
    assert keys(store, text="austin jane") == ["ark:99999/fk4one"]  # who
    assert keys(store, text="TYCHO, brahe!") == ["ark:99999/fk4two"]  # punctuation is no word
    assert keys(store, text="fk4two") == ["ark:99999/fk4two"]  # the key's words
    assert keys(store, text="museum") == ["ark:99999/b5three"]  # the target's words
    assert keys(store, text="harbour", target="maps") == ["ark:12346/x5gone", "ark:99999/b5three"]
    assert keys(store, text="%_") == keys(store)  # no word: no text condition


def test_huge_metadata_is_written_and_its_beginning_found(store: Store) -> None:
    """A binding with megabytes of distinct words is written on both backends (a PostgreSQL tsvector
    holds at most 1 MB: only a binding's first 100,000 characters are indexed there)."""
    words = " ".join(f"w{i:07d}" for i in range(200_000))  # 1.8 MB, every word distinct
    store.bind("ark:99999/fk4huge", "https://example.org/huge", erc=Erc(what="Ledger"),
               extra={"dc.description": words}, force=True)  # fmt: skip
    assert keys(store, text="ledger w0000001") == ["ark:99999/fk4huge"]


def test_status_and_date_range(store: Store) -> None:
    assert keys(store, status="reserved") == ["ark:12346/x5secret", "ark:99999/b5four"]
    assert keys(store, status="unavailable") == ["ark:12346/x5gone"]
    today = _dt.datetime.now(_dt.UTC).date()
    day = _dt.timedelta(days=1)
    everything = keys(store)
    assert len(everything) == 6
    assert keys(store, since=today - day, until=today + day) == everything
    assert keys(store, since=today, until=today) == everything  # both ends included
    assert keys(store, since=today + day) == [] and keys(store, until=today - day) == []
    assert keys(store, on="created", since=today, status="public") == [
        "ark:99999/b5three", "ark:99999/fk4one", "ark:99999/fk4two"]  # fmt: skip


def test_date_range_boundaries_are_whole_utc_days(backend: Callable[[], str]) -> None:
    with open_store(backend()) as s:
        _populate(s)
        assert isinstance(s, SqlStore)
        with s._transaction(write=True) as cur:
            for key, at in (("fk4one", "2024-05-01T00:00:00.000000Z"),
                            ("fk4two", "2024-05-01T23:59:59.999999Z"),
                            ("b5three", "2024-05-02T00:00:00.000000Z")):  # fmt: skip
                s._exec(cur, "UPDATE bindings SET created = ? WHERE key = ?", (at, f"ark:{A}/{key}"))
        may1 = _dt.date(2024, 5, 1)
        assert keys(s, on="created", since=may1, until=may1) == ["ark:99999/fk4one", "ark:99999/fk4two"]
        may2 = may1 + _dt.timedelta(days=1)
        assert keys(s, on="created", since=may2, until=may2) == ["ark:99999/b5three"]
        assert keys(s, on="created", sort="created", until=may1 + _dt.timedelta(days=1)) == [
            "ark:99999/fk4one", "ark:99999/fk4two", "ark:99999/b5three"]  # fmt: skip
        end = _dt.date(2024, 12, 31)
        newest = keys(s, on="created", sort="created", descending=True, since=may1, until=end)
        assert newest == ["ark:99999/b5three", "ark:99999/fk4two", "ark:99999/fk4one"]


def test_bad_searches_are_named() -> None:
    with pytest.raises(StoreError, match=r"^from: '2024-13-01' is not a date"):
        parse_day("2024-13-01", "from")
    with pytest.raises(StoreError, match=r"^until: 'yesterday' is not a date \(YYYY-MM-DD\)"):
        Search.from_fields({"until": "yesterday"})
    with pytest.raises(StoreError, match=r"^from 2024-05-02 is after until 2024-05-01"):
        Search.from_fields({"from": "2024-05-02", "until": "2024-05-01"})
    with pytest.raises(StoreError, match=r"^status: 'lost' is not one of"):
        Search.from_fields({"status": "lost"})
    with pytest.raises(StoreError, match=r"^sort: 'title' is not one of key, updated, created"):
        Search.from_fields({"sort": "title"})
    with pytest.raises(StoreError, match=r"^on: 'deleted'"):
        Search.from_fields({"on": "deleted"})
    with pytest.raises(StoreError, match="at most 1000 characters"):
        Search(target="x" * 1001)
    with pytest.raises(StoreError, match="at most 16 words"):
        Search(text=" ".join(["w"] * 17))
    with pytest.raises(StoreError, match="U\\+0000"):
        Search(text="a\x00b")
    with pytest.raises(StoreError, match="not both"):
        Search(after="a", before="b")
    assert ark_prefix("https://n2t.net/ark:/99999") == "ark:99999"


def test_scope_is_in_the_sql_counts_included(store: Store) -> None:
    for scope, expected in ((ANN, 4), (CARL, 2), (BOB, 2), (ROOT, 6)):
        page = store.find_bindings(scope, Search())
        assert page.total == expected == len(page.bindings), scope
        assert all(scope.allows(b.naan, b.shoulder) for b in page.bindings)
    # NAAN A's users never see NAAN B's reserved or withdrawn ids, nor count them
    for search in (Search(ark=f"ark:{B}/"), Search(text="secret"), Search(status="reserved"),
                   Search(status="unavailable"), Search(text="harbour"), Search(target="maps")):  # fmt: skip
        for scope in (ANN, CARL):
            page = store.find_bindings(scope, search)
            assert not [b for b in page.bindings if b.naan == B] and page.total == len(page.bindings)
    assert store.find_bindings(ANN, Search(status="reserved")).total == 1
    assert store.find_bindings(CARL, Search(ark="ark:99999/fk4")).total == 0
    # a page cursor outside the scope is "not there", never a peek at its time
    with pytest.raises(StoreError, match="not there any more"):
        store.find_bindings(ANN, Search(sort="updated", after=f"ark:{B}/x5secret"))


def test_sorting_and_keyset_pages(backend: Callable[[], str]) -> None:
    with open_store(backend()) as s:
        s.add_naan(A, shoulders=["fk4"])
        for i in range(23):
            s.bind(f"ark:{A}/fk4p{i:02d}", f"https://example.org/p/{i}", erc=Erc(what=f"Page test {i}"))
        for i in (5, 17, 2):  # update order differs from key order
            s.bind(f"ark:{A}/fk4p{i:02d}", erc={"who": "again"})
        every = [f"ark:{A}/fk4p{i:02d}" for i in range(23)]
        by_updated = [k for k in every if k[-2:] not in ("05", "17", "02")] + [every[5], every[17], every[2]]

        def walk(search: Search) -> list[str]:
            """Every page forwards, then every page backwards from the last: both give the whole list."""
            seen, page, pages = [], s.find_bindings(ANN, search), 1
            assert not page.earlier
            while True:
                seen += [b.key for b in page.bindings]
                assert page.total == 23 and not page.capped
                if not page.later:
                    break
                page, pages = s.find_bindings(ANN, search.page(after=seen[-1])), pages + 1
                assert page.earlier
            assert pages == -(-23 // search.limit) and len(page.bindings) == 23 - (pages - 1) * search.limit
            back = list(page.bindings)
            while page.earlier:
                page = s.find_bindings(ANN, search.page(before=page.bindings[0].key))
                back = list(page.bindings) + back
                assert page.later
            assert [b.key for b in back] == seen
            return seen

        assert walk(Search(limit=5)) == every
        assert walk(Search(limit=5, descending=True)) == every[::-1]
        assert walk(Search(limit=10, sort="updated")) == by_updated
        assert walk(Search(limit=10, sort="updated", descending=True)) == by_updated[::-1]
        assert walk(Search(limit=23, sort="created")) == every  # one full page: no later page
        assert walk(Search(limit=22, sort="created", descending=True)) == every[::-1]  # one left over
        # a boundary: the page after the last key is empty and says there is nothing later
        last = s.find_bindings(ANN, Search(after=every[-1]))
        assert last.bindings == () and last.earlier and not last.later and last.total == 23
        assert walk(Search(limit=4, text="page test", ark="ark:99999/fk4p")) == every


def test_counts_stop_at_the_cap(backend: Callable[[], str]) -> None:
    with open_store(backend()) as s:
        s.add_naan(A, shoulders=["fk4"])
        assert isinstance(s, SqlStore)
        at = "2024-01-01T00:00:00.000000Z"
        rows = [("ark", f"ark:{A}/fk4c{i:05d}", f"ark:{A}/fk4c{i:05d}", "https://example.org/", "public", A,
                 "fk4", at, at) for i in range(COUNT_CAP + 2)]
        with s._transaction(write=True) as cur:
            cur.executemany(s._q("INSERT INTO bindings (kind, key, text, target, status, naan, shoulder, "
                                 "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"), rows)  # fmt: skip
        page = s.find_bindings(ANN, Search())
        assert (page.total, page.capped, len(page.bindings), page.later) == (COUNT_CAP, True, 50, True)
        page = s.find_bindings(ANN, Search(ark=f"ark:{A}/fk4c0000"))
        assert (page.total, page.capped) == (10, False)


def test_the_index_follows_every_change(store: Store) -> None:
    def found(text: str) -> list[str]:
        return keys(store, text=text)

    one = f"ark:{A}/fk4one"
    store.bind(one, erc={"what": "Lighthouse keeper"})  # update: old words out, new words in
    assert found("bergen") == [] and found("lighthouse") == [one]
    store.bind(one, target="https://example.org/quay/9")
    assert keys(store, target="quay/9") == [one] and keys(store, target="books/1") == []
    store.bind(one, extra={"dc.subject": None, "dc.coverage": "Baltic"})
    assert found("maritime") == [] and found("baltic") == [one]
    store.bind(one, status="unavailable", reason="checking")  # withdraw: still found, by its status too
    assert keys(store, text="lighthouse", status="unavailable") == [one]
    store.bind(one, status="public")  # reinstate
    assert keys(store, text="lighthouse", status="public") == [one]
    store.tombstone(one, "superseded")
    assert keys(store, text="lighthouse", status="tombstoned") == [one]
    store.delete("ark", f"ark:{A}/b5four")  # a reserved id deleted: gone from the index
    assert found("draft") == [] and keys(store, ark=f"ark:{A}/b5four") == []
    store.bind(f"ark:{A}/fk4new", "https://example.org/new", erc=Erc(what="Fresh lighthouse"))
    assert found("lighthouse") == [f"ark:{A}/fk4new", one]
    _index_agrees(store)


def _index_agrees(store: Store) -> None:
    """The index matches a plain scan of the rows for every word of every binding (no stale entry)."""
    every = store.find_bindings(ROOT, Search(limit=500)).bindings
    for b in every:
        said = (b.erc.what + " " + b.erc.who).lower().replace(",", " ").split()
        for word in {w for w in said if w.isalnum()}:
            expected = sorted(x.key for x in every
                              if word in (x.erc.what + " " + x.erc.who).lower().replace(",", " ").split()
                              or word in x.key.lower() or word in (x.target or "").lower()
                              or any(word in v.lower().split() for _, v in x.extra))  # fmt: skip
            got = keys(store, text=word + " ")  # a trailing space: the word is still a prefix
            assert set(expected) <= set(got), word


def test_dump_has_no_index_and_restore_rebuilds_it(store: Store, backend: Callable[[], str]) -> None:
    out = io.StringIO()
    store.dump(out)
    text = out.getvalue()
    assert "bindings_words" not in text and "bindings_grams" not in text and '"search"' not in text
    searches = [Search(text="harbour"), Search(target="maps"), Search(ark="ark:99999/b5")]
    before = [store.find_bindings(ROOT, q) for q in searches]
    with open_store(backend()) as copy:
        copy.restore(io.StringIO(text))
        assert [copy.find_bindings(ROOT, q) for q in searches] == before
        again = io.StringIO()
        copy.dump(again)
        assert again.getvalue().splitlines()[1:] == text.splitlines()[1:]
        copy.bind(f"ark:{A}/fk4two", erc={"what": "Comet atlas"})
        assert keys(copy, text="comet") == [f"ark:{A}/fk4two"] and keys(copy, text="star atlas") == []
        copy.bind(f"ark:{A}/fk4new", "https://example.org/new", erc=Erc(what="Comet tail"))  # indexed again
        assert keys(copy, text="comet") == [f"ark:{A}/fk4new", f"ark:{A}/fk4two"]
        # a merge adds the dump's missing rows, indexed, and leaves the index of the rows there alone
        copy.delete("ark", f"ark:{A}/b5four")
        report = copy.restore(io.StringIO(text), merge=True)
        assert report.restored["bindings"] == 1
        assert keys(copy, text="draft survey") == [f"ark:{A}/b5four"]
        assert keys(copy, text="comet") == [f"ark:{A}/fk4new", f"ark:{A}/fk4two"]


def _store_before_search(backend: str, url: str, tmp: Path, before: int = 6) -> None:
    """Make, at ``url``, a store of the schema before migration ``before`` (6: before Find's indexes)
    holding two ARK bindings (raw SQL: from migration 6 on, its triggers index them)."""
    old, older = f"ark:{A}/fk4old", f"ark:{A}/fk4older"
    subject = '{"dc.subject":"Cartography"}'
    rows = [("ark", old, old, "https://example.org/old/1", "Old harbour chart", subject, "public", A, "fk4"),
            ("ark", older, older, None, "Older sketch", "{}", "reserved", A, "fk4")]
    insert = ("INSERT INTO bindings (kind, key, text, target, erc_what, extra, status, naan, shoulder, "
              "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '2020-01-01T00:00:00.000000Z', "
              "'2020-01-01T00:00:00.000000Z')")  # fmt: skip
    naan = "INSERT INTO naans (naan, name, created) VALUES (?, 'A', '2020-01-01T00:00:00.000000Z')"
    ddl = ("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
           "applied TEXT NOT NULL)")  # fmt: skip
    if backend == "sqlite":
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute(ddl)
        for m in load():
            if m.version < before:
                for statement in m.for_backend("sqlite"):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version VALUES (?, ?, 'old')", (m.version, m.name))
        conn.execute(naan, (A,))
        conn.executemany(insert, rows)
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg, pg.transaction():
        pg.execute(ddl)
        for m in load():
            if m.version < before:
                for statement in m.for_backend("postgresql"):
                    pg.execute(statement)
                pg.execute("INSERT INTO schema_version VALUES (%s, %s, 'old')", (m.version, m.name))
        pg.execute(naan.replace("?", "%s"), (A,))
        pg.cursor().executemany(insert.replace("?", "%s"), rows)


def test_migration_6_fills_the_index_of_a_populated_store(
    backend: Callable[[], str], request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = backend()
    kind = "sqlite" if url.startswith("sqlite") else "postgresql"
    _store_before_search(kind, url, tmp_path)
    with open_store(url) as s:
        assert s.migrated_from < 6 <= s.schema_version()
        assert keys(s, text="harbour chart") == [f"ark:{A}/fk4old"]
        assert keys(s, text="cartography") == [f"ark:{A}/fk4old"]
        assert keys(s, target="old/1") == [f"ark:{A}/fk4old"]
        assert keys(s, text="older") == [f"ark:{A}/fk4older"]
        assert keys(s, text="old") == [f"ark:{A}/fk4old", f"ark:{A}/fk4older"]  # prefix: old, older
        s.bind(f"ark:{A}/fk4old", erc={"what": "New chart"})  # the triggers / the column from now on
        assert keys(s, text="harbour") == [] and keys(s, text="new chart") == [f"ark:{A}/fk4old"]


def test_migration_8_remakes_the_full_text_indexes_of_a_populated_store(
    backend: Callable[[], str], tmp_path: Path
) -> None:
    """Migration 8 on a store whose bindings migration 6's indexes hold: on SQLite both FTS5 tables are
    made again without their %_docsize tables and hold exactly what a refill would (every word and
    trigram of both bindings), the narrower changes index is gone and the triggers index what comes
    next; on PostgreSQL it runs no statement.  Find answers as before on both."""
    url = backend()
    kind = "sqlite" if url.startswith("sqlite") else "postgresql"
    _store_before_search(kind, url, tmp_path, before=8)
    with open_store(url) as s:
        assert (s.migrated_from, s.schema_version()) == (7, LATEST)
        assert keys(s, text="harbour chart") == [f"ark:{A}/fk4old"]
        assert keys(s, text="cartography") == [f"ark:{A}/fk4old"]
        assert keys(s, target="old/1") == [f"ark:{A}/fk4old"]
        assert keys(s, text="old") == [f"ark:{A}/fk4old", f"ark:{A}/fk4older"]
        s.bind(f"ark:{A}/fk4old", erc={"what": "New chart"})
        assert keys(s, text="harbour") == [] and keys(s, text="new chart") == [f"ark:{A}/fk4old"]
        if kind == "sqlite":
            triggers, indexed = _sqlite_index_sound(s)
            assert indexed == 2 and len(triggers) >= 4
            path = s.path  # type: ignore[attr-defined]  # a SqliteStore
            conn = sqlite3.connect(path)
            try:
                names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            finally:
                conn.close()
            assert {"bindings_words", "bindings_grams", "bindings_by_updated"} <= names
            assert not names & {"bindings_words_docsize", "bindings_grams_docsize", "bindings_by_update"}


def test_sqlite_vacuum_keeps_the_index_in_step(tmp_path: Path) -> None:
    """The FTS5 tables name bindings by rowid: VACUUM must keep the rowids (it does, copying the table as
    it is), or the index would point at other rows."""
    path = tmp_path / "v.db"
    with open_store(f"sqlite:///{path}") as s:
        s.add_naan(A, shoulders=["fk4"])
        for i in range(40):
            s.bind(f"ark:{A}/fk4v{i:02d}", None, status="reserved", erc=Erc(what=f"word{i:02d}"))
        for i in range(0, 40, 2):  # holes in the rowids, which a renumbering VACUUM would close
            s.delete("ark", f"ark:{A}/fk4v{i:02d}")
    conn = sqlite3.connect(path)
    conn.execute("VACUUM")
    conn.close()
    with open_store(f"sqlite:///{path}") as s:
        for i in range(1, 40, 2):
            assert keys(s, text=f"word{i:02d}") == [f"ark:{A}/fk4v{i:02d}"]
        assert keys(s, text="word00") == []


def test_postgres_without_pg_trgm_still_finds_targets(postgres_url: str) -> None:
    """A database user who may not create pg_trgm: migration 6 still succeeds (a WARNING, no trigram
    index) and a target search gives the same answers, unindexed.  A fresh database (the extension is
    database-wide) and a role that may create tables in its own schema only."""
    import secrets as _secrets

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"pidkit_test_{_secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(make_conninfo(postgres_url, dbname=name), autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {name} AUTHORIZATION {name}")
        params = conninfo_to_dict(postgres_url)
        url = (f"postgresql://{name}@{params.get('host', '127.0.0.1')}:{params.get('port', 5432)}/{name}"
               f"?options=-csearch_path%3D{name}")  # fmt: skip
        with open_store(url) as s:
            _populate(s)
            assert keys(s, target="maps/") == ["ark:99999/b5three", "ark:99999/fk4two"]
            assert keys(s, text="harbour berg") == ["ark:99999/fk4one"]
        with psycopg.connect(make_conninfo(postgres_url, dbname=name)) as conn:
            assert conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone() is None
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s",
                                                  (name,))}  # fmt: skip
            assert "bindings_search" in indexes and "bindings_target_grams" not in indexes
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {name}")


def _sqlite_index_sound(store: Store) -> tuple[list[str], int]:
    """The text of the store's triggers (SQLite; ``[]`` elsewhere) and how many bindings its word index
    holds, after checking that both full-text indexes hold exactly what indexes rebuilt from the bindings
    would (every term of every row at every position, by fts5vocab; the rebuild is rolled back)."""
    if not isinstance(store, SqlStore) or store.backend != "sqlite":
        return [], 0
    path = store.path  # type: ignore[attr-defined]  # a SqliteStore
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        tables = {"bindings_words": "doc", "bindings_grams": "target"}
        for table in tables:
            conn.execute(f"CREATE VIRTUAL TABLE temp.{table}_v USING fts5vocab(main, {table}, instance)")

        def contents() -> list[list[tuple[object, ...]]]:
            query = "SELECT term, doc, col, offset FROM temp.{}_v ORDER BY 1, 2, 3, 4"
            return [conn.execute(query.format(t)).fetchall() for t in tables]

        held = contents()
        conn.execute("BEGIN")
        for table, column in tables.items():  # migration 6's refill
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('delete-all')")
            conn.execute(f"INSERT INTO {table} (rowid, {column}) "
                         f"SELECT rid, {column} FROM bindings_search_doc")  # fmt: skip
        rebuilt = contents()
        conn.execute("ROLLBACK")
        assert held == rebuilt
        assert all(rows for rows in held)
        triggers = [row[0] for row in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' "
                                                   "ORDER BY name")]  # fmt: skip
        (indexed,) = conn.execute("SELECT count(DISTINCT doc) FROM temp.bindings_words_v").fetchone()
        return triggers, indexed
    finally:
        conn.close()


def test_a_big_import_indexes_every_line_once(store: Store) -> None:
    """A big import (more than one chunk: SQLite indexes its new rows once at the end) leaves the index as
    binding by binding would: a key created then updated by the same import is found by its last text
    only, a binding there before and updated by the import by its new text only, and FTS5's check of the
    index passes; the triggers are as they were; a refused big import changes neither index nor triggers."""
    import json

    from pidkit.store.sql import _IMPORT_CHUNK

    triggers, indexed = _sqlite_index_sound(store)
    n = _IMPORT_CHUNK + 10

    def line(i: int, target: str, what: str) -> str:
        return json.dumps({"text": f"ark:{A}/fk4bulk{i}", "target": target, "erc": {"what": what}})

    lines = [line(i, f"https://example.org/bulk/{i}", f"Bulk item {i}") for i in range(n)]
    lines[3] = line(3, "https://example.org/bulk/first", "Alphaword first")
    lines.append(line(3, "https://example.org/bulk/second", "Betaword second"))  # a later chunk
    lines.append(json.dumps({"text": f"ark:{A}/fk4one", "target": "https://example.org/gamma",
                             "erc": {"what": "Gammaword"}}))  # fmt: skip
    refused = [*lines, "{not json"]
    with pytest.raises(StoreError):
        store.import_jsonl(refused)
    assert _sqlite_index_sound(store) == (triggers, indexed)
    assert keys(store, text="bulk") == []
    report = store.import_jsonl(lines)
    assert (report.created, report.updated) == (n, 2)
    assert keys(store, text="alphaword") == []
    assert keys(store, text="betaword") == [f"ark:{A}/fk4bulk3"]
    assert keys(store, target="bulk/first") == []
    assert keys(store, target="bulk/second") == [f"ark:{A}/fk4bulk3"]
    assert keys(store, text="gammaword") == [f"ark:{A}/fk4one"] and keys(store, text="bergen") == []
    assert keys(store, text="bulk item 4999") == [f"ark:{A}/fk4bulk4999"]  # words are prefixes
    found = store.find_bindings(ROOT, Search(text="bulk item"))
    assert found.total == min(n - 1, COUNT_CAP) and found.capped == (n - 1 > COUNT_CAP)  # not fk4bulk3
    after, now = _sqlite_index_sound(store)
    assert after == triggers and (not triggers or now == indexed + n)


def test_sqlite_bulk_mode_leaves_new_rows_to_the_end(tmp_path: Path) -> None:
    """Inside SQLite's bulk mode (a restore, a big import) a binding inserted there is not indexed by an
    update either (its unindex would 'delete' a document the index never had; its reindex would index it
    before the end does it again), while a binding that was there before is unindexed and reindexed by
    its update as always; at the end each is indexed once, by its last text."""
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as s:
        _populate(s)
        assert isinstance(s, SqlStore)

        def indexed(cur: object, key: str) -> int:
            """How many words of the binding ``key`` the word index holds."""
            cur.execute("SELECT count(*) FROM temp.words_v WHERE doc = "  # type: ignore[attr-defined]
                        "(SELECT rowid FROM bindings WHERE kind = 'ark' AND key = ?)", (key,))  # fmt: skip
            return int(cur.fetchone()[0])  # type: ignore[attr-defined]

        new, old = f"ark:{A}/fk4inside", f"ark:{A}/fk4one"
        s._conn.execute("CREATE VIRTUAL TABLE temp.words_v USING fts5vocab(main, bindings_words, instance)")  # type: ignore[attr-defined]
        with s._transaction(write=True) as cur, s._bulk_insert(cur):
            cur.execute("INSERT INTO bindings (kind, key, text, target, erc_what, status, naan, shoulder, "
                        "created, updated) VALUES ('ark', ?, ?, 'https://example.org/x', 'Firstword', "
                        "'public', ?, 'fk4', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')",
                        (new, new, A))  # fmt: skip
            cur.execute("UPDATE bindings SET erc_what = 'Lastword' WHERE kind = 'ark' AND key = ?", (new,))
            cur.execute("UPDATE bindings SET erc_what = 'Renamed' WHERE kind = 'ark' AND key = ?", (old,))
            assert indexed(cur, new) == 0 and indexed(cur, old) > 0
        assert keys(s, text="lastword") == [new] and keys(s, text="firstword") == []
        assert keys(s, text="renamed") == [old] and keys(s, text="bergen") == []
        _sqlite_index_sound(s)


def test_sqlite_bulk_fill_takes_a_larger_hash_and_gives_the_setting_back(tmp_path: Path) -> None:
    """SQLite's bulk mode fills each full-text index with FTS5's pending-terms hash at 16 MB (fewer
    segments to write and merge), and leaves each table's ``hashsize`` as it found it: FTS5's default
    where none was set, the value set otherwise; the index is then exactly what a rebuild would hold."""
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as s:
        _populate(s)
        assert isinstance(s, SqlStore)
        conn: sqlite3.Connection = s._conn  # type: ignore[attr-defined]

        def hashsize(table: str) -> object:
            row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone()
            return None if row is None else row[0]

        conn.execute("INSERT INTO bindings_grams (bindings_grams, rank) VALUES ('hashsize', 2097152)")
        assert (hashsize("bindings_words"), hashsize("bindings_grams")) == (None, 2097152)
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        n = 6000
        lines = (json.dumps({"text": f"ark:{A}/fk4hash{i}", "target": f"https://example.org/hash/{i}",
                             "erc": {"what": f"Hashword {i}"}}) for i in range(n))  # fmt: skip
        report = s.import_jsonl(lines)
        conn.set_trace_callback(None)
        assert report.created == n
        for table, before in (("bindings_words", 1048576), ("bindings_grams", 2097152)):
            setting = f"INSERT INTO {table} ({table}, rank) VALUES ('hashsize', "
            filling = f"INSERT INTO {table} (rowid"
            fill = next(i for i, sql in enumerate(statements) if sql.startswith(filling))
            assert [sql for sql in statements[:fill] if sql.startswith(setting)][-1] == f"{setting}16777216)"
            assert next(sql for sql in statements[fill:] if sql.startswith(setting)) == f"{setting}{before})"
        assert (hashsize("bindings_words"), hashsize("bindings_grams")) == (1048576, 2097152)
        assert keys(s, text="hashword 5999") == [f"ark:{A}/fk4hash5999"]
        assert keys(s, target="hash/5999") == [f"ark:{A}/fk4hash5999"]
        _sqlite_index_sound(s)
