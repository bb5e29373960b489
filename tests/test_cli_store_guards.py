"""What the store commands refuse so that nothing stored is lost: an export or a dump written over the
store's own file, an empty file taken for a store, a file that is not UTF-8 read as far as it decodes,
a restore of a missing file leaving a new store behind.  Found by a red-team pass on 2026-11-30: the
first of them replaced the store (its NAANs, minters and minted log) and exited 0."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from pidkit.cli.main import main
from pidkit.store import open_store


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    """A SQLite store with a NAAN, a minter, two minted ids and a binding."""
    path = tmp_path / "pidkit.db"
    with open_store(f"sqlite:///{path}") as s:
        s.add_naan("99999", "Test", shoulders=["fk4"])
        s.create_minter("m", naan="99999", template="fk4.reedeedk", seed=1)
        s.mint("m", 2)
        s.bind("ark:99999/x", "https://e.org/x")
    return path


def _state(path: Path) -> tuple[object, ...]:
    with open_store(f"sqlite:///{path}", create=False) as s:
        minter = s.get_minter("m")
        return ([n.naan for n in s.list_naans()], minter.counter, [b.key for b in s.list_bindings()])


@pytest.mark.parametrize("command", ["export", "dump"])
@pytest.mark.parametrize("name", ["pidkit.db", "pidkit.db-wal", "pidkit.db-shm", "link.db", "hard.db"])
def test_no_export_or_dump_over_the_store(
    store_file: Path, command: str, name: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(store_file.parent)
    os.symlink("pidkit.db", "link.db")
    os.link("pidkit.db", "hard.db")
    before, size = _state(store_file), store_file.stat().st_size
    code = main([command, "-o", name, "--db", f"sqlite:///{store_file}"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"is the store's own file: writing there would replace the store in '{name}'" in err
    assert store_file.stat().st_size == size and _state(store_file) == before
    assert before == (["99999"], 2, ["ark:99999/x"])
    assert main([command, "-o", "out.txt", "--db", f"sqlite:///{store_file}"]) == 0  # elsewhere: written
    assert Path("out.txt").stat().st_size > 0


def test_an_empty_file_is_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    assert main(["naan", "list", "--db", f"sqlite:///{empty}"]) == 1
    assert "no pidkit store at" in capsys.readouterr().err
    assert empty.stat().st_size == 0  # (it became a 200 KB store)
    assert main(["init", "--db", f"sqlite:///{empty}"]) == 0  # made one on purpose: fine
    assert main(["naan", "list", "--db", f"sqlite:///{empty}"]) == 0


@pytest.mark.parametrize("command", ["import", "restore"])
@pytest.mark.parametrize("from_stdin", [False, True])
def test_a_line_not_utf8_is_named(
    store_file: Path, tmp_path: Path, command: str, from_stdin: bool, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = b'{"text": "ark:99999/y", "target": "https://e.org/y"}\n{"text": "ark:99999/z\xe9"}\n'
    db = f"sqlite:///{store_file}" if command == "import" else f"sqlite:///{tmp_path / 'new.db'}"
    if from_stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
        source = "-"
    else:
        (tmp_path / "in.jsonl").write_bytes(data)
        source = str(tmp_path / "in.jsonl")
    before = _state(store_file)
    code = main([command, source, "--db", db])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    if command == "import":
        assert f"not UTF-8: byte 0xe9, the line's byte 22, in '{source}' on line 2" in err
        assert _state(store_file) == before  # all or nothing
    else:  # a restore reads the header first: line 1 is not a dump's
        assert "on line 1" in err


def test_a_restore_of_a_missing_file_makes_no_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "new.db"
    assert main(["restore", str(tmp_path / "missing.jsonl"), "--db", f"sqlite:///{target}"]) == 1
    assert "missing.jsonl" in capsys.readouterr().err
    assert not target.exists()


def test_a_dump_with_a_line_not_utf8_restores_nothing(store_file: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "d.jsonl"
    assert main(["dump", "-o", str(dump), "--db", f"sqlite:///{store_file}"]) == 0
    lines = dump.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].replace(b"https://e.org/x", b"https://e.org/\xff")
    dump.write_bytes(b"".join(lines))
    target = tmp_path / "r.db"
    assert main(["restore", str(dump), "--db", f"sqlite:///{target}"]) == 1
    assert "not UTF-8: byte 0xff, the line's byte" in capsys.readouterr().err
    with open_store(f"sqlite:///{target}", create=False) as s:
        assert s.list_naans() == [] and s.list_bindings() == []


@pytest.mark.parametrize("command", ["export", "dump"])
def test_no_export_or_dump_to_a_stdout_that_is_the_store(store_file: Path, command: str) -> None:
    """``pidkit dump >> pidkit.db``: the shell opens the store for standard output (a real process: the
    descriptor is what is checked)."""
    import subprocess
    import sys

    before, size = _state(store_file), store_file.stat().st_size
    with open(store_file, "ab") as out:
        done = subprocess.run([sys.executable, "-m", "pidkit", command, "--db", f"sqlite:///{store_file}"],
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert "standard output is the store's own file" in done.stderr
    assert store_file.stat().st_size == size and _state(store_file) == before
