"""``pidkit user``: the back office's accounts — ``add``, ``list``, ``disable``, ``passwd``.

Users are created by an administrator at the command line (the web service has no sign-up).  A
password is read from the terminal twice (never echoed), or once from standard input with
``--password-stdin``; it is never printed nor logged — the store keeps its Argon2id hash.

>>> build = __import__("pidkit.cli.main", fromlist=["build_parser"]).build_parser
>>> "user" in build().format_help()
True
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import IO

from ..codecs import iso_z
from ..store import Principal, User
from ._common import EXIT_OK, CliError, Subparsers, add_db_option, cli_store

__all__ = ["read_password", "register"]


def register(sub: Subparsers) -> None:
    """Add the ``user`` command and its actions."""
    user = sub.add_parser(
        "user", help="back-office users", description="Manage the people who sign in to the back office."
    )
    actions = user.add_subparsers(dest="user_command", metavar="ACTION", required=True)
    p = actions.add_parser(
        "add", help="create a user",
        description="Create a user scoped to a NAAN (and optionally one shoulder), or an administrator "
        "(every NAAN). The password is read from the terminal twice, or from standard input.",
    )  # fmt: skip
    p.add_argument("name", metavar="NAME")
    p.add_argument("--naan", required=True, help="the NAAN the user works on")
    p.add_argument("--shoulder", default=None, help="limit the user to one shoulder of the NAAN")
    p.add_argument("--admin", action="store_true", help="an administrator: every NAAN")
    p.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add_db_option(p)
    p.set_defaults(func=cmd_user_add)
    p = actions.add_parser("list", help="list users", description="List users (never their passwords).")
    add_db_option(p)
    p.set_defaults(func=cmd_user_list)
    p = actions.add_parser(
        "disable", help="disable a user", description="Disable a user: no more sign-ins, sessions end now."
    )
    p.add_argument("name", metavar="NAME")
    add_db_option(p)
    p.set_defaults(func=cmd_user_disable)
    p = actions.add_parser(
        "passwd", help="set a user's password",
        description="Set a user's password (from the terminal twice, or standard input); sessions end.",
    )  # fmt: skip
    p.add_argument("name", metavar="NAME")
    p.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add_db_option(p)
    p.set_defaults(func=cmd_user_passwd)


def read_password(from_stdin: bool, stdin: IO[str] | None = None) -> str:
    """The new password: one line of standard input (``--password-stdin``), else typed twice at the
    terminal without echo; a mismatch or an empty line is a usage error (exit 2).

    >>> import io
    >>> read_password(True, io.StringIO("correct horse battery\\n"))
    'correct horse battery'
    """
    if from_stdin:
        password = (stdin or sys.stdin).readline().rstrip("\r\n")
    else:
        if not sys.stdin.isatty():
            raise CliError("no terminal to read the password from: use --password-stdin", code=2)
        password = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != password:
            raise CliError("the two passwords differ; nothing changed", code=2)
    if not password:
        raise CliError("empty password; nothing changed", code=2)
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, read as lone surrogates: no form sends those
        raise CliError("the password is not UTF-8 text; nothing changed", code=2) from None
    return password


def _line(u: User) -> str:
    scope = "*" if u.admin else f"{u.naan}/{u.shoulder or '*'}"
    disabled = iso_z(u.disabled_at) if u.disabled_at else "-"
    created = iso_z(u.created) if u.created else "-"
    return f"{u.name}\t{u.naan}\t{scope}\t{'admin' if u.admin else 'user'}\t{created}\t{disabled}"


def cmd_user_add(args: argparse.Namespace) -> int:
    """``pidkit user add``."""
    password = read_password(args.password_stdin)
    with cli_store(args) as store:
        user = store.add_user(args.name, password, naan=args.naan, shoulder=args.shoulder, admin=args.admin,
                              principal=Principal.local())  # fmt: skip
    print(f"user {user.name} added, scope {user.scope}", file=sys.stderr)
    return EXIT_OK


def cmd_user_list(args: argparse.Namespace) -> int:
    """``pidkit user list``: name, NAAN, scope, role, created, disabled (tab-separated)."""
    with cli_store(args) as store:
        for u in store.list_users():
            sys.stdout.write(_line(u) + "\n")
    return EXIT_OK


def cmd_user_disable(args: argparse.Namespace) -> int:
    """``pidkit user disable``."""
    with cli_store(args) as store:
        user = store.disable_user(args.name, principal=Principal.local())
    sys.stdout.write(_line(user) + "\n")
    return EXIT_OK


def cmd_user_passwd(args: argparse.Namespace) -> int:
    """``pidkit user passwd``."""
    password = read_password(args.password_stdin)
    with cli_store(args) as store:
        store.set_password(args.name, password, principal=Principal.local())
    print(f"password of {args.name} set; their sessions ended", file=sys.stderr)
    return EXIT_OK
