"""Small timing harness shared by the benchmarks.

Every benchmark module ``benchmarks/bench_*.py`` defines ``run(quick: bool) -> list[Result]``; each
``Result`` times pidkit and its peer *in the same run* and states the goal as a maximum ratio
``pidkit_time / peer_time`` (``0.5`` = "at most half the peer's time", ``0.1`` = "at least 10x faster").
``benchmarks/run.py`` collects them, prints a table and writes ``docs/performance.md``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    """One pidkit-vs-peer measurement.

    ``pidkit_s`` and ``peer_s`` are seconds per ``unit`` (the best of several repeats); the goal holds
    when ``ratio <= max_ratio``.  For absolute goals (ids/s) set ``peer`` to ``"(goal)"`` and
    ``peer_s`` to the time the goal allows.
    """

    name: str
    pidkit: str
    pidkit_s: float
    peer: str
    peer_s: float
    max_ratio: float
    unit: str = "op"
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.pidkit_s / self.peer_s if self.peer_s else float("inf")

    @property
    def ok(self) -> bool:
        return self.ratio <= self.max_ratio


def per_call(fn: Callable[[], object], *, number: int, repeat: int = 5) -> float:
    """Best-of-``repeat`` seconds per call of ``fn`` over ``number`` calls (gc disabled while timing)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - t0
        finally:
            gc.enable()
        best = min(best, elapsed / number)
    return best


def once(fn: Callable[[], object], *, repeat: int = 3) -> float:
    """Best-of-``repeat`` seconds for one call of ``fn`` (for bulk operations)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
