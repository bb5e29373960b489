"""Store.list_recorded and Store.recorded_at (migration 14): ARK bindings in the order their last change
reached the store — what OAI-PMH gives as datestamps — on both backends.  An import of export lines, a
merge restore and the importers keep the ``updated`` the source gave; a harvester that already passed
that time must still see the bindings, so their recorded time is when they came in."""

from __future__ import annotations

import datetime as _dt
import io
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from pidkit.errors import StoreError
from pidkit.store import Principal, Store, open_store

NAAN = "99999"
OLD = "2001-02-03T04:05:06.000000Z"
#: How far ahead of the clock a TID given out may be (a bulk write takes a microsecond per row at once:
#: pidkit.tid.TidClock.next_many), waited out before a time that must follow every TID given out so far.
_AHEAD = 0.05


def _line(key: str, target: str = "https://example.org/") -> str:
    """An export line of an ARK binding last changed long ago."""
    return json.dumps({"kind": "ark", "key": key, "text": key, "target": target, "status": "public",
                       "created": OLD, "updated": OLD}) + "\n"  # fmt: skip


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _dump(store: Store) -> list[str]:
    out = io.StringIO()
    store.dump(out)
    return [line + "\n" for line in out.getvalue().split("\n")[:-1]]


def _rewrite(lines: list[str], change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> list[str]:
    """A dump with each row passed through ``change`` (``None``: left out) and its header's counts made
    to match."""
    header = json.loads(lines[0])
    rows = [r for r in (change(json.loads(line)) for line in lines[1:]) if r is not None]
    header["counts"] = {t: sum(1 for r in rows if r["table"] == t) for t in header["counts"]}
    return [json.dumps(header) + "\n", *(json.dumps(r) + "\n" for r in rows)]


def _keys(found: list[Any]) -> list[str]:
    return [r.binding.key for r in found]


def test_an_import_keeps_updated_and_is_recorded_when_it_ran(store: Store) -> None:
    store.add_naan(NAAN)
    store.bind(f"ark:{NAAN}/fk4first", "https://example.org/first")
    time.sleep(_AHEAD)
    since = _now()
    keys = [f"ark:{NAAN}/fk4old{i}" for i in range(5)]
    store.import_jsonl([_line(k) for k in keys])
    got = store.list_recorded(since=since)
    assert sorted(_keys(got)) == sorted(keys)
    assert all(r.at >= since and r.binding.updated == _dt.datetime.fromisoformat(OLD) for r in got)
    assert [store.recorded_at(r.binding) for r in got] == [r.at for r in got]
    assert store.list_changed(since=since) == []  # by `updated` they were never changed since


def test_a_merge_records_each_binding_it_adds_after_its_own_history(new_url: Callable[[], str]) -> None:
    added, kept = f"ark:{NAAN}/fk4added", f"ark:{NAAN}/fk4kept"
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        source.bind(added, "https://example.org/added")
        source.bind(kept, "https://example.org/theirs")
        lines = _dump(source)
    with open_store(new_url()) as target:
        target.add_naan(NAAN)
        target.bind(kept, "https://example.org/ours")
        time.sleep(_AHEAD)
        since = _now()
        report = target.restore(lines, merge=True, principal=Principal.user("ann"))
        assert _keys(target.list_recorded(since=since)) == [added]
        history = target.history("ark", added)
        assert [(h.operation, h.principal) for h in history][-1] == ("merge", "user:ann")
        assert [h.operation for h in history] == ["create", "merge"]
        assert history[-1].after is not None and history[-1].after["target"] == "https://example.org/added"
        assert [h.operation for h in target.history("ark", kept)] == ["create"]
        # the dump's rows of its NAAN and of the added binding, and the merge's own
        assert report.restored["history"] == 3


def test_a_restore_into_an_empty_store_keeps_the_recorded_order(new_url: Callable[[], str]) -> None:
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for i in range(4):
            source.bind(f"ark:{NAAN}/fk4m{i}", f"https://example.org/{i}")
        source.bind(f"ark:{NAAN}/fk4m1", erc={"what": "changed last"})
        recorded = source.list_recorded()
        lines = _dump(source)
    with open_store(new_url()) as moved:
        moved.restore(lines)
        assert moved.list_recorded() == recorded
        assert _keys(recorded)[-1] == f"ark:{NAAN}/fk4m1"


def test_a_dump_without_history_is_adopted_when_it_is_restored(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pidkit.store.sql._CHUNK", 2)  # the bindings without history are read in chunks
    keys = [f"ark:{NAAN}/fk4nohistory{i}" for i in range(5)]
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for key in keys:
            source.bind(key, "https://example.org/")
        source.bind_id("xarkid", "AYvP5WgA-_-_ASNFZ4mr", "https://example.org/x")
        lines = _rewrite(_dump(source), lambda r: None if r["table"] == "history" else r)
    with open_store(new_url()) as target:
        since = _now()
        report = target.restore(lines)
        assert report.restored["history"] == 6
        assert sorted(_keys(target.list_recorded(since=since))) == keys
        for kind, key in [*(("ark", k) for k in keys), ("xarkid", "AYvP5WgA-_-_ASNFZ4mr")]:
            [adopted] = target.history(kind, key)
            assert (adopted.operation, adopted.principal) == ("adopt", "system:restore")
            assert adopted.id >= "2" and adopted.at is not None and adopted.at >= since  # a TID of now


def test_a_merge_stamps_what_it_adds_once_it_wrote_everything_else(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``merge`` rows are written last, so that their time is as near the commit as the merge can
    make it (a harvester that read past that time before the commit would never see the bindings)."""
    monkeypatch.setattr("pidkit.store.sql._CHUNK", 2)
    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for i in range(5):
            source.bind(f"ark:{NAAN}/fk4late{i}", "https://example.org/")
        lines = _dump(source)
    with open_store(new_url()) as target:
        tables_done: list[_dt.datetime] = []
        restore_table = target._restore_table  # type: ignore[attr-defined]

        def timed(*args: Any, **kwargs: Any) -> Any:
            done = restore_table(*args, **kwargs)
            time.sleep(0.002)
            tables_done.append(_now())
            return done

        monkeypatch.setattr(target, "_restore_table", timed)
        target.restore(lines, merge=True)
        merged = [target.history("ark", f"ark:{NAAN}/fk4late{i}")[-1] for i in range(5)]
        assert {h.operation for h in merged} == {"merge"}
        assert all(h.at is not None and h.at > tables_done[-1] for h in merged)
        assert min(r.at for r in target.list_recorded()) > tables_done[-1]


def test_the_earliest_recorded_time_is_no_later_than_any(new_url: Callable[[], str]) -> None:
    """What OAI-PMH's earliestDatestamp promises: no binding's recorded time is earlier (migration 3's
    rows included), read without walking the history."""
    with open_store(new_url()) as empty:
        assert empty.earliest_recorded() is None
    a = f"ark:{NAAN}/fk4a"

    def adopted(row: dict[str, Any]) -> dict[str, Any]:
        r = row["row"]
        if row["table"] == "history" and r["key"] == a:
            r.update(id=f"0:ark:{a}", at="2002-01-01T00:00:00.000000Z", operation="adopt", before=None,
                     after=None)  # fmt: skip
        return row

    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        source.bind(a, "https://example.org/")
        source.bind(f"ark:{NAAN}/fk4b", "https://example.org/")
        first = source.earliest_recorded()
        assert first is not None and first <= min(r.at for r in source.list_recorded())
        lines = _rewrite(_dump(source), adopted)
    with open_store(new_url()) as store:
        store.restore(lines)
        assert store.earliest_recorded() == _dt.datetime(2002, 1, 1, tzinfo=_dt.UTC)


def test_migration_3_rows_come_first_in_the_order_of_their_time(
    new_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A binding whose newest history row is one migration 3 wrote ('0:KIND:KEY', no TID) is listed by
    that row's ``at``, before every binding with a TID row; from/until select them by that time too."""
    a, b, c = (f"ark:{NAAN}/fk4{x}" for x in "abc")
    times = {a: "2003-01-01T00:00:00.000000Z", b: "2002-01-01T00:00:00.000000Z"}

    def adopted(row: dict[str, Any]) -> dict[str, Any]:
        r = row["row"]
        if row["table"] == "history" and r["key"] in times:
            r.update(id=f"0:ark:{r['key']}", at=times[r["key"]], principal="system:migration-0003",
                     operation="adopt", before=None, after=None)  # fmt: skip
        return row

    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for key in (a, b, c):
            source.bind(key, "https://example.org/")
        lines = _rewrite(_dump(source), adopted)
    with open_store(new_url()) as store:
        store.restore(lines)
        everything = store.list_recorded()
        assert _keys(everything) == [b, a, c]
        assert [r.at.year for r in everything[:2]] == [2002, 2003]
        assert [r.position[:2] for r in everything] == ["a/", "a/", "b/"]
        walked, after = [], None
        while page := store.list_recorded(after=after, limit=1):
            walked += _keys(page)
            after = page[-1].position
        assert walked == [b, a, c]
        middle = _dt.datetime(2002, 6, 1, tzinfo=_dt.UTC)
        assert _keys(store.list_recorded(since=middle)) == [a, c]
        assert _keys(store.list_recorded(until=middle)) == [b]
        assert _keys(store.list_recorded(after="b/")) == [c]
        for small in (20_000, 0):  # a scope read from its own bindings, and from the history
            monkeypatch.setattr("pidkit.store.sql._SMALL_SCOPE", small)
            assert _keys(store.list_recorded(naan=NAAN)) == [b, a, c]
            assert _keys(store.list_recorded(naan=NAAN, since=middle)) == [a, c]
            assert _keys(store.list_recorded(naan=NAAN, until=middle)) == [b]
            assert _keys(store.list_recorded(naan=NAAN, after=everything[0].position)) == [a, c]
        found = store.get_binding(a)
        assert found is not None and store.recorded_at(found) == _dt.datetime(2003, 1, 1, tzinfo=_dt.UTC)
        store.bind(a, erc={"what": "changed now"})  # now its newest row has a TID: it moves to the end
        assert _keys(store.list_recorded()) == [b, c, a]


def test_a_walk_lists_each_binding_once_and_one_changed_meanwhile_again_at_the_end(store: Store) -> None:
    store.add_naan(NAAN)
    keys = [f"ark:{NAAN}/fk4w{i}" for i in range(6)]
    for key in keys:
        store.bind(key, "https://example.org/")
    first = store.list_recorded(limit=2)
    assert _keys(first) == keys[:2]
    store.bind(keys[0], erc={"what": "seen, then changed"})
    store.bind(keys[3], erc={"what": "not seen yet, then changed"})
    walked, after = _keys(first), first[-1].position
    while page := store.list_recorded(after=after, limit=2):
        walked += _keys(page)
        after = page[-1].position
    assert walked == [*keys[:3], *keys[4:], keys[0], keys[3]]


@pytest.mark.parametrize("small", [20_000, 0], ids=["from the scope's bindings", "from the history"])
@pytest.mark.parametrize("batch", [4096, 8], ids=["batches", "small batches"])
def test_a_scope_of_few_among_many_is_found_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch, small: int, batch: int
) -> None:
    """Bindings of one shoulder behind many of another (each batch of history rows read holds none of
    them at first): every one is found, and the statuses select — whether the scope is read from its
    own bindings (a small one) or from the history in batches."""
    monkeypatch.setattr("pidkit.store.sql._SMALL_SCOPE", small)
    monkeypatch.setattr("pidkit.store.sql._MAX_BATCH", batch)
    store.add_naan(NAAN, shoulders=["fk4", "b5"])
    store.import_jsonl([_line(f"ark:{NAAN}/fk4many{i:03d}") for i in range(300)])
    wanted = [f"ark:{NAAN}/b5few{i}" for i in range(5)]
    for key in wanted:
        store.bind(key, "https://example.org/few")
    store.bind(wanted[2], status="unavailable", reason="embargo")
    walked, after = [], None
    while page := store.list_recorded(naan=NAAN, shoulder="b5", limit=2, after=after):
        walked += _keys(page)
        after = page[-1].position
    assert sorted(walked) == wanted and len(walked) == 5
    public = store.list_recorded(naan=NAAN, shoulder="b5", statuses=("public",), limit=100)
    assert sorted(_keys(public)) == [k for k in wanted if k != wanted[2]]
    assert sorted(_keys(store.list_recorded(shoulder="b5", limit=100))) == wanted  # a shoulder alone
    assert len(store.list_recorded(naan=NAAN, limit=1000)) == 305
    assert store.list_recorded(naan="12345", limit=10) == []
    assert store.list_recorded(statuses=()) == []
    assert len(store.list_recorded(limit=1000)) == 305


def test_times_past_either_end_of_the_tid_range_are_taken(store: Store) -> None:
    store.add_naan(NAAN)
    store.bind(f"ark:{NAAN}/fk4t", "https://example.org/")
    far = _dt.datetime(9999, 12, 31, tzinfo=_dt.UTC)
    early = _dt.datetime(1900, 1, 1, tzinfo=_dt.UTC)
    assert len(store.list_recorded(since=early, until=far)) == 1
    assert store.list_recorded(since=far) == [] and store.list_recorded(until=early) == []


@pytest.mark.parametrize(
    "position",
    ["", "x", "b/0:ark:ark:1/x", "a/not a time/0:ark:ark:1/x", "a/2024-05-01T12:00:00.000000Z/3kzzz",
     "a/2024-05-01T12:00:00Z/0:ark:ark:1/x", "c/3kzzz", "b", "b/3kz\x00", "b/3kz\ud800"],
)  # fmt: skip
def test_a_position_that_is_not_one_is_refused(store: Store, position: str) -> None:
    with pytest.raises(StoreError, match=r"not a position in the order of recorded changes|position: char"):
        store.list_recorded(after=position)
    with pytest.raises(StoreError, match="limit must be positive"):
        store.list_recorded(limit=0)


def test_a_change_is_recorded_at_the_time_of_its_row(store: Store) -> None:
    store.add_naan(NAAN)
    before = _now()
    time.sleep(0.001)
    bound = store.bind(f"ark:{NAAN}/fk4r", "https://example.org/")
    [r] = store.list_recorded()
    assert before < r.at <= _now()
    assert bound.updated is not None and abs((r.at - bound.updated).total_seconds()) < 1


def test_migration_3_rows_of_one_time_in_code_point_order_in_any_collation(icu_postgres_url: str) -> None:
    """On a PostgreSQL database whose collation is not code point order (ICU en-US: a < B < b), the
    bindings whose newest row is one of migration 3's, all of one time, are listed by their rows' ids in
    code point order, as on SQLite — so a position taken on one backend or database walks each binding
    once on another — and read in that order from migration 14's index, without a sort."""
    names = ["fk4b", "fk4B", "fk4a", "fk4A1", "fk4a1", "fk4Z", "fk4z", "fk40"]
    keys = sorted(f"ark:{NAAN}/{n}" for n in names)  # code point order, and so the order of '0:ark:KEY'
    assert keys != sorted(keys, key=str.lower)

    def adopted(row: dict[str, Any]) -> dict[str, Any]:
        r = row["row"]
        if row["table"] == "history" and r["kind"] == "ark":
            r.update(id=f"0:ark:{r['key']}", at=OLD, principal="system:migration-0003", operation="adopt",
                     before=None, after=None)  # fmt: skip
        return row

    with open_store("sqlite:///:memory:") as source:
        source.add_naan(NAAN, shoulders=["fk4"])
        for key in keys:
            source.bind(key, "https://example.org/")
        lines = _rewrite(_dump(source), adopted)
    with open_store(icu_postgres_url) as store, open_store("sqlite:///:memory:") as lite:
        for s in (store, lite):
            s.restore(lines)
            assert _keys(s.list_recorded()) == keys
            for naan in (None, NAAN):
                walked, after = [], None
                while page := s.list_recorded(naan=naan, after=after, limit=3):
                    walked += _keys(page)
                    after = page[-1].position
                assert walked == keys, naan
        positions = [r.position for r in lite.list_recorded(limit=3)]
        assert _keys(store.list_recorded(after=positions[-1])) == keys[3:]  # a position from SQLite
        with store._transaction(write=False) as cur:  # type: ignore[attr-defined]
            cur.execute("SET LOCAL enable_seqscan = off")  # a table this small is read whole otherwise
            cur.execute("EXPLAIN SELECT h.id, h.at, h.key FROM history h WHERE h.kind = 'ark' AND "
                        "h.id < '1' ORDER BY h.at, h.id COLLATE \"C\" LIMIT 10")  # fmt: skip
            plan = "\n".join(row[0] for row in cur.fetchall())
        assert "history_adopted" in plan and "Sort" not in plan, plan


def test_the_check_names_a_binding_whose_naan_or_shoulder_is_not_its_keys(new_url: Callable[[], str]) -> None:
    """A list by NAAN and shoulder reads them from the key's prefix when it walks the history: a dump
    whose binding says another NAAN or shoulder than its key is named by the store's check."""
    good, bad_shoulder, bad_naan = (f"ark:{NAAN}/{n}" for n in ("fk4good", "x5abc", "fk4naan"))

    def damaged(row: dict[str, Any]) -> dict[str, Any]:
        r = row["row"]
        if row["table"] == "bindings" and r["key"] == bad_shoulder:
            r["shoulder"] = "b2"
        if row["table"] == "bindings" and r["key"] == bad_naan:
            r["naan"] = "9999"
        return row

    with open_store(new_url()) as source:
        source.add_naan(NAAN)
        for key in (good, bad_shoulder, bad_naan):
            source.bind(key, "https://example.org/")
        assert source.check() == []
        lines = _rewrite(_dump(source), damaged)
    with open_store(new_url()) as store:
        store.restore(lines)
        assert store.check() == [
            f"binding ark {bad_naan}: NAAN '9999' and shoulder 'fk4', not its key's",
            f"binding ark {bad_shoulder}: NAAN '{NAAN}' and shoulder 'b2', not its key's",
        ]
