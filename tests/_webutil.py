"""Fixtures shared by the web tests: a store on each backend (SQLite in tmp_path, PostgreSQL in a fresh
schema), seeded with known bindings and API keys, and a test client over the app."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from _schema import schema_url
from pidkit.store import Erc, Store, open_store
from pidkit.web import Settings, create_app

NAAN = "99999"
#: A NAAN with a letter, to check NAAN case folding (draft-kunze-ark-40 §3.2 step 4).
LETTER_NAAN = "b9999"
TARGET = "https://example.org/x1"
COLLECTION = "https://example.org/coll/"
SCRIPT = "<script>alert(1)</script>"


@dataclass
class Seeded:
    """The store and the secrets of its API keys."""

    store: Store
    key: str  # NAAN 99999, every shoulder
    b5_key: str  # NAAN 99999, shoulder b5 only
    other_key: str  # NAAN 12346


def seed(store: Store) -> Seeded:
    """Known data: see the module docstring of each test file for what it relies on."""
    store.add_naan(NAAN, "test", shoulders=["fk4", "b5"])
    store.add_naan(LETTER_NAAN, "letters", shoulders=["x1"])
    store.bind("ark:99999/fk4x1", TARGET, erc=Erc(who="Austin,\nLarry", what=f"Rhythm {SCRIPT}", when="1952"),
               support=Erc(who="UNT Libraries", what="Permanent: Stable Content:", when="20081203",
                           where="https://example.org/policy"))
    store.bind("ark:99999/fk4coll", COLLECTION, passthrough=True)
    store.bind("ark:99999/fk4gone", "https://example.org/gone")
    store.tombstone("ark:99999/fk4gone", f"withdrawn {SCRIPT}")
    store.bind("ark:99999/fk4res", None, status="reserved")
    store.bind("ark:99999/fk4a%2Fb", "https://example.org/pct")
    store.bind("ark:b9999/x1y", "https://example.org/letters")
    store.bind_id("xarkid", "AYvP5WgA-_-_ASNFZ4mr", "https://example.org/xarkid", erc=Erc(what="a XarkId"))
    store.bind_id("tid", "3jzfcijpj2z2a", "https://example.org/tid")
    # The fk4 minter (k template) comes after the hand-named fk4 ARKs: binding such a name under a
    # shoulder a check-character minter mints on needs force (issue 11).
    store.create_minter("m-fk4", naan=NAAN, template="fk4.reedeedk", seed=7)
    key = store.create_api_key(NAAN, label="all")[1]
    b5 = store.create_api_key(NAAN, "b5", label="b5")[1]
    other = store.create_api_key("12346", label="other")[1]
    return Seeded(store, key, b5, other)


def _postgres_url(request: pytest.FixtureRequest) -> Iterator[str]:
    import psycopg

    base: str = request.getfixturevalue("postgres_url")
    schema = f"web_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema_url(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


#: The backends a web test runs on (``request.param`` of :func:`new_store_url`).
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def new_store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh, empty store URL on the backend ``request.param`` names (dropped after)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('web')}/web.db"
    else:
        yield from _postgres_url(request)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh, empty store URL on each backend."""
    yield from new_store_url(request, tmp_path_factory)


@pytest.fixture
def seeded(store_url: str) -> Iterator[Seeded]:
    """A seeded store (closed after the test)."""
    with open_store(store_url) as store:
        yield seed(store)


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    """A test client over the app on the seeded store; redirects are not followed."""
    with TestClient(create_app(seeded.store, settings=Settings(max_body=4096)), follow_redirects=False) as c:
        yield c


def auth(secret: str) -> dict[str, str]:
    """The Authorization header for an API key."""
    return {"Authorization": f"Bearer {secret}"}


_TIME_LINE = re.compile(r"(created|updated): \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\n?")


def without_times(anvl: str) -> str:
    """``?info`` ANVL text without its closing ``created`` / ``updated`` lines (issue 13), after checking
    that both are there, in that order, as ISO 8601 UTC with ``Z``."""
    lines = anvl.splitlines(keepends=True)
    tail = lines[-2:]
    assert [line.split(":", 1)[0] for line in tail] == ["created", "updated"], anvl
    assert all(_TIME_LINE.fullmatch(line) for line in tail), tail
    return "".join(lines[:-2])
