"""``pidkit serve``: the resolver, REST API and web pages (uvicorn), on SQLite or PostgreSQL.

``--demo`` (what ``make demo`` runs) opens ``DATA_DIR/pidkit-demo.db`` (default ``demo-data/``), seeds
NAAN 99999 with shoulder fk4 and a few bindings (idempotent), prints a fresh API key once and the URL.
With ``$PIDKIT_DATABASE_URL`` / ``--db postgresql://…`` several instances (``--workers`` or separate
processes) serve one database.

>>> import argparse
>>> p = argparse.ArgumentParser(); register(p.add_subparsers())
>>> p.parse_args(["serve", "--demo", "--port", "0"]).port
0
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import uvicorn

from ._common import EXIT_OK, EXIT_USAGE, CliError, Subparsers, add_db_option

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
DEMO_DIR: Final = "demo-data"
DEMO_DB: Final = "pidkit-demo.db"
#: The application factory and the HTTP protocol, as import strings: uvicorn imports them in each worker
#: (the CLI never imports the web layer; both read the environment through :mod:`pidkit.settings`).
APP_FACTORY: Final = "pidkit.web.app:worker_app"
#: uvicorn's HTTP protocol with bounds on request headers (PIDKIT_MAX_HEADER, PIDKIT_HEADER_TIMEOUT).
HTTP_PROTOCOL: Final = "pidkit.web.protocol:GuardedProtocol"
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE: Final = 5


def register(sub: Subparsers) -> None:
    """Add ``serve`` to ``sub``."""
    p = sub.add_parser(
        "serve",
        help="run the ARK resolver, REST API and web pages",
        description="Serve the resolver (/ark:…, ?info, /id/…), the REST API (/api/v1, /openapi.json), "
        "EZID's API (/ezid), OAI-PMH (/oai) and the web pages from one store.",
    )
    add_db_option(p)
    # --demo never seeds $PIDKIT_DATABASE_URL by accident: only an explicit --db replaces the demo file
    # (without --demo, the environment still applies through Settings.from_env).
    p.set_defaults(db=None)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--demo", action="store_true",
                   help="seed demo data (NAAN 99999, shoulder fk4) in DATA_DIR/pidkit-demo.db, or in the "
                   "store of an explicit --db (never $PIDKIT_DATABASE_URL); if the port is taken, "
                   "use a free one")
    p.add_argument("--data-dir", metavar="DIR", help=f"where --demo keeps its database (default {DEMO_DIR}/)")
    p.add_argument("--max-body", type=int, metavar="BYTES", help="largest request body (default 8 MiB)")
    p.add_argument("--offline", action="store_true",
                   help="never forward ARKs to the fallback resolver (N2T): ARKs that neither the store nor "
                   "the public NAAN registry resolve get a 404 (sets PIDKIT_OFFLINE)")
    p.add_argument("--ezid-base", metavar="PATH",
                   help="the path EZID's API is served below (default /ezid; sets PIDKIT_EZID_BASE)")
    p.add_argument("--trusted-proxies", metavar="LIST",
                   help="IP addresses or networks (comma-separated, e.g. 172.16.0.0/12) of the reverse "
                   "proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: the client's address "
                   "for the sign-in limits, the scheme for cookies (default none; sets "
                   "PIDKIT_TRUSTED_PROXIES)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=cmd_serve)


def redact(url: str) -> str:
    """A store URL safe to print (:func:`pidkit.store.redact_url`: passwords replaced by ``***``).

    >>> redact("postgresql://u:secret@h:5432/db"), redact("sqlite:///x.db")
    ('postgresql://u:***@h:5432/db', 'sqlite:///x.db')
    >>> redact("postgresql://h/db?password=secret")
    'postgresql://h/db?password=***'
    """
    from ..store import redact_url

    return redact_url(url)


def _bind(host: str, port: int, *, fallback: bool) -> socket.socket:
    """Listen on host:port; if the port is taken, pick a free one (``fallback``) or fail clearly."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            sock.close()
            raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        if not fallback:
            sock.close()
            raise CliError(f"port {port} on {host} is already in use; choose another with --port") from None
        sock.bind((host, 0))
        print(f"pidkit serve: port {port} is in use; using port {sock.getsockname()[1]} instead",
              file=sys.stderr, flush=True)
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


#: What ``pidkit serve`` needs beyond pidkit itself: the ``server`` extra.
SERVER_MODULES: Final = ("uvicorn", "fastapi")
MAX_PORT: Final = 65535


def _require_server_extra() -> None:
    """Import what the server needs, or say which install fixes it (one line, no traceback)."""
    import importlib

    for name in SERVER_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise CliError(f"pidkit serve needs the server extra ({exc.name or name} is missing): "
                           "pip install 'pidkit[server]'") from None


def _check_registry() -> None:
    """Read the NAAN registry in force once, so that an unreadable one fails here, in one line, not in
    every worker (each worker then loads it at start, :mod:`pidkit.web.lookups`)."""
    from ..registry import RegistryError, default

    try:
        default()
    except RegistryError as exc:
        raise CliError(f"the NAAN registry cannot be used: {exc}") from None


#: ``--log-level`` values at which uvicorn writes its access log (a line per request).
ACCESS_LOG_LEVELS: Final = frozenset({"info", "debug"})


def uvicorn_config(
    *, workers: int, log_level: str, host: str, port: int, max_header: int,
    trusted_proxies: Sequence[str] = (),
) -> uvicorn.Config:
    """The ``uvicorn.Config`` of ``pidkit serve``: :data:`APP_FACTORY` in each worker over
    :data:`HTTP_PROTOCOL`, proxy headers believed only from ``trusted_proxies``
    (:func:`~pidkit.settings.check_proxies`; uvicorn takes the client's address as the right-most entry of
    ``X-Forwarded-For`` that is not a trusted proxy), no ``server`` header, and uvicorn's access log only at
    a level that writes it (below, uvicorn would still format every request's line for nothing).

    >>> config = uvicorn_config(workers=2, log_level="warning", host="127.0.0.1", port=0, max_header=65536)
    >>> config.access_log, config.proxy_headers, config.http
    (False, False, 'pidkit.web.protocol:GuardedProtocol')
    >>> config = uvicorn_config(workers=1, log_level="warning", host="127.0.0.1", port=0, max_header=65536,
    ...                         trusted_proxies=("10.0.0.0/8",))
    >>> config.proxy_headers, config.forwarded_allow_ips
    (True, ['10.0.0.0/8'])
    """
    import uvicorn

    return uvicorn.Config(APP_FACTORY, factory=True, workers=workers, log_level=log_level,
                          access_log=log_level in ACCESS_LOG_LEVELS, host=host, port=port,
                          proxy_headers=bool(trusted_proxies),
                          forwarded_allow_ips=list(trusted_proxies) or None, server_header=False,
                          http=HTTP_PROTOCOL,
                          h11_max_incomplete_event_size=max_header, timeout_keep_alive=KEEP_ALIVE)


def cmd_serve(args: argparse.Namespace) -> int:
    """Open (and for ``--demo`` seed) the store, listen, print the URL, serve until interrupted."""
    if not 0 <= args.port <= MAX_PORT:
        raise CliError(f"--port must be between 0 and {MAX_PORT} (0: any free port), not {args.port}",
                       EXIT_USAGE)
    if args.workers < 1:
        raise CliError("--workers must be at least 1", EXIT_USAGE)
    _require_server_extra()
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from ..settings import Settings
    from ..store import default_url, open_store
    from ..store.demo import new_demo_key, new_demo_user, seed_demo

    url: str | None = args.db
    if args.demo and url is None:
        data = Path(args.data_dir or DEMO_DIR).resolve()
        data.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{data / DEMO_DB}"
    if url:
        os.environ["PIDKIT_DATABASE_URL"] = url  # the worker processes read their configuration from here
    if args.max_body is not None:
        if args.max_body < 1:
            raise CliError("--max-body must be positive", EXIT_USAGE)
        os.environ["PIDKIT_MAX_BODY"] = str(args.max_body)
    if args.offline:
        os.environ["PIDKIT_OFFLINE"] = "1"
    if args.ezid_base is not None:
        os.environ["PIDKIT_EZID_BASE"] = args.ezid_base  # checked by Settings.from_env below
    if args.trusted_proxies is not None:
        os.environ["PIDKIT_TRUSTED_PROXIES"] = args.trusted_proxies  # the same
    settings = Settings.from_env()  # fail now, not in every worker, on a bad variable
    _check_registry()

    with open_store(settings.database_url) as store:  # creates / migrates the schema once, up front
        if args.demo:
            arks = seed_demo(store)
            secret = new_demo_key(store)
            user, password = new_demo_user(store)
    sock = _bind(args.host, args.port, fallback=args.demo)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}/"
    out = sys.stdout
    print(f"pidkit serve: store {redact(settings.database_url or default_url())}", file=out)
    if args.demo:
        print("demo ARKs (NAAN 99999, shoulder fk4):", file=out)
        for d in arks:
            print(f"  {base}{d.ark}  ({d.role})", file=out)
        if arks:
            print(f"  {base}{arks[0].ark}?info  (its ERC record)", file=out)
        print(f"demo API key for NAAN 99999 (shown once): {secret}", file=out)
        print(f"demo back office: {base}office/signin  user {user}  password {password}  (shown once)",
              file=out)
    print(f"pidkit serve: listening on {base}", file=out, flush=True)

    config = uvicorn_config(workers=args.workers, log_level=args.log_level, host=args.host, port=port,
                            max_header=settings.max_header, trusted_proxies=settings.trusted_proxies)
    try:
        if args.workers > 1:
            Multiprocess(config, sockets=[sock]).run()
        else:
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return EXIT_OK
