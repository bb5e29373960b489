"""Regression tests for the security/robustness review of the web service and the store: one test (or
a parametrized group) per finding, on both backends where the finding concerns the store.

Seeded data: see ``_webutil.seed`` (NAAN 99999 with shoulders fk4/b5, keys for 99999, 99999/b5 and
12346; ``ark:99999/fk4x1`` bound to ``https://example.org/x1``; an admin-bound XarkId and TID)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from _webutil import NAAN, TARGET, Seeded, auth
from pidkit.cli.main import main
from pidkit.cli.serve import redact
from pidkit.errors import StoreError
from pidkit.store import (
    Binding,
    Erc,
    Resolution,
    Store,
    UnsafeLocationError,
    open_store,
    parse_import_line,
    redact_url,
)
from pidkit.store.sql import SqlStore
from pidkit.web import Settings, create_app
from pidkit.web.app import StoreHolder, StoreUnavailableError

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

TID = "3jzfcijpj2z2a"  # bound by the seed, by an administrator (no owner)


def _import(client: TestClient, secret: str, *lines: str) -> Any:
    return client.post("/api/v1/import", content="\n".join(lines) + "\n", headers=auth(secret))


# --- 1. import scope is checked on what the store writes; non-ARK ids have an owner ----------------

@pytest.mark.parametrize(
    ("key_name", "line"),
    [
        ("other_key", '{"text":"ark:99999/fk4x1","target":"https://evil.example/"}'),
        ("other_key", '{"kind":"ark","text":"ark:/99999/fk4-x1","target":"https://evil.example/"}'),
        ("b5_key", '{"text":"ark:99999/fk4x1","target":"https://evil.example/"}'),
    ],
    ids=["no-kind-other-naan", "ark-kind-other-naan", "no-kind-other-shoulder"],
)
def test_import_scope_on_the_parsed_row(client: TestClient, seeded: Seeded, key_name: str, line: str) -> None:
    r = _import(client, getattr(seeded, key_name), line)
    assert r.status_code == 403
    assert "ark:99999/fk4x1" in r.json()["error"]["message"]
    b = seeded.store.get_binding("ark:99999/fk4x1")
    assert b is not None and b.target == TARGET


def test_import_without_kind_in_scope_is_accepted(client: TestClient, seeded: Seeded) -> None:
    r = _import(client, seeded.b5_key, '{"text":"ark:99999/b5x","target":"https://ok.example/"}')
    assert r.status_code == 200
    assert parse_import_line('{"text":"ark:99999/b5x","status":"reserved"}').shoulder == "b5"


def test_non_ark_binding_belongs_to_the_naan_that_created_it(client: TestClient, seeded: Seeded) -> None:
    mine = '{"kind":"gedcom-uid","text":"owned-1","target":"https://mine.example/"}'
    assert _import(client, seeded.key, mine).status_code == 200
    b = seeded.store.get_id("gedcom-uid", "owned-1")
    assert b is not None and b.naan == NAAN
    theirs = mine.replace("mine.example", "evil.example")
    other = seeded.store.create_api_key("12347", label="third")[1]
    for secret in (seeded.other_key, other):
        r = _import(client, secret, theirs)
        assert r.status_code == 403, r.text
    b = seeded.store.get_id("gedcom-uid", "owned-1")
    assert b is not None and b.target == "https://mine.example/"
    # the owner may update it
    assert _import(client, seeded.key, theirs.replace("evil", "new")).json()["updated"] == 1


def test_admin_bound_non_ark_cannot_be_taken_over(client: TestClient, seeded: Seeded) -> None:
    line = f'{{"kind":"tid","text":"{TID}","target":"https://evil.example/"}}'
    for secret in (seeded.key, seeded.other_key):
        assert _import(client, secret, line).status_code == 403
    b = seeded.store.get_id("tid", TID)
    assert b is not None and b.target == "https://example.org/tid"


def test_api_description_states_the_ownership_rule(client: TestClient) -> None:
    description = client.get("/openapi.json").json()["paths"]["/api/v1/import"]["post"]["description"]
    assert "owns" in description


# --- 2. passthrough never leaves the bound target ----------------------------------------------------

@pytest.mark.parametrize(
    ("target", "path", "expected"),
    [
        ("https://example.org", "/ark:99999/fk4p.@evil.com/x", "https://example.org/.@evil.com/x"),
        ("https://example.org", "/ark:99999/fk4p.evil.com", "https://example.org/.evil.com"),
        ("https://example.org:8080", "/ark:99999/fk4p.evil.com", "https://example.org:8080/.evil.com"),
        ("https://example.org/c", "/ark:99999/fk4p/x", "https://example.org/c/x"),
    ],
    ids=["userinfo", "host-extension", "port", "path"],
)
def test_passthrough_stays_on_the_target(
    client: TestClient, seeded: Seeded, target: str, path: str, expected: str
) -> None:
    seeded.store.bind("ark:99999/fk4p", target, passthrough=True, force=True)
    r = client.get(path)
    assert r.status_code == 302
    assert r.headers["location"] == expected
    assert urllib.parse.urlsplit(r.headers["location"]).hostname == "example.org"


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30))
def test_composed_location_keeps_scheme_host_port_and_path(suffix: str) -> None:
    for target in ("https://example.org", "https://example.org:8443/a", "http://example.org/a/?q=1"):
        b = Binding("ark", "ark:1/x", "ark:1/x", target, passthrough=True)
        try:
            location = Resolution(b, suffix).location
        except UnsafeLocationError:
            continue
        assert location is not None
        bound, got = urllib.parse.urlsplit(target), urllib.parse.urlsplit(location)
        assert (got.scheme, got.hostname, got.port) == (bound.scheme, bound.hostname, bound.port)
        assert got.path.startswith(bound.path)
        if suffix:
            assert got.path.startswith(bound.path or "/")


# --- 3. bad input is a 4xx, never a 500 ---------------------------------------------------------------

BAD_LINES = {
    "surrogate-erc": '{"text":"ark:99999/fk4s1","target":"https://e.org/","erc":{"who":"\\ud800"}}',
    "surrogate-target": '{"text":"ark:99999/fk4s2","target":"https://e.org/\\ud800"}',
    "surrogate-reason": '{"text":"ark:99999/fk4s5","status":"tombstoned","tombstone_reason":"\\udc00",'
                        '"tombstoned_at":"2024-01-01T00:00:00Z"}',
    "nul-erc": '{"text":"ark:99999/fk4s3","target":"https://e.org/","erc":{"who":"a\\u0000b"}}',
    "overflow-time": '{"text":"ark:99999/fk4s4","target":"https://e.org/","created":"9999-12-31T23:59:59-14:00"}',
    "deep-nesting": "[" * 100_000,
    "huge-integer": '{"text":"ark:99999/fk4z","target":"https://e.org/","x":' + "1" * 5000 + "}",
}


@pytest.mark.parametrize("line", list(BAD_LINES.values()), ids=list(BAD_LINES))
def test_bad_import_lines_are_422(seeded: Seeded, line: str) -> None:
    with TestClient(create_app(seeded.store, settings=Settings(max_body=1 << 20))) as client:
        r = _import(client, seeded.key, line)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["problems"][0]["line"] == 1


@pytest.mark.parametrize(
    "write",
    [
        lambda s: s.bind("ark:99999/fk4n", "https://e.org/", erc=Erc(who="a\x00b"), force=True),
        lambda s: s.bind("ark:99999/fk4n", "https://e.org/\ud800", force=True),
        lambda s: s.bind_id("gedcom-uid", "n1", "https://e.org/", support=Erc(what="\udfff")),
        lambda s: s.tombstone("ark:99999/fk4n", "because \ud800"),
    ],
    ids=["bind-nul", "bind-surrogate-target", "bind-id-surrogate", "tombstone-reason"],
)
def test_every_write_path_refuses_unstorable_text(seeded: Seeded, write: Callable[[Store], object]) -> None:
    with pytest.raises(StoreError, match="not allowed"):
        write(seeded.store)


def test_nul_in_id_lookup_is_400(client: TestClient) -> None:
    assert client.get("/id/%00").status_code == 400
    assert client.get("/id/a%00b?info").status_code == 400


def test_link_header_is_percent_encoded(client: TestClient, seeded: Seeded) -> None:
    lines = ['{"kind":"gedcom-uid","text":"€1","target":"https://e.org/"}',
             '{"kind":"gedcom-uid","text":"a b","target":"https://e.org/"}']
    assert _import(client, seeded.key, *lines).status_code == 200
    assert client.get("/id/€1?info").headers["link"] == '</id/%E2%82%AC1>; rel="describes"'
    assert client.get("/id/a b?info").headers["link"] == '</id/a%20b>; rel="describes"'
    assert client.get("/ark:99999/fk4a%2Fb?info").headers["link"] == '</ark:99999/fk4a%2Fb>; rel="describes"'


@pytest.mark.parametrize("name", ["surrogate-erc", "overflow-time", "deep-nesting"])
def test_cli_import_reports_bad_lines_without_traceback(store_url: str, name: str) -> None:
    with open_store(store_url) as store:
        store.add_naan(NAAN, "t", shoulders=["fk4"])
    r = subprocess.run([sys.executable, "-m", "pidkit", "import", "--db", store_url, "-"],
                       input=BAD_LINES[name] + "\n", capture_output=True, text=True, check=False)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "line 1" in r.stderr


# --- 4. a tombstoned / bound ARK is never minted (PostgreSQL: NAAN advisory lock) ------------------

def test_tombstone_waits_for_a_mint_batch_in_progress(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tombstone issued while a mint batch is between its "is it taken?" check and its insert must
    not commit before the batch does (else the batch mints the tombstoned id)."""
    from pidkit.store import keys

    with open_store(store_url) as store, open_store(store_url) as observer:
        store.add_naan(NAAN, "t", shoulders=["fk4"])
        m = store.create_minter("race", naan=NAAN, template="fk4.reedeedk", seed=1)
        nxt = f"ark:{NAAN}/" + keys.make_minter(m.template, m.naan, m.seed).mint_at(0)
        checking = threading.Event()
        seen: list[Binding | None] = []
        assert isinstance(store, SqlStore)
        cls = type(store)
        original = cls._taken

        def slow_taken(self: SqlStore, cur: Any, naan: str, ids: Sequence[str]) -> set[str]:
            taken = original(self, cur, naan, ids)
            checking.set()
            time.sleep(0.5)  # the window the tombstone would slip into without the lock
            seen.append(observer.get_binding(nxt))
            return taken

        monkeypatch.setattr(cls, "_taken", slow_taken)
        minted: list[str] = []
        worker = threading.Thread(target=lambda: minted.extend(store.mint("race", 1)))
        worker.start()
        assert checking.wait(10)
        store.tombstone(nxt, "withdrawn before minting")
        worker.join()
        assert seen == [None], "the tombstone committed inside the mint batch's check-then-insert window"
        b = store.get_binding(nxt)
        assert b is not None and b.is_tombstoned
        assert minted == [nxt]  # minted first, then withdrawn: the order the lock imposed


# --- 5. PostgreSQL down: short waits ----------------------------------------------------------------

@pytest.mark.postgres
def test_pool_wait_is_short_and_configurable(
    new_postgres_url: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg_pool

    from pidkit.store.postgres import DEFAULT_TIMEOUT, PostgresStore

    assert DEFAULT_TIMEOUT <= 5
    postgres_url = new_postgres_url()  # its own schema: never the shared database's public schema
    monkeypatch.setenv("PIDKIT_PG_TIMEOUT", "1")
    store = PostgresStore(postgres_url, max_size=1)
    try:
        with store._pool.connection(), pytest.raises(psycopg_pool.PoolTimeout):
            store.schema_version()  # the only connection is busy: give up after 1 s, not 30 s
    finally:
        store.close()
    monkeypatch.setenv("PIDKIT_PG_TIMEOUT", "soon")
    with pytest.raises(StoreError, match="PIDKIT_PG_TIMEOUT"):
        PostgresStore(postgres_url)


@pytest.mark.postgres
def test_unreachable_postgres_fails_to_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIDKIT_PG_TIMEOUT", "0.5")
    with pytest.raises(StoreError, match="cannot use PostgreSQL"):
        open_store("postgresql://postgres@127.0.0.1:1/test?connect_timeout=1")


# --- 6. cold start: requests wait for the store being opened ---------------------------------------

def test_requests_during_a_cold_start_wait_instead_of_503() -> None:
    def slow_opener() -> Store:
        time.sleep(0.3)
        store = open_store("sqlite:///:memory:")
        store.add_naan(NAAN, "t")
        store.bind("ark:99999/x", "https://e.org/")
        return store

    statuses: list[int] = []
    with TestClient(create_app(slow_opener), follow_redirects=False) as c:
        threads = [threading.Thread(target=lambda: statuses.append(c.get("/ark:99999/x").status_code))
                   for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert statuses == [302] * 6


def test_failed_open_is_not_retried_inside_the_back_off() -> None:
    calls: list[int] = []

    def failing() -> Store:
        calls.append(1)
        raise StoreError("down")

    holder = StoreHolder(failing, retry=60)
    for _ in range(3):
        with pytest.raises(StoreUnavailableError, match="down"):
            holder.get()
    assert calls == [1]


# --- 7. passwords are never printed -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:s3cret@h/db", "postgresql://u:***@h/db"),
        ("postgresql://h/db?password=s3cret", "postgresql://h/db?password=***"),
        ("postgresql://h/db?sslmode=require&passfile=/s3cret&x=1", "postgresql://h/db?sslmode=require&passfile=***&x=1"),
        ("postgresql://h/db?SSLPassword=s3cret", "postgresql://h/db?SSLPassword=***"),
    ],
    ids=["userinfo", "password", "passfile", "sslpassword"],
)
def test_redaction(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert redact(url) == expected


def test_store_url_errors_do_not_show_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StoreError) as info:
        open_store("postgresq://u:s3cret@h/db")
    assert "s3cret" not in str(info.value)
    assert main(["naan", "list", "--db", "postgresq://u:s3cret@h/db"]) == 1
    captured = capsys.readouterr()
    assert "s3cret" not in captured.err + captured.out


# --- 8. mint scope and negotiated error types ---------------------------------------------------------

def test_mint_scope_is_the_shoulder_of_the_minted_ids(client: TestClient, seeded: Seeded) -> None:
    seeded.store.create_minter("m-b", naan=NAAN, template="b.reedeedk", seed=3)
    b_key = seeded.store.create_api_key(NAAN, "b", label="b")[1]
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "b", "count": 1}, headers=auth(b_key))
    assert r.status_code == 403  # ids "b1…", "b2…" fall under shoulders b1, b2, … which this key cannot bind
    seeded.store.create_minter("m-b5", naan=NAAN, template="b5.reedeedk", seed=3)
    b5 = auth(seeded.b5_key)
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "b5", "count": 1}, headers=b5)
    assert r.status_code == 201
    ark = r.json()["arks"][0]
    put = client.put("/api/v1/bindings", json={"ark": ark, "target": "https://e.org/"}, headers=b5)
    assert put.status_code == 201


def test_info_errors_are_anvl_by_default(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4res?info")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/plain")
    assert r.text.startswith("error: 404 ")
    assert "\nmessage: " in r.text


@pytest.mark.parametrize("path", ["/ark:99999/fk4res?info", "/ark:99999/fk4nothere", "/id/nothing-here",
                                  "/ark:99999/fk4gone"])
def test_json_clients_get_json_errors(client: TestClient, path: str) -> None:
    r = client.get(path, headers={"accept": "application/json"})
    assert r.status_code in (404, 410)
    assert r.json()["error"]["status"] == r.status_code


def test_browsers_still_get_html_errors(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4nothere", headers={"accept": "text/html,*/*;q=0.8"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
