"""The resolver's floor, offered (issue 18): nginx with ``pidkit edge nginx``'s map vs ``pidkit serve``.

The data set, the load generator and the process handling are :mod:`benchmarks.bench_resolver`'s: 100,000
ARKs (NAAN 99999, ``fk4.reedeedk``) bound on SQLite, ``wrk`` (2 threads, 64 connections) asking for random
ARKs of the set, with and without keep-alive.  Two servers, each with 2 worker processes:

* **pidkit**: ``pidkit serve --workers 2`` alone;
* **edge**: nginx (``worker_processes 2``) with the files ``pidkit edge nginx`` writes, in front of the
  same ``pidkit serve`` — it answers the plain redirects itself and passes the rest on.

Rounds are interleaved (every configuration once per round) and the median round is reported with the
spread of all rounds; the load average is printed before and after.  Also reported: the time and peak RSS
of ``pidkit edge nginx`` itself.  Nothing but 127.0.0.1 is ever a target.

Run alone: ``.venv/bin/python -m benchmarks.bench_edge [--quick]`` (not part of ``benchmarks/run.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Final

from benchmarks import bench_resolver as br

EDGE: Final = br.DATA / "edge"


def _log(msg: str) -> None:
    print(f"  [edge] {msg}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="one round of 3 s per configuration")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 1)")
    args = parser.parse_args(argv)
    settings = br.QUICK if args.quick else br.FULL
    if args.rounds:
        settings = br.Settings(settings.warmup, settings.measure, args.rounds)
    try:
        nginx = br.nginx_binary()
        wrk = br.ensure_wrk()
        settings = br.Settings(settings.warmup, settings.measure, settings.rounds, wrk)
        bindings = br.make_bindings()
        paths_file, jsonl = br.write_data_files(bindings)
        paths = [b.path for b in bindings]
        db_url = f"sqlite:///{br.DATA / 'edge.sqlite3'}"
        _log(f"loading {len(bindings):,} bindings into {db_url}")
        br.load_pidkit(db_url, jsonl, len(bindings))
        app_port, edge_port = br.free_port(), br.free_port()
        seconds, rss, summary = br.write_edge_files(EDGE, db_url, app_port)
        _log(f"pidkit edge nginx: {seconds:.1f} s, peak RSS {rss / 1024:.0f} MiB — {summary}")
        runs: dict[tuple[str, bool], list[br.Load]] = {}
        with contextlib.ExitStack() as stack:
            stack.enter_context(br.server("pidkit-edge-upstream", br.pidkit_argv(app_port),
                                          br.pidkit_env(db_url), app_port, bindings[0]))
            conf = br.nginx_conf(EDGE, edge_port)
            stack.enter_context(br.server("nginx-edge", [nginx, "-c", conf, "-p", EDGE], dict(os.environ),
                                          edge_port, bindings[0]))
            for port in (app_port, edge_port):
                br.check_sample(port, bindings)
            configs = [(name, port, keepalive) for name, port in (("pidkit", app_port), ("edge", edge_port))
                       for keepalive in (True, False)]
            print(f"load average before: {br._loadavg()}")
            for _, port, keepalive in configs:
                br.measure(settings, port, paths_file, paths, keepalive, settings.warmup)
            for i in range(settings.rounds):
                for name, port, keepalive in configs:
                    load = br.measure(settings, port, paths_file, paths, keepalive, settings.measure)
                    runs.setdefault((name, keepalive), []).append(load)
                    _log(f"round {i + 1}: {name} keep-alive {'on' if keepalive else 'off'}: "
                         f"{load.rps:,.0f} req/s, p99 {br._ms(load.p99)} ms, errors {load.errors}")
            print(f"load average after: {br._loadavg()}")
    except br.SkipError as exc:
        print(f"edge benchmark not run: {exc}", file=sys.stderr)
        return 1
    print(f"\n{len(bindings):,} ARKs, wrk {'yes' if wrk else 'no (Python client)'}, "
          f"{settings.rounds} round(s) of {settings.measure:g} s\n")
    print("| keep-alive | pidkit req/s (spread) | p99 ms | edge req/s (spread) | p99 ms | ratio |")
    print("|---|---|---|---|---|---|")
    for keepalive in (True, False):
        cells = []
        for name in ("pidkit", "edge"):
            loads = sorted(runs[(name, keepalive)], key=lambda ld: ld.rps)
            mid = loads[len(loads) // 2]
            cells.append((mid, f"{mid.rps:,.0f} ({loads[0].rps:,.0f}–{loads[-1].rps:,.0f})"))
        ratio = cells[1][0].rps / cells[0][0].rps if cells[0][0].rps else 0.0
        print(f"| {'on' if keepalive else 'off'} | {cells[0][1]} | {br._ms(cells[0][0].p99)} | "
              f"{cells[1][1]} | {br._ms(cells[1][0].p99)} | {ratio:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
