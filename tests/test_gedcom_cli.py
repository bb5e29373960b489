"""``pidkit gedcom …`` through the real entry point (``python -m pidkit``) and in-process ``main``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.cli.main import main

GEDCOM_DIR = Path(__file__).parent / "data" / "gedcom"


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", "gedcom", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tudor(tmp_path: Path) -> Path:
    path = tmp_path / "tudor.ged"
    shutil.copyfile(GEDCOM_DIR / "real" / "EnglishTudorRoyalFamily.ged", path)
    return path


def test_audit_text_and_exit_status(tudor: Path) -> None:
    result = _run("audit", tudor)
    assert result.returncode == 1  # the file has one _UID on three INDI records
    assert "INDI" in result.stdout
    assert "same UID on two structures: 2" in result.stdout
    ok = _run("audit", GEDCOM_DIR / "real" / "bach.ged")
    assert ok.returncode == 0
    assert ok.stdout.rstrip().endswith("ok")


def test_add_uids_then_audit_json(tudor: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.ged"
    result = _run("add-uids", tudor, "-o", out, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["added_records"] == {"FAM": 200, "INDI": 79, "NOTE": 16, "SOUR": 6, "SUBM": 1}
    audit = json.loads(_run("audit", out, "--json").stdout)
    assert all(audit["records"][t]["without_uid"] == 0 for t in ("FAM", "INDI", "NOTE", "SOUR", "SUBM"))
    assert tudor.read_bytes() == (GEDCOM_DIR / "real" / "EnglishTudorRoyalFamily.ged").read_bytes()


def test_add_uids_in_place_keeps_a_backup(tudor: Path) -> None:
    original = tudor.read_bytes()
    result = _run("add-uids", tudor, "--in-place", "--events", "--xarkid")
    assert result.returncode == 0, result.stderr
    assert Path(str(tudor) + ".bak").read_bytes() == original
    assert tudor.read_bytes() != original
    assert "added" in result.stdout
    assert not [p for p in tudor.parent.iterdir() if p.name.startswith(".pidkit-")]  # no temp file left


def test_migrate_and_match(tmp_path: Path) -> None:
    src = GEDCOM_DIR / "real" / "bach.ged"
    out = tmp_path / "bach7.ged"
    result = _run("migrate", src, "-o", out, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["renamed"] == 47
    assert b"\n1 _UID " not in out.read_bytes()
    matched = _run("match", src, out, "--json")
    assert matched.returncode == 0
    assert json.loads(matched.stdout)["match_count"] == 47
    text = _run("match", src, out)
    assert text.stdout.startswith("47 record(s) matched by UID")


def test_match_conflict_exit_status(tmp_path: Path) -> None:
    a = tmp_path / "a.ged"
    b = tmp_path / "b.ged"
    a.write_bytes(b"0 HEAD\n0 @I1@ INDI\n1 _UID X\n0 TRLR\n")
    b.write_bytes(b"0 HEAD\n0 @F1@ FAM\n1 _UID X\n0 TRLR\n")
    result = _run("match", a, b)
    assert result.returncode == 1
    assert "different types" in result.stdout


def test_errors_are_one_line(tmp_path: Path) -> None:
    missing = _run("audit", tmp_path / "nope.ged")
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1
    assert "nope.ged" in missing.stderr
    bad = tmp_path / "bad.ged"
    bad.write_bytes(b"\xff\xfe0\x00 \x00H")
    result = _run("audit", bad)
    assert result.returncode == 1
    assert result.stderr.startswith("pidkit: error: ")
    assert result.stderr.count("\n") == 1
    assert "bad.ged" in result.stderr
    assert "Traceback" not in result.stderr


def test_usage_errors_exit_2(tudor: Path) -> None:
    assert _run("add-uids", tudor).returncode == 2  # neither -o nor --in-place
    assert _run("add-uids", tudor, "-o", "x.ged", "--in-place").returncode == 2
    assert _run("audit").returncode == 2


def test_warnings_go_to_stderr(tmp_path: Path) -> None:
    messy = tmp_path / "messy.ged"
    messy.write_bytes(b"0 HEAD\n\n0 @I1@ INDI\n0 TRLR\n")
    result = _run("add-uids", messy, "-o", tmp_path / "out.ged")
    assert result.returncode == 0
    assert "messy.ged: line 2: blank line" in result.stderr


def test_in_process_main(tudor: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gedcom", "audit", str(GEDCOM_DIR / "real" / "basic.ged"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"]["INDI"]["with_uid"] == 5
    assert main(["gedcom", "audit", str(tudor), "--types", ","]) == 2
