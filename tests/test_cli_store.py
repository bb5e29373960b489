"""The store commands through the real entry point (``python -m pidkit``) and in process."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from _webutil import without_times
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
    assert without_times(r.stdout) == (
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
    r = run(other, "import", str(out))  # an ARK is bound under a NAAN the store serves (or with --force)
    assert r.returncode == 1 and "line 1: NAAN 99999 is not registered in this store" in r.stderr
    assert run(other, "naan", "add", "99999").returncode == 0
    r = run(other, "import", str(out))
    assert r.returncode == 0, r.stderr
    assert "imported 2 bindings (2 new, 0 updated)" in r.stderr
    assert run(other, "export").stdout.splitlines() == lines
    bad = lines[0] + "\n{oops\n" + lines[1].replace("fk4e2", "fk4e3").replace('"key":"ark:99999/fk4e3",', "")
    third = f"sqlite:///{tmp_path / 'third.db'}"
    assert run(third, "naan", "add", "99999").returncode == 0
    r = run(third, "import", "-", stdin=bad + "\n")
    assert r.returncode == 1
    assert "-: line 2: not JSON" in r.stderr
    assert "nothing imported" in r.stderr
    with open_store(f"sqlite:///{tmp_path / 'third.db'}") as s:
        assert s.list_bindings() == []


def test_import_force_is_needed_recorded_and_only_for_json_lines(db: str, tmp_path: Path) -> None:
    """Issue 11: an import binds as bind does — an unregistered NAAN is refused by line, --force
    imports it and records the override; --force / --update with --from, --drop-extra without, are
    usage errors."""
    run(db, "naan", "add", "99999")
    line = json.dumps({"text": "ark:12345/x1", "target": "https://example.org/x"})
    r = run(db, "import", "-", stdin=line + "\n")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [
        "pidkit: error: -: line 1: NAAN 12345 is not registered in this store",
        "pidkit: error: -: nothing imported (1 bad lines)",
        "pidkit: --force imports line(s) 1 anyway (an unregistered NAAN or a wrong check character; "
        "each override is recorded)",
    ]
    r = run(db, "import", "-", "--force", stdin=line + "\n")
    assert r.returncode == 0, r.stderr
    with open_store(db) as store:
        assert [(o.key, o.reason) for o in store.list_overrides()] == [
            ("ark:12345/x1", "NAAN 12345 is not registered in this store")]
    source = tmp_path / "dl.txt"
    source.write_text(":: ark:/99999/fk4a\n_target: https://e.org/a\n")
    for args, said in (
        (["--from", "ezid", str(source), "--force"], "--force goes with a JSON Lines import"),
        (["--from", "ezid", str(source), "--update"], "--update goes with a JSON Lines import"),
        (["-", "--drop-extra"], "--drop-extra goes with --from"),
    ):
        r = run(db, "import", *args, stdin="")
        assert r.returncode == 2 and r.stderr.startswith(f"pidkit: error: {said}"), r.stderr


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
    run(db, "naan", "add", "99999")
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


# -- issue 11 ----------------------------------------------------------------------------------------
def _fetch(db: str, ark: str) -> dict[str, object]:
    r = run(db, "fetch", ark, "--json")
    assert r.returncode == 0, r.stderr
    found: dict[str, object] = json.loads(r.stdout)
    return found


def test_bind_update_changes_only_what_it_names(db: str) -> None:
    run(db, "naan", "add", "99999")
    r = run(
        db, "bind", "ark:99999/fk4u1", "https://example.org/1", "--who", "Austin, Larry",
        "--what", "A Study", "--when", "1952", "--commitment", "Permanent", "--passthrough",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert run(db, "bind", "ark:99999/fk4u1", "https://example.org/2").returncode == 0
    b = _fetch(db, "ark:99999/fk4u1")
    assert b["target"] == "https://example.org/2"
    assert b["erc"] == {"who": "Austin, Larry", "what": "A Study", "when": "1952", "where": ""}
    assert b["support"] == {"who": "", "what": "Permanent", "when": "", "where": ""}
    assert b["passthrough"] is True
    assert run(db, "bind", "ark:99999/fk4u1", "--who", "", "--no-passthrough").returncode == 0
    b = _fetch(db, "ark:99999/fk4u1")
    assert b["erc"] == {"who": "", "what": "A Study", "when": "1952", "where": ""}
    assert (b["target"], b["passthrough"]) == ("https://example.org/2", False)


def test_bind_force_is_needed_and_reported(db: str) -> None:
    run(db, "naan", "add", "99999")
    r = run(db, "bind", "ark:12345/x1", "https://example.org/x")
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: NAAN 12345 is not registered in this store")
    assert "Traceback" not in r.stderr
    r = run(db, "bind", "ark:12345/x1", "https://example.org/x", "--force")
    assert r.returncode == 0, r.stderr
    assert "warning: ark:12345/x1: bound with --force: NAAN 12345 is not registered" in r.stderr
    with open_store(db) as store:
        assert [o.key for o in store.list_overrides()] == ["ark:12345/x1"]


@pytest.mark.parametrize(
    "args",
    [
        ["fetch", "ark:99999/x"],
        ["mint", "m"],
        ["minter", "list"],
        ["naan", "list"],
        ["export"],
        ["import", "-"],
        ["apikey", "list"],
        ["hold", "m", "x"],
        ["bind", "ark:99999/x", "https://example.org/"],
        ["tombstone", "ark:99999/x", "--reason", "r"],
        ["minter", "create", "m", "--naan", "99999", "--template", "fk4.reedeedk"],
        ["user", "list"],
        ["user", "add", "ann", "--naan", "99999", "--password-stdin"],
        ["user", "disable", "ann"],
        ["user", "passwd", "ann", "--password-stdin"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_commands_other_than_init_never_create_a_store(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "typo.db"
    r = run(f"sqlite:///{path}", *args, stdin="correct horse battery staple\n")
    assert r.returncode == 1
    assert r.stderr == f"pidkit: error: no pidkit store at {path} (create one with `pidkit init`)\n"
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_init_creates_once(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'new.db'}"
    r = run(db, "init")
    assert (r.returncode, r.stdout) == (0, "")
    assert "created a pidkit store" in r.stderr
    r = run(db, "init")
    assert r.returncode == 0
    assert "already" in r.stderr
    assert run(db, "naan", "list").returncode == 0


_NO_DIR = "directory /nonexistent/dir does not exist"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mint", "m"], f"no pidkit store at /nonexistent/dir/x.db: {_NO_DIR}"),
        (["init"], f"cannot create a store at /nonexistent/dir/x.db: {_NO_DIR}"),
        (["naan", "add", "99999"], f"cannot create a store at /nonexistent/dir/x.db: {_NO_DIR}"),
    ],
    ids=["mint", "init", "naan-add"],
)
def test_missing_directory_is_one_clear_line(args: list[str], message: str) -> None:
    r = run("sqlite:////nonexistent/dir/x.db", *args)
    assert r.returncode == 1
    assert r.stderr == f"pidkit: error: {message}\n"
    assert not os.path.exists("/nonexistent")


def _timed(
    db: str, *args: str, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "pidkit", *args, "--db", db],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip
    return time.monotonic() - started, r


@pytest.mark.parametrize(
    ("db", "message"),
    [
        pytest.param(
            "postgresql://postgres@127.0.0.1:1/x",
            'cannot use PostgreSQL: connection failed: connection to server at "127.0.0.1", port 1 failed: '
            "Connection refused; Is the server running on that host and accepting TCP/IP connections? "
            "in 'postgresql://postgres@127.0.0.1:1/x'",
            id="dead-port",
        ),
        pytest.param(
            "postgresql://u:s3cret@127.0.0.1:1/x?password=s3cret",
            "in 'postgresql://u:***@127.0.0.1:1/x?password=***'",
            id="secrets-redacted",
        ),
        pytest.param(
            "postgresql://postgres@127.0.0.1:1/x?sslmode=bogus",
            'invalid sslmode value: "bogus"',
            id="bad-parameter",
        ),
    ],
)
@pytest.mark.parametrize("command", [["mint", "fk4"], ["init"]], ids=["mint", "init"])
def test_unusable_postgresql_is_one_line_at_once(command: list[str], db: str, message: str) -> None:
    """Once, not once per retry of the pool (it logged every attempt until its timeout), and quick."""
    seconds, r = _timed(db, *command)
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: cannot use PostgreSQL: ")
    assert r.stderr.endswith("\n")
    assert r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr
    assert "s3cret" not in r.stderr
    assert seconds < 2.5  # no pool timeout (3 s) waited for


@pytest.mark.postgres
@pytest.mark.parametrize("command", [["mint", "fk4"], ["init"]], ids=["mint", "init"])
def test_a_postgresql_database_that_does_not_exist_is_one_line(postgres_url: str, command: list[str]) -> None:
    parts = urllib.parse.urlsplit(postgres_url)
    db = urllib.parse.urlunsplit(parts._replace(path="/pidkit_no_such_database"))
    seconds, r = _timed(db, *command)
    assert r.returncode == 1
    assert r.stderr.startswith("pidkit: error: cannot use PostgreSQL: connection failed: ")
    assert r.stderr.endswith(f'FATAL: database "pidkit_no_such_database" does not exist in {db!r}\n')
    assert r.stderr.count("\n") == 1
    assert seconds < 2.5


def test_a_postgresql_server_that_never_answers_is_bounded_by_a_connect_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        db = f"postgresql://postgres@127.0.0.1:{silent.getsockname()[1]}/x"
        seconds, r = _timed(db, "naan", "list", env={"PIDKIT_PG_TIMEOUT": "2"})
    assert r.returncode == 1
    assert r.stderr == f"pidkit: error: cannot use PostgreSQL: connection timeout expired in '{db}'\n"
    assert seconds < 10


def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n" * 200)
    for args in (["naan", "list"], ["init"]):
        r = run(f"sqlite:///{text}", *args)
        assert r.returncode == 1
        assert r.stderr.startswith("pidkit: error: not a pidkit store")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    r = run(f"sqlite:///{other}", "init")
    assert r.returncode == 1
    assert "a SQLite database of something else" in r.stderr
    with sqlite3.connect(other) as conn:  # untouched: no pidkit tables added
        assert [row[0] for row in conn.execute("SELECT name FROM sqlite_master")] == ["t"]
    conn.close()


@pytest.mark.parametrize("args", [["init"], ["naan", "list"], ["mint", "m"]], ids=lambda a: "-".join(a))
def test_a_directory_is_not_a_store(tmp_path: Path, args: list[str]) -> None:
    r = run(f"sqlite:///{tmp_path}", *args)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"pidkit: error: is a directory, not a store file in '{tmp_path}'\n"


def _seeded(db: str) -> None:
    run(db, "naan", "add", "99999")
    run(db, "bind", "ark:99999/fk4e1", "https://example.org/1", "--what", "One\u2028Two\u2029Three\x85Four")


def test_export_dash_is_stdout(db: str, tmp_path: Path) -> None:
    _seeded(db)
    r = subprocess.run(
        [sys.executable, "-m", "pidkit", "export", "-o", "-", "--db", db],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["key"] == "ark:99999/fk4e1"
    assert not (tmp_path / "-").exists()


def test_export_to_dev_stdout_keeps_the_device_link(db: str, tmp_path: Path) -> None:
    """Written through, never replaced: as root the old temp-file-and-rename replaced the /dev/stdout
    link itself; as another user it failed (no permission to write /dev)."""
    _seeded(db)
    kind = stat.S_IFMT(os.lstat("/dev/stdout").st_mode)
    before = os.readlink("/dev/stdout") if stat.S_ISLNK(kind) else None
    out = tmp_path / "out.jsonl"
    with out.open("w") as fh:
        r = subprocess.run(
            [sys.executable, "-m", "pidkit", "export", "-o", "/dev/stdout", "--db", db],
            stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert stat.S_IFMT(os.lstat("/dev/stdout").st_mode) == kind
    assert (os.readlink("/dev/stdout") if stat.S_ISLNK(kind) else None) == before
    assert json.loads(out.read_text(encoding="utf-8"))["key"] == "ark:99999/fk4e1"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(db: str, tmp_path: Path, umask: int, mode: int) -> None:
    _seeded(db)
    out = tmp_path / "new.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "pidkit", "export", "-o", str(out), "--db", db],
        capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.umask(umask),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert out.stat().st_mode & 0o777 == mode


def test_a_replaced_file_keeps_its_mode(db: str, tmp_path: Path) -> None:
    _seeded(db)
    out = tmp_path / "kept.jsonl"
    out.write_text("old\n")
    out.chmod(0o640)
    assert run(db, "export", "-o", str(out)).returncode == 0
    assert out.stat().st_mode & 0o777 == 0o640
    assert "fk4e1" in out.read_text(encoding="utf-8")


def test_export_import_with_unicode_line_breaks_in_values(db: str, tmp_path: Path) -> None:
    _seeded(db)
    out = tmp_path / "export.jsonl"
    assert run(db, "export", "-o", str(out)).returncode == 0
    exported = out.read_text(encoding="utf-8")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    run(other, "naan", "add", "99999")
    for source in ("file", "stdin"):
        r = run(other, "import", str(out)) if source == "file" else run(other, "import", "-", stdin=exported)
        assert r.returncode == 0, r.stderr
        assert _fetch(other, "ark:99999/fk4e1")["erc"] == {
            "who": "", "what": "One\u2028Two\u2029Three\x85Four", "when": "", "where": "",
        }  # fmt: skip


def test_a_damaged_store_file_is_one_line(db: str, tmp_path: Path) -> None:
    """The database failing under a command (here a damaged page of the bindings table) is one line
    naming the store, not a traceback."""
    _seeded(db)
    path = tmp_path / "cli.db"
    with sqlite3.connect(path) as conn:
        page_size, root = conn.execute(
            "SELECT (SELECT page_size FROM pragma_page_size), rootpage "
            "FROM sqlite_master WHERE name = 'bindings'"
        ).fetchone()
    conn.close()
    with path.open("r+b") as fh:
        fh.seek(page_size * (root - 1))
        fh.write(b"\xff" * page_size)
    for args in (["export"], ["bind", "ark:99999/fk4e2", "https://example.org/2"]):
        r = run(db, *args)
        assert r.returncode == 1
        assert r.stderr == f"pidkit: error: the store failed: database disk image is malformed (store {db})\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_answers_503_while_its_sqlite_file_is_gone(tmp_path: Path) -> None:
    """A real ``pidkit serve``: while the store file is moved away or deleted, writes get 503 (nothing
    acknowledged goes to a file nobody can open); moved back, it serves again; every write answered
    2xx is in the file at the end, none answered 503 is."""
    import httpx

    path = tmp_path / "served.db"
    db = f"sqlite:///{path}"
    assert run(db, "naan", "add", "99999").returncode == 0
    secret = run(db, "apikey", "create", "--naan", "99999").stdout.strip()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    with subprocess.Popen(
        [sys.executable, "-m", "pidkit", "serve", "--port", str(port), "--db", db, "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
    ) as server:  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        answered: dict[str, int] = {}
        auth = {"Authorization": f"Bearer {secret}"}
        try:
            with httpx.Client(base_url=base, headers=auth, timeout=30) as http:
                for _ in range(300):
                    try:
                        http.get("/.well-known/ark")
                        break
                    except httpx.TransportError:
                        assert server.poll() is None, server.communicate()[0]
                        time.sleep(0.1)

                def put(name: str) -> int:
                    body = {"ark": f"ark:99999/{name}", "target": f"https://example.org/{name}"}
                    answered[name] = http.put("/api/v1/bindings", json=body).status_code
                    return answered[name]

                assert put("b1") == 201
                away = tmp_path / "away.db"
                path.rename(away)
                assert put("b2") == 503
                assert http.get("/ark:99999/b1").status_code == 503
                away.rename(path)  # back: the same file
                assert put("b3") == 201
                assert http.get("/ark:99999/b1", follow_redirects=False).status_code == 302
                kept = tmp_path / "kept.db"
                os.link(path, kept)  # to look inside afterwards
                path.unlink()
                assert put("b4") == 503
                assert not path.exists()  # no new empty store in its place
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    assert answered == {"b1": 201, "b2": 503, "b3": 201, "b4": 503}
    assert not path.exists()
    with open_store(f"sqlite:///{kept}", create=False) as store:
        assert [b.key for b in store.list_bindings()] == ["ark:99999/b1", "ark:99999/b3"]


# -- pidkit mint under a real terminal (issue 11) ----------------------------------------------------


def _under_a_terminal(
    args: list[str], *, stdout: int, timeout: float = 120
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``pidkit ARGS`` with stdin and stderr on a new pseudo-terminal (100 columns, TERM=xterm),
    stdout as given; return the process (exited) and everything the terminal received."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    # what rich (the progress bar) reads to decide on a terminal, left to the terminal itself
    unset = ("PIDKIT_DATABASE_URL", "NO_COLOR", "TERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR",
             "COLUMNS", "LINES")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in unset}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pidkit", *args],
        stdin=slave, stdout=stdout, stderr=slave, env={**env, "TERM": "xterm"}, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every descriptor of the terminal's other end is closed
                    break
                if not chunk:
                    break
                received += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc, received.decode("utf-8", "replace")


@pytest.fixture
def minter_db(db: str) -> str:
    run(db, "naan", "add", "99999")
    r = run(db, "minter", "create", "m", "--naan", "99999", "--template", "fk4.reedeedk", "--seed", "3")
    assert r.returncode == 0, r.stderr
    return db


def test_mint_progress_on_the_terminal_ids_to_stdout(minter_db: str, tmp_path: Path) -> None:
    """``pidkit mint m -n 20000 > minted.txt`` typed in a terminal: the progress bar goes to the terminal,
    every id to the file, in minting order (rich's Progress would redirect stdout to the terminal)."""
    n = 20_000
    minted = tmp_path / "minted.txt"
    with minted.open("wb") as out:
        proc, terminal = _under_a_terminal(["mint", "m", "-n", str(n), "--batch", "1000", "--db", minter_db],
                                           stdout=out.fileno())  # fmt: skip
    assert proc.returncode == 0, terminal
    reference = Minter("fk4.reedeedk", "99999", seed=3)
    expected = [f"ark:99999/{reference.mint_at(i)}" for i in range(n)]
    assert minted.read_text(encoding="ascii").splitlines() == expected
    assert "ark:" not in terminal
    assert "minting" in terminal  # the progress bar was drawn there
    assert "Traceback" not in terminal


def test_mint_into_a_reader_that_stops_early(minter_db: str) -> None:
    """``pidkit mint m -n 200000 | head -n 1`` in a terminal: no traceback on the terminal, exit 0 (a
    reader that went away is not an error), and minting stops at the batch that could not be written."""
    read_end, write_end = os.pipe()
    first: list[bytes] = []

    def head() -> None:
        with os.fdopen(read_end, "rb") as pipe:
            first.append(pipe.readline())  # then the pipe closes, as head's does

    reader = threading.Thread(target=head)
    reader.start()
    try:
        proc, terminal = _under_a_terminal(
            ["mint", "m", "-n", "200000", "--batch", "1000", "--db", minter_db], stdout=write_end
        )
    finally:
        os.close(write_end)
        reader.join(timeout=60)
    assert first == [f"ark:99999/{Minter('fk4.reedeedk', '99999', seed=3).mint_at(0)}\n".encode()]
    assert proc.returncode == 0, terminal
    assert "Traceback" not in terminal
    assert "Error" not in terminal
    counter = int(run(minter_db, "minter", "list").stdout.split("\t")[4])
    assert counter < 200_000  # it stopped
