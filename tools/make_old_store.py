#!/usr/bin/env python3
"""Build a store file with the code of an older pidkit commit (for the schema upgrade tests).

    python tools/make_old_store.py COMMIT OUT.db

Checks out ``src/`` of ``COMMIT`` (``git archive``) into a temporary directory, runs it in a fresh
interpreter (``python -c``, with only that ``src`` on ``PYTHONPATH``) to fill a new SQLite store at
``OUT.db`` through that version's own API — NAANs, shoulders, two minters, minted-but-unbound ids, a
hold, public / reserved / passthrough / tombstoned ARKs, a XarkId binding, API keys (one revoked) — and
writes ``OUT.json`` beside it: the commit, its schema version, the ids it minted and its own export
(``export_jsonl``), which the tests compare with what the upgraded store holds; code that has ``pidkit
dump`` also writes its dump of the store, ``OUT.dump.jsonl`` (for the tests that read old dumps).

The commits of ``tests/data/stores/`` (``git log -- src/pidkit/store/migrations``): schema 1 =
1e6c46cf2d8f74ffb2dc92d1dea1e81e6e112c6d, schema 2 = 2286e0441aef4af254fbb08847ca392174debe44; a
schema-2 dump (format version 1) = 2c0c1607378896b2ecc0283d7fcb7b19b93a1181 (the first ``pidkit dump``).

>>> _SCRIPT.count("open_store(") == 1
True
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: What the old code runs: only names every old version has (store methods of the first SQL store).
_SCRIPT = r"""
import io, json, sys
from pidkit.store import open_store, Erc
out = sys.argv[1]
s = open_store("sqlite:///" + out)
s.add_naan("99999", "Test", shoulders=["fk4", "b5"])
s.add_naan("12345", "Other")
s.create_minter("a", naan="99999", template="fk4.reedeedk", seed=3)
s.create_minter("b", naan="99999", template="b5.sdd", seed=0)
minted = s.mint("a", 12) + s.mint("b", 4)
s.add_hold("a", minted[11].split("/")[1] + "x")
s.bind(minted[0], "https://example.org/0", erc=Erc(who="Austin, Larry", what="A Study"), passthrough=True)
s.bind(minted[1], None, status="reserved")
s.bind(minted[2], "https://example.org/2")
s.tombstone(minted[3], "withdrawn")
s.tombstone("ark:99999/fk4never", "withdrawn before it was minted")
s.bind_id("xarkid", "AYvP5WgA-_-_ASNFZ4mr", "https://example.org/xarkid")
k, _ = s.create_api_key("99999", label="all")
r, _ = s.create_api_key("99999", "b5", label="b5")
s.revoke_api_key(r.key_id)
exported = io.StringIO()
s.export_jsonl(exported)
if hasattr(s, "dump"):  # the code has pidkit dump: write one beside the store
    with open(out[:-3] + ".dump.jsonl", "w", encoding="utf-8", newline="\n") as fp:
        s.dump(fp)
json.dump({"schema": s.schema_version(), "minted": minted, "export": exported.getvalue().splitlines()},
          sys.stdout)
s.close()
"""


def make(commit: str, out: Path, repo: Path) -> dict[str, object]:
    """Build ``out`` with the code of ``commit``; return what its sidecar file says."""
    git = ["git", "-C", str(repo), "archive", commit, "src"]
    archive = subprocess.run(git, check=True, capture_output=True).stdout  # noqa: S603 - our repo
    if out.exists():
        out.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIDKIT_DATABASE_URL")}
        env["PYTHONPATH"] = str(Path(tmp) / "src")
        done = subprocess.run(  # noqa: S603 - this interpreter, our script
            [sys.executable, "-c", _SCRIPT, str(out.resolve())], check=True, env=env, capture_output=True,
            text=True, cwd=tmp,
        )
    info: dict[str, object] = {"commit": commit, **json.loads(done.stdout)}
    for suffix in ("-wal", "-shm"):  # closed cleanly: everything is in the file
        Path(str(out) + suffix).unlink(missing_ok=True)
    out.with_suffix(".json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def main(argv: list[str]) -> int:
    """``make_old_store.py COMMIT OUT.db``."""
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    info = make(argv[0], Path(argv[1]), Path(__file__).resolve().parent.parent)
    print(f"{argv[1]}: schema {info['schema']} by {argv[0][:12]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
