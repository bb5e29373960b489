"""The store commands: ``init``, ``naan``, ``minter``, ``mint``, ``hold``, ``bind``, ``fetch``,
``tombstone``, ``delete``, ``export``, ``import``, ``dump``, ``restore``, ``apikey`` (and, from
:mod:`pidkit.cli.history`, ``history``, ``check``, ``migrate-store``).  Every change names its principal
``cli:<user>@<host>`` in the store's history.

Every command takes ``--db URL`` (default ``$PIDKIT_DATABASE_URL``, else ``sqlite:///pidkit.db``).

>>> from pidkit.cli.main import main
>>> main(["naan", "add", "99999", "--db", "sqlite:///:memory:"])  # doctest: +NORMALIZE_WHITESPACE
99999 -
0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping

from ..atomic import open_output
from ..codecs import iso_z
from ..errors import NotFoundError
from ..store import (
    ERC_ELEMENTS,
    ImportRejectedError,
    Principal,
    check_extra_name,
    default_url,
    redact_url,
)
from . import history
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Subparsers,
    add_db_option,
    cli_store,
    error_line,
    refuse_store_files,
    utf8_lines,
)

#: Show a progress bar (on a terminal) when minting at least this many ids.
PROGRESS_FROM = 10_000
MAX_MINT = 100_000_000


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= n <= MAX_MINT:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_MINT:,}: {n}")
    return n


def _seed(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= n < 2**63:
        raise argparse.ArgumentTypeError(f"seed must be 0 to 2**63-1: {n}")
    return n


def register(sub: Subparsers) -> None:
    """Add the store commands to ``sub``."""
    p = sub.add_parser(
        "init",
        help="create a store",
        description="Create an empty pidkit store at --db (SQLite file or PostgreSQL database). The other "
        "commands never create one, except `naan add`.",
    )
    add_db_option(p)
    p.set_defaults(func=cmd_init)

    naan = sub.add_parser("naan", help="NAANs and their shoulders", description="Manage NAANs in the store.")
    naan_sub = naan.add_subparsers(dest="naan_command", metavar="ACTION", required=True)
    p = naan_sub.add_parser("add", help="register a NAAN", description="Register a NAAN (kept as a string).")
    p.add_argument("naan", metavar="NAAN")
    p.add_argument("--name", default="", help="the organization's name")
    p.add_argument(
        "--shoulder", action="append", default=[], metavar="SHOULDER", help="a shoulder (repeatable)"
    )
    add_db_option(p)
    p.set_defaults(func=cmd_naan_add)
    p = naan_sub.add_parser("list", help="list NAANs", description="List NAANs: NAAN, name, shoulders.")
    add_db_option(p)
    p.set_defaults(func=cmd_naan_list)

    minter = sub.add_parser("minter", help="NOID minters", description="Manage named NOID minters.")
    minter_sub = minter.add_subparsers(dest="minter_command", metavar="ACTION", required=True)
    p = minter_sub.add_parser(
        "create",
        help="create a minter",
        description="Create a named minter on a registered NAAN from a NOID template (e.g. fk4.reedeedk).",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--naan", required=True)
    p.add_argument("--template", required=True, help="NOID template, e.g. fk4.reedeedk")
    p.add_argument("--seed", type=_seed, default=None, help="permutation seed (default: random)")
    add_db_option(p)
    p.set_defaults(func=cmd_minter_create)
    p = minter_sub.add_parser(
        "list", help="list minters", description="List minters: name, NAAN, template, seed, counter."
    )
    add_db_option(p)
    p.set_defaults(func=cmd_minter_list)

    p = sub.add_parser(
        "mint",
        help="mint ARKs",
        description="Mint N new ARKs from a minter, one per line (ark:NAAN/id). Each batch is committed "
        "before it is printed; an id is never minted twice.",
    )
    p.add_argument("minter", metavar="MINTER")
    p.add_argument("-n", type=_count, default=1, metavar="N", help="how many (default 1)")
    p.add_argument("--batch", type=_count, default=10_000, metavar="N", help="ids per transaction")
    add_db_option(p)
    p.set_defaults(func=cmd_mint)

    p = sub.add_parser(
        "hold",
        help="hold ids so they are never minted",
        description="Hold ids: a held id is never minted, and never published (bound public, unavailable "
        "or tombstoned); it may be bound reserved. An id bound published was given out, and is refused.",
    )
    p.add_argument("minter", metavar="MINTER", help="a minter name or a NAAN")
    p.add_argument("ids", nargs="+", metavar="ID", help="a blade (fk4x8d9m2q) or an ARK")
    add_db_option(p)
    p.set_defaults(func=cmd_hold)

    p = sub.add_parser(
        "bind",
        help="bind an ARK to a target URL",
        description="Create or update the binding of an ARK (stored normalized) to an http(s) target, "
        "with ERC metadata (who/what/when/where) and a commitment statement (erc-support). An update "
        "changes only what it names: a field not given keeps its value; '' clears it. A new binding is "
        "public (it needs a TARGET) unless --reserved.",
    )
    p.add_argument("ark", metavar="ARK")
    p.add_argument(
        "target", metavar="TARGET", nargs="?", default=None, help="http or https URL (kept if not given)"
    )
    for element in ERC_ELEMENTS:
        p.add_argument(f"--{element}", default=None, help=f"ERC {element} of the object ('' clears it)")
    p.add_argument("--commitment", default=None, help="the commitment (erc-support what; '' clears it)")
    for element in ("who", "when", "where"):
        p.add_argument(f"--support-{element}", default=None, help=f"erc-support {element} ('' clears it)")
    flow = p.add_mutually_exclusive_group()
    flow.add_argument("--passthrough", action="store_true", default=None, help="allow suffix passthrough")
    flow.add_argument(
        "--no-passthrough", dest="passthrough", action="store_false", help="stop suffix passthrough"
    )
    status = p.add_mutually_exclusive_group()
    status.add_argument(
        "--reserved", dest="status", action="store_const", const="reserved",
        help="reserve (no redirect yet); a binding once public or unavailable is never reserved again",
    )
    status.add_argument(
        "--public", dest="status", action="store_const", const="public",
        help="make a reserved or unavailable binding public",
    )
    status.add_argument(
        "--unavailable", metavar="REASON", default=None,
        help="withdraw the binding, saying why (EZID's 'unavailable | reason'): it answers 410 with the "
        "reason, ?info still works, and --public makes it public again",
    )
    p.add_argument(
        "--extra", action="append", default=[], type=_extra, metavar="NAME=VALUE",
        help="set an extra metadata element beside the ERC, e.g. dc.title=… (repeatable; NAME= with no value "
        "removes it)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="bind even if the NAAN is not registered here or the NOID check character is wrong "
        "(the override is recorded)",
    )
    add_db_option(p)
    p.set_defaults(func=cmd_bind)

    p = sub.add_parser(
        "fetch", help="show a binding", description="Show the ERC record of an ARK as ANVL (or JSON)."
    )
    p.add_argument("ark", metavar="ARK")
    p.add_argument("--json", action="store_true", help="the whole binding as JSON")
    add_db_option(p)
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser(
        "tombstone",
        help="withdraw an ARK for good",
        description="Tombstone an ARK: it stops resolving, is never rebound and never minted again. A "
        "held ARK is refused: it was never given out, and is never published.",
    )
    p.add_argument("ark", metavar="ARK")
    p.add_argument("--reason", required=True)
    add_db_option(p)
    p.set_defaults(func=cmd_tombstone)

    p = sub.add_parser(
        "delete",
        help="delete a reserved id that was never published",
        description="Delete the binding of a reserved id that was never published (EZID: a reserved "
        "identifier may be deleted). An ARK stays held: it is never minted again. A binding that is or was "
        "published (public or unavailable) is refused: withdraw it with `bind --unavailable REASON`, or for "
        "good with `tombstone`.",
    )
    p.add_argument("id", metavar="ID", help="an ARK, or another id with --kind")
    p.add_argument("--kind", default="ark", help="the id's kind (default ark)")
    add_db_option(p)
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("export", help="export bindings (JSON Lines)", description="Export every binding.")
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE (default stdout)")
    add_db_option(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import",
        help="import bindings (JSON Lines)",
        description="Import bindings, all or nothing: any bad line is reported with its number and nothing "
        "is written. Each line is a JSON object as export writes it; only 'text' (the id) is required, plus "
        "'target' for a public binding. 'kind' defaults to ark, 'status' to public; optional: 'erc' and "
        "'support' ({who, what, when, where}), 'passthrough', 'tombstone_reason' and 'tombstoned_at'. "
        'Example: {"text": "ark:99999/fk4x", "target": "https://example.org/x"}',
    )
    p.add_argument("file", metavar="FILE", help="a JSON Lines file, or - for standard input")
    p.add_argument(
        "--from", dest="source_kind", choices=("ezid", "arklet", "noid"), default=None,
        help="read another system's ids instead (FILE: an EZID batch download, an arklet database as a "
        "SQLite file or postgresql:// URL, a NOID noid.bdb or its directory); see docs/migrating.md",
    )  # fmt: skip
    p.add_argument(
        "--drop-extra", action="store_true",
        help="with --from: import records with elements that have no place in the store (an element name "
        "the store refuses, a NOID rule-based binding), leaving them out (each record's report line names "
        "what)",
    )  # fmt: skip
    p.add_argument(
        "--update", action="store_true",
        help="each line changes only the fields it names (JSON merge patch: null clears a field), e.g. "
        '{"text": "ark:99999/fk4x", "extra": {"dc.title": "New"}}; ids not bound yet are created',
    )
    p.add_argument(
        "--force", action="store_true",
        help="import new ARK bindings even if their NAAN is not registered here or their NOID check "
        "character is wrong (each override is recorded, as bind --force records it)",
    )  # fmt: skip
    add_db_option(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "dump",
        help="everything the store holds (to move it)",
        description="Write everything the store holds as JSON Lines: a header line, then NAANs, shoulders, "
        "minters, the minted log, holds, bindings of every status, API keys (hashes only, never secrets) "
        "and overrides, from one consistent snapshot. `pidkit restore` reads it into another store, "
        "SQLite or PostgreSQL, which then never mints an id the source minted.",
    )
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE (default stdout)")
    add_db_option(p)
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser(
        "restore",
        help="restore a dump into an empty store",
        description="Restore a `pidkit dump` into an empty store (created if missing), all or nothing: a bad "
        "line is reported with its number and nothing is restored. With --merge the store may hold data "
        "already: rows that are there are kept as they are, never overwritten.",
    )
    p.add_argument("file", metavar="FILE", help="a dump file, or - for standard input")
    p.add_argument("--merge", action="store_true", help="restore into a store that is not empty")
    add_db_option(p)
    p.set_defaults(func=cmd_restore)

    apikey = sub.add_parser("apikey", help="API keys for the server", description="Manage API keys.")
    key_sub = apikey.add_subparsers(dest="apikey_command", metavar="ACTION", required=True)
    p = key_sub.add_parser(
        "create", help="create a key", description="Create an API key; the secret is printed once."
    )
    p.add_argument("--naan", required=True)
    p.add_argument("--shoulder", default=None, help="limit the key to one shoulder")
    p.add_argument("--label", default="")
    add_db_option(p)
    p.set_defaults(func=cmd_apikey_create)
    p = key_sub.add_parser("list", help="list keys", description="List API keys (never their secrets).")
    add_db_option(p)
    p.set_defaults(func=cmd_apikey_list)
    p = key_sub.add_parser("revoke", help="revoke a key", description="Revoke an API key.")
    p.add_argument("key_id", metavar="KEYID")
    add_db_option(p)
    p.set_defaults(func=cmd_apikey_revoke)

    history.register(sub)


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def cmd_init(args: argparse.Namespace) -> int:
    """``pidkit init``: create the store (or say that it is there already)."""
    url = args.db or default_url()
    try:
        with cli_store(args):
            pass
    except NotFoundError:
        with cli_store(args, create=True) as store:
            version = store.schema_version()
        print(f"created a pidkit store (schema {version}) at {redact_url(url)}", file=sys.stderr)
        return EXIT_OK
    print(f"a pidkit store is already at {redact_url(url)}: nothing changed", file=sys.stderr)
    return EXIT_OK


def cmd_naan_add(args: argparse.Namespace) -> int:
    """``pidkit naan add``: registering the first NAAN creates the store."""
    with cli_store(args, create=True) as store:
        n = store.add_naan(args.naan, args.name, shoulders=args.shoulder, principal=Principal.local())
    _out(f"{n.naan}\t{n.name}\t{','.join(n.shoulders) or '-'}")
    return EXIT_OK


def cmd_naan_list(args: argparse.Namespace) -> int:
    """``pidkit naan list``."""
    with cli_store(args) as store:
        for n in store.list_naans():
            _out(f"{n.naan}\t{n.name}\t{','.join(n.shoulders) or '-'}")
    return EXIT_OK


def cmd_minter_create(args: argparse.Namespace) -> int:
    """``pidkit minter create``."""
    with cli_store(args) as store:
        m = store.create_minter(
            args.name, naan=args.naan, template=args.template, seed=args.seed, principal=Principal.local()
        )
    _out(f"{m.name}\t{m.naan}\t{m.template}\t{m.seed}\t{m.counter}")
    return EXIT_OK


def cmd_minter_list(args: argparse.Namespace) -> int:
    """``pidkit minter list``."""
    with cli_store(args) as store:
        for m in store.list_minters():
            _out(f"{m.name}\t{m.naan}\t{m.template}\t{m.seed}\t{m.counter}")
    return EXIT_OK


def cmd_mint(args: argparse.Namespace) -> int:
    """``pidkit mint``: print each batch once it is committed."""
    n: int = args.n
    with cli_store(args) as store:
        batches = store.mint_batches(args.minter, n, batch_size=args.batch, principal=Principal.local())
        if n >= PROGRESS_FROM and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            # Progress on stderr only: rich's default redirect_stdout would send the ids (committed,
            # so burnt) to the terminal instead of wherever stdout points.
            with Progress(
                console=Console(stderr=True), transient=True, redirect_stdout=False, redirect_stderr=False
            ) as progress:
                task = progress.add_task("minting", total=n)
                for batch in batches:
                    sys.stdout.write("\n".join(batch) + "\n")
                    progress.advance(task, len(batch))
        else:
            for batch in batches:
                sys.stdout.write("\n".join(batch) + "\n")
    return EXIT_OK


def cmd_hold(args: argparse.Namespace) -> int:
    """``pidkit hold``."""
    with cli_store(args) as store:
        added = store.add_hold(args.minter, *args.ids, principal=Principal.local())
    print(f"held {added} new of {len(args.ids)}", file=sys.stderr)
    return EXIT_OK


def _named(pairs: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """The elements given on the command line (``None``: not given, so kept).

    >>> _named([("who", "x"), ("what", None), ("when", "")])
    {'who': 'x', 'when': ''}
    """
    return {name: value for name, value in pairs if value is not None}


def _extra(text: str) -> tuple[str, str | None]:
    """``NAME=VALUE`` of ``--extra`` (``NAME=``: remove the element); the name is checked by the store's
    rule.

    >>> _extra("dc.title=A Study"), _extra("dc.title=")
    (('dc.title', 'A Study'), ('dc.title', None))
    """
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"not NAME=VALUE: {text!r}")
    try:
        check_extra_name(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, value or None


def cmd_bind(args: argparse.Namespace) -> int:
    """``pidkit bind``: create, or change only the fields given."""
    erc = _named((name, getattr(args, name)) for name in ERC_ELEMENTS)
    support = _named(
        zip(
            ERC_ELEMENTS,
            (args.support_who, args.commitment, args.support_when, args.support_where),
            strict=True,
        )
    )
    with cli_store(args) as store:
        b = store.bind(
            args.ark,
            args.target,
            erc=erc,
            support=support,
            passthrough=args.passthrough,
            status="unavailable" if args.unavailable is not None else args.status,
            reason=args.unavailable,
            extra=dict(args.extra) or None,
            force=args.force,
            principal=Principal.local(),
        )
        if args.force:
            for override in store.list_overrides(b.key)[-1:]:
                if override.at == b.updated:
                    print(f"pidkit: warning: {b.key}: bound with --force: {override.reason}", file=sys.stderr)
    _out(f"{b.key}\t{b.status}\t{b.target or '-'}")
    return EXIT_OK


def cmd_fetch(args: argparse.Namespace) -> int:
    """``pidkit fetch``: the ERC record (ANVL) or the binding (JSON)."""
    with cli_store(args) as store:
        b = store.get_binding(args.ark)
    if b is None:
        raise CliError(f"no binding for {args.ark!r}")
    if args.json:
        _out(json.dumps(b.to_dict(), ensure_ascii=False))
    else:
        sys.stdout.write(b.to_anvl())
    return EXIT_OK


def cmd_tombstone(args: argparse.Namespace) -> int:
    """``pidkit tombstone``."""
    with cli_store(args) as store:
        b = store.tombstone(args.ark, args.reason, principal=Principal.local())
    _out(f"{b.key}\t{b.status}\t{b.tombstone_reason}")
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """``pidkit delete``: a reserved, never published binding; an ARK stays held."""
    with cli_store(args) as store:
        b = store.delete(args.kind, args.id, principal=Principal.local())
    _out(f"{b.key}\tdeleted" + ("\theld" if b.kind == "ark" else ""))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """``pidkit export``: to stdout, or atomically to a file (temp file + ``os.replace``)."""
    with cli_store(args) as store:
        refuse_store_files(args.output, store)
        if args.output is None:
            count = store.export_jsonl(sys.stdout)
        else:
            with open_output(args.output, text=True) as fp:
                count = store.export_jsonl(fp)
    print(f"exported {count} bindings", file=sys.stderr)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """``pidkit import``: all or nothing; every bad line is reported with its number."""
    if args.source_kind is not None and (args.force or args.update):
        flag = "--force" if args.force else "--update"
        error_line(f"{flag} goes with a JSON Lines import, not with --from")
        return EXIT_USAGE
    if args.source_kind is None and args.drop_extra:
        error_line("--drop-extra goes with --from")
        return EXIT_USAGE
    if args.source_kind is not None:
        return cmd_import_from(args)
    # JSON Lines end at "\n" only (a value may hold U+2028, U+0085 …; "\r" is JSON whitespace).
    with utf8_lines(args.file) as lines, cli_store(args) as store:
        try:
            report = store.import_jsonl(lines, update=args.update, principal=Principal.local(),
                                        force=args.force)  # fmt: skip
        except ImportRejectedError as exc:
            for line, message in exc.problems:
                error_line(f"{args.file}: line {line}: {message}")
            error_line(f"{args.file}: nothing imported ({exc.count} bad lines)")
            if exc.overridable and not args.force:
                numbers = ", ".join(str(n) for n in sorted(exc.overridable))
                print(f"pidkit: --force imports line(s) {numbers} anyway (an unregistered NAAN or a wrong "
                      "check character; each override is recorded)", file=sys.stderr)
            return EXIT_INVALID
    summary = f"imported {report.written} bindings ({report.created} new, {report.updated} updated)"
    print(summary, file=sys.stderr)
    return EXIT_OK


def cmd_import_from(args: argparse.Namespace) -> int:
    """``pidkit import --from KIND SOURCE``: all or nothing; the report on stderr, one line per record
    not simply imported (docs/migrating.md)."""
    from .. import importers

    with cli_store(args, create=True) as store:
        try:
            report = importers.run(
                args.source_kind, args.file, store, drop_extra=args.drop_extra
            )  # fmt: skip
        except importers.ImportRefusedError as exc:
            for outcome in exc.report.by_action("refused"):
                error_line(f"{args.file}: {outcome}")
            error_line(f"{args.file}: nothing imported ({exc.report.count('refused')} records refused)")
            return EXIT_INVALID
    for line in report.lines():
        print(line, file=sys.stderr)
    return EXIT_OK


def cmd_dump(args: argparse.Namespace) -> int:
    """``pidkit dump``: to stdout, or to a file (atomically)."""
    with cli_store(args) as store:
        refuse_store_files(args.output, store)
        if args.output is None:
            counts = store.dump(sys.stdout)
        else:
            with open_output(args.output, text=True) as fp:
                counts = store.dump(fp)
    print(f"dumped {sum(counts.values())} rows ({_counts(counts)})", file=sys.stderr)
    return EXIT_OK


def _counts(counts: Mapping[str, int]) -> str:
    """``3 naans, 1 minters`` …, the tables with rows.

    >>> _counts({"naans": 1, "holds": 0, "bindings": 2})
    '1 naans, 2 bindings'
    """
    return ", ".join(f"{n} {table}" for table, n in counts.items() if n) or "empty"


def cmd_restore(args: argparse.Namespace) -> int:
    """``pidkit restore``: all or nothing."""
    # the file opened first: a missing one leaves no new empty store behind
    with utf8_lines(args.file) as lines, cli_store(args, create=True) as store:
        report = store.restore(lines, merge=args.merge)
    skipped = sum(report.skipped.values())
    own = "; the history and overrides of a binding already there are its own" \
        if report.skipped.get("history") or report.skipped.get("overrides") else ""  # fmt: skip
    kept = f"; {skipped} already there, kept ({_counts(report.skipped)}{own})" if skipped else ""
    print(f"restored {report.total} rows ({_counts(report.restored)}){kept}", file=sys.stderr)
    return EXIT_OK


def cmd_apikey_create(args: argparse.Namespace) -> int:
    """``pidkit apikey create``: the secret goes to stdout, once."""
    with cli_store(args) as store:
        key, secret = store.create_api_key(
            args.naan, args.shoulder, label=args.label, principal=Principal.local()
        )
    _out(secret)
    scope = f"{key.naan}/{key.shoulder or '*'}"
    print(f"key {key.key_id} for {scope}: keep the secret now, it is not shown again", file=sys.stderr)
    return EXIT_OK


def cmd_apikey_list(args: argparse.Namespace) -> int:
    """``pidkit apikey list``."""
    with cli_store(args) as store:
        for k in store.list_api_keys():
            revoked = iso_z(k.revoked_at) if k.revoked_at else "-"
            created = iso_z(k.created) if k.created else "-"
            _out(f"{k.key_id}\t{k.naan}\t{k.shoulder or '*'}\t{k.label}\t{created}\t{revoked}")
    return EXIT_OK


def cmd_apikey_revoke(args: argparse.Namespace) -> int:
    """``pidkit apikey revoke``."""
    with cli_store(args) as store:
        k = store.revoke_api_key(args.key_id, principal=Principal.local())
    _out(f"{k.key_id}\trevoked")
    return EXIT_OK
