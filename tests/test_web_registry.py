"""The resolver and the public NAAN registry (issue 16): resolution order, templates, offline, ``?info``
of registry records, the directory pages and the in-memory registry's reloading.

Expected URLs are written here from the registry's data (its records' ``target.url`` and
``test_identifier``), never computed by ``pidkit.registry``.  Every resolution is checked through the
app as served (the raw-ASGI fast path) and through the FastAPI route, on both backends where a store is
involved (``tests/_webutil.py``).
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pidkit import registry
from pidkit.errors import StoreError
from pidkit.store import open_store
from pidkit.web import Settings, create_app
from pidkit.web.app import ASGIApp, Receive, Scope, Send
from pidkit.web.lookups import RegistryHolder

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

SCRIPT = "<script>alert(1)</script>"


def _route(app: FastAPI) -> ASGIApp:
    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        await FastAPI.__call__(app, scope, receive, send)

    return asgi


def _both(client: TestClient) -> list[TestClient]:
    """The client as given (fast path for plain GETs) and one entering at the FastAPI route."""
    assert isinstance(client.app, FastAPI)
    return [client, TestClient(_route(client.app), follow_redirects=False)]


@pytest.fixture
def empty(store_url: str) -> Iterator[TestClient]:
    """A client over an app whose store serves no NAAN (every ARK is foreign), on each backend."""
    with open_store(store_url) as store, TestClient(create_app(store), follow_redirects=False) as c:
        yield c


def _location(c: TestClient, path: str) -> tuple[int, str | None]:
    r = c.get(path)
    return r.status_code, r.headers.get("location")


# --- every record with a test_identifier --------------------------------------------------------------

#: (record, its test_identifier, where its target template sends it) — from the 2024-11-07 registry:
#: the six EZID b-NAANs, ``https://doi.org/10.NNNN/${value}``.
TEST_IDENTIFIERS = [
    ("b7280", "ark:/b7280/d1988w", "https://doi.org/10.7280/d1988w"),
    ("b6071", "ark:/b6071/m3z07d", "https://doi.org/10.6071/m3z07d"),
    ("b6078", "ark:/b6078/d1mw2k", "https://doi.org/10.6078/d1mw2k"),
    ("b5060", "ark:/b5060/d8bc75", "https://doi.org/10.5060/d8bc75"),
    ("b7272", "ark:/b7272/q6ms3qnx", "https://doi.org/10.7272/q6ms3qnx"),
    ("b7291", "ark:/b7291/d1wc74", "https://doi.org/10.7291/d1wc74"),
]


def test_the_table_lists_every_test_identifier() -> None:
    listed = {(what, ident) for what, ident, _ in TEST_IDENTIFIERS}
    assert {(r.what, r.test_identifier) for r in registry.default() if r.test_identifier} == listed


@pytest.mark.parametrize(("what", "ident", "url"), TEST_IDENTIFIERS, ids=[t[0] for t in TEST_IDENTIFIERS])
def test_every_test_identifier_resolves_to_its_template(client: TestClient, what: str, ident: str,
                                                       url: str) -> None:
    for c in _both(client):
        assert _location(c, "/" + ident) == (302, url)


# --- every shoulder beats its NAAN ------------------------------------------------------------------

def _fill(template: str, naan: str, value: str, suffix: str) -> str:
    """The docs' rule, written out here: ${pid} ark:NAAN/value, ${content} NAAN/value, ${value}, ${suffix}."""
    return string.Template(template).substitute(
        pid=f"ark:{naan}/{value}", content=f"{naan}/{value}", value=value, suffix=suffix)


def test_every_shoulder_beats_its_naan(empty: TestClient) -> None:
    shoulders = [r for r in registry.default() if r.is_shoulder]
    assert len(shoulders) == 368
    beaten = 0
    for c in _both(empty):
        for r in shoulders:
            source = r.to_json()  # the record as the registry has it
            naan, shoulder = source["naan"], source["shoulder"]
            value = f"{shoulder}zz9"
            expected = _fill(source["target"]["url"], naan, value, "zz9")
            assert _location(c, f"/ark:{naan}/{value}") == (source["target"]["http_code"], expected), r.what
            naan_record = registry.default().naan(naan)
            if naan_record is not None and _fill(naan_record.target.url, naan, value, value) != expected:
                beaten += 1
    assert beaten > 0  # some shoulders send their ARKs elsewhere than their NAAN would


# --- each template variable, the HTTP code ------------------------------------------------------------

TEMPLATES = [
    # ${content}: 12148 http://ark.bnf.fr/ark:/${content}
    ("content", "/ark:/12148/btv1b8449691v/f29", 302, "http://ark.bnf.fr/ark:/12148/btv1b8449691v/f29"),
    ("content-hyphens-removed", "/ark:/12148/btv1b-8449691v", 302, "http://ark.bnf.fr/ark:/12148/btv1b8449691v"),
    # ${value}: b6071 https://doi.org/10.6071/${value}
    ("value", "/ark:b6071/m3z07d", 302, "https://doi.org/10.6071/m3z07d"),
    # ${pid}: 63274 https://zentralgut.ch/resolver?field=MD_PI_ARK&identifier=${pid}
    ("pid", "/ark:/63274/zgch1abc", 302, "https://zentralgut.ch/resolver?field=MD_PI_ARK&identifier=ark:63274/zgch1abc"),
    # ${suffix}: shoulder 19156/tkt42 https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunner${suffix}
    ("suffix", "/ark:19156/tkt42abc", 302,
     "https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunnerabc"),
    # http_code 303: shoulder 99166/w6
    ("http-303", "/ark:99166/w6zz1", 303, None),
    # the NAAN record when no shoulder matches: 19156
    ("naan-record", "/ark:19156/xyz", 302, None),
]


@pytest.mark.parametrize(("path", "status", "location"), [t[1:] for t in TEMPLATES],
                         ids=[t[0] for t in TEMPLATES])
def test_template_variables(client: TestClient, path: str, status: int, location: str | None) -> None:
    for c in _both(client):
        got = _location(c, path)
        assert got[0] == status
        if location is not None:
            assert got[1] == location
        else:
            assert got[1] is not None and got[1].startswith("http")


def test_http_303_and_naan_record_targets() -> None:
    """The two rows above whose URL comes from records not quoted there: 99166/w6 and NAAN 19156."""
    w6 = registry.default().shoulder("99166", "w6")
    assert w6 is not None and w6.target.http_code == 303
    with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as c:
        assert _location(c, "/ark:99166/w6zz1") == (303, _fill(w6.target.url, "99166", "w6zz1", "zz1"))
        n19156 = registry.default().naan("19156")
        assert n19156 is not None
        assert _location(c, "/ark:19156/xyz")[1] == _fill(n19156.target.url, "19156", "xyz", "xyz")


def test_registry_targets_obey_the_redirect_safety_rules(client: TestClient) -> None:
    for c in _both(client):
        # dot segments that would climb out of http://ark.bnf.fr/ark:/ are refused, not redirected
        r = c.get("/ark:12148/%2e%2e/%2e%2e/%2e%2e/x")
        assert r.status_code == 404, r.headers.get("location")
        assert "would leave the registered target" in r.text
        # ones that stay under it are fine
        assert _location(c, "/ark:12148/%2e%2e/x")[0] == 302


def test_a_registry_target_without_a_host_is_refused(client: TestClient) -> None:
    """Two 2024 records have the template ``https:///host/ark:/${content}`` (83025, 15050): no host."""
    rec = registry.default().naan("83025")
    assert rec is not None and rec.target.url == "https:///nuigalway.ie/ark:/${content}"
    for c in _both(client):
        r = c.get("/ark:83025/x1", headers={"accept": "application/json"})
        assert r.status_code == 404 and "location" not in r.headers
        assert "the registry's target is not usable" in r.json()["error"]["message"]


# --- resolution order: a binding, then a served NAAN, then the registry, then N2T ---------------------

def test_local_binding_and_served_naan_win_over_the_registry(client: TestClient) -> None:
    shoulder = registry.default().shoulder("99999", "fk4")
    assert shoulder is not None  # 99999/fk4 is registered, and served by the seeded store
    for c in _both(client):
        assert _location(c, "/ark:99999/fk4x1") == (302, "https://example.org/x1")  # the binding
        assert c.get("/ark:99999/fk4nope").status_code == 404  # a NAAN served here: its own 404
        assert c.get("/ark:99999/fk4gone").status_code == 410
        assert _location(c, "/ark:99999/fk4nope")[1] is None


def test_unregistered_naan_goes_to_n2t(client: TestClient) -> None:
    for c in _both(client):
        assert _location(c, "/ark:00000/x") == (302, "https://n2t.net/ark:00000/x")


# --- offline ----------------------------------------------------------------------------------------

@pytest.fixture
def offline(seeded: object) -> Iterator[TestClient]:
    from _webutil import Seeded

    assert isinstance(seeded, Seeded)
    app = create_app(seeded.store, settings=Settings(offline=True))
    with TestClient(app, follow_redirects=False) as c:
        yield c


def test_offline_answers_404_with_the_registrys_word(offline: TestClient) -> None:
    for c in _both(offline):
        r = c.get("/ark:00000/x", headers={"accept": "application/json"})
        assert r.status_code == 404
        assert "location" not in r.headers
        assert "NAAN 00000: not in the public NAAN registry" in r.json()["error"]["message"]
        # the registry still resolves what it knows, the store what it holds
        assert _location(c, "/ark:b6071/m3z07d") == (302, "https://doi.org/10.6071/m3z07d")
        assert _location(c, "/ark:99999/fk4x1") == (302, "https://example.org/x1")
        assert c.get("/ark:00000?info").status_code == 404
        assert c.get("/ark:00000/x?info").status_code == 404


def test_offline_from_the_environment() -> None:
    assert Settings.from_env({"PIDKIT_OFFLINE": "1"}).forward_to is None
    assert Settings.from_env({}).forward_to == "https://n2t.net/"
    assert Settings.from_env({"PIDKIT_REGISTRY_CHECK": "30"}).registry_check == 30.0


def test_serve_offline_flag_sets_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``pidkit serve --offline`` sets PIDKIT_OFFLINE for its workers (uvicorn itself is not started)."""
    import argparse
    import os

    import uvicorn

    from pidkit.cli import serve

    started: list[str] = []
    monkeypatch.setenv("PIDKIT_OFFLINE", "0")  # restored after the test, as is the next one
    monkeypatch.setenv("PIDKIT_DATABASE_URL", f"sqlite:///{tmp_path}/s.db")
    monkeypatch.setattr(uvicorn.Server, "run",
                        lambda self, sockets=None: started.append(os.environ["PIDKIT_OFFLINE"]))
    p = argparse.ArgumentParser()
    serve.register(p.add_subparsers())
    args = p.parse_args(["serve", "--offline", "--port", "0", "--db", f"sqlite:///{tmp_path}/s.db"])
    assert args.func(args) == 0
    assert started == ["1"]


def test_serve_refuses_an_unreadable_registry_in_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    broken = tmp_path / "naan.json"
    broken.write_text('{"data": [{"rtype": "PublicNAAN"}]}', encoding="utf-8")
    env = {**os.environ, "PIDKIT_REGISTRY": str(broken)}
    r = subprocess.run([sys.executable, "-m", "pidkit", "serve", "--port", "0", "--db",
                        f"sqlite:///{tmp_path}/s.db"], env=env, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 1
    assert r.stderr == (f"pidkit: error: the NAAN registry cannot be used: data[0]: what: missing in "
                        f"'{broken}'\n")


# --- ?info ------------------------------------------------------------------------------------------

def test_info_of_a_foreign_ark_anvl(client: TestClient) -> None:
    r = client.get("/ark:/12148/btv1b8449691v?info")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert r.headers["link"] == '</ark:12148/btv1b8449691v>; rel="describes"'
    lines = r.text.splitlines()
    assert lines[:5] == ["erc:", "who: National Library of France = Bibliothèque nationale de France (BNF)",
                         "what: NAAN 12148", "when: 2005-07-17", "where: http://ark.bnf.fr"]
    assert lines[5] == "erc-support:"
    assert "what: NR, OP, CC (organization type NP)" in lines
    assert "where: http://ark.bnf.fr/ark:/12148/bpt6k2102478.policy" in lines
    assert "target: http://ark.bnf.fr/ark:/12148/btv1b8449691v" in lines


@pytest.mark.parametrize("path", ["/ark:12148?info", "/ark:/12148?info", "/ark:/12148/?info", "/ARK:12148??"])
def test_info_of_a_bare_naan(client: TestClient, path: str) -> None:
    r = client.get(path, headers={"accept": "application/json"})
    assert r.status_code == 200
    d = r.json()
    assert (d["id"], d["kind"], d["target"]) == ("ark:12148", "naan", None)
    assert d["erc"] == {"who": "National Library of France = Bibliothèque nationale de France (BNF)",
                        "what": "NAAN 12148", "when": "2005-07-17", "where": "http://ark.bnf.fr"}
    assert d["erc-support"]["when"] == "2005"
    assert d["registry"]["record"]["who"]["acronym"] == "BNF"


def test_bare_naan_without_info_is_still_400(client: TestClient) -> None:
    assert client.get("/ark:12148").status_code == 400


def test_info_of_a_registered_shoulder(client: TestClient) -> None:
    d = client.get("/ark:19156/tkt42?info", headers={"accept": "application/json"}).json()
    assert d["registry"]["what"] == "19156/tkt42"
    assert d["erc"]["what"] == "shoulder 19156/tkt42"
    assert d["erc"]["who"] == "Participatory Image Archives (PIA)"
    assert d["kind"] == "ark"


def test_info_html_of_a_foreign_ark(client: TestClient) -> None:
    r = client.get("/ark:b6071/m3z07d?info", headers={"accept": "text/html"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert 'href="https://doi.org/10.6071/m3z07d"' in r.text
    assert 'href="/directory/b6071"' in r.text


def test_info_of_unregistered_goes_to_n2t(client: TestClient) -> None:
    assert _location(client, "/ark:00000/x?info") == (302, "https://n2t.net/ark:00000/x?info")
    assert _location(client, "/ark:00000?info") == (302, "https://n2t.net/ark:00000?info")


def test_info_of_a_served_naan_stays_local(client: TestClient) -> None:
    """99999 is served here: ?info of an unbound ARK under it is this resolver's 404, not the registry's."""
    assert client.get("/ark:99999/fk4nope?info").status_code == 404


# --- the directory ----------------------------------------------------------------------------------

SEARCHES = [("12148", "12148"), ("bnf", "12148"), ("National Library of Fr", "12148"),
            ("nationale de France", "12148"), ("b6071", "b6071")]


@pytest.mark.parametrize(("q", "naan"), SEARCHES)
def test_directory_search(client: TestClient, q: str, naan: str) -> None:
    r = client.get("/directory", params={"q": q})
    assert r.status_code == 200
    assert f'href="/directory/{naan}"' in r.text
    assert 'for="f-q"' in r.text  # a labelled search box


def test_directory_without_query_and_with_no_match(client: TestClient) -> None:
    r = client.get("/directory")
    assert r.status_code == 200 and "1432 NAANs and 368 shoulders" in r.text
    r = client.get("/directory", params={"q": "no such organization zzz"})
    assert "No NAAN or shoulder matches" in r.text


def test_naan_page_shows_record_and_shoulders(client: TestClient) -> None:
    r = client.get("/directory/99999")
    assert r.status_code == 200
    for shoulder in ("99999/fk4", "99999/fk3", "99999/fk8"):
        assert f'aria-label="shoulder {shoulder}"' in r.text
    assert "Shared NAAN for Temporary Testing and Development" in r.text
    assert "http://arks.org/ark:/${content}" in r.text
    assert client.get("/directory/00000").status_code == 404


def test_home_links_the_directory(client: TestClient) -> None:
    assert 'href="/directory"' in client.get("/").text


def _hostile_registry(path: Path) -> Path:
    bnf = registry.default().naan("12148")
    assert bnf is not None
    rec = bnf.to_json()
    rec["who"] = {"name": SCRIPT, "name_native": '"><img src=x onerror=alert(1)>', "acronym": "<b>A&B</b>"}
    rec["where"] = "javascript:alert(1)"
    rec["na_policy"]["policy"] = SCRIPT
    path.write_text(json.dumps({"metadata": {"updated": "2026-01-01"}, "data": [rec]}), encoding="utf-8")
    return path


def test_hostile_registry_text_never_becomes_markup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIDKIT_REGISTRY", str(_hostile_registry(tmp_path / "hostile.json")))
    with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as c:
        pages = [c.get("/directory", params={"q": "script"}).text, c.get("/directory/12148").text,
                 c.get("/ark:12148/x?info", headers={"accept": "text/html"}).text,
                 c.get("/ark:12148?info", headers={"accept": "text/html"}).text]
        for html in pages:
            assert SCRIPT not in html and "<img" not in html and "<b>A&B" not in html
            assert "&lt;script&gt;" in html
        assert "/directory/12148" in pages[0]


# --- the registry in memory, reloaded on change -------------------------------------------------------

def _name(holder: RegistryHolder) -> str:
    record = holder.get().naan("12148")
    assert record is not None
    return record.who.name


def test_registry_reloads_when_its_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _hostile_registry(tmp_path / "reg.json")
    monkeypatch.setenv("PIDKIT_REGISTRY", str(path))
    now = [0.0]
    holder = RegistryHolder(10.0, clock=lambda: now[0])
    assert len(holder.get()) == 1
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["data"][0]["who"]["name"] = "Renamed library, a longer name"
    path.write_text(json.dumps(doc), encoding="utf-8")
    now[0] = 9.0
    assert _name(holder) == SCRIPT  # not checked yet: no stat per request
    now[0] = 10.0
    assert _name(holder) == "Renamed library, a longer name"
    path.write_text("{broken", encoding="utf-8")
    now[0] = 25.0
    assert _name(holder) == "Renamed library, a longer name"  # kept


def test_app_reads_the_registry_in_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIDKIT_REGISTRY", str(_hostile_registry(tmp_path / "one.json")))
    with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as c:
        assert _location(c, "/ark:12148/x")[1] == "http://ark.bnf.fr/ark:/12148/x"
        assert _location(c, "/ark:13030/x") == (302, "https://n2t.net/ark:13030/x")  # not in that registry


def _until(check: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    """Wait until ``check()`` (a PostgreSQL notification arrives after its commit, within moments)."""
    import time

    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_foreign_arks_are_decided_without_reading_the_store(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ARK under a NAAN the store neither serves nor binds under is decided from memory: no binding
    read, no NAAN read while nothing changed (many NAANs, many requests: one read of the two sets).  A
    change from another connection (another process, another worker) is seen by the next request — a NAAN
    added, an ARK bound under a NAAN that had none — on SQLite at once, on PostgreSQL as soon as its
    notification arrives."""
    import asyncio

    from pidkit.store import postgres
    from pidkit.web.batch import LookupBatcher, in_thread
    from pidkit.web.lookups import StoreLookup
    from pidkit.web.resolver import decide
    from pidkit.web.stores import StoreHolder

    monkeypatch.setattr(postgres, "NAANS_RECHECK", 1e9)  # no periodic re-read inside this test
    with open_store(store_url) as store, open_store(store_url) as other:
        store.add_naan("99999")
        store.bind("ark:99999/fk4here", "https://example.org/here")
        _until(lambda: store.naans_token() is not None, "the store never listened")
        holder = StoreHolder(lambda: store, owned=False)
        lookup = StoreLookup(holder, LookupBatcher(in_thread(holder.get)))
        reads: list[str] = []
        for name in ("naan_names", "bound_naans", "resolve", "resolve_many"):
            original = getattr(store, name)

            def counting(*args: object, _name: str = name, _do: Callable[..., object] = original) -> object:
                reads.append(_name)
                return _do(*args)

            setattr(store, name, counting)

        reg = registry.default()

        def d(text: str, reg: registry.Registry | None = reg) -> tuple[int, str | None]:
            decision = asyncio.run(decide(text, lookup, fallback="https://n2t.net/", registry=reg))
            return decision.status, decision.location

        assert d("ark:99999/fk4here") == (302, "https://example.org/here")
        assert d("ark:99999/fk4nope")[0] == 404
        assert reads.count("naan_names") == reads.count("bound_naans") == 1
        assert {"resolve", "resolve_many"} & set(reads)  # the binding read (PostgreSQL: batched)
        reads.clear()
        foreign = [f"{n:05d}" for n in range(10000, 10300)]
        assert [d(f"ark:{n}/x", None)[1] for n in foreign] == [f"https://n2t.net/ark:{n}/x" for n in foreign]
        assert d("ark:12148/btv1b8449691v") == (302, "http://ark.bnf.fr/ark:/12148/btv1b8449691v")
        assert reads == []  # decided from memory: nothing read
        other.bind("ark:12148/btv1b8449691v", "https://example.org/mine", force=True)  # another connection
        _until(lambda: d("ark:12148/btv1b8449691v") == (302, "https://example.org/mine"), "bound, not seen")
        if store.backend == "sqlite":
            assert reads.count("bound_naans") == 1  # the very next request saw it
        other.add_naan("10001", "now served here")
        _until(lambda: d("ark:10001/x")[0] == 404, "served, not seen")
        assert d("ark:10002/x", None)[1] == "https://n2t.net/ark:10002/x"


def test_the_first_binding_under_a_served_naan_is_seen_before_its_notification(store_url: str) -> None:
    """A worker's sets of NAANs lag a change by the moment its notification takes (PostgreSQL); the
    first ARK bound under a NAAN the store serves must still resolve on the very next request (a red-team
    run saw 4 of 40 answer 404).  Here the notification never comes: the token is held still."""
    import asyncio

    from pidkit.web.batch import LookupBatcher, in_thread
    from pidkit.web.lookups import StoreLookup
    from pidkit.web.resolver import decide
    from pidkit.web.stores import StoreHolder

    with open_store(store_url) as store, open_store(store_url) as other:
        store.add_naan("99999")
        _until(lambda: store.naans_token() is not None, "the store never listened")
        frozen = store.naans_token()
        store.naans_token = lambda: frozen  # type: ignore[method-assign]
        holder = StoreHolder(lambda: store, owned=False)
        lookup = StoreLookup(holder, LookupBatcher(in_thread(holder.get)))

        def d(text: str) -> int:
            return asyncio.run(decide(text, lookup, fallback="https://n2t.net/", registry=None)).status

        assert d("ark:99999/fk4first") == 404  # the sets are read now: NAAN 99999 served, nothing bound
        other.bind("ark:99999/fk4first", "https://example.org/first")
        assert d("ark:99999/fk4first") == 302


def _another(store_url: str, request: pytest.FixtureRequest) -> str:
    """A second fresh store URL on the backend of ``store_url``."""
    if store_url.startswith("sqlite:"):
        return store_url.replace(".db", "-another.db")
    new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
    return new_postgres_url()


def test_bound_naans_follow_every_way_in(
    store_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The NAANs bound under (migration 7's trigger) grow with a bind, a forced bind, a tombstone of an
    ARK never bound, an import and a restore; other kinds of id add none; migration 7 fills the set of a
    store that already has bindings (tests/test_upgrade.py upgrades older stores)."""
    import io

    with open_store(store_url) as store:
        store.add_naan("99999")
        assert store.bound_naans() == frozenset()
        store.bind("ark:99999/fk4a", "https://example.org/a")
        store.bind_id("tid", "3jzfcijpj2z2a", "https://example.org/tid")
        store.bind("ark:/12345/x", "https://example.org/x", force=True)
        store.tombstone("ark:13030/gone", "withdrawn")
        store.import_jsonl([json.dumps({"text": "ark:b6071/m3z07d", "target": "https://example.org/b"})],
                           force=True)  # fmt: skip
        naans = frozenset({"99999", "12345", "13030", "b6071"})
        assert store.bound_naans() == naans
        dump = io.StringIO()
        store.dump(dump)
    for url in (f"sqlite:///{tmp_path / 'restored.db'}", _another(store_url, request)):
        with open_store(url) as copy:
            copy.restore(io.StringIO(dump.getvalue()))
            assert copy.bound_naans() == naans, url


def test_a_big_import_adds_its_naans_at_the_end(store_url: str) -> None:
    """A big import (SQLite's bulk mode: migration 7's trigger dropped, the NAANs of the new rows added by
    one statement at the end, from the same expression of the key: checked against the trigger's text)
    leaves the set as a binding at a time would; a refused one leaves it as it was."""
    from pidkit.store.sql import _IMPORT_CHUNK

    lines = [json.dumps({"text": f"ark:13030/b{i}", "target": f"https://example.org/{i}"})
             for i in range(_IMPORT_CHUNK + 5)]  # fmt: skip
    lines.append(json.dumps({"text": "ark:/B6071/m3z07d", "target": "https://example.org/b"}))
    with open_store(store_url) as store:
        store.add_naan("99999")
        store.bind("ark:99999/fk4a", "https://example.org/a")
        with pytest.raises(StoreError):
            store.import_jsonl([*lines, "{"], force=True)
        assert store.bound_naans() == frozenset({"99999"})
        store.import_jsonl(lines, force=True)
        assert store.bound_naans() == frozenset({"99999", "13030", "b6071"})
        if store.backend == "sqlite":
            import sqlite3

            from pidkit.store.sqlite import _KEY_NAAN, _NAAN_TRIGGER

            conn = sqlite3.connect(store.path)  # type: ignore[attr-defined]
            try:
                [(text,)] = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (_NAAN_TRIGGER,))
            finally:
                conn.close()
            assert _KEY_NAAN.format(key="new.key") in text


def test_postgres_listener_comes_back_and_own_writes_count(new_postgres_url: Callable[[], str]) -> None:
    """PostgreSQL: the store's own write changes its NAANs token at once; a listener whose connection the
    server ended reports no token (the resolver reads the store) until it listens again, and a change
    made meanwhile is seen then; close() stops it and no listener starts after."""
    url = new_postgres_url()
    with open_store(url) as store, open_store(url) as other:
        _until(lambda: store.naans_token() is not None, "the store never listened")
        first = store.naans_token()
        store.add_naan("99999")
        assert store.naans_token() != first  # its own write: before the notification comes back
        listener = store._listeners["pidkit_naans"]  # type: ignore[attr-defined]

        def heard() -> object:  # the listener's count (not the 30-second period beside it)
            token = store.naans_token()
            return None if token is None else token[0]  # type: ignore[index]

        heard_before = heard()
        with other._transaction(write=False) as cur:  # type: ignore[attr-defined]
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s",
                        (listener.backend_pid,))  # fmt: skip
        _until(lambda: heard() != heard_before, "the lost listener went unnoticed")
        other.bind("ark:12148/x", "https://example.org/x", force=True)
        _until(lambda: store.naans_token() is not None, "the listener never came back")
        assert "12148" in (store.bound_naans() or ())
        store.close()
        assert store.naans_token() is None and not store._listeners  # type: ignore[attr-defined]
