"""Versioned schema migrations: ``NNNN_name.sql`` files in this package, applied in order.

Each file is one migration, recorded in ``schema_version``; the migrations a store lacks are applied
together in ONE transaction when it is opened (``pidkit migrate-store`` does it explicitly), so an old
store is upgraded in place completely or not at all.  Statements are separated by ``;`` at the end of a
line and ``--`` comments are dropped.  The SQL of ``NNNN_name.sql`` is portable (SQLite and PostgreSQL
run the same text); what cannot be (triggers) is in ``NNNN_name.<backend>.sql`` beside it, run after it
on that backend only.

>>> [m.version for m in load()][:3]
[1, 2, 3]
>>> LATEST == load()[-1].version
True
>>> len(load()[2].for_backend("sqlite")) > len(load()[2].statements)
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Final

_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
_BACKEND_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.([a-z]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered migration: its version, name, portable SQL statements and the statements only one
    backend runs (by backend name)."""

    version: int
    name: str
    statements: tuple[str, ...]
    by_backend: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def for_backend(self, backend: str) -> tuple[str, ...]:
        """The statements ``backend`` runs: the portable ones, then its own."""
        return self.statements + tuple(self.by_backend.get(backend, ()))


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
    portable: dict[int, tuple[str, tuple[str, ...]]] = {}
    extra: dict[int, dict[str, tuple[str, ...]]] = {}
    for entry in resources.files(__name__).iterdir():
        if match := _NAME.fullmatch(entry.name):
            portable[int(match[1])] = (match[2], split_statements(entry.read_text(encoding="utf-8")))
        elif match := _BACKEND_NAME.fullmatch(entry.name):
            statements = split_statements(entry.read_text(encoding="utf-8"))
            extra.setdefault(int(match[1]), {})[match[3]] = statements
    return [
        Migration(version, name, statements, extra.get(version, {}))
        for version, (name, statements) in sorted(portable.items())
    ]


#: The versions of the migrations shipped (read once: an open of a store that has them all compares).
VERSIONS: Final = frozenset(m.version for m in load())
#: The schema version this code writes: the highest migration shipped.
LATEST: Final = max(VERSIONS)
