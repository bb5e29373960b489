"""The CLI side of issue 13 through the real entry point (``python -m pidkit``): ``bind --unavailable`` and
``--extra``, ``delete``, ``history``, ``check``, ``migrate-store``, ``import --update``."""

from __future__ import annotations

import getpass
import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from _webutil import without_times
from pidkit.store import open_store
from pidkit.store.migrations import LATEST


def run(db: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args, "--db", db], input=stdin, capture_output=True, text=True,
        env=env, timeout=120,
    )  # fmt: skip


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run(url, "naan", "add", "99999", "--shoulder", "fk4").returncode == 0
    return url


def test_bind_partially_withdraw_and_bring_back(db: str) -> None:
    r = run(db, "bind", "ark:99999/fk4x1", "https://example.org/x1", "--who", "W",
            "--extra", "dc.title=A Study")
    assert r.returncode == 0, r.stderr
    r = run(db, "bind", "ark:99999/fk4x1", "--unavailable", "withdrawn by author")
    assert (r.returncode, r.stdout) == (0, "ark:99999/fk4x1\tunavailable\thttps://example.org/x1\n")
    r = run(db, "fetch", "ark:99999/fk4x1")
    assert r.stdout.splitlines()[1] == "who: W"  # kept: the update named only the status
    tail = ["dc.title: A Study", "status: unavailable", "reason: withdrawn by author"]
    assert without_times(r.stdout).splitlines()[-3:] == tail
    r = run(db, "bind", "ark:99999/fk4x1", "--public", "--extra", "dc.title=")
    assert (r.returncode, r.stdout) == (0, "ark:99999/fk4x1\tpublic\thttps://example.org/x1\n")
    record = json.loads(run(db, "fetch", "ark:99999/fk4x1", "--json").stdout)
    assert (record["extra"], record["reason"], record["erc"]["who"]) == ({}, None, "W")


@pytest.mark.parametrize(("args", "message"), [
    (["--extra", "_owner=me"], "reserved (EZID)"),
    (["--extra", "dc.title"], "not NAME=VALUE"),
    (["--unavailable", "r", "--public"], "not allowed with argument"),
])  # fmt: skip
def test_bind_usage_errors_are_one_line(db: str, args: list[str], message: str) -> None:
    r = run(db, "bind", "ark:99999/fk4x2", "https://example.org/x2", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_delete_keeps_the_id_held(db: str) -> None:
    assert run(db, "bind", "ark:99999/fk4r", "--reserved").returncode == 0
    r = run(db, "delete", "ark:99999/fk4r")
    assert (r.returncode, r.stdout) == (0, "ark:99999/fk4r\tdeleted\theld\n")
    r = run(db, "bind", "ark:99999/fk4r", "https://example.org/r")
    assert r.returncode == 1 and r.stderr.startswith("pidkit: error: this ARK is held")
    assert run(db, "bind", "ark:99999/fk4p", "https://example.org/p").returncode == 0
    r = run(db, "delete", "ark:99999/fk4p")
    assert r.returncode == 1 and "only a reserved binding that was never published" in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_bind_never_reserves_a_published_ark_again(db: str) -> None:
    assert run(db, "bind", "ark:99999/fk4p", "https://example.org/p").returncode == 0
    r = run(db, "bind", "ark:99999/fk4p", "--reserved")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("pidkit: error: an identifier made public is never reserved again (withdraw it: "
                        "unavailable, with a reason) in 'ark:99999/fk4p'\n")
    r = run(db, "fetch", "ark:99999/fk4p", "--json")
    assert json.loads(r.stdout)["status"] == "public"


def test_history_lines_and_json(db: str) -> None:
    run(db, "bind", "ark:99999/fk4h", "https://example.org/1")
    run(db, "bind", "ark:99999/fk4h", "https://example.org/2")
    r = run(db, "history", "ark:/99999/fk4-h")
    assert r.returncode == 0, r.stderr
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    me = f"cli:{getpass.getuser()}@{socket.gethostname()}"
    assert [(f[1], f[2]) for f in lines] == [(me, "create"), (me, "update")]
    assert json.loads(lines[1][3]) == {"target": "https://example.org/1"} and lines[0][3] == "-"
    rows = [json.loads(line) for line in run(db, "history", "ark:99999/fk4h", "--json").stdout.splitlines()]
    assert rows[1]["after"] == {"target": "https://example.org/2"}
    r = run(db, "history", "99999", "--kind", "naan")
    assert [line.split("\t")[2] for line in r.stdout.splitlines()] == ["naan.add", "shoulder.add"]
    r = run(db, "history", "ark:99999/fk4none")
    assert (r.returncode, r.stderr) == (1, "pidkit: error: no history for ark 'ark:99999/fk4none'\n")


def test_check_passes_then_lists_problems(db: str, tmp_path: Path) -> None:
    run(db, "minter", "create", "m", "--naan", "99999", "--template", "fk4.reedeedk", "--seed", "1")
    run(db, "mint", "m", "-n", "3")
    r = run(db, "check")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        conn.execute("UPDATE minters SET counter = 0")
    conn.close()
    r = run(db, "check")
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "minter m: counter 0, but position 2 is in its minted log "
        "(the counter must be past every position minted)",
        "minter m: 3 ids minted, more than its counter 0",
    ]
    assert r.stderr.startswith("pidkit: error: ") and r.stderr.endswith("2 integrity problems\n")


def test_migrate_store_says_what_it_did(db: str, tmp_path: Path) -> None:
    r = run(db, "migrate-store")
    assert (r.returncode, r.stderr.split(": ", 1)[1]) == (0, f"schema {LATEST}, up to date\n")
    r = run(f"sqlite:///{tmp_path / 'none.db'}", "migrate-store")
    assert r.returncode == 1 and r.stderr.startswith("pidkit: error: no pidkit store at")
    assert not (tmp_path / "none.db").exists()


def test_import_update_names_fields(db: str, tmp_path: Path) -> None:
    run(db, "bind", "ark:99999/fk4i", "https://example.org/i", "--who", "W")
    lines = tmp_path / "u.jsonl"
    line = json.dumps({"text": "ark:99999/fk4i", "extra": {"dc.title": "T"}})
    lines.write_text(line + "\n", encoding="utf-8")
    r = run(db, "import", str(lines), "--update")
    assert (r.returncode, r.stderr) == (0, "imported 1 bindings (0 new, 1 updated)\n")
    with open_store(db) as s:
        b = s.get_binding("ark:99999/fk4i")
    assert b is not None and (b.erc.who, b.extra_dict) == ("W", {"dc.title": "T"})
    r = run(db, "import", str(lines))  # a full import: the line is the whole binding, and has no target
    assert r.returncode == 1 and "needs a target" in r.stderr


def test_a_store_of_a_newer_pidkit_is_refused_in_one_line(db: str, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        conn.execute("INSERT INTO schema_version (version, name, applied) VALUES (99, 'future', 'x')")
    conn.close()
    for command in (["naan", "list"], ["migrate-store"], ["check"]):
        r = run(db, *command)
        assert r.returncode == 1, command
        assert r.stderr.startswith("pidkit: error: this store has schema version 99, newer than this pidkit")
        assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    with sqlite3.connect(tmp_path / "cli.db") as conn:  # left as it was
        assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone() == (99,)
    conn.close()
