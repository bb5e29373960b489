"""How long ``pidkit COMMAND`` takes to start, two source trees alternated: this checkout and an older one.

Each command runs as ``python -m pidkit …`` (a new process, as a shell runs it) with ``PYTHONPATH`` naming
the tree, ``--rounds`` times, the two trees alternated command by command, bytecode compiled first.  The
commands do little work of their own (a TID, ``check`` of an empty SQLite store, ``gedcom audit`` of a
two-line file, ``--version``), so what they measure is Python's start, pidkit's imports and building
the parser.  Printed: a Markdown row per command with the median of each tree, the ratio and the ranges.

Run: ``git worktree add /tmp/old 1f9d8b8 && .venv/bin/python -m benchmarks.cli_start /tmp/old/src``
(the C helper, ``src/pidkit/_speedups*.so``, copied into the old tree if it should be in use there too).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"


def _commands(tmp: Path) -> dict[str, list[str]]:
    store = f"sqlite:///{tmp / 'store.db'}"
    env = dict(os.environ, PYTHONPATH=str(HERE))
    argv = [sys.executable, "-m", "pidkit", "naan", "add", "99999", "--db", store]
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    (tmp / "one.ged").write_text("0 HEAD\n0 TRLR\n", encoding="ascii")
    return {
        "new tid": ["new", "tid"],
        "check": ["check", "--db", store],
        "gedcom audit": ["gedcom", "audit", str(tmp / "one.ged")],
        "--version": ["--version"],
    }


def _run(tree: Path, argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pidkit", *argv], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path, help="the older tree's src directory")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    trees = {"old": args.old.resolve(), "new": HERE}
    for tree in trees.values():
        compileall.compile_dir(str(tree), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        commands = _commands(Path(tmp))
        times: dict[tuple[str, str], list[float]] = {(t, c): [] for t in trees for c in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                for label, tree in trees.items():
                    times[(label, name)].append(_run(tree, argv))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds")
    print("| command | before (median) | after (median) | ratio | range before / after |")
    print("|---|---|---|---|---|")
    for name in commands:
        old, new = times[("old", name)], times[("new", name)]
        ms = [statistics.median(old) * 1000, statistics.median(new) * 1000]
        spans = " / ".join(f"{min(t) * 1000:.0f}–{max(t) * 1000:.0f}" for t in (old, new))
        print(f"| `pidkit {name}` | {ms[0]:.0f} ms | {ms[1]:.0f} ms | {ms[1] / ms[0]:.2f} | {spans} ms |")


if __name__ == "__main__":
    main()
