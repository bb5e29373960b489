"""Shared fixtures: test data paths and the PostgreSQL URL.

Tests that need PostgreSQL use the ``postgres_url`` fixture. It reads ``PIDKIT_TEST_POSTGRES_URL``
(``.ci/run`` sets it); without it they are skipped with that reason, except under CI (``CI=true``),
where a missing URL is a failure, so that CI can never pass them by skipping.
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from _schema import schema_url

DATA = Path(__file__).parent / "data"
# The web tests both import _webutil and load it as a plugin (its fixtures): mark it for assertion
# rewriting before the first import, as pytest does for plugins.
pytest.register_assert_rewrite("_webutil")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: vectors, GEDCOM files, fixtures (their sources and licences: tests/data/README.md)."""
    return DATA


#: Argon2id at its smallest cost (one pass over 8 KiB, one lane): the hash and check of every password made
#: by the tests in this process, which sign in thousands of times.  Still Argon2id, through the same code;
#: a hash keeps its own cost, so one made with the defaults is checked at theirs.  The parameters a real
#: deployment hashes with are the library's own, checked with them by ``real_argon2`` (test_accounts.py);
#: the servers and commands the tests start as processes hash at those too.
CHEAP_ARGON2: Final[dict[str, Any]] = {"time_cost": 1, "memory_cost": 8, "parallelism": 1}


@pytest.fixture(scope="session", autouse=True)
def _cheap_argon2() -> Iterator[None]:
    from argon2 import PasswordHasher

    from pidkit.store import accounts

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(accounts, "_hasher", functools.partial(PasswordHasher, **CHEAP_ARGON2))
        yield


@pytest.fixture
def real_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hash passwords at the parameters a deployment uses (undoes ``_cheap_argon2`` for one test)."""
    from argon2 import PasswordHasher

    from pidkit.store import accounts

    monkeypatch.setattr(accounts, "_hasher", PasswordHasher)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL for tests (``PIDKIT_TEST_POSTGRES_URL``)."""
    url = os.environ.get("PIDKIT_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("PIDKIT_TEST_POSTGRES_URL is not set under CI: PostgreSQL tests must run")
        pytest.skip("PIDKIT_TEST_POSTGRES_URL not set (export it to run the PostgreSQL tests)")
    return url


@pytest.fixture
def icu_postgres_url(postgres_url: str) -> Iterator[str]:
    """The URL of a new PostgreSQL database whose collation is not code point order (ICU en-US: a < B <
    b, where code points give B < a < b), dropped after the test: where an order pidkit promises to be
    code point order on every backend is tested."""
    import urllib.parse

    import psycopg

    name = f"pidkit_test_icu_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' "
                      "LOCALE 'C.UTF-8'")
    try:
        url = urllib.parse.urlsplit(postgres_url)._replace(path=f"/{name}").geturl()
        with psycopg.connect(url) as conn:  # the premise: this database's own order is not code points
            assert conn.execute("SELECT 'B' < 'a', 'a' < 'B'").fetchone() == (False, True)
        yield url
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def new_postgres_url(postgres_url: str) -> Iterator[Callable[[], str]]:
    """A function giving URLs of fresh, empty PostgreSQL stores (each its own schema, dropped after)."""
    import psycopg

    made: list[str] = []

    def new_url() -> str:
        schema = f"pidkit_test_{secrets.token_hex(6)}"
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        made.append(schema)
        return schema_url(postgres_url, schema)

    yield new_url
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for schema in made:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def new_url(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A maker of new empty stores' URLs, on both backends: SQLite files under the test's ``tmp_path``,
    fresh PostgreSQL schemas (``new_postgres_url``)."""
    if request.param == "postgres":
        pg: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return pg
    count = iter(range(1000))
    return lambda: f"sqlite:///{tmp_path / f'store{next(count)}.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An empty store, in memory (SQLite) and in a fresh PostgreSQL schema: a test asking for it runs on
    both.  (A module that needs another store defines its own ``store``, which takes precedence.)"""
    from pidkit.store import open_store

    if request.param == "postgres":
        new_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        url = new_url()
    else:
        url = "sqlite:///:memory:"
    with open_store(url) as s:
        yield s
