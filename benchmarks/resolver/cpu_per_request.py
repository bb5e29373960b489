"""CPU time per request of ``pidkit serve`` under load: the server's workers and PostgreSQL's processes.

Requests/s on a shared 2-core machine move with everything else running on it; the CPU time the server
(and the database) spend per completed request moves far less, so it is the figure to compare variants
of the server with (``benchmarks/resolver/PROFILE.md``).  Needs the data of ``bench_resolver`` (run it
once: ``benchmarks/data/resolver/paths.txt`` and the ``pidkit_bench`` database) and ``wrk``.

Usage::

    .venv/bin/python -m benchmarks.resolver.cpu_per_request on|off SECONDS [NAME=VALUE ...]

``on``/``off``: HTTP keep-alive; ``NAME=VALUE``: environment for the server (e.g.
``PIDKIT_DATABASE_URL=sqlite:///…``; default the ``pidkit_bench`` PostgreSQL database).  Prints one line:
requests/s, p99, server µs/request, PostgreSQL µs/request, and on PostgreSQL the requests per statement
the server ran (transactions committed in its database — each read is one autocommit statement —
counted from before the warm-up to after the server stopped, when its backends have reported them; so
warm-up and start-up are included).  Only 127.0.0.1 is a target; the server is stopped at the end (its
process group).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATHS = ROOT / "benchmarks" / "data" / "resolver" / "paths.txt"
LUA = ROOT / "benchmarks" / "resolver" / "pick.lua"
PORT = "18771"
DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/pidkit_bench"


def cpu_seconds(pids: list[str]) -> float:
    """utime + stime of the processes (those that are gone count 0)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def commits(url: str) -> int | None:
    """Transactions committed so far in the PostgreSQL database of ``url`` (``None``: not PostgreSQL)."""
    if not url.startswith("postgresql"):
        return None
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        return int(row.fetchone()[0])  # type: ignore[index]


def pgrep(*args: str) -> list[str]:
    return subprocess.run(["pgrep", *args], capture_output=True, text=True, check=False).stdout.split()


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("on", "off"):
        print(__doc__, file=sys.stderr)
        return 2
    keepalive, seconds = argv[0] == "on", int(argv[1])
    env = {**os.environ, "PIDKIT_DATABASE_URL": DEFAULT_DB, **dict(a.split("=", 1) for a in argv[2:])}
    server = subprocess.Popen(
        [ROOT / ".venv" / "bin" / "pidkit", "serve", "--workers", "2", "--log-level", "warning",
         "--host", "127.0.0.1", "--port", PORT],
        env=env, stdout=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    url = env["PIDKIT_DATABASE_URL"]
    try:
        time.sleep(4)
        wrk = ["wrk", "-t2", "-c64", "-s", str(LUA), *([] if keepalive else ["-H", "Connection: close"])]
        target = [f"http://127.0.0.1:{PORT}", "--", str(PATHS)]
        first = commits(url)
        warm = subprocess.run([*wrk, "-d2s", *target], capture_output=True, text=True, check=True)
        workers, postgres = pgrep("-s", str(server.pid)), pgrep("-u", "postgres")
        before = cpu_seconds(workers), cpu_seconds(postgres)
        out = subprocess.run([*wrk, f"-d{seconds}s", *target], capture_output=True, text=True, check=True)
        after = cpu_seconds(workers), cpu_seconds(postgres)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(10)
    result, warmup = _result(out.stdout), _result(warm.stdout)
    n = result["requests"]
    per_read = ""
    last = commits(url)
    if first is not None and last is not None and last > first:
        per_read = f"  {(n + warmup['requests']) / (last - first):.1f} requests/statement"
    print(
        f"keep-alive {argv[0]:3s} {n / (result['duration_us'] / 1e6):8,.0f} req/s  "
        f"p99 {result['p99_us'] / 1000:5.1f} ms  server {1e6 * (after[0] - before[0]) / n:6.1f} µs/req  "
        f"postgres {1e6 * (after[1] - before[1]) / n:6.1f} µs/req{per_read}  {' '.join(argv[2:])}"
    )
    return 0


def _result(stdout: str) -> dict[str, int]:
    """pick.lua's RESULT line of a wrk run."""
    data: dict[str, int] = json.loads(next(ln for ln in stdout.splitlines() if ln.startswith("RESULT "))[7:])
    return data


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
