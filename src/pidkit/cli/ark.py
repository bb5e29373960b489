"""``pidkit ark …`` and ``pidkit noid …``: thin commands over :mod:`pidkit.ark` and :mod:`pidkit.noid`.

Every command takes ids as arguments, ``-`` for standard input (one per line, streamed), reports each bad
input as one ``pidkit: error: …`` line naming it, keeps going, and exits 1 if any input was invalid.

>>> from pidkit.cli.main import main
>>> main(["ark", "normalize", "ARK:/12345/x5-4-xz-321"])
ark:12345/x54xz321
0
>>> main(["noid", "check", "13030/xf93gt2"])
q
0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator

from ..ark import Ark, clean_pasted
from ..errors import PidkitError
from ..noid import check_char, verify
from ._common import EXIT_INVALID, EXIT_OK, Subparsers, error_line, iter_inputs

_IDS_HELP = "ARKs (any form: compact, old label, https://NMA/…); '-' reads them from stdin, one per line"
_CLEAN_HELP = "first remove whitespace left in ARKs pasted from wrapped text (draft-kunze-ark-40 §3.1)"


def _ark(args: argparse.Namespace, value: str) -> Ark:
    return Ark.parse(clean_pasted(value) if args.clean else value)


def register(sub: Subparsers) -> None:
    """Add ``ark`` and ``noid`` to ``sub``."""
    ark = sub.add_parser(
        "ark",
        help="parse, normalize and check ARKs (draft-kunze-ark-40)",
        description="Parse, normalize and check ARKs (draft-kunze-ark-40).",
        epilog="Exit status: 0 all inputs valid, 1 some input invalid (each reported on stderr), 2 usage.",
    )
    ark_sub = ark.add_subparsers(dest="ark_command", metavar="COMMAND", required=True)

    p = ark_sub.add_parser(
        "parse",
        help="show every part of each ARK",
        description="Show the parts of each ARK: NMA, label, NAAN, Name (shoulder + blade), qualifiers "
        "(component and variant path), inflection, normalized form, check zone and check character, "
        "shared-NAAN meaning and the containing ARKs (longest first).",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help=_IDS_HELP)
    p.add_argument("--clean", action="store_true", help=_CLEAN_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object per input line (JSON Lines)")
    p.set_defaults(func=_ark_parse)

    p = ark_sub.add_parser(
        "normalize",
        help="print the normalized form of each ARK (§3.2)",
        description="Print the §3.2 normalized form of each ARK, one per line: no NMA, no inflection, "
        "label 'ark:', lowercase NAAN, uppercase %-escapes, no hyphens, tidy '/' and '.'. "
        "Two ARKs are equivalent exactly when their normalized forms are equal.",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help=_IDS_HELP)
    p.add_argument("--clean", action="store_true", help=_CLEAN_HELP)
    p.set_defaults(func=_ark_normalize)

    p = ark_sub.add_parser(
        "check",
        help="verify the NOID check character of each ARK",
        description="Verify each ARK's NOID check character (NCDA over the normalized NAAN/Name; the last "
        "character of the Name is the check character). Prints 'ARK<TAB>ok' or 'ARK<TAB>bad "
        "(expected X)'; exits 1 if any ARK is malformed or fails.",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help=_IDS_HELP)
    p.add_argument("--clean", action="store_true", help=_CLEAN_HELP)
    p.set_defaults(func=_ark_check)

    noid = sub.add_parser(
        "noid",
        help="NOID check characters (NCDA)",
        description="NOID check characters: the NOID Check Digit Algorithm over the alphabet "
        "0123456789bcdfghjkmnpqrstvwxz.",
        epilog="Exit status: 0 ok, 1 some input invalid (with --verify: some id does not verify), 2 usage.",
    )
    noid_sub = noid.add_subparsers(dest="noid_command", metavar="COMMAND", required=True)
    p = noid_sub.add_parser(
        "check",
        help="compute (or with --verify, verify) NCDA check characters",
        description="Print the NCDA check character of each ZONE (e.g. 13030/xf93gt2 -> q), one per line. "
        "With --full print ZONE followed by its check character. With --verify treat each argument as a "
        "complete id ending in its check character and print 'ID<TAB>ok' or 'ID<TAB>bad (expected X)'.",
    )
    p.add_argument("zones", nargs="+", metavar="ZONE", help="check zones (NAAN/id); '-' reads stdin")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true", help="print the zone with its check character appended")
    mode.add_argument("--verify", action="store_true", help="verify complete ids instead of computing")
    p.set_defaults(func=_noid_check)


def _each(values: list[str], handle: Callable[[str], bool]) -> int:
    """Run ``handle`` on every input; a :class:`PidkitError` becomes one error line.  Exit code."""
    status = EXIT_OK
    for value in iter_inputs(values):
        try:
            ok = handle(value)
        except PidkitError as exc:
            error_line(str(exc))
            ok = False
        if not ok:
            status = EXIT_INVALID
    return status


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")


def _parts(ark: Ark) -> dict[str, object]:
    return {
        "compact": ark.compact,
        "normalized": ark.normalized,
        "nma": ark.nma,
        "label": ark.label,
        "naan": ark.naan,
        "name": ark.name,
        "shoulder": ark.shoulder,
        "blade": ark.blade,
        "qualifiers": ark.qualifiers,
        "component_path": ark.component_path,
        "variant_path": ark.variant_path,
        "inflection": ark.inflection,
        "base": ark.base,
        "check_zone": ark.check_zone,
        "check_char": ark.check_char,
        "check_ok": ark.check_ok,
        "shared_naan": ark.shared_naan_meaning,
        "ancestors": [str(a) for a in ark.ancestors()],
    }


def _human(value: str, ark: Ark) -> Iterator[str]:
    parts = _parts(ark)
    yield f"input:          {value}"
    for key, item in parts.items():
        if key == "ancestors":
            shown = ", ".join(str(a) for a in ark.ancestors())
        elif key == "check_ok":
            shown = "yes" if item else "no (only meaningful for ids minted with a check character)"
        elif key == "shared_naan" and item is not None:
            shared = ark.shared_naan
            shown = f"{item} — {shared.purpose}" if shared is not None else str(item)
        else:
            shown = "" if item is None else str(item)
        yield f"{key + ':':<16}{shown}".rstrip()


def _ark_parse(args: argparse.Namespace) -> int:
    first = True

    def handle(value: str) -> bool:
        nonlocal first
        if args.json:
            try:
                ark = _ark(args, value)
            except PidkitError as exc:
                _write(
                    json.dumps({"input": value, "valid": False, "error": str(exc), "position": exc.position})
                )
                raise
            _write(json.dumps({"input": value, "valid": True, **_parts(ark)}, ensure_ascii=False))
            return True
        ark = _ark(args, value)
        if not first:
            _write("")
        first = False
        for line in _human(value, ark):
            _write(line)
        return True

    return _each(args.ids, handle)


def _ark_normalize(args: argparse.Namespace) -> int:
    def handle(value: str) -> bool:
        _write(_ark(args, value).normalized)
        return True

    return _each(args.ids, handle)


def _ark_check(args: argparse.Namespace) -> int:
    def handle(value: str) -> bool:
        ark = _ark(args, value)
        if ark.check_ok:
            _write(f"{ark.compact}\tok")
            return True
        zone = ark.check_zone
        _write(f"{ark.compact}\tbad (expected {check_char(zone[:-1])!r} as the last character of the Name)")
        return False

    return _each(args.ids, handle)


def _noid_check(args: argparse.Namespace) -> int:
    def handle(value: str) -> bool:
        if args.verify:
            if verify(value):
                _write(f"{value}\tok")
                return True
            if len(value) < 2:
                _write(f"{value}\tbad (too short to hold a check character)")
            else:
                _write(f"{value}\tbad (expected {check_char(value[:-1])!r})")
            return False
        char = check_char(value)
        _write(value + char if args.full else char)
        return True

    return _each(args.zones, handle)
