"""The store commands through the real entry point (``python -m pidkit``) and in process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.cli.main import main
from pidkit.noid import Minter
from pidkit.store import open_store


def run(db: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args, "--db", db],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def test_naan_minter_mint_flow(db: str) -> None:
    r = run(db, "naan", "add", "99999", "--name", "Test", "--shoulder", "b5")
    assert (r.returncode, r.stdout) == (0, "99999\tTest\tb5\n")
    r = run(db, "minter", "create", "m", "--naan", "99999", "--template", "fk4.reedeedk", "--seed", "3")
    assert (r.returncode, r.stdout) == (0, "m\t99999\tfk4.reedeedk\t3\t0\n")
    r = run(db, "naan", "list")
    assert r.stdout == "99999\tTest\tb5,fk4\n"
    r = run(db, "mint", "m", "-n", "5")
    assert r.returncode == 0, r.stderr
    reference = Minter("fk4.reedeedk", "99999", seed=3)
    assert r.stdout.split() == [f"ark:99999/{reference.mint_at(i)}" for i in range(5)]
    r = run(db, "minter", "list")
    assert r.stdout == "m\t99999\tfk4.reedeedk\t3\t5\n"
    held = reference.mint_at(5)
    r = run(db, "hold", "m", held)
    assert r.returncode == 0
    r = run(db, "mint", "m")
    assert r.stdout.split() == [f"ark:99999/{reference.mint_at(6)}"]


def test_bind_fetch_tombstone(db: str) -> None:
    run(db, "naan", "add", "99999")
    r = run(
        db, "bind", "ark:/99999/fk4-x1", "https://example.org/x1",
        "--who", "Austin, Larry", "--what", "A Study", "--when", "1952",
        "--commitment", "Permanent: Stable Content:", "--support-who", "UNT", "--passthrough",
    )  # fmt: skip
    assert (r.returncode, r.stdout) == (0, "ark:99999/fk4x1\tpublic\thttps://example.org/x1\n")
    r = run(db, "fetch", "ark:99999/fk4x1")
    assert r.stdout == (
        "erc:\nwho: Austin, Larry\nwhat: A Study\nwhen: 1952\nwhere: ark:99999/fk4x1\n"
        "erc-support:\nwho: UNT\nwhat: Permanent: Stable Content:\nwhen: (:unav)\nwhere: (:unav)\n"
    )
    r = run(db, "fetch", "ark:99999/fk4-x1", "--json")
    record = json.loads(r.stdout)
    assert (record["key"], record["passthrough"]) == ("ark:99999/fk4x1", True)
    assert record["text"] == "ark:/99999/fk4-x1"
    r = run(db, "tombstone", "ark:99999/fk4x1", "--reason", "withdrawn")
    assert r.stdout == "ark:99999/fk4x1\ttombstoned\twithdrawn\n"
    r = run(db, "bind", "ark:99999/fk4x1", "https://example.org/again")
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: tombstoned")
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(["mint", "nope"], 1, "unknown minter", id="unknown-minter"),
        pytest.param(
            ["minter", "create", "x", "--naan", "99999", "--template", "bad"],
            1,
            "generator",
            id="bad-template",
        ),
        pytest.param(["bind", "ark:99999/q", "javascript:alert(1)"], 1, "http or https", id="bad-url"),
        pytest.param(["bind", "ark:99999/q"], 1, "needs a target", id="no-target"),
        pytest.param(["bind", "no ark here", "https://e.org/"], 1, "", id="bad-ark"),
        pytest.param(["fetch", "ark:99999/none"], 1, "no binding", id="unbound"),
        pytest.param(["mint", "m", "-n", "0"], 2, "", id="zero"),
        pytest.param(["apikey", "revoke", "nope"], 1, "unknown API key", id="unknown-key"),
        pytest.param(["naan", "add", "99999"], 1, "already registered", id="dup-naan"),
    ],
)
def test_clear_errors(db: str, args: list[str], code: int, message: str) -> None:
    run(db, "naan", "add", "99999")
    r = run(db, *args)
    assert r.returncode == code
    assert "Traceback" not in r.stderr
    assert message in r.stderr
    if code == 1:
        assert r.stderr.startswith("pidkit: error: ")
        assert r.stderr.count("\n") == 1


def test_export_import(db: str, tmp_path: Path) -> None:
    run(db, "naan", "add", "99999")
    run(db, "bind", "ark:99999/fk4e1", "https://example.org/1", "--what", "One")
    run(db, "bind", "ark:99999/fk4e2", "--reserved")
    out = tmp_path / "export.jsonl"
    r = run(db, "export", "-o", str(out))
    assert r.returncode == 0
    assert "exported 2" in r.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["ark:99999/fk4e1", "ark:99999/fk4e2"]
    r = run(db, "export")
    assert r.stdout.splitlines() == lines
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert run(other, "init").returncode == 0
    r = run(other, "import", str(out))
    assert r.returncode == 0, r.stderr
    assert "imported 2 bindings (2 new, 0 updated)" in r.stderr
    assert run(other, "export").stdout.splitlines() == lines
    bad = lines[0] + "\n{oops\n" + lines[1].replace("fk4e2", "fk4e3").replace('"key":"ark:99999/fk4e3",', "")
    third = f"sqlite:///{tmp_path / 'third.db'}"
    assert run(third, "init").returncode == 0
    r = run(third, "import", "-", stdin=bad + "\n")
    assert r.returncode == 1
    assert "-: line 2: not JSON" in r.stderr
    assert "nothing imported" in r.stderr
    with open_store(f"sqlite:///{tmp_path / 'third.db'}") as s:
        assert s.list_bindings() == []


def test_apikeys(db: str) -> None:
    run(db, "naan", "add", "99999")
    r = run(db, "apikey", "create", "--naan", "99999", "--shoulder", "fk4", "--label", "ci")
    assert r.returncode == 0
    secret = r.stdout.strip()
    assert secret.startswith("pk_")
    assert "not shown again" in r.stderr
    assert secret not in r.stderr
    key_id = secret.split("_")[1]
    r = run(db, "apikey", "list")
    fields = r.stdout.split("\t")
    assert fields[:4] == [key_id, "99999", "fk4", "ci"]
    assert fields[5] == "-\n"
    assert secret not in r.stdout
    r = run(db, "apikey", "revoke", key_id)
    assert r.stdout == f"{key_id}\trevoked\n"
    with open_store(db) as s:
        assert s.verify_api_key(secret) is None


def test_in_process(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["naan", "add", "12345", "--db", db]) == 0
    assert main(["minter", "create", "s", "--naan", "12345", "--template", "b5.sd", "--db", db]) == 0
    capsys.readouterr()
    assert main(["mint", "s", "-n", "10", "--batch", "3", "--db", db]) == 0
    assert sorted(capsys.readouterr().out.split()) == [f"ark:12345/b5{d}" for d in "0123456789"]
    assert main(["mint", "s", "--db", db]) == 1
    assert "too few ids left" in capsys.readouterr().err


def test_import_hand_written_minimal_lines(db: str) -> None:
    run(db, "init")
    lines = '{"text": "ark:/99999/fk4-m1", "target": "https://example.org/m1"}\n{"text": "ark:99999/fk4m2"}\n'
    r = run(db, "import", "-", stdin=lines)
    assert r.returncode == 1  # the second line is public (the default) without a target
    assert "line 2" in r.stderr
    assert "needs a target" in r.stderr
    r = run(db, "import", "-", stdin=lines.splitlines()[0] + "\n")
    assert r.returncode == 0, r.stderr
    with open_store(db) as s:
        b = s.get_binding("ark:99999/fk4m1")
        assert b is not None
        assert (b.kind, b.status, b.target) == ("ark", "public", "https://example.org/m1")
