"""EZID batch download import (pidkit.importers.ezid): the three formats, compression, status and
metadata decisions, all-or-nothing, resumable, and no id ever minted twice.

The fixtures in ``tests/data/importers/ezid/`` are written from EZID's API documentation (its batch
download examples, plus records of our own on the small shoulder ``fk5``).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from _importcheck import compact, mint_everything, minted_and_held, space, tables
from pidkit import importers
from pidkit.importers import ImportRefusedError, SourceError
from pidkit.importers.ezid import read_anvl, unescape
from pidkit.store import Store, open_store

DATA = Path(__file__).parent / "data" / "importers" / "ezid"
ANVL = DATA / "download.anvl.txt"
CSV = DATA / "download.csv"
XML = DATA / "download.xml"
#: "Billion laughs": expat refuses the expansion instead of building gigabytes.
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(8))
    + b"]><records><record identifier='ark:/1/x'><element name='erc.who'>&i;</element></record></records>"
)
#: The ARKs of the CSV and XML downloads (the ANVL one adds fk5-44 and fk561).
ARKS = {"ark:99999/fk4gt78tq", "ark:99999/fk512", "ark:99999/fk537"}


@pytest.fixture
def sqlite_store() -> Iterator[Store]:
    with open_store("sqlite:///:memory:") as s:
        yield s


def _compressed(path: Path, how: str, tmp: Path) -> Path:
    if how == "gzip":
        out = tmp / (path.name + ".gz")
        out.write_bytes(gzip.compress(path.read_bytes()))
        return out
    if how == "zip":
        out = tmp / (path.name + ".zip")
        with zipfile.ZipFile(out, "w") as z:
            z.write(path, path.name)
        return out
    return path


@pytest.mark.parametrize("compression", ["none", "gzip", "zip"])
@pytest.mark.parametrize("download", [CSV, XML], ids=["csv", "xml"])
def test_formats_and_compressions_import_the_same(
    download: Path, compression: str, tmp_path: Path, sqlite_store: Store
) -> None:
    report = importers.run("ezid", _compressed(download, compression, tmp_path), sqlite_store)
    assert report.count("imported") == 3
    assert [o.id for o in report.by_action("skipped")] == ["doi:10.5072/FK2S75905Q"]
    proust = sqlite_store.get_binding("ark:/99999/fk4gt78tq")
    assert proust is not None
    assert (proust.target, proust.status, proust.erc.who, proust.erc.what, proust.erc.when) == (
        "http://www.gutenberg.org/ebooks/7178", "public", "Proust, Marcel",
        "Remembrance of Things Past", "1922",
    )  # fmt: skip
    assert proust.created == _dt.datetime.fromtimestamp(1300812337, _dt.UTC)
    assert proust.updated == _dt.datetime.fromtimestamp(1300913550, _dt.UTC)
    reserved = sqlite_store.get_binding("ark:99999/fk537")
    assert reserved is not None and reserved.status == "reserved"
    assert reserved.target == "https://ezid.cdlib.org/id/ark:/99999/fk537"
    assert {b.key for b in sqlite_store.list_bindings("99999")} == ARKS
    assert compact(minted_and_held(sqlite_store)) == ARKS  # every imported id is in the minted log
    assert sqlite_store.check() == []


def test_csv_iso_timestamps_and_converted_line_ends(sqlite_store: Store) -> None:
    importers.run("ezid", CSV, sqlite_store)
    b = sqlite_store.get_binding("ark:99999/fk512")
    assert b is not None
    assert b.created == _dt.datetime(2020, 9, 13, 12, 26, 40, tzinfo=_dt.UTC)  # convertTimestamps=yes form
    assert b.erc.what == "Notes on 100% cotton: a study second line"  # CSV turns line ends into spaces


def test_anvl_percent_encoding_is_undone(sqlite_store: Store) -> None:
    importers.run("ezid", ANVL, sqlite_store)
    b = sqlite_store.get_binding("ark:99999/fk512")
    assert b is not None and b.erc.what == "Notes on 100% cotton: a study\nsecond line"
    assert unescape("%25%3A%0D%0A") == "%:\r\n"


def test_extra_metadata_and_unavailable_are_kept(store: Store) -> None:
    report = importers.run("ezid", ANVL, store)  # no consent needed: the store holds both now
    assert report.count("imported") == 5 and report.count("skipped") == 1 and report.count("refused") == 0
    dc = store.get_binding("ark:99999/fk544")  # ark:/99999/fk5-44 normalized (§3.2)
    assert dc is not None and dc.text == "ark:/99999/fk5-44"
    assert dc.extra_dict == {
        "dc.creator": "Kunze, John",
        "dc.title": "Towards Electronic Persistence Using ARK Identifiers",
        # _profile and _export are kept where EZID's API keeps them (pidkit.store.ezid)
        "ezid.profile": "dc",
        "ezid.export": "yes",
        # _owner and _ownergroup too: EZID's API answers them again (pidkit.store.ezid.IMPORTED)
        "ezid.owner": "apitest",
        "ezid.ownergroup": "apitest",
    }
    withdrawn = store.get_binding("ark:99999/fk561")
    assert withdrawn is not None
    assert (withdrawn.status, withdrawn.reason) == ("unavailable", "withdrawn by author")
    assert withdrawn.target == "https://example.org/objects/61"  # kept: unavailable is reversible
    assert store.resolve("ark:99999/fk561") is not None
    # only EZID's administrative elements pidkit has no place for are left out, and named
    by_id = {o.id: o for o in report.outcomes}
    assert by_id["ark:/99999/fk5-44"].dropped == ()
    lines = report.lines()
    assert lines[0] == (f"ezid from {ANVL}: 5 imported, 1 skipped, 0 refused, 0 kept as they were")
    assert "line 14: doi:10.5072/FK2S75905Q skipped (not an ARK (doi): pidkit imports ARKs only)" in lines
    assert store.check() == []


def test_unavailable_without_a_reason_gets_one(tmp_path: Path, store: Store) -> None:
    dl = tmp_path / "dl.txt"
    dl.write_text(":: ark:/99999/fk4x\n_status: unavailable\n_target: https://e.org/x\n")
    importers.run("ezid", dl, store)
    b = store.get_binding("ark:99999/fk4x")
    assert b is not None and (b.status, b.reason) == ("unavailable", "unavailable in EZID (no reason given)")
    assert store.check() == []


def test_an_element_name_the_store_refuses_is_refused_without_consent(tmp_path: Path, store: Store) -> None:
    dl = tmp_path / "dl.txt"
    dl.write_text(
        ":: ark:/99999/fk4a\n_target: https://e.org/a\ndc.title: A\n\n"
        ":: ark:/99999/fk4b\n_target: https://e.org/b\nerc: who: x%0Awhat: y\nmy%20title: B\n"
    )
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("ezid", dl, store)
    refused = caught.value.report.by_action("refused")
    assert [(o.where, o.id) for o in refused] == [("line 5", "ark:/99999/fk4b")]
    assert refused[0].reason.startswith("element names the store refuses: my title (no whitespace")
    assert refused[0].reason.endswith("drop_extra / --drop-extra leaves them out")
    assert "1 record refused, nothing imported; first: line 5" in str(caught.value)
    assert all(not rows for rows in tables(store).values())  # all or nothing: not even the good record
    report = importers.run("ezid", dl, store, drop_extra=True)
    assert {o.id: o.dropped for o in report.outcomes}["ark:/99999/fk4b"] == ("my title",)
    b = store.get_binding("ark:99999/fk4b")
    assert b is not None and b.extra == () and (b.erc.who, b.erc.what) == ("x", "y")  # the whole-ERC element
    a = store.get_binding("ark:99999/fk4a")
    assert a is not None and a.extra_dict == {"dc.title": "A"}
    assert store.check() == []


def test_whole_erc_element_and_ownership_are_kept(tmp_path: Path, store: Store) -> None:
    """EZID "Profile erc": a whole ANVL ERC document bound to the element erc fills the ERC (an erc.*
    element beside it must agree); _owner and _ownergroup are kept (ezid.owner / ezid.ownergroup)."""
    dl = tmp_path / "dl.txt"
    dl.write_text(
        ":: ark:/99999/fk4a\n_target: https://e.org/a\n_owner: apitest\n_ownergroup: cdl\n"
        "erc: erc:%0Awho: Proust, Marcel%0Awhat: Remembrance of Things Past\n"
        "erc.what: Remembrance of Things Past\nerc.when: 1922\n"
    )
    report = importers.run("ezid", dl, store)
    assert report.count("imported") == 1 and report.outcomes[0].dropped == ()
    a = store.get_binding("ark:99999/fk4a")
    assert a is not None
    assert (a.erc.who, a.erc.what, a.erc.when) == ("Proust, Marcel", "Remembrance of Things Past", "1922")
    assert a.extra_dict == {"ezid.owner": "apitest", "ezid.ownergroup": "cdl"}
    bad = tmp_path / "bad.txt"
    bad.write_text(":: ark:/99999/fk4b\n_target: https://e.org/b\nerc: who: x\nerc.who: y\n\n"
                   ":: ark:/99999/fk4c\n_target: https://e.org/c\nerc: who: x%0Ahow: y\n")
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("ezid", bad, store)
    reasons = {o.id: o.reason for o in caught.value.report.by_action("refused")}
    assert reasons["ark:/99999/fk4b"] == (
        "element 'erc.who': disagrees with the who of the element 'erc' in 'y'")
    assert reasons["ark:/99999/fk4c"] == (
        "element 'erc': not an ERC element (who, what, when, where) in 'how'")
    assert store.get_binding("ark:99999/fk4b") is None and store.check() == []


def test_an_element_of_its_own_named_as_ezid_s_kept_one_is_refused_not_overwritten(
    tmp_path: Path, store: Store
) -> None:
    """_owner and _profile are kept as ezid.owner and ezid.profile: a record that has elements of its own
    by those names — beside EZID's or alone (which pidkit's EZID API would then serve as _owner) — is
    refused naming both, never stored with one value silently replacing the other."""
    dl = tmp_path / "dl.txt"
    dl.write_text(":: ark:/99999/fk4gt78tq\n_target: http://example.org/one\n_owner: alice\n"
                  "ezid.owner: bob\n\n:: ark:/99999/fk4b\n_target: http://example.org/b\n_profile: erc\n"
                  "ezid.profile: datacite\n\n:: ark:/99999/fk4c\n_target: http://example.org/c\n"
                  "ezid.owner: mallory\n")
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("ezid", dl, store)
    reasons = {o.id: o.reason for o in caught.value.report.by_action("refused")}
    owner = "an element of its own named ezid.owner, the name EZID's _owner is kept under"
    profile = "an element of its own named ezid.profile, the name EZID's _profile is kept under"
    assert reasons == {"ark:/99999/fk4gt78tq": owner, "ark:/99999/fk4b": profile, "ark:/99999/fk4c": owner}
    assert all(store.get_binding(f"ark:99999/{b}") is None for b in ("fk4gt78tq", "fk4b", "fk4c"))


def test_a_rerun_writes_nothing_and_an_interrupted_import_completes(tmp_path: Path, store: Store) -> None:
    first_two = tmp_path / "part.txt"  # what an earlier run that stopped half-way would have brought
    first_two.write_text("\n".join(ANVL.read_text().splitlines()[:25]) + "\n")
    assert importers.run("ezid", first_two, store).count("imported") == 1
    report = importers.run("ezid", ANVL, store)
    assert [o.id for o in report.by_action("kept")] == ["ark:/99999/fk4gt78tq"]
    assert report.count("imported") == 4
    again = importers.run("ezid", ANVL, store)
    assert again.count("imported") == 0 and again.count("kept") == 5
    assert sum(again.restored.values()) == 0
    assert store.minted_count() == 5  # never duplicated


def test_a_binding_that_differs_is_kept_not_overwritten(sqlite_store: Store) -> None:
    sqlite_store.add_naan("99999")
    sqlite_store.bind("ark:99999/fk512", "https://mine.example/12")
    report = importers.run("ezid", CSV, sqlite_store)
    kept = report.by_action("kept")
    assert [o.id for o in kept] == ["ark:/99999/fk512"]
    assert "differing from the source: not overwritten" in kept[0].reason
    b = sqlite_store.get_binding("ark:99999/fk512")
    assert b is not None and b.target == "https://mine.example/12"


def test_a_new_minter_on_an_imported_shoulder_never_issues_an_imported_id(store: Store) -> None:
    importers.run("ezid", ANVL, store)
    old = {"ark:99999/fk512", "ark:99999/fk537", "ark:99999/fk544", "ark:99999/fk561"}
    store.create_minter("fk5", naan="99999", template="fk5.rdd")
    minted = mint_everything(store, "fk5", limit=100)
    assert not old & set(minted)
    assert set(minted) | old == space("fk5.rdd", "99999")  # the whole remaining space, nothing else
    assert len(minted) == 96
    assert store.check() == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "_id,_target\nark:/99999/fk512,notaurl\n",
            "line 2: ark:/99999/fk512 refused (target must be an http",
        ),
        (
            "_id,_target\nark:/99999/fk512,https://e.org/\nark:/99999/fk5-12,https://e.org/\n",
            "line 3: ark:/99999/fk5-12 refused (ark:99999/fk512 is in the source twice (first at line 2)",
        ),
        ("_id,_status\nark:/99999/fk512,public\n", "a public binding needs a target URL"),
        ("_id,_status,_target\nark:/99999/fk512,gone,https://e.org/\n", "unknown _status 'gone'"),
        (
            "_id,_created,_target\nark:/99999/fk512,yesterday,https://e.org/\n",
            "_created is neither Unix seconds",
        ),
        ("_id,_target\nark:99999/,https://e.org/\n", "line 2: ark:99999/ refused"),
    ],
    ids=["bad-target", "twice", "public-without-target", "unknown-status", "bad-time", "bad-ark"],
)
def test_refused_records_name_the_line_and_the_reason(
    text: str, message: str, tmp_path: Path, sqlite_store: Store
) -> None:
    path = tmp_path / "dl.csv"
    path.write_text(text)
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("ezid", path, sqlite_store)
    assert message in str(caught.value)
    assert sqlite_store.minted_count() == 0 and sqlite_store.list_naans() == []


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("a.csv", b"_owner,erc.who\napitest,x\n", "a CSV download needs an '_id' column in '{}' on line 1"),
        ("b.csv", b"_id,erc.who\nark:/1/x,a,b\n", "row has 3 cells for 2 columns in '{}' on line 2"),
        ("c.txt", b"_status: public\n", "an element before the first ':: identifier' line in '{}' on line 1"),
        ("d.txt", b":: ark:/1/x\nno colon here\n", "not an ANVL 'name: value' line in '{}' on line 2"),
        ("e.xml", b"<records><record identifier='x'>", "not XML"),
        ("f.xml", b"<other/>", "the root element is <other>, not <records> in '{}'"),
        ("laughs.xml", LAUGHS, "not XML (limit on input amplification factor"),
        ("g.txt.gz", b"\x1f\x8b\x08\x00broken", "a broken gzip file"),
        ("h.txt", b"\xff\xfe:: x", "not UTF-8 (byte 1) in '{}'"),
        ("i.txt", b":: ark:/1/x\ndc.title: A\ndc.title: B\n",
         "the element 'dc.title' twice in one record in '{}' on line 3"),
        ("j.xml", b"<records><record identifier='ark:/1/x'><element name='dc.title'>A</element>"
                  b"<element name='dc.title'>B</element></record></records>",
         "record 1: the element 'dc.title' twice in one record in '{}'"),
    ],
)
def test_unreadable_downloads_are_one_error_naming_the_file(
    name: str, content: bytes, message: str, tmp_path: Path, sqlite_store: Store
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceError) as caught:
        importers.run("ezid", path, sqlite_store)
    assert message.format(path) in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_file(tmp_path: Path, sqlite_store: Store) -> None:
    with pytest.raises(SourceError, match="cannot read the download: No such file"):
        importers.run("ezid", tmp_path / "none.txt", sqlite_store)


def test_anvl_reader_keeps_record_positions() -> None:
    records = read_anvl(ANVL.read_text().splitlines())
    assert [(r.where, r.identifier) for r in records][:2] == [
        ("line 1", "ark:/99999/fk4gt78tq"),
        ("line 14", "doi:10.5072/FK2S75905Q"),
    ]
    assert records[0].elements["_owner"] == "apitest"


def test_progress_is_called() -> None:
    seen: list[int] = []
    with open_store("sqlite:///:memory:") as s:
        from pidkit.importers.ezid import import_ezid

        import_ezid(CSV, s, progress=seen.append)
    assert seen == [4]  # every 1000 records, and the last


def test_an_import_stopped_half_way_leaves_nothing_and_runs_again(
    monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    from pidkit.importers.common import DumpBuilder

    whole = DumpBuilder.lines

    def stops_half_way(self: DumpBuilder, schema: int) -> Iterator[str]:
        lines = list(whole(self, schema))
        yield from lines[: len(lines) // 2]  # the store has taken some rows of its one transaction …
        raise KeyboardInterrupt  # … when the import is stopped (Ctrl-C, a lost connection)

    monkeypatch.setattr(DumpBuilder, "lines", stops_half_way)
    with pytest.raises(KeyboardInterrupt):
        importers.run("ezid", ANVL, store)
    assert all(not rows for rows in tables(store).values())  # nothing of it was written
    monkeypatch.setattr(DumpBuilder, "lines", whole)
    report = importers.run("ezid", ANVL, store)
    assert report.count("imported") == 5 and store.minted_count() == 5
    assert store.check() == []


def test_a_download_that_unpacks_too_far_or_is_broken_is_refused_by_name() -> None:
    """An upload is small, what it unpacks to need not be: past ``limit`` it is refused; a corrupt
    deflate stream, a CSV cell past the csv module's limit: named errors, never a traceback."""
    from pidkit.importers.ezid import read_download_bytes

    bomb = gzip.compress(b"_id,_target\n" + b"x" * 5_000_000)
    with pytest.raises(SourceError, match=r"unpacks to more than 1,000,000 bytes in 'dl.csv.gz'"):
        read_download_bytes(bomb, "dl.csv.gz", limit=1_000_000)
    assert read_download_bytes(gzip.compress(b"_id\nark:/99999/fk4a\n"), "dl.csv.gz", limit=100)
    broken = bytearray(gzip.compress(b"_id,_target\nark:/99999/fk4a,https://e.org/\n" * 50))
    broken[20:30] = b"\xff" * 10  # the deflate stream, not the header
    with pytest.raises(SourceError, match="a broken gzip file"):
        read_download_bytes(bytes(broken), "dl.csv.gz")
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("dl.csv", b"_id\n" + b"y" * 3000)
    with pytest.raises(SourceError, match="unpacks to more than 1,000 bytes"):
        read_download_bytes(packed.getvalue(), "dl.zip", limit=1000)
    with pytest.raises(SourceError, match=r"not CSV \(field larger than field limit"):
        read_download_bytes(b'_id,_target\nark:/99999/fk4a,"' + b"z" * 200_000 + b'"\n', "dl.csv")


def test_unicode_line_breaks_in_a_value_stay_in_the_value(tmp_path: Path, store: Store) -> None:
    """EZID escapes CR and LF only: a value may hold U+2028, U+2029 or U+0085 as they are, and the
    download's lines are split at CR LF, LF and CR alone (str.splitlines would cut the value)."""
    dl = tmp_path / "dl.txt"
    dl.write_text(":: ark:/99999/fk4a\r\n_target: https://e.org/a\r\n"
                  "dc.title: one\u2028two\u2029three\x85four\r\n", encoding="utf-8", newline="")
    assert importers.run("ezid", dl, store).count("imported") == 1
    a = store.get_binding("ark:99999/fk4a")
    assert a is not None and a.extra_dict["dc.title"] == "one\u2028two\u2029three\x85four"
