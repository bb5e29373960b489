"""Run every benchmark (``make bench``), print the table and write ``docs/performance.md``.

Usage: ``python benchmarks/run.py [--quick] [--only NAME ...] [--refresh] [--no-write]``.

``--only NAME ... --refresh`` re-measures some benchmarks and replaces only their rows in
``docs/performance.md`` (the others keep theirs; the header says which rows were re-measured when).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks._harness import Result  # noqa: E402
from benchmarks.bench_resolver import _loadavg  # noqa: E402

DOC = HERE.parent / "docs" / "performance.md"


def _modules(only: list[str]) -> list[str]:
    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if only:
        names = [n for n in names if any(o in n for o in only)]
    return names


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.0f} ns"


def _table(results: list[tuple[str, Result]]) -> str:
    rows = [
        "| benchmark | what | pidkit | peer | peer time | ratio | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for module, r in results:
        rows.append(
            f"| {module} | {r.name} | {_fmt(r.pidkit_s)}/{r.unit} | {r.peer} | {_fmt(r.peer_s)}/{r.unit} "
            f"| {r.ratio:.3f} | ≤ {r.max_ratio:g} | {'yes' if r.ok else '**no**'} |"
        )
        if r.note:
            rows[-1] += f" {r.note}"
    return "\n".join(rows)


def _write(body: str) -> None:
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(body)
    tmp.replace(DOC)
    print(f"wrote {DOC}")


def _refresh(results: list[tuple[str, Result]], only: list[str], *, quick: bool, load: str) -> None:
    """Replace the rows of the benchmarks in ``results`` in the table of ``docs/performance.md`` (each
    module's rows where its first row was, or at the end), keep every other row, and say in the header
    which rows were re-measured, when and by what command."""
    lines = DOC.read_text().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| benchmark |")) + 2
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("| "))
    fresh: dict[str, list[str]] = {}
    for row in _table(results).split("\n")[2:]:
        fresh.setdefault(row.split("|")[1].strip(), []).append(row)
    rows: list[str] = []
    for row in lines[start:end]:
        module = row.split("|")[1].strip()
        if module not in fresh:
            rows.append(row)
        elif fresh[module]:
            rows += fresh[module]
            fresh[module] = []
    rows += [row for left in fresh.values() for row in left]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    flags = ("--quick " if quick else "") + "--only " + " ".join(only) + " --refresh"
    note = (f"- re-measured on {now} (`make bench BENCH_ARGS='{flags}'`, load average {load}): "
            f"the rows of {', '.join(sorted({m for m, _ in results}))}")
    modules = {m for m, _ in results}
    head = [kept for line in lines[: start - 2] if (kept := _unnoted(line, modules)) is not None]
    at = next(i for i, line in enumerate(head) if line.startswith("- Python:")) + 1
    head.insert(at, note)
    body = "\n".join([*head, *lines[start - 2 : start], *rows]) + "\n"
    extra = HERE.parent / "docs" / "performance-notes.md"
    if extra.exists():
        body += "\n" + extra.read_text()
    _write(body)


def _unnoted(line: str, modules: set[str]) -> str | None:
    """A line of the header with ``modules`` taken out of its list if it is a "re-measured …: the rows
    of a, b" note (their rows are re-measured now); ``None`` when none of its modules is left.

    >>> _unnoted("- re-measured on D (`C`): the rows of dump, mint", {"dump"})
    '- re-measured on D (`C`): the rows of mint'
    >>> _unnoted("- re-measured on D (`C`): the rows of dump", {"dump", "gedcom"}) is None
    True
    >>> _unnoted("- re-measured on D (`C`): two rows of scale, by hand", {"scale"})  # not a list: kept
    '- re-measured on D (`C`): two rows of scale, by hand'
    """
    if not line.startswith("- re-measured") or ": the rows of " not in line:
        return line
    text, _, listed = line.rpartition(": the rows of ")
    left = [m for m in listed.split(", ") if m not in modules]
    return f"{text}: the rows of {', '.join(left)}" if left else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    parser.add_argument("--only", nargs="*", default=[], help="run the benchmarks whose name contains this")
    parser.add_argument("--refresh", action="store_true",
                        help="with --only: replace only these benchmarks' rows in docs/performance.md")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite docs/performance.md")
    args = parser.parse_args()
    results: list[tuple[str, Result]] = []
    load_before = _loadavg()
    print(f"load average before: {load_before}", flush=True)
    for name in _modules(args.only):
        module = importlib.import_module(f"benchmarks.{name}")
        if not hasattr(module, "run"):  # a benchmark of its own (e.g. bench_edge: nginx in front)
            print(f"== {name}: run it alone (python -m benchmarks.{name})", flush=True)
            continue
        print(f"== {name}", flush=True)
        for r in module.run(quick=args.quick):
            results.append((name.removeprefix("bench_"), r))
            print(
                f"  {r.name}: pidkit {_fmt(r.pidkit_s)} vs {r.peer} {_fmt(r.peer_s)} per {r.unit}"
                f" -> ratio {r.ratio:.3f} (goal <= {r.max_ratio:g}) {'OK' if r.ok else 'MISSED'}",
                flush=True,
            )
    table = _table(results)
    load_after = _loadavg()
    print(f"load average after: {load_after}", flush=True)
    load = f"{load_before} before, {load_after} after"
    if not args.no_write and args.only and args.refresh:
        _refresh(results, args.only, quick=args.quick, load=load)
    if not args.no_write and not args.only:
        cmd = "make bench" + (" BENCH_ARGS=--quick" if args.quick else "")
        DOC.parent.mkdir(exist_ok=True)
        body = (
            "# Performance\n\n"
            "Each row times pidkit and its peer in the same run (best of several repeats); the ratio is\n"
            "pidkit's time divided by the peer's, so lower is better, and the goal is a maximum ratio.\n\n"
            f"- command: `{cmd}`\n"
            f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}\n"
            f"- machine: {_cpu()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}\n"
            f"- Python: {platform.python_implementation()} {platform.python_version()}\n"
            f"- load average (1, 5, 15 min): {load}\n\n"
            f"{table}\n"
        )
        extra = HERE.parent / "docs" / "performance-notes.md"
        if extra.exists():
            body += "\n" + extra.read_text()
        _write(body)
    missed = [r for _, r in results if not r.ok]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
