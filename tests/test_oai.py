"""OAI-PMH 2.0 at ``/oai`` (pidkit.web.oai) through the ASGI app: every verb, every error condition of
the protocol (§3.6), resumption tokens, deleted records, sets, ``from``/``until``; every response is
validated against the protocol's XML Schema (``tests/data/oai/``, with oai_dc's and pidkit's erc
schema for the metadata: ``processContents="strict"``)."""

from __future__ import annotations

import datetime as _dt
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from fastapi.testclient import TestClient

from pidkit.errors import PidkitError
from pidkit.settings import Settings
from pidkit.store import Erc, Store, open_store
from pidkit.web import create_app
from pidkit.web import oai as oai_module
from pidkit.web.oai import ERC_XSD, Token

SCHEMAS = Path(__file__).parent / "data" / "oai"
NS = {
    "o": "http://www.openarchives.org/OAI/2.0/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "erc": "urn:pidkit:erc:1",
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> xmlschema.XMLSchema:
    erc = tmp_path_factory.mktemp("erc") / "erc.xsd"
    erc.write_text(ERC_XSD)
    return xmlschema.XMLSchema(
        str(SCHEMAS / "OAI-PMH.xsd"),
        locations=[(NS["oai_dc"], str(SCHEMAS / "oai_dc.xsd")), (NS["erc"], str(erc))],
        allow="local",  # never fetched from the network: the vendored copies only
    )


def seed(s: Store) -> None:
    """Public, tombstoned, unavailable and reserved ARKs on two NAANs and shoulders."""
    s.add_naan("99999", "Test", shoulders=["fk4", "b5"])
    s.add_naan("12345", "", shoulders=["x9"])
    s.bind("ark:99999/fk4x1", "https://e.org/1", erc=Erc(who="Austin, Larry", what="Rhythm", when="1952"),
           support=Erc(what="Permanent: Stable Content:"),
           extra={"dc.subject": "Music", "dc.notanelement": "n", "app.note": "a"})  # fmt: skip
    s.bind("ark:99999/fk4x2", "https://e.org/2")
    s.tombstone("ark:99999/fk4x2", "withdrawn")
    s.bind("ark:99999/b5y", "https://e.org/y", erc=Erc(what="Ctrl \x01 char"))
    s.bind("ark:99999/b5z", "https://e.org/z", status="unavailable", reason="embargo")
    s.bind("ark:99999/fk4res", None, status="reserved")
    s.bind("ark:12345/x9a", "https://e.org/a")


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    seed(store)
    with TestClient(create_app(store)) as c:
        yield c


class Oai:
    """Requests, each response validated against the schema, parsed."""

    def __init__(self, client: TestClient, schema: xmlschema.XMLSchema) -> None:
        self.client = client
        self.schema = schema

    def __call__(self, *pairs: tuple[str, str], method: str = "GET", **params: str) -> ET.Element:
        args = [*pairs, *params.items()]
        if method == "GET":
            r = self.client.get("/oai", params=list(args))
        else:
            r = self.client.post("/oai", data=dict(args))
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("text/xml")
        self.schema.validate(r.text)
        return ET.fromstring(r.content)


@pytest.fixture
def oai(client: TestClient, schema: xmlschema.XMLSchema) -> Oai:
    return Oai(client, schema)


def error(root: ET.Element) -> tuple[str, bool]:
    """The error code of a response, and whether its request element kept its attributes."""
    el = root.find("o:error", NS)
    assert el is not None, ET.tostring(root)
    request = root.find("o:request", NS)
    assert request is not None
    return el.get("code", ""), bool(request.attrib)


def ids(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iterfind(".//o:header/o:identifier", NS)]


def token_of(root: ET.Element) -> ET.Element | None:
    return root.find(".//o:resumptionToken", NS)


# -- verbs ----------------------------------------------------------------------------------------------
def test_identify(oai: Oai, store: Store) -> None:
    root = oai(verb="Identify")
    el = root.find("o:Identify", NS)
    assert el is not None
    get = {c.tag.split("}")[1]: c.text for c in el}
    assert get["baseURL"] == "http://testserver/oai" and get["protocolVersion"] == "2.0"
    assert get["deletedRecord"] == "persistent" and get["granularity"] == "YYYY-MM-DDThh:mm:ssZ"
    first = min(r.at for r in store.list_recorded(statuses=("public", "unavailable", "tombstoned")))
    earliest = store.earliest_recorded()
    assert earliest is not None and earliest <= first
    assert get["earliestDatestamp"] == earliest.strftime("%Y-%m-%dT%H:%M:%SZ")
    request = root.find("o:request", NS)
    assert request is not None and request.attrib == {"verb": "Identify"}
    assert get["adminEmail"] == "oai-admin@example.org"  # the default of Settings.oai_admin_email


def test_identify_admin_email_from_the_settings(store: Store) -> None:
    """adminEmail is a setting (PIDKIT_OAI_ADMIN_EMAIL read by Settings.from_env), not os.environ."""
    settings = Settings.from_env({"PIDKIT_OAI_ADMIN_EMAIL": "harvest@example.org"})
    with TestClient(create_app(store, settings=settings)) as c:
        r = c.get("/oai", params={"verb": "Identify"})
    el = ET.fromstring(r.content).find("o:Identify/o:adminEmail", NS)
    assert el is not None and el.text == "harvest@example.org"
    with pytest.raises(PidkitError, match="PIDKIT_OAI_ADMIN_EMAIL"):
        Settings.from_env({"PIDKIT_OAI_ADMIN_EMAIL": "nobody"})


def test_list_metadata_formats(oai: Oai) -> None:
    root = oai(verb="ListMetadataFormats")
    prefixes = [e.text for e in root.iterfind(".//o:metadataPrefix", NS)]
    assert prefixes == ["oai_dc", "erc"]
    schemas = [e.text for e in root.iterfind(".//o:schema", NS)]
    assert schemas == ["http://www.openarchives.org/OAI/2.0/oai_dc.xsd", "http://testserver/oai/erc.xsd"]
    assert [e.text for e in oai(verb="ListMetadataFormats", identifier="ark:99999/fk4x1").iterfind(
        ".//o:metadataPrefix", NS)] == ["oai_dc", "erc"]  # fmt: skip


def test_the_erc_schema_is_served(client: TestClient) -> None:
    r = client.get("/oai/erc.xsd")
    assert r.status_code == 200 and r.text == ERC_XSD
    xmlschema.XMLSchema(r.text)  # a schema


def test_list_sets_one_per_naan_and_shoulder(oai: Oai) -> None:
    root = oai(verb="ListSets")
    sets = {s.findtext("o:setSpec", None, NS): s.findtext("o:setName", None, NS)
            for s in root.iterfind(".//o:set", NS)}  # fmt: skip
    assert sets == {
        "12345": "NAAN 12345",
        "12345:x9": "NAAN 12345 shoulder x9",
        "99999": "Test",
        "99999:b5": "Test (99999) shoulder b5",
        "99999:fk4": "Test (99999) shoulder fk4",
    }


def test_list_records_all_formats_deleted_records_and_never_a_reserved_id(oai: Oai) -> None:
    for prefix in ("oai_dc", "erc"):
        root = oai(verb="ListRecords", metadataPrefix=prefix)
        got = ids(root)
        assert sorted(got) == ["ark:12345/x9a", "ark:99999/b5y", "ark:99999/b5z", "ark:99999/fk4x1",
                               "ark:99999/fk4x2"]  # fmt: skip
        assert "ark:99999/fk4res" not in got
        headers = root.iterfind(".//o:record/o:header", NS)
        deleted = {h.findtext("o:identifier", None, NS) for h in headers if h.get("status") == "deleted"}
        assert deleted == {"ark:99999/fk4x2", "ark:99999/b5z"}  # tombstoned and unavailable
        for record in root.iterfind(".//o:record", NS):
            header = record.find("o:header", NS)
            assert header is not None
            assert (record.find("o:metadata", NS) is None) == (header.get("status") == "deleted")
        assert token_of(root) is None  # one page: no token at all
    assert ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc")) == ids(
        oai(verb="ListRecords", metadataPrefix="oai_dc"))  # fmt: skip


def test_records_come_in_update_order(oai: Oai, store: Store) -> None:
    store.bind("ark:99999/fk4x1", erc={"when": "1953"})  # now the last changed
    assert ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc"))[-1] == "ark:99999/fk4x1"


def test_get_record_oai_dc_mapping(oai: Oai) -> None:
    root = oai(verb="GetRecord", identifier="ark:99999/fk4x1", metadataPrefix="oai_dc")
    dc = root.find(".//oai_dc:dc", NS)
    assert dc is not None
    assert [(e.tag.split("}")[1], e.text) for e in dc] == [
        ("title", "Rhythm"),
        ("creator", "Austin, Larry"),
        ("subject", "Music"),  # extra dc.subject
        ("date", "1952"),
        ("identifier", "ark:99999/fk4x1"),
        ("identifier", "https://e.org/1"),
    ]  # dc.notanelement and app.note are not Dublin Core: in the erc format only
    assert [s.text for s in root.iterfind(".//o:setSpec", NS)] == ["99999", "99999:fk4"]


def test_get_record_erc(oai: Oai) -> None:
    root = oai(verb="GetRecord", identifier="ark:/99999/fk4-x1", metadataPrefix="erc")  # any spelling
    erc = root.find(".//erc:erc", NS)
    assert erc is not None
    assert erc.findtext("erc:identifier", None, NS) == "ark:99999/fk4x1"
    assert erc.findtext("erc:target", None, NS) == "https://e.org/1"
    assert erc.findtext("erc:object/erc:when", None, NS) == "1952"
    assert erc.findtext("erc:support/erc:what", None, NS) == "Permanent: Stable Content:"
    assert {e.get("name"): e.text for e in erc.iterfind("erc:element", NS)} == {
        "app.note": "a", "dc.notanelement": "n", "dc.subject": "Music"}  # fmt: skip


def test_a_character_xml_cannot_carry_is_replaced(oai: Oai) -> None:
    root = oai(verb="GetRecord", identifier="ark:99999/b5y", metadataPrefix="oai_dc")
    assert root.findtext(".//dc:title", None, NS) == "Ctrl \ufffd char"


def test_get_record_of_a_deleted_record(oai: Oai) -> None:
    for ark in ("ark:99999/b5z", "ark:99999/fk4x2"):
        root = oai(verb="GetRecord", identifier=ark, metadataPrefix="oai_dc")
        header = root.find(".//o:header", NS)
        assert header is not None and header.get("status") == "deleted"
        assert root.find(".//o:metadata", NS) is None


def test_post_is_answered_as_get(oai: Oai) -> None:
    root = oai(method="POST", verb="GetRecord", identifier="ark:99999/fk4x1", metadataPrefix="erc")
    assert ids(root) == ["ark:99999/fk4x1"]


# -- paging ---------------------------------------------------------------------------------------------
def _harvest(oai: Oai, verb: str = "ListIdentifiers", **args: str) -> tuple[list[str], list[ET.Element]]:
    roots = [oai(verb=verb, **args)]
    got = ids(roots[0])
    while (tok := token_of(roots[-1])) is not None and tok.text:
        roots.append(oai(verb=verb, resumptionToken=tok.text))
        got += ids(roots[-1])
    return got, roots


def test_resumption_tokens_page_through_everything(oai: Oai, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oai_module, "PAGE", 2)
    got, roots = _harvest(oai, "ListRecords", metadataPrefix="erc")
    assert len(got) == len(set(got)) == 5 and len(roots) == 3
    cursors = [token_of(r).get("cursor") for r in roots]  # type: ignore[union-attr]
    assert cursors == ["0", "2", "4"]
    last = token_of(roots[-1])
    assert last is not None and last.text is None  # §3.5: the last part has an empty token
    request = roots[1].find("o:request", NS)
    assert request is not None and set(request.attrib) == {"verb", "resumptionToken"}


def test_a_record_changed_during_a_harvest_is_never_lost(
    oai: Oai, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oai_module, "PAGE", 2)
    time.sleep(1.05)  # the seed's second is over: the incremental harvest below starts after it
    first = oai(verb="ListIdentifiers", metadataPrefix="oai_dc")
    started = first.findtext("o:responseDate", None, NS)
    assert started is not None
    seen = ids(first)
    time.sleep(1.05)
    assert seen == ["ark:99999/fk4x1", "ark:99999/fk4x2"]  # the first changed first
    # during the harvest: a record already sent changes, one not yet sent changes, one is made
    store.bind("ark:99999/fk4x1", erc={"what": "changed after it was sent"})
    store.bind("ark:12345/x9a", erc={"who": "changed before it was sent"})
    store.bind("ark:99999/fk4new", "https://e.org/new")
    tok = token_of(first)
    assert tok is not None and tok.text
    rest, _ = _harvest_from(oai, tok.text)
    # this harvest is the store as it was when it started (x9a moved past its window) …
    assert sorted(seen + rest) == ["ark:99999/b5y", "ark:99999/b5z", "ark:99999/fk4x1", "ark:99999/fk4x2"]
    # … and the next incremental harvest, from the first response's date, has exactly the changes
    changed, _ = _harvest(oai, "ListIdentifiers", metadataPrefix="oai_dc", **{"from": started})
    assert sorted(changed) == ["ark:12345/x9a", "ark:99999/fk4new", "ark:99999/fk4x1"]


def _harvest_from(oai: Oai, token: str) -> tuple[list[str], list[ET.Element]]:
    roots = [oai(verb="ListIdentifiers", resumptionToken=token)]
    got = ids(roots[0])
    while (tok := token_of(roots[-1])) is not None and tok.text:
        roots.append(oai(verb="ListIdentifiers", resumptionToken=tok.text))
        got += ids(roots[-1])
    return got, roots


def test_a_token_whose_following_records_all_changed_closes_the_list(
    oai: Oai, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oai_module, "PAGE", 4)
    time.sleep(1.05)
    first = oai(verb="ListIdentifiers", metadataPrefix="oai_dc")
    assert len(ids(first)) == 4
    time.sleep(1.05)
    exposed = store.list_recorded(statuses=("public", "unavailable", "tombstoned"), limit=10)
    [after] = [r.binding.key for r in exposed][4:]
    store.bind(after, erc={"what": "moved past the window"})
    tok = token_of(first)
    assert tok is not None and tok.text
    last = oai(verb="ListIdentifiers", resumptionToken=tok.text)  # valid, schema and all
    assert ids(last) == ids(first)[-1:]
    end = token_of(last)
    assert end is not None and not end.text


def test_an_incremental_harvest_sees_records_imported_with_their_old_times(oai: Oai, store: Store) -> None:
    """Records that come in with the ``updated`` their source gave (an import of export lines, a merge)
    reached this repository now: their datestamp is now, so a harvest from the last one sees them."""
    time.sleep(1.05)
    started = oai(verb="Identify").findtext("o:responseDate", None, NS)
    assert started is not None
    time.sleep(1.05)
    old = "2001-02-03T04:05:06.000000Z"
    lines = [f'{{"kind":"ark","key":"ark:99999/fk4old{i}","text":"ark:99999/fk4old{i}",'
             f'"target":"https://e.org/old{i}","status":"public","created":"{old}","updated":"{old}"}}\n'
             for i in range(3)]  # fmt: skip
    store.import_jsonl(lines)
    since = oai(verb="ListRecords", metadataPrefix="oai_dc", **{"from": started})
    assert sorted(ids(since)) == [f"ark:99999/fk4old{i}" for i in range(3)]
    stamps = [e.text or "" for e in since.iterfind(".//o:header/o:datestamp", NS)]
    assert all(stamp > started for stamp in stamps), stamps
    record = oai(verb="GetRecord", metadataPrefix="oai_dc", identifier="ark:99999/fk4old0")
    assert record.findtext(".//o:header/o:datestamp", None, NS) in stamps


# -- from / until and sets ------------------------------------------------------------------------------
def test_from_and_until_select_by_recorded_time(oai: Oai, store: Store) -> None:
    stamps = {r.binding.key: r.at for r in store.list_recorded(limit=100)}
    day = next(iter(stamps.values()))
    assert day is not None
    today = day.strftime("%Y-%m-%d")
    assert len(ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", **{"from": today}))) == 5
    assert len(ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", until=today))) == 5
    later = (day + _dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert error(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", **{"from": later})) == (
        "noRecordsMatch", True)  # fmt: skip
    earlier = (day - _dt.timedelta(days=2)).strftime("%Y-%m-%d")
    assert error(oai(verb="ListRecords", metadataPrefix="oai_dc", until=earlier)) == ("noRecordsMatch", True)


def test_sets_select(oai: Oai) -> None:
    assert sorted(ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", set="99999:b5"))) == [
        "ark:99999/b5y", "ark:99999/b5z"]  # fmt: skip
    assert ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", set="12345")) == ["ark:12345/x9a"]
    assert len(ids(oai(verb="ListIdentifiers", metadataPrefix="oai_dc", set="99999"))) == 4
    none = oai(verb="ListIdentifiers", metadataPrefix="oai_dc", set="55555")
    assert error(none) == ("noRecordsMatch", True)


# -- every error condition (§3.6) -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [("verb", "Dance")],
        [("verb", "Identify"), ("verb", "Identify")],
        [("verb", "")],
        [("identifier", "ark:99999/fk4x1")],
    ],
    ids=["no-verb", "unknown", "repeated", "empty", "arguments-only"],
)
def test_bad_verb(oai: Oai, pairs: list[tuple[str, str]]) -> None:
    assert error(oai(*pairs)) == ("badVerb", False)  # §3.2: no attributes on <request>


@pytest.mark.parametrize(
    "pairs",
    [
        [("verb", "Identify"), ("metadataPrefix", "oai_dc")],
        [("verb", "GetRecord"), ("identifier", "ark:99999/fk4x1")],
        [("verb", "GetRecord"), ("metadataPrefix", "oai_dc")],
        [("verb", "ListRecords")],
        [("verb", "ListIdentifiers"), ("metadataPrefix", "oai_dc"), ("metadataPrefix", "erc")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("resumptionToken", "x")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("from", "2024-13-01")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("from", "2024-05-01T12:00:00")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("until", "yesterday")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("from", "2024-05-01"),
         ("until", "2024-05-02T00:00:00Z")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("from", "2024-05-02"),
         ("until", "2024-05-01")],
        [("verb", "ListRecords"), ("metadataPrefix", "oai_dc"), ("set", "99999/fk4")],
        [("verb", "ListMetadataFormats"), ("set", "99999")],
        [("verb", "ListIdentifiers"), ("metadataPrefix", "oai_dc ")],
    ],
    ids=["identify-arg", "getrecord-no-prefix", "getrecord-no-id", "no-prefix", "repeated", "token-exclusive",
         "bad-date", "no-z", "words", "mixed-granularity", "from-after-until", "bad-setspec", "unknown-arg",
         "bad-prefix"],
)  # fmt: skip
def test_bad_argument(oai: Oai, pairs: list[tuple[str, str]]) -> None:
    assert error(oai(*pairs)) == ("badArgument", False)


def _tokens() -> list[str]:
    real = Token("ListRecords", "oai_dc", None, None, "2024-05-01T12:00:00.000000Z",
                 ("b/3n3hshx2irezw", "ark:99999/fk4x1"), 2).encode()  # fmt: skip
    body, _, digest = real.partition(".")
    noon = "2024-05-01T12:00:00.000000Z"

    def after(position: str, ark: str = "ark:99999/fk4x1") -> str:
        return Token("ListRecords", "oai_dc", None, None, noon, (position, ark), 1).encode()

    positions = [after(p) for p in ("2024-05-01T11:00:00.000000Z", "b/1\ud800", "b/1\x00", "a/x/0:y", "b")]
    arks = [after("b/bzzzzzzzzzzzz", a)
            for a in ("ark:/", "ark:99999/\x00", "not an ark", "ark:99999/\udc00")]  # fmt: skip
    wrong_verb = Token("ListIdentifiers", "oai_dc", None, None, noon, None, 0).encode()
    bad_prefix = Token("ListRecords", "marc", None, None, "2024-05-01T12:00:00.000000Z", None, 0).encode()
    bad_time = Token("ListRecords", "oai_dc", None, None, "not a time", None, 0).encode()
    bad_set = Token("ListRecords", "oai_dc", "a b", None, "2024-05-01T12:00:00.000000Z", None, 0).encode()
    negative = Token("ListRecords", "oai_dc", None, None, "2024-05-01T12:00:00.000000Z", None, -1).encode()
    return [
        "forged", "", ".", real[:-1] + ("0" if real[-1] != "0" else "1"), body[:-2] + "." + digest,
        f"{body}x.{digest}", wrong_verb, bad_prefix, bad_time, bad_set, negative, "é" * 10, "a" * 5000,
        *positions, *arks,
    ]  # fmt: skip


@pytest.mark.parametrize("token", _tokens())
def test_bad_resumption_token_never_a_server_error(oai: Oai, token: str) -> None:
    assert error(oai(verb="ListRecords", resumptionToken=token)) == ("badResumptionToken", True)


def test_a_well_formed_token_of_ours_is_honoured(oai: Oai) -> None:
    tok = Token("ListRecords", "oai_dc", None, None, "2999-01-01T00:00:00.000000Z", None, 0).encode()
    assert len(ids(oai(verb="ListRecords", resumptionToken=tok))) == 5
    past_all = Token("ListRecords", "oai_dc", None, None, "2999-01-01T00:00:00.000000Z",
                     ("b/bzzzzzzzzzzzz", "ark:99999/nosuch"), 5).encode()  # fmt: skip
    assert error(oai(verb="ListRecords", resumptionToken=past_all)) == ("noRecordsMatch", True)


def test_list_sets_takes_no_token(oai: Oai) -> None:
    assert error(oai(verb="ListSets", resumptionToken="anything")) == ("badResumptionToken", True)


@pytest.mark.parametrize("verb_args", [
    {"verb": "GetRecord", "identifier": "ark:99999/fk4x1", "metadataPrefix": "marc21"},
    {"verb": "ListRecords", "metadataPrefix": "marc21"},
    {"verb": "ListIdentifiers", "metadataPrefix": "OAI_DC"},
])  # fmt: skip
def test_cannot_disseminate_format(oai: Oai, verb_args: dict[str, str]) -> None:
    assert error(oai(**verb_args)) == ("cannotDisseminateFormat", True)


@pytest.mark.parametrize(
    "identifier", ["ark:99999/fk4res", "ark:99999/nothere", "doi:10.5072/FK2", "", "ark:"]
)
def test_id_does_not_exist_and_a_reserved_id_is_never_exposed(oai: Oai, identifier: str) -> None:
    got = oai(verb="GetRecord", identifier=identifier, metadataPrefix="oai_dc")
    assert error(got) == ("idDoesNotExist", True)
    assert error(oai(verb="ListMetadataFormats", identifier=identifier)) == ("idDoesNotExist", True)


def test_no_metadata_formats_for_a_withdrawn_item(oai: Oai) -> None:
    assert error(oai(verb="ListMetadataFormats", identifier="ark:99999/fk4x2")) == ("noMetadataFormats", True)


def test_no_set_hierarchy_and_no_records_in_an_empty_store(schema: xmlschema.XMLSchema) -> None:
    with open_store("sqlite:///:memory:") as s, TestClient(create_app(s)) as c:
        oai = Oai(c, schema)
        assert error(oai(verb="ListSets")) == ("noSetHierarchy", True)
        in_set = oai(verb="ListRecords", metadataPrefix="oai_dc", set="99999")
        assert error(in_set) == ("noSetHierarchy", True)
        assert error(oai(verb="ListIdentifiers", metadataPrefix="oai_dc")) == ("noRecordsMatch", True)
        identify = oai(verb="Identify")
        assert identify.findtext(".//o:earliestDatestamp", None, NS) == "1970-01-01T00:00:00Z"


# -- the store's paging method, on both backends --------------------------------------------------------
def test_list_changed_pages_by_update_time_and_key(store: Store) -> None:
    seed(store)
    everything = store.list_changed(limit=100)
    assert [b.key for b in everything][-1] == "ark:12345/x9a"
    order = [(b.updated, b.key) for b in everything]
    assert [(str(u), k) for u, k in order] == sorted((str(u), k) for u, k in order)
    walked: list[str] = []
    after: Any = None
    while page := store.list_changed(after=after, limit=2):
        walked += [b.key for b in page]
        after = (page[-1].updated, page[-1].key)
    assert walked == [b.key for b in everything]
    public = store.list_changed(statuses=("public",), limit=100)
    assert {b.status for b in public} == {"public"} and len(public) == 3
    b5 = store.list_changed(naan="99999", shoulder="b5")
    assert [b.key for b in b5] == ["ark:99999/b5y", "ark:99999/b5z"]
    middle = everything[3].updated
    assert middle is not None
    since = store.list_changed(since=middle, limit=100)
    until = store.list_changed(until=middle, limit=100)
    assert {b.key for b in since} | {b.key for b in until} == {b.key for b in everything}
    assert all(b.updated >= middle for b in since) and all(b.updated <= middle for b in until)  # type: ignore[operator]
    assert store.list_changed(statuses=()) == []
