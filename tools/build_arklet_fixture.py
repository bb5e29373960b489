"""Build an arklet database with arklet's own code: its migrations make the schema, its models and
minting function make the data.  Generated fixture: ``tests/data/importers/arklet/arklet.sqlite3``.

Runs under a Python that has arklet 0.2.3 (and Django) installed — never pidkit's own virtualenv::

    python3 -m venv /tmp/arklet-venv
    /tmp/arklet-venv/bin/pip install arklet==0.2.3 'psycopg[binary]'
    cd tests/data/importers/arklet && /tmp/arklet-venv/bin/python ../../../../tools/build_arklet_fixture.py \
        sqlite arklet.sqlite3
    /tmp/arklet-venv/bin/python tools/build_arklet_fixture.py postgres postgresql://postgres@127.0.0.1:5432/test?options=-csearch_path%3Dmyschema

What it writes (the tests rely on it): NAAN 99999 "Test NAAN"; shoulders ``/c1`` and ``/t2``; on
``/c1`` five ARKs minted by ``Ark.objects.mint`` (8 random betanumeric characters and a check
character: one without a URL, one with metadata over two lines and non-ASCII text) and two by the
``mintarks`` management command (20 characters, no check character, no URL); on ``/t2`` — a
shoulder whose whole space (one betanumeric character and the check character: 29 ids) a test can
mint — ARKs made with arklet's ``Ark`` model and its ``noid_check_digit`` for the names ``t2`` + 0, 5,
b, k, z.  NAAN 12345 "Second NAAN" with shoulder ``/x9`` and one ARK.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

#: The names on the small /t2 shoulder (one betanumeric digit each, then arklet's check digit).
T2_NAMES = ("0", "5", "b", "k", "z")


def _database(kind: str, where: str) -> dict[str, Any]:
    if kind == "sqlite":
        path = Path(where).resolve()
        if path.exists():
            path.unlink()
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}
    url = urllib.parse.urlsplit(where)
    query = urllib.parse.parse_qs(url.query)
    options = {"options": query["options"][0]} if "options" in query else {}
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": url.path.lstrip("/"),
        "HOST": url.hostname or "127.0.0.1",
        "PORT": str(url.port or 5432),
        "USER": url.username or "postgres",
        "PASSWORD": urllib.parse.unquote(url.password or ""),
        "OPTIONS": options,
    }


def build(kind: str, where: str) -> None:
    """Create the schema with arklet's migrations and the data with arklet's models."""
    django: Any = importlib.import_module("django")
    settings: Any = importlib.import_module("django.conf").settings
    settings.configure(
        INSTALLED_APPS=[
            "django.contrib.admin",
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "django.contrib.messages",
            "arklet.ark.apps.ArkConfig",
        ],
        AUTH_USER_MODEL="ark.User",
        DATABASES={"default": _database(kind, where)},
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
        SECRET_KEY="fixture",  # noqa: S106 - no secret: the fixture database is public test data
    )
    django.setup()
    call_command = importlib.import_module("django.core.management").call_command

    if kind == "sqlite":
        # arklet 0.2.3's migration 0003 is PostgreSQL SQL (ALTER COLUMN … SET DEFAULT ''), which SQLite
        # cannot run: the one step not run as arklet wrote it.  It only sets database-side defaults
        # that arklet's ORM never relies on (every row it writes names those columns), so it is marked
        # applied and every other migration runs as arklet ships it.
        call_command("migrate", "ark", "0002", verbosity=0)
        call_command("migrate", "ark", "0003", fake=True, verbosity=0)
    call_command("migrate", verbosity=0)

    models: Any = importlib.import_module("arklet.ark.models")
    Ark, Naan, Shoulder = models.Ark, models.Naan, models.Shoulder  # noqa: N806 - arklet's class names
    noid_check_digit = importlib.import_module("arklet.ark.utils").noid_check_digit

    naan = Naan.objects.create(
        naan=99999, name="Test NAAN", description="for tests", url="https://example.org"
    )
    Shoulder.objects.create(shoulder="/c1", naan=naan, name="Collection one", description="")
    Shoulder.objects.create(shoulder="/t2", naan=naan, name="Tiny shoulder", description="29 ids")
    minted = [
        ("https://example.org/c1/one", "Title: one", "Kept for ever"),
        ("https://example.org/c1/two?x=1&y=2", "who: Doe, Jane\nwhat: Two lines", ""),
        ("", "reserved, no URL yet", ""),
        ("https://example.org/c1/four", "Café ✓ Grüße", "Stable content"),
        ("http://example.org/c1/five", "", ""),
    ]
    for url, metadata, commitment in minted:
        ark, _collisions = Ark.objects.mint(naan, "/c1", url, metadata, commitment)
        if ark is None:
            raise SystemExit("arklet gave up minting")
    call_command("mintarks", 2, 99999, "/c1", verbosity=0)
    for name in T2_NAMES:
        base = f"99999/t2{name}"
        check = noid_check_digit(base)
        Ark.objects.create(
            ark=f"{base}{check}", naan=naan, shoulder="/t2", assigned_name=f"{name}{check}",
            url=f"https://example.org/t2/{name}", metadata=f"t2 {name}", commitment="",
        )  # fmt: skip
    second = Naan.objects.create(naan=12345, name="Second NAAN", description="", url="https://example.net")
    Shoulder.objects.create(shoulder="/x9", naan=second, name="x9", description="")
    ark, _collisions = Ark.objects.mint(second, "/x9", "https://example.net/a", "", "")
    if ark is None:
        raise SystemExit("arklet gave up minting")
    if kind == "sqlite":
        connection = importlib.import_module("django.db").connection
        with connection.cursor() as cur:
            cur.execute("VACUUM")


def dump_postgres(url: str, schema: str, out: Path) -> None:
    """Save arklet's three tables of ``schema`` (schema and rows, as arklet's migrations and models
    made them on PostgreSQL) as a SQL script that runs in any schema (``search_path``)."""
    plain = urllib.parse.urlunsplit(urllib.parse.urlsplit(url)._replace(query=""))
    tables = [f"--table={schema}.{t}" for t in ("ark_naan", "ark_shoulder", "ark_ark")]
    command = ["pg_dump", "--no-owner", "--no-privileges", "--inserts", *tables, plain]
    text = subprocess.run(command, check=True, capture_output=True, text=True).stdout  # noqa: S603
    keep = [
        line.replace(f"{schema}.", "")
        for line in text.splitlines()
        if "set_config('search_path'" not in line and not line.startswith(("\\restrict", "\\unrestrict"))
    ]
    out.write_text(
        "-- generated by tools/build_arklet_fixture.py (arklet 0.2.3 on PostgreSQL)\n"
        + "\n".join(keep)
        + "\n"
    )


def main(argv: list[str]) -> int:
    """``build_arklet_fixture.py sqlite FILE``, ``… postgres URL`` or ``… postgres-dump URL SCHEMA FILE``
    (a fresh schema of the database at URL gets arklet's tables; FILE keeps them as SQL)."""
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    if len(argv) == 2 and argv[0] in ("sqlite", "postgres"):
        build(argv[0], argv[1])
        return 0
    if len(argv) == 4 and argv[0] == "postgres-dump":
        url, schema, out = argv[1], argv[2], Path(argv[3])
        plain = urllib.parse.urlunsplit(urllib.parse.urlsplit(url)._replace(query=""))
        fresh = f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        subprocess.run(["psql", plain, "-qc", fresh], check=True)  # noqa: S603, S607 - Debian's psql
        sep = "&" if "?" in url else "?"
        build("postgres", f"{url}{sep}options=-csearch_path%3D{schema}")
        dump_postgres(url, schema, out)
        drop = f"DROP SCHEMA {schema} CASCADE"
        subprocess.run(["psql", plain, "-qc", drop], check=True)  # noqa: S603, S607 - Debian's psql
        return 0
    print(
        "usage: build_arklet_fixture.py sqlite FILE | postgres URL | postgres-dump URL SCHEMA FILE",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
