"""The figures of ``make stress``: kept in ``stress/results.json`` (merged per item, so running one file
updates only its items) and rendered to ``docs/reliability.md``.

Run ``python -m stress._report`` to re-render the page from the stored results without running anything.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
RESULTS: Final = ROOT / "stress" / "results.json"
PAGE: Final = ROOT / "docs" / "reliability.md"

#: Section order and headings on the page.
SECTIONS: Final = {
    "fuzz": "Bad input: fuzzing every parser and route",
    "scaling": "Bad input: hostile sizes (time for 0.25 / 0.5 / 1 MB)",
    "concurrency": "Concurrency",
    "faults": "Faults: kill -9 and a database restart",
    "load": "Load: the resolver under 64 connections",
    "security": "Security",
}


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory + ``os.replace``).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "x.txt"
    ...     write_atomic(p, "hi")
    ...     p.read_text()
    'hi'
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Figures:
    """Rows recorded by the stress tests, one table row per (section, item).

    >>> f = Figures(short=False)
    >>> f.add("fuzz", "Tid.parse", {"examples": 10})
    >>> f.rows["fuzz"]["Tid.parse"]["examples"]
    10
    """

    def __init__(self, *, short: bool) -> None:
        self.short = short
        self.rows: dict[str, dict[str, dict[str, Any]]] = {}

    def add(self, section: str, item: str, values: dict[str, Any]) -> None:
        """Record ``values`` (column → value) for ``item`` in ``section``."""
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M")
        self.rows.setdefault(section, {})[item] = {**values, "run": stamp + (" short" if self.short else "")}

    def save(self) -> None:
        """Merge into stress/results.json and re-render docs/reliability.md."""
        if not self.rows:
            return
        stored = load()
        for section, items in self.rows.items():
            stored.setdefault(section, {}).update(items)
        write_atomic(RESULTS, json.dumps(stored, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        write_atomic(PAGE, render(stored))


def load() -> dict[str, dict[str, dict[str, Any]]]:
    """The stored results (empty if none)."""
    try:
        data: dict[str, dict[str, dict[str, Any]]] = json.loads(RESULTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def render(stored: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The Markdown page.

    >>> print(render({"fuzz": {"Tid.parse": {"examples": 5, "run": "x"}}}).splitlines()[-1])
    | Tid.parse | 5 | x |
    """
    out = [
        "# pidkit — reliability and security figures",
        "",
        "Written by `make stress` (the `stress/` suite; `STRESS_SHORT=1` for the CI-sized run). Every row",
        "is a test that can fail: the figures are what the last run of that item measured, on "
        f"{platform.system()} with {os.cpu_count()} CPUs (a shared 2-core development machine: other "
        "work ran at the same time, so times are upper bounds). Re-render with `python -m stress._report`.",
        "",
    ]
    for section in [*SECTIONS, *sorted(set(stored) - set(SECTIONS))]:
        items = stored.get(section)
        if not items:
            continue
        out += [f"## {SECTIONS.get(section, section)}", ""]
        columns: list[str] = []
        for values in items.values():
            columns += [c for c in values if c not in columns and c != "run"]
        columns.append("run")
        out.append("| item | " + " | ".join(columns) + " |")
        out.append("|---" * (len(columns) + 1) + "|")
        for item, values in items.items():
            out.append(f"| {_cell(item)} | " + " | ".join(_cell(values.get(c, "")) for c in columns) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    write_atomic(PAGE, render(load()))
