"""The history and integrity commands: ``history`` (every change of an id), ``check`` (store
integrity) and ``migrate-store`` (schema upgrades).  Registered by :mod:`pidkit.cli.store`.

>>> from pidkit.cli.main import main
>>> main(["check", "--db", "sqlite:///:memory:"])
0
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import NotFoundError
from ..store import KINDS, open_store, redact_url
from ..store.urls import default_url
from ._common import EXIT_INVALID, EXIT_OK, CliError, Subparsers, add_db_option, error_line

#: What ``pidkit history`` can be asked about besides ids: the records other changes are written to.
RECORD_KINDS = ("naan", "minter", "api_key")


def register(sub: Subparsers) -> None:
    """Add ``history``, ``check`` and ``migrate-store`` to ``sub``."""
    p = sub.add_parser(
        "history",
        help="every change of an id",
        description="Show the append-only history of an id (an ARK by default): one line per change, oldest "
        "first — when, who (apikey:KEYID, cli:USER@HOST, user:NAME), the operation, and the fields it "
        "changed before and after (JSON). --kind naan|minter|api_key shows the changes of that record "
        "instead.",
    )
    p.add_argument("id", metavar="ID", help="an ARK (any spelling), another id with --kind, or a record name")
    p.add_argument(
        "--kind", default="ark", choices=[*KINDS, *RECORD_KINDS], help="what ID names (default ark)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per change (JSON Lines)")
    add_db_option(p)
    p.set_defaults(func=cmd_history)

    p = sub.add_parser(
        "check",
        help="check the store's integrity",
        description="Check the store's integrity from one snapshot: every minter's counter is past every "
        "position of its minted log, no minted id names a missing minter, no binding of a held id is public, "
        "every API key hash is a SHA-256 hex digest, every binding has history, every status has its target "
        "or reason, extra metadata is well-formed. Prints each problem and exits 1; prints nothing and exits "
        "0 when there is none.",
    )
    add_db_option(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "migrate-store",
        help="upgrade the store's schema",
        description="Apply the schema migrations the store lacks, all in one transaction (every command does "
        "this when it opens a store; this one says what it did). A store written by a newer pidkit is "
        "refused and left as it is.",
    )
    add_db_option(p)
    p.set_defaults(func=cmd_migrate_store)


def cmd_history(args: argparse.Namespace) -> int:
    """``pidkit history``: tab-separated lines, or JSON Lines with ``--json``."""
    with open_store(args.db, create=False) as store:
        entries = store.history(args.kind, args.id)
    if not entries:
        raise CliError(f"no history for {args.kind} {args.id!r}")
    for e in entries:
        if args.json:
            sys.stdout.write(json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
            continue
        d = e.to_dict()
        before = "-" if e.before is None else json.dumps(d["before"], ensure_ascii=False, sort_keys=True)
        after = "-" if e.after is None else json.dumps(d["after"], ensure_ascii=False, sort_keys=True)
        sys.stdout.write(f"{d['at']}\t{e.principal}\t{e.operation}\t{before}\t{after}\n")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """``pidkit check``: the problems on stdout, exit 1 if there is any."""
    with open_store(args.db, create=False) as store:
        problems = store.check()
    for problem in problems:
        sys.stdout.write(problem + "\n")
    if problems:
        error_line(f"{redact_url(args.db or default_url())}: {len(problems)} integrity problems")
        return EXIT_INVALID
    return EXIT_OK


def cmd_migrate_store(args: argparse.Namespace) -> int:
    """``pidkit migrate-store``: say from which schema to which."""
    url = redact_url(args.db or default_url())
    try:
        with open_store(args.db, create=False) as store:
            before, after = store.migrated_from, store.schema_version()
    except NotFoundError as exc:
        raise CliError(str(exc)) from None
    if before == after:
        print(f"{url}: schema {after}, up to date", file=sys.stderr)
    else:
        print(f"{url}: upgraded from schema {before} to {after}", file=sys.stderr)
    return EXIT_OK
