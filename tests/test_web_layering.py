"""The web layer's and the store interface's import graph (issue 12): no cycle, counting imports inside
functions; web and cli never import each other; nothing in the package imports the application module
but the package's entry; the web layer never asks which backend it has."""

from __future__ import annotations

from pathlib import Path

from _importgraph import graph, in_cycles
from _webutil import Seeded

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded

SRC = Path(__file__).parent.parent / "src"


OURS = ["pidkit.anvl", "pidkit.settings", "pidkit.store.base", "pidkit.store.records",
        "pidkit.store.redirects", "pidkit.store.demo"]


def test_no_cycle_through_the_web_layer_or_the_store_interface() -> None:
    checked = [m for m in graph() if m == "pidkit.web" or m.startswith("pidkit.web.")] + OURS
    assert len(checked) > 15
    assert in_cycles(checked) == []


def test_web_and_cli_never_import_each_other() -> None:
    for name, targets in graph().items():
        for layer, other in (("pidkit.web", "pidkit.cli"), ("pidkit.cli", "pidkit.web")):
            if name == layer or name.startswith(layer + "."):
                assert not [t for t in targets if t == other or t.startswith(other + ".")], name


def test_only_the_package_entry_imports_the_application() -> None:
    importers = sorted(m for m, targets in graph().items() if "pidkit.web.app" in targets)
    assert importers == ["pidkit.web"]


def test_the_web_layer_never_asks_which_backend_it_has() -> None:
    for path in (SRC / "pidkit" / "web").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in ("SqliteStore", "PostgresStore", "store.sqlite", "store.postgres", ".backend"):
            assert name not in text, (path.name, name)


def test_each_backend_says_where_its_lookups_run(seeded: Seeded) -> None:
    expected = {"sqlite": "inline", "postgresql": "batched"}[seeded.store.backend]
    assert seeded.store.lookup_mode == expected
