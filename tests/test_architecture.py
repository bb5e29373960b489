"""The house's shape (issue 12): ``docs/architecture.md`` names every module of ``src/pidkit`` and nothing
that is not there, and the import graph has no cycle anywhere, counting imports inside functions.  The
layering itself is checked by ``lint-imports`` (``make lint``; the contracts are in ``pyproject.toml``).
Two habits are guarded here too: instants are written as ISO 8601 UTC with ``Z`` only by
``pidkit.codecs.iso_z``, and hypothesis tests discard an input with ``assume``, never with ``return``."""

from __future__ import annotations

import ast
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


# -- ISO 8601 UTC with Z: one place (pidkit.codecs.iso_z) ----------------------------------------------
#: Hand-written "UTC with Z": isoformat().replace("+00:00", "Z"), isoformat(…)[…] + "Z", strftime("…Z"),
#: f"{t:%Y-%m-%dT%H:%M:%S}Z" / f"{t:…%SZ}".  (strptime formats read times; they are not matched.)
_HAND_WRITTEN_Z = re.compile(
    r"""replace\(\s*["']\+00:00["']"""
    r"""|isoformat\([^)]*\)\s*(?:\[[^\]]*\]\s*)?\+\s*f?["']Z"""
    r"""|strftime\([^)]*Z"""
    r"""|%S(?:\.%f)?(?:\}\s*Z|Z\})"""
)


def _hand_written_z(text: str) -> list[int]:
    return [text.count("\n", 0, m.start()) + 1 for m in _HAND_WRITTEN_Z.finditer(text)]


def test_utc_with_z_is_written_only_by_iso_z() -> None:
    root = SRC / "pidkit"
    found = [
        f"{p.relative_to(SRC)}:{line}"
        for p in sorted(root.rglob("*.py"))
        if p != root / "codecs.py"
        for line in _hand_written_z(p.read_text(encoding="utf-8"))
    ]
    assert found == [], "call pidkit.codecs.iso_z(when, timespec) instead"


def test_the_z_check_sees_each_spelling() -> None:
    spellings = [
        'b.updated.isoformat().replace("+00:00", "Z")',
        "ts.astimezone(UTC).replace(tzinfo=None).isoformat(timespec=spec) + 'Z'",
        'when.isoformat(timespec="seconds")[:-6] + "Z"',
        'when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")',
        'f"{when:%Y-%m-%dT%H:%M:%S}Z"',
        'f"{when:%Y-%m-%dT%H:%M:%S.%fZ}"',
    ]
    assert [_hand_written_z(s) for s in spellings] == [[1]] * len(spellings)
    assert _hand_written_z('_dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")') == []
    assert _hand_written_z("iso_z(when, 'seconds') + ' UTC'; d.isoformat()") == []


# -- hypothesis tests discard with assume, never with return --------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
#: ``return`` in a @given test that is its outcome (the input was refused, as allowed), not a filter —
#: in a file this change could not touch.  Written as try/except/else it would leave this list.
_OUTCOME_RETURNS = {"tests/test_gedcom_io.py::test_random_bytes_raise_only_pidkit_errors"}


def _is_given(decorator: ast.expr) -> bool:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(func, ast.Name) and func.id == "given") or (
        isinstance(func, ast.Attribute) and func.attr == "given")  # fmt: skip


def _returns(node: ast.AST) -> list[int]:
    """Line numbers of the ``return`` statements of ``node``'s own body (not of functions inside it)."""
    out = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(child, ast.Return):
            out.append(child.lineno)
        out += _returns(child)
    return out


def _given_with_return(source: str) -> dict[str, list[int]]:
    """Every function decorated with hypothesis' ``given`` (at any depth) whose body has a ``return``."""
    return {
        fn.name: _returns(fn)
        for fn in ast.walk(ast.parse(source))
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(_is_given(d) for d in fn.decorator_list)
        and _returns(fn)
    }


def test_hypothesis_tests_discard_with_assume() -> None:
    found = {
        f"{p.relative_to(ROOT)}::{name}": lines
        for p in sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "stress").rglob("*.py")])
        for name, lines in _given_with_return(p.read_text(encoding="utf-8")).items()
    }
    assert sorted(set(found) - _OUTCOME_RETURNS) == [], f"use hypothesis.assume, not return: {found}"
    assert sorted(_OUTCOME_RETURNS - set(found)) == [], "no return left there: take it off the list"


def test_the_return_check_sees_a_return() -> None:
    source = (
        "@hypothesis.given(st.text())\n"
        "def test_a(text):\n"
        "    def inner():\n"
        "        return 1\n"
        "    if not text:\n"
        "        return\n"
        "@given(st.text())\n"
        "@settings(max_examples=1)\n"
        "def test_b(text):\n"
        "    assume(text)\n"
        "@settings(max_examples=1)\n"
        "def helper():\n"
        "    return 1\n"
    )
    assert _given_with_return(source) == {"test_a": [6]}
