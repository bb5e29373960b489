"""The import graph of ``src/pidkit`` as the tests see it: every ``import`` statement at any depth (function
bodies included, as issue 12 counts them), resolved as Python resolves it — a name that is not a module
of its own (a class, the extension ``pidkit._speedups``) counts as its package."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


@cache
def modules() -> dict[str, Path]:
    """Dotted module name → its file, for every ``.py`` file of ``src/pidkit``."""
    out = {}
    for path in (SRC / "pidkit").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module → the pidkit modules it imports."""
    mods = modules()
    out: dict[str, frozenset[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name:
                    found.add(target)
        out[name] = frozenset(found)
    return out


def reaches(start: str, g: dict[str, frozenset[str]] | None = None) -> set[str]:
    """Every module ``start`` imports, directly or not (in ``g``, default :func:`graph`)."""
    g = graph() if g is None else g
    seen: set[str] = set()
    todo = list(g[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(g[m])
    return seen


def in_cycles(names: list[str] | None = None, g: dict[str, frozenset[str]] | None = None) -> list[str]:
    """The modules of ``names`` (default: all) that import themselves through others (in ``g``)."""
    g = graph() if g is None else g
    return sorted(m for m in (names if names is not None else g) if m in reaches(m, g))
