"""Versioned schema migrations: ``NNNN_name.sql`` files in this package, applied in order.

Each file is one migration, applied in one transaction and recorded in ``schema_version``; statements
are separated by ``;`` at the end of a line and ``--`` comments are dropped.  The SQL is portable
(SQLite and PostgreSQL run the same text).

>>> [m.version for m in load()][:1]
[1]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered migration: its version, name and SQL statements."""

    version: int
    name: str
    statements: tuple[str, ...]


def split_statements(sql: str) -> tuple[str, ...]:
    """Split a script into statements (``;`` ends a statement at the end of a line).

    >>> split_statements("-- c\\nCREATE TABLE a (x TEXT);\\nCREATE INDEX i ON a (x);\\n")
    ('CREATE TABLE a (x TEXT)', 'CREATE INDEX i ON a (x)')
    """
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    parts = re.split(r";[ \t]*(?:\n|$)", "\n".join(lines))
    return tuple(p.strip() for p in parts if p.strip())


def load() -> list[Migration]:
    """Every migration of this package, by version."""
    out: list[Migration] = []
    for entry in resources.files(__name__).iterdir():
        match = _NAME.fullmatch(entry.name)
        if match is None:
            continue
        out.append(Migration(int(match[1]), match[2], split_statements(entry.read_text(encoding="utf-8"))))
    out.sort(key=lambda m: m.version)
    return out
