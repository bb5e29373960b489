"""Inputs that ended in a Python traceback (a red-team pass, 2026-11-30): each is now one error line
naming the input, with a non-zero exit status, and nothing written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pidkit.cli.main import main
from pidkit.store import open_store

DEEP = "[" * 100_000
LONG_INT = "9" * 5_000  # past Python's int_max_str_digits (4,300)


@pytest.mark.parametrize("text", [DEEP, f"[{LONG_INT}]"])
def test_llid_json_lines_too_deep_or_too_long_a_number(text: str, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text + "\n"))
    assert main(["llid", "-"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pidkit: error: line 1: not JSON we read (") and "Traceback" not in err


@pytest.mark.parametrize("text", ['{"data":[' + DEEP, '{"data":[' + LONG_INT + "]}"])
def test_registry_update_too_deep_or_too_long_a_number(text: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "registry.json"
    source.write_text(text)
    target = tmp_path / "naans.json"
    monkeypatch.setenv("PIDKIT_REGISTRY", str(target))  # where update writes
    assert main(["registry", "update", str(source)]) == 1
    err = capsys.readouterr().err
    assert "not JSON we read" in err and "registry.json" in err and "Traceback" not in err
    assert not target.exists()


@pytest.mark.parametrize(("created", "words"), [
    ("99999999999999999999", "out of range"),
    ("253402300800", "out of range"),  # 10000-01-01
    ("²", "neither Unix seconds"),  # str.isdigit() says yes, int() says no
])  # fmt: skip
def test_ezid_created_out_of_range(created: str, words: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "e.anvl"
    source.write_text(f":: ark:/99999/fk4zz\n_target: https://e.org/z\n_created: {created}\n")
    db = tmp_path / "s.db"
    assert main(["import", "--from", "ezid", str(source), "--db", f"sqlite:///{db}"]) == 1
    err = capsys.readouterr().err
    assert f"_created is {words}" in err and "nothing imported" in err and "Traceback" not in err
    with open_store(f"sqlite:///{db}") as s:
        assert s.list_bindings() == []


def test_a_password_not_utf8_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert main(["naan", "add", "99999", "--db", db]) == 0
    raw = io.TextIOWrapper(io.BytesIO(b"\xff\xfe12345678901\n"), encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr("sys.stdin", raw)
    assert main(["user", "add", "bob", "--naan", "99999", "--password-stdin", "--db", db]) == 2
    assert "the password is not UTF-8 text; nothing changed" in capsys.readouterr().err
    with open_store(db) as s:
        assert s.list_users() == []


def test_restore_of_a_flag_that_is_not_0_or_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(source) as s:
        s.add_naan("99999")
        s.bind("ark:99999/x", "https://e.org/x")
    dump = tmp_path / "d.jsonl"
    assert main(["dump", "-o", str(dump), "--db", source]) == 0
    text = dump.read_text()
    assert text.count('"passthrough":0') == 1
    dump.write_text(text.replace('"passthrough":0', f'"passthrough":{2**40}'))
    assert main(["restore", str(dump), "--db", f"sqlite:///{tmp_path / 'b.db'}"]) == 1
    assert "bindings.passthrough is out of range (0 or 1)" in capsys.readouterr().err


def test_text_on_stdin_that_the_locale_cannot_read(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a UTF-8 locale Python reads stdin strictly: the decoding error is one line too."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"ark:99999/\xe9x\n"), encoding="utf-8"))
    assert main(["ark", "parse", "-"]) == 1
    assert "input is not utf-8 text: byte 0xe9" in capsys.readouterr().err


@pytest.mark.parametrize("counter", [2**63, -(2**63) - 1, 10**23])
def test_restore_of_an_integer_past_64_bits(counter: int, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(source) as s:
        s.add_naan("99999")
        s.create_minter("m", naan="99999", template="fk4.reedeedk", seed=1)
    dump = tmp_path / "d.jsonl"
    assert main(["dump", "-o", str(dump), "--db", source]) == 0
    text = dump.read_text()
    assert text.count('"counter":0') == 1
    dump.write_text(text.replace('"counter":0', f'"counter":{counter}'))
    target = f"sqlite:///{tmp_path / 'b.db'}"
    assert main(["restore", str(dump), "--db", target]) == 1
    err = capsys.readouterr().err
    assert "minters.counter is out of range (a 64-bit integer)" in err and "Traceback" not in err
    with open_store(target) as s:
        assert s.list_minters() == [] and s.list_naans() == []


@pytest.mark.parametrize(("table", "column", "value", "why"), [
    ("bindings", "extra", "{not json", "JSONDecodeError"),
    ("bindings", "extra", '{"a": 1}', "extra must be a JSON object of strings"),
    ("bindings", "updated", "yesterday", "not a time as the store keeps it"),
    ("history", "at", "nope", "not a time as the store keeps it"),
    ("history", "after", "[unclosed", "JSONDecodeError"),
    ("minters", "template", "fk4.q", "mask must start with a generator"),
    ("minted", "minted_at", "9999-12-31T23:59:59-23:59", "not a time as the store keeps it"),
    ("bindings", "created", "2026-11-30T01:31:01.960706", "not a time as the store keeps it"),  # no zone
    ("history", "at", "2026-11-30T01:31:01.960706+00:00", "not a time as the store keeps it"),  # as text
    ("history", "after", "[1]", "not a JSON object"),
    ("bindings", "extra", "[" * 100_000, "RecursionError"),
])  # fmt: skip
def test_restore_of_a_row_the_store_could_not_read_back(
    table: str, column: str, value: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each of these was restored, and then broke the commands that read it (a traceback from
    ``fetch``, ``export`` and ``history``; every ``bind`` under the minter's NAAN refused)."""
    import json

    source = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(source) as s:
        s.add_naan("99999", shoulders=["fk4"])
        s.create_minter("m", naan="99999", template="fk4.reedeedk", seed=1)
        s.mint("m", 1)
        s.bind("ark:99999/x", "https://e.org/x")
    dump = tmp_path / "d.jsonl"
    assert main(["dump", "-o", str(dump), "--db", source]) == 0
    lines = dump.read_text().splitlines()
    for n, line in enumerate(lines):
        obj = json.loads(line)
        if obj.get("table") == table:
            obj["row"][column] = value
            lines[n] = json.dumps(obj)
            changed = n + 1
            break
    dump.write_text("\n".join(lines) + "\n")
    target = f"sqlite:///{tmp_path / 'b.db'}"
    assert main(["restore", str(dump), "--db", target]) == 1
    err = capsys.readouterr().err
    assert f"{table}.{column} cannot be read back ({why}" in err and f"on line {changed}" in err, err
    with open_store(target) as s:
        assert s.list_naans() == [] and s.list_bindings() == []


def test_registry_update_with_no_record_keeps_the_registry(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "registry.json"
    source.write_text('{"data": []}')
    target = tmp_path / "naans.json"
    target.write_text("the registry in use")
    monkeypatch.setenv("PIDKIT_REGISTRY", str(target))
    assert main(["registry", "update", str(source)]) == 1
    assert "no NAAN record in it: the registry in use is kept" in capsys.readouterr().err
    assert target.read_text() == "the registry in use"


def test_an_error_never_writes_a_control_character_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store path (here), an input or a stored text echoed in an error goes to a terminal escaped."""
    db = f"sqlite:///{tmp_path / chr(27)}[2J{chr(7)}.db"
    assert main(["naan", "list", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "\\x1b[2J\\x07.db" in err and "\x1b" not in err and "\x07" not in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("output", "words"), [
    ("nodir/x.jsonl", "cannot write: No such file or directory in '"),
    ("", "an empty path is no file to write in ''"),
])  # fmt: skip
def test_an_output_that_cannot_be_written_is_named(
    output: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not the temp file beside it (``.x.jsonl.pidkit-…tmp``), nor the parent directory."""
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert main(["init", "--db", db]) == 0
    capsys.readouterr()
    assert main(["export", "-o", output, "--db", db]) == 1
    err = capsys.readouterr().err
    assert words in err and ".tmp" not in err, err
    assert err.rstrip().endswith(f"{output}'")
