"""``pidkit version [--json]`` and ``pidkit --version``: what is installed, for bug reports and packagers.

Four facts: pidkit's version, its optional C helper ``pidkit._speedups`` (built or not, in use or not, and the
ABI tag it was compiled for), the Python that runs it, and the store schema version this pidkit writes (the
newest migration of :mod:`pidkit.store.migrations`; opening an older store upgrades it to that version).

>>> info = version_info()
>>> sorted(info)
['c_helper', 'pidkit', 'python', 'store_schema']
>>> info["pidkit"] == __version__ and info["store_schema"] >= 1
True
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import platform
import sys
from pathlib import Path
from typing import Any

from .. import __version__, llid
from ._common import EXIT_OK, Subparsers

__all__ = ["VersionAction", "c_helper_info", "register", "version_info", "version_line"]

#: The module name of the optional C helper (built by setup.py where a C compiler is present).
C_HELPER = "pidkit._speedups"


def _abi_tag(filename: str) -> str | None:
    """The ABI tag of an extension module file name (``cpython-311-x86_64-linux-gnu``), if it has one.

    >>> _abi_tag("_speedups.cpython-311-x86_64-linux-gnu.so")
    'cpython-311-x86_64-linux-gnu'
    >>> _abi_tag("_speedups.abi3.so"), _abi_tag("_speedups.so")
    ('abi3', None)
    """
    for suffix in sorted(importlib.machinery.EXTENSION_SUFFIXES, key=len, reverse=True):
        if filename.endswith(suffix):
            parts = filename[: -len(suffix)].split(".") + suffix.split(".")
            tags = [p for p in parts[1:] if p and p not in ("so", "pyd")]
            return ".".join(tags) or None
    return None


def c_helper_info() -> dict[str, Any]:
    """Whether the C helper was built (a compiled module is installed), whether it is in use, and its ABI tag.

    It is built but not in use when ``PIDKIT_PURE_PYTHON`` is set (see :mod:`pidkit.llid`).

    >>> info = c_helper_info()
    >>> sorted(info), info["in_use"] <= info["built"]
    (['abi', 'built', 'in_use'], True)
    """
    spec = importlib.util.find_spec(C_HELPER)
    origin = spec.origin if spec is not None else None
    built = origin is not None and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    return {
        "built": built,
        "in_use": llid.SPEEDUPS,
        "abi": _abi_tag(Path(origin).name) if built and origin is not None else None,
    }


def version_info() -> dict[str, Any]:
    """pidkit's version, its C helper, the Python running it, and the store schema version it writes."""
    from ..store import migrations  # here: every command's parser has ``--version``, few use the store

    return {
        "pidkit": __version__,
        "c_helper": c_helper_info(),
        "python": {
            "version": platform.python_version(),
            "implementation": sys.implementation.name,
        },
        "store_schema": max(m.version for m in migrations.load()),
    }


def version_line(info: dict[str, Any] | None = None) -> str:
    """The one line of ``pidkit --version``.

    >>> version_line({"pidkit": "1.2.3", "c_helper": {"built": False, "in_use": False, "abi": None},
    ...               "python": {"version": "3.12.1", "implementation": "cpython"}, "store_schema": 2})
    'pidkit 1.2.3 (C helper: not built, pure Python; Python 3.12.1 cpython; store schema 2)'
    """
    info = info if info is not None else version_info()
    helper = info["c_helper"]
    if helper["in_use"]:
        c_text = f"in use, {helper['abi']}" if helper["abi"] else "in use"
    elif helper["built"]:
        c_text = "built, not in use (PIDKIT_PURE_PYTHON)"
    else:
        c_text = "not built, pure Python"
    python = info["python"]
    return (
        f"pidkit {info['pidkit']} (C helper: {c_text}; "
        f"Python {python['version']} {python['implementation']}; store schema {info['store_schema']})"
    )


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_line` and exit 0 (computed only when the option is given)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the versions of pidkit, its C helper, Python and the store schema")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(version_line() + "\n")
        parser.exit()


def _cmd_version(args: argparse.Namespace) -> int:
    info = version_info()
    if args.json:
        sys.stdout.write(json.dumps(info, sort_keys=True) + "\n")
    else:
        sys.stdout.write(version_line(info) + "\n")
    return EXIT_OK


def register(sub: Subparsers) -> None:
    """Add ``pidkit version``."""
    p = sub.add_parser(
        "version",
        help="versions of pidkit, its C helper, Python and the store schema",
        description=(
            "Print the versions of pidkit, of its optional C helper (built or not, in use or not, its ABI "
            "tag), of the Python that runs it, and the store schema version this pidkit writes. "
            "`pidkit --version` prints the same as one line."
        ),
    )
    p.add_argument("--json", action="store_true", help="one JSON object (keys sorted)")
    p.set_defaults(func=_cmd_version)
