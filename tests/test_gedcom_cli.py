"""``pidkit gedcom …`` through the real entry point (``python -m pidkit``) and in-process ``main``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import gedcom7
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


def _real(path: Path) -> str:
    """The name pidkit gives a file it replaces (a symlink followed)."""
    return os.path.realpath(path)


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
    assert result.stderr.endswith(f"pidkit: backup (the file before this run) kept as {tudor}.bak\n")
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


def _not_gedcom_cases(tmp_path: Path) -> list[tuple[Path, str]]:
    passwd = tmp_path / "passwd"
    passwd.write_bytes(b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    empty = tmp_path / "empty.ged"
    empty.write_bytes(b"")
    record_first = tmp_path / "no-head.ged"
    record_first.write_bytes(b"0 @I1@ INDI\n1 _UID X\n0 TRLR\n")
    return [
        (passwd, "does not start with '0 HEAD' (line 1: 'root:x:0:0:root:/root:/bin/bash')"),
        (empty, "the file is empty"),
        (record_first, "does not start with '0 HEAD' (line 1: '0 @I1@ INDI')"),
    ]


def test_not_a_gedcom_file_is_an_error_for_every_command(tmp_path: Path) -> None:
    good = GEDCOM_DIR / "real" / "bach.ged"
    out = tmp_path / "out.ged"
    for path, why in _not_gedcom_cases(tmp_path):
        for args in (
            ("audit", path),
            ("audit", path, "--json"),
            ("add-uids", path, "-o", out),
            ("migrate", path, "-o", out),
            ("match", path, good),
            ("match", good, path),
        ):
            result = _run(*args)
            assert result.returncode == 1, (args, result.stdout)
            assert result.stderr == f"pidkit: error: {path}: not a GEDCOM file: {why}\n", args
            assert result.stdout == ""
            assert not out.exists()


def test_every_real_and_official_file_is_a_gedcom_file(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(GEDCOM_DIR.rglob("*.ged"))
    assert len(files) >= 60
    for path in files:
        code = main(["gedcom", "audit", str(path), "--json"])
        captured = capsys.readouterr()
        assert "not a GEDCOM file" not in captured.err, path
        assert json.loads(captured.out)["file"] == str(path)
        assert code in (0, 1)


def _run_stdin(stdin: bytes, *args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", "gedcom", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_every_reading_command_takes_stdin(tmp_path: Path) -> None:
    src = GEDCOM_DIR / "real" / "bach.ged"
    data = src.read_bytes()
    from_file = json.loads(_run("audit", src, "--json").stdout)
    audited = _run_stdin(data, "audit", "-", "--json")
    assert audited.returncode == 0, audited.stderr
    from_stdin = json.loads(audited.stdout)
    assert from_stdin.pop("file") == "<stdin>"
    from_file.pop("file")
    assert from_stdin == from_file
    assert _run_stdin(data, "audit", "-").stdout.decode().startswith("<stdin>: GEDCOM 5.5, utf-8\n")
    # migrate and add-uids from stdin, to a file and to stdout (the report then goes to stderr)
    out = tmp_path / "out.ged"
    migrated = _run_stdin(data, "migrate", "-", "-o", out)
    assert migrated.returncode == 0, migrated.stderr
    expected = tmp_path / "expected.ged"
    assert _run("migrate", src, "-o", expected).returncode == 0
    assert out.read_bytes() == expected.read_bytes()
    to_stdout = _run_stdin(data, "migrate", "-", "-o", "-")
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == expected.read_bytes()
    assert b"renamed 47 _UID line(s) to UID" in to_stdout.stderr
    added = _run_stdin(b"0 HEAD\n0 @I1@ INDI\n0 TRLR\n", "add-uids", "-", "-o", "-", "--json")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith(b"0 HEAD\n0 @I1@ INDI\n1 _UID ")
    assert json.loads(added.stderr)["added"] == 1
    # match: either side may be stdin, not both
    b = tmp_path / "b.ged"
    assert _run("migrate", src, "-o", b).returncode == 0
    for args in (("match", "-", b, "--json"), ("match", b, "-", "--json")):
        matched = _run_stdin(data, *args)
        assert matched.returncode == 0, matched.stderr
        assert json.loads(matched.stdout)["match_count"] == 47


def test_stdin_usage_errors(tmp_path: Path) -> None:
    data = (GEDCOM_DIR / "real" / "bach.ged").read_bytes()
    both = _run_stdin(data, "match", "-", "-")
    assert both.returncode == 2
    assert both.stderr == b"pidkit: error: match: only one of A and B can be - (standard input)\n"
    for command in ("add-uids", "migrate"):
        in_place = _run_stdin(data, command, "-", "--in-place")
        assert in_place.returncode == 2
        assert in_place.stderr == b"pidkit: error: --in-place: standard input cannot be edited in place\n"
    not_gedcom = _run_stdin(b"hello\n", "audit", "-")
    assert not_gedcom.returncode == 1
    assert not_gedcom.stderr == (
        b"pidkit: error: <stdin>: not a GEDCOM file: does not start with '0 HEAD' (line 1: 'hello')\n"
    )


def test_audit_of_8_bit_files_has_no_false_decoding_warnings() -> None:
    for name in ("constructed/ansel-diacritics.ged", "constructed/ibm-windows.ged", "real/royal92.ged"):
        path = GEDCOM_DIR / name  # royal92.ged: a real ANSEL export (ASCII bytes only)
        result = _run("audit", path, "--json")
        assert result.returncode == 0, result.stdout
        report = json.loads(result.stdout)
        assert report["warnings"] == []
        assert report["ok"] is True


def test_audit_json_warnings_in_line_order_capped_per_kind(tmp_path: Path) -> None:
    path = tmp_path / "warned.ged"
    # 150 blank lines, then an unknown HEAD.CHAR (a warning found after the bytes before it were
    # checked) and bytes that are not UTF-8
    path.write_bytes(
        b"0 HEAD\n" + b"\n" * 150 + b"1 CHAR NOSUCH\n0 @I1@ INDI\n1 NAME \xff\n1 NAME \xfe\n0 TRLR\n"
    )
    report = json.loads(_run("audit", path, "--json").stdout)
    assert report["warning_counts"] == {"blank-line": 150, "charset": 1, "decode": 2}
    assert report["warnings_omitted"] == {"blank-line": 50}
    lines = [int(w.split(":")[0].removeprefix("line ")) for w in report["warnings"]]
    assert lines == sorted(lines)
    assert lines == [*range(2, 102), 152, 154, 155]
    assert report["warnings"][-3:] == [
        "line 152: unknown HEAD.CHAR 'NOSUCH'; read as utf-8",
        "line 154: byte 0xff at position 8 is not valid utf-8 (kept as is)",
        "line 155: byte 0xfe at position 8 is not valid utf-8 (kept as is)",
    ]


def test_audit_dev_zero_ends_quickly_with_bounded_memory() -> None:
    # a fresh process whose only child is pidkit: its RUSAGE_CHILDREN peak is pidkit's
    script = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-m', 'pidkit', 'gedcom', 'audit', '/dev/zero'],"
        " capture_output=True, text=True, timeout=60)\n"
        "print(r.returncode); print(r.stdout == ''); print(r.stderr.strip())\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    code, no_stdout, stderr, peak_kib = result.stdout.splitlines()
    assert code == "1"
    assert no_stdout == "True"
    assert stderr == "pidkit: error: /dev/zero: line 1 is longer than 1048576 bytes"
    assert int(peak_kib) < 200 * 1024


def test_max_line_bytes_flag(tmp_path: Path) -> None:
    path = tmp_path / "long.ged"
    path.write_bytes(b"0 HEAD\n0 @I1@ INDI\n1 NAME " + b"x" * 200 + b"\n0 TRLR\n")
    for command in (("audit", path), ("add-uids", path, "-o", tmp_path / "o.ged"), ("match", path, path)):
        result = _run(*command, "--max-line-bytes", "100")
        assert result.returncode == 1
        assert result.stderr == f"pidkit: error: {path}: line 3 is longer than 100 bytes\n"
    assert _run("audit", path, "--max-line-bytes", "207").returncode == 0
    assert _run("audit", path, "--max-line-bytes", "0").returncode == 2


def test_in_place_refuses_fifos_and_devices(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.ged"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/null"), "a character device")):
        for command in ("add-uids", "migrate"):
            result = _run(command, path, "--in-place")
            assert result.returncode == 1
            assert result.stderr == f"pidkit: error: {kind} cannot be edited in place in '{path}'\n"


def _big_gedcom(path: Path, records: int = 300_000) -> bytes:
    body = b"".join(b"0 @I%d@ INDI\n1 NAME Anna /Berg/\n" % n for n in range(records))
    data = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n1 CHAR UTF-8\n" + body + b"0 TRLR\n"
    path.write_bytes(data)
    return data


def test_progress_bar_on_a_terminal_never_touches_stdout(tmp_path: Path) -> None:
    import pty

    from pidkit.cli.gedcom import PROGRESS_MIN_BYTES

    big = tmp_path / "big.ged"
    data = _big_gedcom(big)
    assert len(data) > PROGRESS_MIN_BYTES
    out = tmp_path / "stdout.ged"
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    with out.open("wb") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pidkit", "gedcom", "add-uids", str(big), "-o", "-", "--json"],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=slave,
            env=env,
        )
    os.close(slave)
    terminal = b""
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not piece:
            break
        terminal += piece
    os.close(master)
    assert proc.wait(timeout=300) == 0, terminal[-2000:]
    written = out.read_bytes()
    # the whole GEDCOM, and only it, went to stdout: the input plus one _UID line per record
    lines = written.splitlines(keepends=True)
    uid_lines = [ln for ln in lines if ln.startswith(b"1 _UID ")]
    assert len(uid_lines) == 300_000
    assert b"".join(ln for ln in lines if not ln.startswith(b"1 _UID ")) == data
    # the terminal got the progress bar and the report, not a line of the GEDCOM
    assert b"big.ged" in terminal  # the bar's description
    assert b'"added": 300000' in terminal
    assert re.search(rb"0 @I\d+@ INDI|1 NAME Anna|1 _UID [0-9A-F]{36}", terminal) is None


def test_progress_bar_leaves_stdout_and_stderr_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from pidkit.cli import gedcom as gedcom_cli

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    big = tmp_path / "big.ged"
    _big_gedcom(big, 1000)
    monkeypatch.setattr(gedcom_cli, "PROGRESS_MIN_BYTES", 1)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    stdout = sys.stdout
    with gedcom_cli._open(str(big)) as reader:
        assert sys.stdout is stdout  # rich's Progress would have swapped in a proxy to the terminal
        assert sys.stderr is terminal
        assert sum(1 for _ in reader) == 1002
    assert "big.ged" in terminal.getvalue()


def test_migrate_strict_writes_nothing_and_names_the_line(tmp_path: Path) -> None:
    src = GEDCOM_DIR / "real" / "bach.ged"  # HEAD.FILE: gone in 7.0
    out = tmp_path / "bach7.ged"
    result = _run("migrate", src, "-o", out, "--strict")
    assert result.returncode == 1
    assert result.stderr == (
        f"pidkit: error: {src}: HEAD.FILE bach.ged (not in GEDCOM 7), dropped (--strict) on line 12\n"
    )
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pidkit-")]  # no temp file left
    lenient = _run("migrate", src, "-o", out)
    assert lenient.returncode == 0, lenient.stderr
    assert "1 loss(es)" in lenient.stdout and "line 12: HEAD.FILE bach.ged" in lenient.stdout
    assert out.read_bytes().startswith(b"\xef\xbb\xbf0 HEAD\n1 GEDC\n2 VERS 7.0\n")


def test_migrate_add_uids_in_the_same_pass(tmp_path: Path) -> None:
    src = GEDCOM_DIR / "real" / "bach.ged"
    out = tmp_path / "bach7.ged"
    result = _run("migrate", src, "-o", out, "--add-uids", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["renamed"] == 47 and report["added_uids"] == 1  # the SUBM had none
    audited = json.loads(_run("audit", out, "--json").stdout)
    assert audited["version"] == "7.0"
    assert all(counts["without_uid"] == 0 for counts in audited["records"].values())
    assert audited["tags"] == {"UID": 48}
    assert audited["forms"] == {"valid": 47, "uuid": 1}  # the PAF values kept verbatim, a new UUID


def test_migrate_strict_moves_an_inline_sources_uid_to_its_record(tmp_path: Path) -> None:
    # issue 17 audit: "2 UID" under a citation came out (invalid 7.0) and --strict exited 0; the _UID goes
    # to the SOUR record made from the inline source, verbatim, and the file is valid 7.0
    uid = "161C15D03ECE47968211BBB2E9EE7F4FA5A6"
    src = tmp_path / "inline-sour-uid.ged"
    head = "0 HEAD\n1 GEDC\n2 VERS 5.5.1\n1 CHAR UTF-8\n"
    src.write_bytes(f"{head}0 @I1@ INDI\n1 SOUR a book\n2 _UID {uid}\n0 TRLR\n".encode())
    out = tmp_path / "out.ged"
    result = _run("migrate", src, "-o", out, "--strict", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["renamed"] == 1 and report["loss_count"] == 0 and report["no_home_count"] == 0
    written = out.read_bytes()
    assert written == (
        f"\ufeff0 HEAD\n1 GEDC\n2 VERS 7.0\n0 @I1@ INDI\n1 SOUR @X1@\n0 @X1@ SOUR\n1 NOTE a book\n"
        f"1 UID {uid}\n0 TRLR\n".encode()
    )
    records = gedcom7.loads(written.decode("utf-8"))
    assert [e.message for e in gedcom7.validate(records)] == []


def test_migrate_reads_a_fifo_twice(tmp_path: Path) -> None:
    # migrate reads its input twice: what cannot be read again (a FIFO, standard input) is spooled
    src = GEDCOM_DIR / "real" / "bach.ged"
    fifo = tmp_path / "in.ged"
    os.mkfifo(fifo)
    expected = tmp_path / "expected.ged"
    assert _run("migrate", src, "-o", expected).returncode == 0
    with subprocess.Popen(["/bin/sh", "-c", f"cat '{src}' > '{fifo}'"]) as writer:
        result = subprocess.run(
            [sys.executable, "-m", "pidkit", "gedcom", "migrate", str(fifo), "-o", "-"],
            capture_output=True,
            timeout=120,
            check=False,
        )
        writer.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.read_bytes()


def test_migrate_in_place_keeps_the_5_file_as_backup(tudor: Path) -> None:
    original = tudor.read_bytes()
    result = _run("migrate", tudor, "--in-place", "--json")
    assert result.returncode == 0, result.stderr
    assert Path(str(tudor) + ".bak").read_bytes() == original
    assert tudor.read_bytes().startswith(b"\xef\xbb\xbf0 HEAD\n1 GEDC\n2 VERS 7.0\n1 SOUR Legacy\n")
    report = json.loads(result.stdout)
    assert report["loss_count"] == len(report["losses"]) > 0  # e.g. dates 7.0 cannot read, kept as PHRASE
    assert all(re.match(r"line [0-9]+: ", loss) for loss in report["losses"])


# -- --in-place never overwrites a backup: the first free FILE.bak, FILE.bak.1 … ----------------------------


@pytest.mark.parametrize("command", ["add-uids", "migrate"])
def test_in_place_never_overwrites_an_existing_backup(tudor: Path, command: str) -> None:
    # issue: an existing FILE.bak (the user's earlier backup) was silently replaced
    original = tudor.read_bytes()
    earlier = Path(f"{tudor}.bak")
    earlier.write_bytes(b"the user's earlier backup")
    earlier.chmod(0o600)
    tudor.chmod(0o640)
    result = _run(command, tudor, "--in-place")
    assert result.returncode == 0, result.stderr
    assert earlier.read_bytes() == b"the user's earlier backup"
    assert earlier.stat().st_mode & 0o777 == 0o600
    kept = Path(f"{tudor}.bak.1")
    assert kept.read_bytes() == original
    assert kept.stat().st_mode & 0o777 == 0o640
    assert tudor.read_bytes() != original
    assert result.stderr.count("backup") == 1
    assert result.stderr.endswith(f"pidkit: backup (the file before this run) kept as {kept}\n")
    # --json: in the JSON object, not on stderr (the warnings are there too)
    again = _run(command, tudor, "--in-place", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["backup"] == f"{tudor}.bak.2"
    assert "backup" not in again.stderr
    assert earlier.read_bytes() == b"the user's earlier backup" and kept.read_bytes() == original
    assert not [p for p in tudor.parent.iterdir() if ".pidkit-" in p.name]  # no temp file left


def test_migrate_then_add_uids_in_place_keep_the_original_and_the_7_file(tmp_path: Path) -> None:
    # issue: the second run's backup (the 7.0 file) replaced the first's, the 5.5.1 original: lost
    src = tmp_path / "bach.ged"
    shutil.copyfile(GEDCOM_DIR / "real" / "bach.ged", src)
    original = src.read_bytes()
    first = _run("migrate", src, "--in-place")
    assert first.returncode == 0, first.stderr
    migrated = src.read_bytes()
    assert migrated.startswith(b"\xef\xbb\xbf0 HEAD\n1 GEDC\n2 VERS 7.0\n")
    second = _run("add-uids", src, "--in-place")
    assert second.returncode == 0, second.stderr
    assert Path(f"{src}.bak").read_bytes() == original
    assert Path(f"{src}.bak.1").read_bytes() == migrated
    assert src.read_bytes() != migrated and src.read_bytes().startswith(migrated[:40])
    assert f"kept as {src}.bak\n" in first.stderr
    assert f"kept as {src}.bak.1\n" in second.stderr


def test_a_backup_name_that_is_taken_in_any_way_is_skipped(tmp_path: Path) -> None:
    src = tmp_path / "tree.ged"
    src.write_bytes(b"0 HEAD\n0 @I1@ INDI\n0 TRLR\n")
    Path(f"{src}.bak").mkdir()  # a directory
    Path(f"{src}.bak.1").symlink_to(tmp_path / "nowhere")  # a dangling symlink: not written through
    result = _run("add-uids", src, "--in-place")
    assert result.returncode == 0, result.stderr
    assert Path(f"{src}.bak.2").read_bytes() == b"0 HEAD\n0 @I1@ INDI\n0 TRLR\n"
    assert not (tmp_path / "nowhere").exists()
    assert Path(f"{src}.bak").is_dir() and Path(f"{src}.bak.1").is_symlink()


def test_the_backup_is_named_as_the_user_named_the_file(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "tree.ged"
    real.write_bytes(b"0 HEAD\n0 @I1@ INDI\n0 TRLR\n")
    relative = _run("add-uids", "tree.ged", "--in-place", cwd=tmp_path / "real")
    assert relative.stderr == "pidkit: backup (the file before this run) kept as tree.ged.bak\n"
    # through a symbolic link the file it points to is replaced, and backed up next to it: named in full
    (tmp_path / "link.ged").symlink_to(real)
    linked = _run("add-uids", "link.ged", "--in-place", "--json", cwd=tmp_path)
    assert json.loads(linked.stdout)["backup"] == f"{_real(real)}.bak.1"
    assert (tmp_path / "link.ged").is_symlink() and not (tmp_path / "link.ged.bak").exists()


# -- migrate: undecodable bytes are losses (U+FFFD in the 7.0 output), --strict refuses them ---------------

_HEAD_CHAR = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n1 CHAR "
_NAME_LINE = b"\n0 @I1@ INDI\n1 NAME J\xe9r\n0 TRLR\n"
_UTF16 = "0 HEAD\n1 GEDC\n2 VERS 5.5.1\n1 CHAR UNICODE\n0 @I1@ INDI\n1 NAME J\ud800r\n0 TRLR\n"
_UNDECODABLE = {
    # file name: (its bytes, what the error and the loss say, the encoding read)
    "utf8.ged": (_HEAD_CHAR + b"UTF-8" + _NAME_LINE, "byte 0xe9 at position 9", "utf-8"),
    "ascii.ged": (_HEAD_CHAR + b"ASCII" + _NAME_LINE, "byte 0xe9 at position 9", "ascii"),
    "nosuch.ged": (_HEAD_CHAR + b"NOSUCH" + _NAME_LINE, "byte 0xe9 at position 9", "utf-8"),
    "ansel.ged": (
        _HEAD_CHAR + b"ANSEL" + _NAME_LINE.replace(b"\xe9", b"\x80"),
        "byte 0x80 at position 9",
        "gedcom",
    ),
    "utf16.ged": (
        b"\xff\xfe" + _UTF16.encode("utf-16-le", "surrogatepass"),
        "code unit 0xd800 (an unpaired surrogate) at position 17",
        "utf-16-le",
    ),
}


@pytest.mark.parametrize("name", _UNDECODABLE)
def test_migrate_strict_refuses_undecodable_bytes_naming_file_line_and_byte(
    tmp_path: Path, name: str
) -> None:
    # issue: U+FFFD was written silently, "(kept as is)" was said, loss_count 0 and --strict exited 0
    data, what, codec = _UNDECODABLE[name]
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out.ged"
    said = f"{what} is not valid {codec}: replaced by U+FFFD in the GEDCOM 7 output"
    strict = _run("migrate", "--strict", src, "-o", out)
    assert strict.returncode == 1
    assert strict.stderr == f"pidkit: error: {src}: {said} (--strict) on line 6\n"
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written, no temp file left
    lenient = _run("migrate", src, "-o", out, "--json")
    assert lenient.returncode == 0, lenient.stderr
    report = json.loads(lenient.stdout)
    assert report["loss_count"] == 1 and report["loss_counts"] == {"decode": 1}
    assert report["losses"] == [f"line 6: {said}"]
    assert "kept as is" not in lenient.stderr + lenient.stdout
    assert out.read_bytes().split(b"\n")[4] == "1 NAME J\ufffdr".encode()
    text = _run("migrate", src, "-o", out)
    assert f"    line 6: {said}\n" in text.stdout and "kept as is" not in text.stderr
    # add-uids keeps every byte, and says so, in the encoding it read
    added = _run("add-uids", src, "-o", out)
    assert added.returncode == 0, added.stderr
    assert f"{src}: line 6: {what} is not valid {codec} (kept as is)\n" in added.stderr
    if codec.startswith("utf-16"):
        name_line = "1 NAME J\ud800r\n".encode(codec, "surrogatepass")
    else:
        name_line = data.split(b"\n")[5] + b"\n"
    assert name_line in out.read_bytes()


def test_migrate_strict_refuses_an_undecodable_byte_in_an_xref(tmp_path: Path) -> None:
    # issue: `0 @I\xe91@ INDI` was written as `0 @X1@ INDI` with neither loss nor warning, --strict exit 0
    src = tmp_path / "x.ged"
    src.write_bytes(_HEAD_CHAR + b"UTF-8\n0 @I\xe91@ INDI\n1 NAME J\n0 TRLR\n")
    out = tmp_path / "x7.ged"
    said = (
        "byte 0xe9 at position 5 is not valid utf-8: in cross-reference identifier @I\ufffd1@, "
        "renamed in the GEDCOM 7 output"
    )
    strict = _run("migrate", "--strict", src, "-o", out)
    assert strict.returncode == 1
    assert strict.stderr == f"pidkit: error: {src}: {said} (--strict) on line 5\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.ged"]
    lenient = _run("migrate", src, "-o", out, "--json")
    assert lenient.returncode == 0, lenient.stderr
    report = json.loads(lenient.stdout)
    assert report["losses"] == [f"line 5: {said}"] and report["loss_counts"] == {"decode": 1}
    assert out.read_bytes().split(b"\n")[3] == b"0 @X1@ INDI"
