"""A bounded HTTP/1.1 load client: the fallback when ``wrk`` is not available.

It is much slower than ``wrk`` (pure Python, asyncio, one process sharing the machine's cores with the
servers), so its figures understate both servers; the benchmark says so in its notes when it is used.
Every run is bounded twice: by a request count and by a time limit.  Only loopback addresses are
accepted as targets.

>>> stats = LoadStats(requests=10, seconds=2.0, latencies=sorted([0.001] * 9 + [0.01]), errors={})
>>> stats.rps, round(stats.percentile(50) * 1e3, 3), round(stats.percentile(99) * 1e3, 3)
(5.0, 1.0, 10.0)
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["LoadStats", "run_load"]

_TIMEOUT = 10.0  # seconds for one request, as wrk's --timeout


@dataclass
class LoadStats:
    """What a load run measured: completed requests, elapsed seconds, sorted latencies (seconds) and
    error counts by kind (``connect``, ``read``, ``status`` — a response outside 2xx/3xx — ``timeout``).

    >>> LoadStats(requests=4, seconds=1.0, latencies=[0.1, 0.2, 0.3, 0.4], errors={"status": 1}).error_total
    1
    """

    requests: int
    seconds: float
    latencies: list[float]
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        """Completed requests per second."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    @property
    def error_total(self) -> int:
        """All errors, every kind."""
        return sum(self.errors.values())

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile latency in seconds (nearest rank), 0.0 when nothing completed."""
        if not self.latencies:
            return 0.0
        rank = max(1, min(len(self.latencies), round(p / 100 * len(self.latencies) + 0.5)))
        return self.latencies[rank - 1]


class _ProtocolError(Exception):
    """The server's response was not parseable HTTP/1.1."""


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Read one response; return its status code and whether the server will close the connection."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise _ProtocolError(lines[0])
    status = int(parts[1])
    length = 0
    chunked = False
    close = parts[0] == "HTTP/1.0"
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        value = value.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding" and "chunked" in value:
            chunked = True
        elif name == "connection":
            close = "close" in value
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status, close


class _Budget:
    """The shared request budget (asyncio is single-threaded: no lock needed)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


async def _worker(
    host: str,
    port: int,
    paths: Sequence[str],
    rng: random.Random,
    keepalive: bool,
    deadline: float,
    budget: _Budget,
    latencies: list[float],
    errors: dict[str, int],
) -> None:
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    extra = "" if keepalive else "Connection: close\r\n"
    try:
        while time.perf_counter() < deadline and budget.take():
            path = paths[rng.randrange(len(paths))]
            request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{extra}\r\n".encode("ascii")
            t0 = time.perf_counter()
            try:
                if writer is None:
                    try:
                        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), _TIMEOUT)
                    except OSError:
                        errors["connect"] = errors.get("connect", 0) + 1
                        await asyncio.sleep(0.01)
                        continue
                if reader is None or writer is None:  # unreachable: opened above; narrows the types
                    continue
                writer.write(request)
                status, close = await asyncio.wait_for(_read_response(reader), _TIMEOUT)
            except TimeoutError:
                errors["timeout"] = errors.get("timeout", 0) + 1
                close = True
                status = 0
            except (
                OSError,
                asyncio.IncompleteReadError,
                asyncio.LimitOverrunError,
                _ProtocolError,
                ValueError,
            ):
                errors["read"] = errors.get("read", 0) + 1
                close = True
                status = 0
            else:
                latencies.append(time.perf_counter() - t0)
                if not 200 <= status < 400:
                    errors["status"] = errors.get("status", 0) + 1
            if (close or not keepalive) and writer is not None:
                writer.close()
                writer = reader = None
    finally:
        if writer is not None:
            writer.close()


async def _run(
    host: str,
    port: int,
    paths: Sequence[str],
    connections: int,
    seconds: float,
    max_requests: int,
    keepalive: bool,
    seed: int,
) -> LoadStats:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    budget = _Budget(max_requests)
    start = time.perf_counter()
    deadline = start + seconds
    workers = [
        _worker(host, port, paths, random.Random(seed + i), keepalive, deadline, budget, latencies, errors)
        for i in range(connections)
    ]
    await asyncio.wait_for(asyncio.gather(*workers), seconds + 2 * _TIMEOUT)
    elapsed = time.perf_counter() - start
    latencies.sort()
    return LoadStats(requests=len(latencies), seconds=elapsed, latencies=latencies, errors=errors)


def run_load(
    host: str,
    port: int,
    paths: Sequence[str],
    *,
    connections: int = 64,
    seconds: float = 20.0,
    max_requests: int = 1_000_000,
    keepalive: bool = True,
    seed: int = 0,
) -> LoadStats:
    """GET random ``paths`` from ``host:port`` over ``connections`` concurrent connections for at most
    ``seconds`` and at most ``max_requests`` requests; ``keepalive=False`` sends ``Connection: close``
    and opens a new connection for every request.  ``host`` must be a loopback address.
    """
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"load target must be a loopback address, not {host!r}")
    if not paths:
        raise ValueError("no paths to request")
    return asyncio.run(_run(host, port, paths, connections, seconds, max_requests, keepalive, seed))
