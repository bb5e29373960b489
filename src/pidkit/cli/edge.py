"""``pidkit edge nginx DIR``: nginx answers the plain redirects, pidkit everything else (:mod:`pidkit.edge`).

Writes ``DIR/pidkit-edge-map.conf`` (for nginx's ``http {}`` block: every public ARK binding as a ``map``
of its canonical request paths to its ``Location``) and ``DIR/pidkit-edge-server.conf`` (for the
resolver's ``server {}`` block: redirect what the map holds, pass the rest to ``--upstream``), each
atomically.  ``--reload-command`` runs after each writing (e.g. ``nginx -s reload``); ``--watch`` keeps
polling the store and rewrites the files (and reloads) whenever the store changed.

>>> import tempfile
>>> from pidkit.cli.main import main
>>> from pidkit.store import open_store
>>> with tempfile.TemporaryDirectory() as d:
...     open_store(f"sqlite:///{d}/s.db").close()
...     main(["edge", "nginx", d, "--db", f"sqlite:///{d}/s.db"])  # doctest: +ELLIPSIS
wrote .../pidkit-edge-map.conf: 0 ARK bindings: 0 request paths mapped, 0 bindings and 0 case ...
0
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Final

from ..edge import MAP_FILE, UPSTREAM, EdgeReport, run_reload, watch, write_edge
from ..store import default_url, open_store, redact_url
from ._common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, CliError, Subparsers, add_db_option, error_line

#: Where ``pidkit serve`` listens by default.
DEFAULT_UPSTREAM = "http://127.0.0.1:8000"


def register(sub: Subparsers) -> None:
    """Add ``pidkit edge …`` to ``sub``."""
    parser = sub.add_parser(
        "edge",
        help="let a web server answer the plain redirects (nginx map files)",
        description="Write configuration for a web server in front of pidkit that answers plain ARK "
        "redirects itself, exactly as pidkit would, and passes every other request to pidkit.",
    )
    esub = parser.add_subparsers(dest="edge_command", metavar="SERVER", required=True)
    p = esub.add_parser(
        "nginx",
        help="write the nginx map of every public ARK and the server snippet",
        description="Write DIR/pidkit-edge-map.conf (include it in nginx's http {} block) and "
        "DIR/pidkit-edge-server.conf (include it in the resolver's server {} block), atomically. nginx "
        "then answers GET/HEAD of a public ARK's stored spelling (ark:NAAN/… or ark:/NAAN/…) with pidkit's "
        "302; every other request (?info, other spellings, passthrough, 404/410, other paths) goes to "
        "pidkit. See docs/recipes.md.",
    )
    p.add_argument("directory", metavar="DIR", help="directory to write the two files into (must exist)")
    add_db_option(p)
    p.add_argument("--upstream", default=DEFAULT_UPSTREAM, metavar="URL",
                   help=f"where pidkit serve listens, scheme://host:port without a path "
                   f"(default {DEFAULT_UPSTREAM})")
    p.add_argument("--reload-command", metavar="CMD",
                   help="run after each writing, e.g. 'nginx -s reload' (default: none)")
    p.add_argument("--compact-only", action="store_true",
                   help="map only the ark:NAAN/… spelling, not ark:/NAAN/… too (half of nginx's memory; "
                   "pidkit then answers the old spelling)")
    p.add_argument("--watch", action="store_true",
                   help="keep running: poll the store and rewrite (and reload) whenever it changed")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="seconds between two polls with --watch (default 2; 0.1 to 86400)")
    p.set_defaults(func=cmd_nginx)


#: The bounds of ``--interval`` (seconds): no busy loop, and a sleep the platform can take.
MIN_INTERVAL: Final = 0.1
MAX_INTERVAL: Final = 86_400.0


def cmd_nginx(args: argparse.Namespace) -> int:
    """``pidkit edge nginx``."""
    if UPSTREAM.fullmatch(args.upstream) is None:
        raise CliError(f"--upstream must be scheme://host[:port] without a path: {args.upstream!r}",
                       EXIT_USAGE)
    if not MIN_INTERVAL <= args.interval <= MAX_INTERVAL:  # (NaN too: it compares false)
        raise CliError(f"--interval must be {MIN_INTERVAL:g} to {MAX_INTERVAL:g} seconds: {args.interval}",
                       EXIT_USAGE)  # fmt: skip
    if args.reload_command is not None:
        try:
            if not shlex.split(args.reload_command):
                raise ValueError("empty")
        except ValueError as exc:
            raise CliError(f"--reload-command is not a command ({exc}): {args.reload_command!r}",
                           EXIT_USAGE) from None
    directory = Path(args.directory)
    if not directory.is_dir():
        raise CliError(f"not a directory: {args.directory!r}")
    url = args.db or default_url()
    target = directory / MAP_FILE

    def written(report: EdgeReport) -> None:
        sys.stdout.write(f"wrote {target}: {report.summary()}\n")
        sys.stdout.flush()

    failed = False

    def reload() -> None:
        nonlocal failed
        code = run_reload(args.reload_command)
        if code != 0:
            failed = True
            error_line(f"the reload command {args.reload_command!r} exited {code}")

    if args.watch:
        watch(url, lambda u: open_store(u, create=False), directory, upstream=args.upstream,
              interval=args.interval, reload=reload if args.reload_command else None, written=written,
              old_label=not args.compact_only)
        return EXIT_OK
    store = open_store(url, create=False)
    try:
        report = write_edge(store, directory, upstream=args.upstream, source=redact_url(url),
                            old_label=not args.compact_only)
    finally:
        store.close()
    written(report)
    if args.reload_command:
        reload()
    return EXIT_INVALID if failed else EXIT_OK
