"""The house's shape (issue 12): ``docs/architecture.md`` names every module of ``src/pidkit`` and nothing
that is not there, and the import graph has no cycle anywhere, counting imports inside functions.  The
layering itself is checked by ``lint-imports`` (``make lint``; the contracts are in ``pyproject.toml``)."""

from __future__ import annotations

import re
from pathlib import Path

from _importgraph import SRC, graph, in_cycles, modules

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
_ENTRY = re.compile(r"^- `(pidkit/[^`]+)` — \S", re.M)


def _documented() -> list[str]:
    return _ENTRY.findall(DOC.read_text(encoding="utf-8"))


def _in_tree() -> set[str]:
    root = SRC / "pidkit"
    files = set(root.rglob("*.py")) | set(root.glob("*.c"))
    return {str(p.relative_to(SRC)) for p in files}


def test_every_module_has_one_line() -> None:
    documented = _documented()
    assert len(documented) == len(set(documented)), "a module is described twice"
    assert sorted(_in_tree() - set(documented)) == [], "modules missing from docs/architecture.md"
    assert sorted(set(documented) - _in_tree()) == [], "docs/architecture.md names modules that are gone"


def test_the_check_sees_a_missing_line() -> None:
    documented = set(_documented())
    assert "pidkit/xarkid.py" in documented
    assert _in_tree() - (documented - {"pidkit/xarkid.py"}) == {"pidkit/xarkid.py"}


def test_no_import_cycle_anywhere() -> None:
    assert len(modules()) > 80
    assert in_cycles() == []


def test_the_cycle_check_sees_a_cycle() -> None:
    g = {"a": frozenset({"b"}), "b": frozenset({"a"}), "c": frozenset({"a"}), "d": frozenset()}
    assert in_cycles(g=g) == ["a", "b"]
    assert "pidkit.codecs" in graph()["pidkit.llid"]  # the real graph is read (a relative import)
