"""A real harvester against a real server: ``sickle`` (PyPI) harvests a store of 10,000 bindings
completely from ``pidkit serve`` on 127.0.0.1, then an incremental harvest after changes returns
exactly the changed records (deleted ones as deleted)."""

from __future__ import annotations

import json
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import xmlschema
from sickle import Sickle  # type: ignore[import-untyped]  # no stubs, no py.typed

from pidkit.store import open_store
from pidkit.web.oai import ERC_XSD
from test_web_serve import _env, _running, free_port

N = 10_000
OAI = "{http://www.openarchives.org/OAI/2.0/}"
SCHEMAS = Path(__file__).parent / "data" / "oai"


def _lines() -> Iterator[str]:
    for i in range(N):
        shoulder = "fk4" if i % 2 else "b5"
        yield json.dumps({
            "text": f"ark:99999/{shoulder}{i:05d}", "target": f"https://example.org/objects/{i}",
            "erc": {"who": f"Author {i}", "what": f"Object {i}", "when": str(1900 + i % 100)},
            "extra": {"dc.subject": f"subject {i % 7}"},
        })  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``(db URL, OAI base URL)`` of a ``pidkit serve`` over a store of :data:`N` public bindings."""
    db = f"sqlite:///{tmp_path_factory.mktemp('harvest')}/s.db"
    with open_store(db) as store:
        store.add_naan("99999", "Test", shoulders=["fk4", "b5"])
        assert store.import_jsonl(_lines()).created == N
        store.bind("ark:99999/fk4reserved", None, status="reserved")  # never harvested
    time.sleep(1.05)  # the seed's last second is over before any harvest starts
    port = free_port()
    argv = [sys.executable, "-m", "pidkit", "serve", "--db", db, "--port", str(port),
            "--log-level", "warning"]  # fmt: skip
    with _running(argv, _env(PIDKIT_DATABASE_URL=db), port):
        yield db, f"http://127.0.0.1:{port}/oai"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as r:  # our own server on 127.0.0.1
        body: bytes = r.read()
    return body


def test_sickle_harvests_everything_then_exactly_the_changes(served: tuple[str, str], tmp_path: Path) -> None:
    db, base = served
    erc = tmp_path / "erc.xsd"
    erc.write_text(ERC_XSD)
    schema = xmlschema.XMLSchema(
        str(SCHEMAS / "OAI-PMH.xsd"), allow="local",
        locations=[("http://www.openarchives.org/OAI/2.0/oai_dc/", str(SCHEMAS / "oai_dc.xsd")),
                   ("urn:pidkit:erc:1", str(erc))],
    )  # fmt: skip
    identify = _get(f"{base}?verb=Identify")
    schema.validate(identify.decode())
    started = ET.fromstring(identify).findtext(f"{OAI}responseDate")
    assert started is not None

    sickle = Sickle(base)
    records = list(sickle.ListRecords(metadataPrefix="oai_dc", ignore_deleted=False))
    got = [r.header.identifier for r in records]
    assert len(got) == len(set(got)) == N
    assert "ark:99999/fk4reserved" not in got
    one = next(r for r in records if r.header.identifier == "ark:99999/fk400001")
    assert one.metadata["title"] == ["Object 1"] and one.metadata["creator"] == ["Author 1"]
    assert one.metadata["subject"] == ["subject 1"] and one.header.setSpecs == ["99999", "99999:fk4"]
    erc_ids = [h.identifier for h in sickle.ListIdentifiers(metadataPrefix="erc", set="99999:b5")]
    assert len(erc_ids) == N // 2 and all(i.startswith("ark:99999/b5") for i in erc_ids)
    page = _get(f"{base}?verb=ListRecords&metadataPrefix=erc&set=99999:fk4")
    schema.validate(page.decode())  # a page as sickle got it, valid

    time.sleep(1.05)
    changed = {"ark:99999/fk400011", "ark:99999/b500020", "ark:99999/fk409999"}
    gone = {"ark:99999/b500100", "ark:99999/fk400101"}
    new = {"ark:99999/fk4new1", "ark:99999/b5new2"}
    with open_store(db) as store:  # beside the running server, as another writer would
        for ark in sorted(changed):
            store.bind(ark, erc={"what": "revised"})
        store.tombstone("ark:99999/b500100", "withdrawn")
        store.bind("ark:99999/fk400101", status="unavailable", reason="embargo")
        for ark in sorted(new):
            store.bind(ark, f"https://example.org/{ark[10:]}")
        store.bind("ark:99999/b5reserved2", None, status="reserved")

    since = {"metadataPrefix": "oai_dc", "from": started}
    headers = list(sickle.ListIdentifiers(**since, ignore_deleted=False))
    assert {h.identifier for h in headers} == changed | gone | new
    assert len(headers) == len(changed | gone | new)
    assert {h.identifier for h in headers if h.deleted} == gone
    again = list(sickle.ListRecords(metadataPrefix="oai_dc", ignore_deleted=False))
    assert len({r.header.identifier for r in again}) == N + len(new)
