"""``pidkit registry show|list|update``: the public NAAN registry (:mod:`pidkit.registry`).

>>> from pidkit.registry import default
>>> print(render_record(default().shoulder("19156", "tkt42")).splitlines()[0])
what: 19156/tkt42
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import registry
from ..registry import Record, Registry
from ..registry.updating import update
from ._common import EXIT_OK, CliError, Subparsers

__all__ = ["register", "render_record"]


def register(sub: Subparsers) -> None:
    """Add ``registry`` and its actions to ``sub``."""
    reg = sub.add_parser(
        "registry",
        help="the public NAAN registry (every NAAN and shoulder, offline)",
        description="The public NAAN registry that pidkit resolves foreign ARKs with: the snapshot shipped "
        f"with pidkit, or the one `update` installed (${registry.ENV_VAR}, else "
        "$XDG_DATA_HOME/pidkit/naan_records.json).",
    )
    reg_sub = reg.add_subparsers(dest="registry_command", metavar="ACTION", required=True)
    p = reg_sub.add_parser(
        "show",
        help="show a NAAN's or shoulder's record",
        description="Show the registry record of NAAN, of NAAN/SHOULDER, or the record an ARK matches "
        "(the most specific: a shoulder beats its NAAN). A NAAN's shoulders are listed after it.",
    )
    p.add_argument("what", metavar="NAAN[/SHOULDER]|ARK")
    p.add_argument("--json", action="store_true", help="the record as the registry's JSON object")
    p.set_defaults(func=cmd_show)
    p = reg_sub.add_parser(
        "list",
        help="list NAANs and shoulders",
        description="List the registry's records, one per line: NAAN or NAAN/SHOULDER, acronym, name.",
    )
    p.add_argument("--search", metavar="TEXT", default="",
                   help="only records whose NAAN, name, native name or acronym contains TEXT (any case)")
    p.add_argument("--json", action="store_true", help="JSON Lines: one registry record per line")
    p.set_defaults(func=cmd_list)
    p = reg_sub.add_parser(
        "update",
        help="replace the registry from a file or URL",
        description="Replace the registry in use with the one in FILE or at an http(s) URL (the "
        "naan_records.json format, plain or gzip). It is validated whole first and swapped atomically: "
        f"a refused registry leaves the old one in place. Written to ${registry.ENV_VAR} if set, else "
        "$XDG_DATA_HOME/pidkit/naan_records.json (~/.local/share/pidkit/…).",
    )
    p.add_argument("source", metavar="FILE|URL")
    p.set_defaults(func=cmd_update)


def render_record(record: Record) -> str:
    """A record as ``label: value`` lines (every field; empty ones shown as ``-``)."""
    who, target, policy = record.who, record.target, record.na_policy
    rows = [
        ("what", record.what),
        ("kind", "shoulder" if record.is_shoulder else "NAAN"),
        ("who", who.name),
        ("who (native)", who.name_native),
        ("acronym", who.acronym),
        ("where", record.where),
        ("when", record.when),
        ("target", target.url),
        ("http code", str(target.http_code)),
        ("orgtype", policy.orgtype),
        ("policy", policy.policy),
        ("tenure", policy.tenure),
        ("policy url", policy.policy_url),
        ("test identifier", record.test_identifier),
    ]
    if not record.is_shoulder:
        rows += [("service provider", record.service_provider), ("purpose", record.purpose)]
    return "".join(f"{label}: {value or '-'}\n" for label, value in rows)


def _find(reg: Registry, what: str) -> Record:
    if "ark:" in what.lower():
        record = reg.match(what)
        if record is None:
            raise CliError(f"the NAAN of {what!r} is not in the registry")
        return record
    naan, _, shoulder = what.partition("/")
    found = reg.shoulder(naan, shoulder) if shoulder else reg.naan(naan)
    if found is None:
        kind = "shoulder" if shoulder else "NAAN"
        raise CliError(f"{kind} {what!r} is not in the registry")
    return found


def cmd_show(args: argparse.Namespace) -> int:
    """``pidkit registry show NAAN[/SHOULDER]|ARK [--json]``."""
    reg = registry.default()
    record = _find(reg, args.what)
    out = sys.stdout
    if args.json:
        out.write(json.dumps(record.to_json(), ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    out.write(render_record(record))
    if not record.is_shoulder:
        shoulders = reg.shoulders_of(record.naan)
        out.write(f"shoulders: {' '.join(r.shoulder for r in shoulders) or '-'}\n")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    """``pidkit registry list [--search TEXT] [--json]``: exit 1 if nothing matches a search."""
    records = sorted(registry.default().search(args.search), key=lambda r: r.what)
    if not records:
        raise CliError(f"no registry record matches {args.search!r}")
    out = sys.stdout
    for r in records:
        if args.json:
            out.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
        else:
            out.write(f"{r.what}\t{r.who.acronym or '-'}\t{r.who.name}\n")
    return EXIT_OK


def cmd_update(args: argparse.Namespace) -> int:
    """``pidkit registry update FILE|URL``."""
    target = registry.active_path()
    new = update(args.source, target)
    shoulders = sum(1 for r in new if r.is_shoulder)
    sys.stdout.write(
        f"registry updated: {len(new) - shoulders} NAANs, {shoulders} shoulders"
        f" (dated {new.date or 'unknown'}) from {args.source} -> {target}\n"
    )
    return EXIT_OK
