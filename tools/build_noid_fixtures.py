"""Build NOID minter databases with the real Perl NOID (``noid`` and ``Noid.pm`` 0.424, BSD-style
licence) and save them as test fixtures: ``tests/data/importers/noid/<name>/noid.bdb`` with a
``manifest.json`` of what NOID itself printed (the ids it minted, the holds and bindings made), which
the tests compare the importer with.

NOID is not shipped with pidkit: point this tool at a copy of its source (the ``noid`` script and the
directory holding ``Noid.pm``).  Its one Perl dependency is Debian's ``libberkeleydb-perl``::

    apt-get install -y libberkeleydb-perl
    python3 tools/build_noid_fixtures.py /path/to/noid /path/to/lib tests/data/importers/noid

Only ``noid.bdb`` is kept of each minter directory: NOID opens it in a BerkeleyDB environment without
transactions on the data (``DB_INIT_TXN`` in the environment, no ``-Txn`` on the tie), so every record
is in that one file once ``noid`` exits.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: name → (dbcreate arguments, mints, holds of ids not minted, bindings (id, element, value)).
#: Bindings name minted ids by their 1-based minting order ("#3"), as the ids are NOID's to choose, or
#: name an id outright (one held first: a long-term minter binds no other id it has not issued).
FIXTURES: dict[str, dict[str, Any]] = {
    "random": {
        "create": ["tst5.rdek", "long", "99999", "example.org", "tstlab"],
        "mint": 20,
        "holds": ["99999/tst5900", "99999/tst5x12"],
        "bind": [
            ("#1", "_t", "https://example.org/objects/1"),
            ("#1", "erc.who", "Doe, Jane"),
            ("#1", "erc.what", "A report: 100% cotton"),
            ("#2", "_t", "https://example.org/objects/2?x=1&y=2"),
            ("#2", "who", "Austin, Larry"),
            ("#2", "when", "1952"),
            ("#3", "what", "Reserved, not yet public"),
            ("#4", "_t", "https://example.org/objects/4"),
            ("#4", "note", "an element pidkit has no place for"),
            ("99999/tst5x12", "_t", "https://example.org/held-then-bound"),  # held, never issued
        ],
        "rules": [("_t", r"^99999/tst5(\d.)$", "https://example.org/rule/$1")],
    },
    "sequential": {
        "create": ["sq.sdd", "long", "99999", "example.org", "seqlab"],
        "mint": 10,
        "holds": ["99999/sq12"],
        "bind": [("#5", "_t", "https://example.org/sq/5"), ("#5", "erc.who", "Kunze, John")],
    },
}


def _noid(noid: Path, lib: Path, cwd: Path, *args: str) -> str:
    command = ["perl", "-T", f"-I{lib}", str(noid), *args]  # Debian's perl, as NOID's own #! line
    # our own arguments, run on the developer's own copy of NOID
    out = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)  # noqa: S603
    if out.returncode != 0:
        raise SystemExit(f"noid {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def build(noid: Path, lib: Path, dest: Path, name: str, spec: dict[str, Any]) -> None:
    """One minter: create, mint, hold, bind with NOID; copy ``noid.bdb`` and write the manifest."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        _noid(noid, lib, cwd, "dbcreate", *spec["create"])
        minted = [
            line.split(":", 1)[1].strip()
            for line in _noid(noid, lib, cwd, "mint", str(spec["mint"])).splitlines()
            if line.startswith("id:")
        ]
        if len(minted) != spec["mint"]:
            raise SystemExit(f"{name}: noid minted {len(minted)} ids, not {spec['mint']}")
        for held in spec["holds"]:
            _noid(noid, lib, cwd, "hold", "set", held)
        bindings = []
        for which, element, value in spec["bind"]:
            ident = minted[int(which[1:]) - 1] if which.startswith("#") else which
            _noid(noid, lib, cwd, "bind", "set", ident, element, value)
            bindings.append([ident, element, value])
        for element, pattern, replacement in spec.get("rules", []):  # rule-based bindings (":idmap")
            _noid(noid, lib, cwd, "hold", "set", f":/idmap/{element}")  # a long-term minter wants a hold
            _noid(noid, lib, cwd, "bind", "set", f":idmap/{pattern}", element, replacement)
        target = dest / name
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cwd / "NOID" / "noid.bdb", target / "noid.bdb")
    manifest = {
        "made_by": "Perl NOID 0.424 (dbcreate, mint, hold set, bind set) run by tools/build_noid_fixtures.py",
        "dbcreate": spec["create"],
        "minted": minted,
        "holds": spec["holds"],
        "bindings": bindings,
        "rules": [list(r) for r in spec.get("rules", [])],
    }
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    """``build_noid_fixtures.py NOID_SCRIPT NOID_LIB DEST``."""
    if len(argv) != 3:
        print("usage: build_noid_fixtures.py NOID_SCRIPT NOID_LIB DEST", file=sys.stderr)
        return 2
    noid, lib, dest = (Path(a).resolve() for a in argv)
    for name, spec in FIXTURES.items():
        build(noid, lib, dest, name, spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
