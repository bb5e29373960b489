"""``pidkit import --from ezid|arklet|noid`` through the real entry point: the CLI wiring of
:func:`pidkit.importers.run` (the importers themselves are tested in ``test_import_*.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "importers"


def _pidkit(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args, "--db", db], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("kind", "source", "consent"),
    [
        ("ezid", DATA / "ezid" / "download.csv", ()),
        ("arklet", DATA / "arklet" / "arklet.sqlite3", ()),
        ("noid", DATA / "noid" / "sequential" / "noid.bdb", ("--drop-extra",)),
    ],
)
def test_import_from_writes_the_store_and_reports_on_stderr(
    kind: str, source: Path, consent: tuple[str, ...], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    r = _pidkit("import", "--from", kind, str(source), *consent, db=db)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert "imported" in r.stderr
    dump = _pidkit("dump", db=db)
    assert dump.returncode == 0, dump.stderr
    assert '"table":"minted"' in dump.stdout  # every imported id is in the minted log
    check = _pidkit("check", db=db)
    assert check.returncode == 0, check.stdout + check.stderr
    again = _pidkit("import", "--from", kind, str(source), *consent, db=db)  # a re-run writes nothing new
    assert again.returncode == 0, again.stderr
    assert _pidkit("dump", db=db).stdout.splitlines()[1:] == dump.stdout.splitlines()[1:]


def test_import_from_refused_records_are_named_and_nothing_is_written(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    source = tmp_path / "dl.txt"
    source.write_text(":: ark:/99999/fk4a\n_target: https://e.org/a\nerc: who: x%0Ahow: z\n\n"
                      ":: ark:/99999/fk4b\n_target: https://e.org/b\nerc: what: y\nerc.what: z\n")
    r = _pidkit("import", "--from", "ezid", str(source), db=db)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert all(line.startswith(f"pidkit: error: {source}: ") for line in lines)
    assert lines[-1].endswith("records refused)")
    dump = _pidkit("dump", db=db)
    assert '"table":"bindings"' not in dump.stdout


def test_import_from_a_missing_file_is_one_line(tmp_path: Path) -> None:
    r = _pidkit("import", "--from", "noid", str(tmp_path / "nope.bdb"), db=f"sqlite:///{tmp_path / 's.db'}")
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("pidkit: error: ")
