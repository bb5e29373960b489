"""``pidkit new | inspect | convert | llid | rkey``: the identifier commands (no store involved).

>>> from pidkit.cli.main import main
>>> main(["convert", "AYvP5WgA-_-_ASNFZ4mr", "--to", "guid"])
018bcfe5-6800-4fbf-8fbf-0123456789ab
0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ..errors import PidkitError, XarkIdError
from ..gedcom_uid import GedcomUid
from ..inspect import Report, inspect
from ..llid import resource_id, resource_ids_from_versa, versa_schema
from ..record_key import KeyType
from ..tid import TidClock
from ..xarkid import XarkId
from ._common import EXIT_INVALID, EXIT_OK, CliError, Subparsers, error_line, iter_inputs, one_line

#: Ids generated per write in ``pidkit new -n N`` (bounded memory, few system calls).
CHUNK = 65536
MAX_NEW = 100_000_000


def register(sub: Subparsers) -> None:
    """Add ``new``, ``inspect``, ``convert``, ``llid`` and ``rkey`` to ``sub``."""
    p = sub.add_parser(
        "new",
        help="generate new ids",
        description="Generate new identifiers, one per line. XarkIds use the current system time and a "
        "CSPRNG; TIDs come from one strictly increasing clock; GEDCOM UIDs are UUID v4 in the PAF form "
        "(32 hex + checksum), or a dashed UUID for GEDCOM 7 with --gedcom7.",
    )
    p.add_argument("kind", choices=["xarkid", "tid", "uid"], help="what to generate")
    p.add_argument("-n", type=_count, default=1, metavar="N", help=f"how many (1 to {MAX_NEW:,}; default 1)")
    p.add_argument("--gedcom7", action="store_true", help="uid: a dashed UUID (GEDCOM 7 UID), not PAF form")
    p.add_argument("--guid", action="store_true", help="xarkid: the GUID form instead of the compact form")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser(
        "inspect",
        help="every plausible reading of any id",
        description="Show every plausible reading of each ID (XarkId, TID, record key, GEDCOM UID, ARK, "
        "Library.Link id, UUID, GEDCOM xref), best first, with its parts, validity, normalized form and "
        "embedded time in UTC. '-' reads ids from standard input, one per line. Exit status 1 if any input "
        "has no valid reading.",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help="an identifier, or - for standard input")
    p.add_argument("--json", action="store_true", help="one JSON object per input (JSON Lines)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "convert",
        help="convert a XarkId (or a GEDCOM UUID) between its forms",
        description="Convert an id between its encodings. ID is a XarkId in any form (compact, GUID, "
        "hex) or a GEDCOM UID/UUID. compact: the 20-char XarkId form; guid: the dashed GUID; hex: 32 "
        "lowercase hex; uid: the value to store in a GEDCOM file (the compact form for 5.x, the GUID for "
        "7.0 with --gedcom7).",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--to", required=True, choices=["compact", "guid", "hex", "uid"])
    p.add_argument("--gedcom7", action="store_true", help="with --to uid: the GEDCOM 7 form")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser(
        "llid",
        help="Library.Link resource ids",
        description="Compute Library.Link resource ids. 'pidkit llid -' reads one JSON array of "
        "[key, value] pairs per line and prints one id per line. 'pidkit llid FILE.md --keys "
        "name,birthDate' reads Versa literate Markdown and prints, for each resource, its document id and "
        "the resource id computed from its type and the chosen identifying keys.",
    )
    p.add_argument("source", metavar="FILE|-", help="- for JSON lines on stdin, or a Versa Markdown file")
    p.add_argument("--keys", help="comma-separated identifying keys (Versa input)")
    p.set_defaults(func=cmd_llid)

    p = sub.add_parser(
        "rkey",
        help="check atproto record keys",
        description="Check atproto record keys (1-512 chars of A-Za-z0-9.-_:~, not '.' or '..'), optionally "
        "against a key type: tid, nsid, literal:VALUE or any.",
    )
    rsub = p.add_subparsers(dest="rkey_command", metavar="ACTION", required=True)
    c = rsub.add_parser(
        "check", help="check keys", description="Print each valid key; one error line per invalid key."
    )
    c.add_argument("keys", nargs="+", metavar="KEY", help="a record key, or - for standard input")
    c.add_argument("--type", default="any", metavar="TYPE", help="tid, nsid, literal:VALUE or any (default)")
    c.set_defaults(func=cmd_rkey_check)


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= n <= MAX_NEW:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_NEW:,}: {text!r}")
    return n


def _chunks(n: int) -> Iterator[int]:
    while n > 0:
        size = min(n, CHUNK)
        yield size
        n -= size


def cmd_new(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``pidkit new xarkid|tid|uid [-n N]``: generate ids, streamed in chunks."""
    out = out or sys.stdout
    write = out.write
    if args.kind == "xarkid":
        if args.guid:
            for size in _chunks(args.n):
                write("".join(f"{x.guid}\n" for x in XarkId.new_many(size)))
        else:
            for size in _chunks(args.n):
                write("\n".join(XarkId.new_compact_strings(size)) + "\n")
    elif args.kind == "tid":
        clock = TidClock()
        for size in _chunks(args.n):
            write("\n".join(clock.next_many(size)) + "\n")
    else:
        make = GedcomUid.new_uuid if args.gedcom7 else GedcomUid.new
        for size in _chunks(args.n):
            write("".join(f"{make()}\n" for _ in range(size)))
    return EXIT_OK


def _print_report(report: Report, out: TextIO) -> None:
    out.write(f"{report.input}\n")
    if not report.candidates:
        out.write("  unknown: no scheme accepts this\n")
        for scheme, message in report.errors.items():
            out.write(f"    {scheme}: {message}\n")
        return
    for c in report.candidates:
        j = c.to_json()
        time = f"  {j['timestamp']}" if j["timestamp"] else ""
        out.write(f"  {c.scheme:<12} {'valid' if c.valid else 'INVALID':<8} {c.normalized}{time}\n")
        for key, value in c.parts.items():
            if value not in (None, ""):
                out.write(f"      {key}: {value}\n")
        for note in c.notes:
            out.write(f"      note: {note}\n")


def cmd_inspect(args: argparse.Namespace) -> int:
    """``pidkit inspect [--json] ID... | -``."""
    status = EXIT_OK
    out = sys.stdout
    for text in iter_inputs(args.ids):
        report = inspect(text)
        if not report.valid:
            status = EXIT_INVALID
        if args.json:
            out.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
        else:
            _print_report(report, out)
    return status


def cmd_convert(args: argparse.Namespace) -> int:
    """``pidkit convert ID --to compact|guid|hex|uid``."""
    text: str = args.id
    try:
        x = XarkId.parse(text)
    except XarkIdError as exc:
        # Not a XarkId: a GEDCOM UID or a UUID still converts to guid / hex.
        u = GedcomUid.parse(text).to_uuid() if text.strip() else None
        if u is None or args.to in ("compact", "uid"):
            raise exc from None
        sys.stdout.write((str(u) if args.to == "guid" else u.hex) + "\n")
        return EXIT_OK
    result = {
        "compact": x.compact,
        "guid": str(x.guid),
        "hex": x.hex,
        "uid": str(GedcomUid.from_xarkid(x, gedcom7=args.gedcom7)),
    }[args.to]
    sys.stdout.write(result + "\n")
    return EXIT_OK


def cmd_llid(args: argparse.Namespace) -> int:
    """``pidkit llid -`` (JSON pairs per line) or ``pidkit llid FILE.md --keys k1,k2`` (Versa)."""
    if args.source == "-":
        if args.keys:
            raise CliError("--keys goes with a Versa Markdown file, not with JSON lines on stdin", 2)
        return _llid_json_lines(sys.stdin)
    if not args.keys:
        raise CliError("a Versa Markdown file needs --keys (identifying keys, e.g. --keys name,birthDate)", 2)
    keys = [k.strip() for k in args.keys.split(",") if k.strip()]
    text = Path(args.source).read_text(encoding="utf-8")
    try:
        if versa_schema(text) is None:
            _warning_line(
                f"{args.source}: no '@schema' in a '# @docheader': property names and types are hashed as "
                "written, not as IRIs, so the ids differ from those of the same data with '@schema'"
            )
        ids = resource_ids_from_versa(text, keys=keys)
    except PidkitError as exc:
        raise CliError(f"{args.source}: {exc}") from exc
    for doc_id, llid in ids:
        sys.stdout.write(f"{doc_id}\t{llid}\n")
    return EXIT_OK


def _warning_line(message: str) -> None:
    """Write ``pidkit: warning: MESSAGE`` to stderr as one line (:func:`one_line`; the result is still
    printed)."""
    sys.stderr.write(f"pidkit: warning: {one_line(message)}\n")
    sys.stderr.flush()


def _llid_json_lines(stream: TextIO) -> int:
    status = EXIT_OK
    for lineno, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            pairs = json.loads(line)
        except json.JSONDecodeError as exc:
            error_line(f"line {lineno}: not JSON: {exc.msg} at position {exc.pos + 1}")
            status = EXIT_INVALID
            continue
        except (RecursionError, ValueError) as exc:  # nested too deeply; an integer of > 4,300 digits
            error_line(f"line {lineno}: not JSON we read ({type(exc).__name__})")
            status = EXIT_INVALID
            continue
        try:
            sys.stdout.write(resource_id(pairs) + "\n")
        except PidkitError as exc:
            error_line(f"line {lineno}: {exc}")
            status = EXIT_INVALID
    return status


def cmd_rkey_check(args: argparse.Namespace) -> int:
    """``pidkit rkey check [--type T] KEY... | -``."""
    key_type = KeyType.parse(args.type)
    status = EXIT_OK
    for text in iter_inputs(args.keys):
        try:
            key = key_type.validate(text)
        except PidkitError as exc:
            error_line(str(exc))
            status = EXIT_INVALID
            continue
        sys.stdout.write(f"{key}\n")
    return status
