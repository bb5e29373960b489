"""Make a large synthetic GEDCOM file for the GEDCOM benchmarks.

The file is ``tests/data/gedcom/real/royal92.ged``'s header, then its records replicated as many times
as needed to reach the target size, each copy's cross-reference identifiers renamed (``@I1@`` →
``@C7I1@`` in copy 7) so that every xref stays unique and every pointer resolves, then one trailer.

Usage: ``python benchmarks/make_big_gedcom.py [--mb 55] [--out benchmarks/data/big.ged]``
(``benchmarks/data/`` is git-ignored).  The file is written atomically and only if missing or too small.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "tests" / "data" / "gedcom" / "real" / "royal92.ged"
DEFAULT_OUT = HERE / "data" / "big.ged"
DEFAULT_MB = 55

_XREF = re.compile(rb"@([A-Za-z0-9_]+)@")


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(header, records, trailer) of a GEDCOM file (records = everything between HEAD and TRLR)."""
    first = re.search(rb"(?m)^0 ", data[1:])
    trailer = data.rfind(b"\n0 TRLR")
    if first is None or trailer < 0:
        raise SystemExit(f"{SOURCE}: no records or no trailer")
    start = first.start() + 1
    return data[:start], data[start : trailer + 1], data[trailer + 1 :]


def make(out: Path = DEFAULT_OUT, mb: float = DEFAULT_MB) -> Path:
    """Write the file (if missing or smaller than ``mb`` megabytes) and return its path."""
    target = int(mb * 1_000_000)
    if out.exists() and out.stat().st_size >= target:
        return out
    data = SOURCE.read_bytes()
    header, body, trailer = _split(data)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    size = len(header) + len(trailer)
    with open(tmp, "wb") as fh:
        fh.write(header)
        copy = 0
        while size < target:
            chunk = _XREF.sub(b"@C%d\\1@" % copy, body)
            fh.write(chunk)
            size += len(chunk)
            copy += 1
        fh.write(trailer)
    os.replace(tmp, out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=DEFAULT_MB, help="minimum size in MB (default 55)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output file")
    args = parser.parse_args()
    path = make(args.out, args.mb)
    print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
