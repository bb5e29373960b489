"""``pidkit ark …`` / ``pidkit noid …`` through the real entry point (and in-process ``main``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pidkit.cli.main import main


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_ark_parse_human() -> None:
    r = run("ark", "parse", "https://example.org/ark:12345/x6np1wh8k/c3/s5.v7.xsl")
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(":", 1) for line in r.stdout.splitlines() if line)
    assert lines["nma"].strip() == "example.org"
    assert lines["naan"].strip() == "12345"
    assert lines["shoulder"].strip() == "x6"
    assert lines["blade"].strip() == "np1wh8k"
    assert lines["component_path"].strip() == "/c3/s5"
    assert lines["variant_path"].strip() == ".v7.xsl"
    assert lines["shared_naan"].strip().startswith("examples")
    assert r.stderr == ""


def test_ark_parse_json_lines_and_keeps_going() -> None:
    r = run("ark", "parse", "--json", "ark:/13030/c7x921j3h?info", "not an ark", "ark:99999/fk4-x")
    assert r.returncode == 1
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["valid"] for row in rows] == [True, False, True]
    assert rows[0]["label"] == "ark:/"
    assert rows[0]["inflection"] == "?info"
    assert rows[0]["check_ok"] is True
    assert rows[0]["naan"] == "13030"
    assert rows[1]["input"] == "not an ark"
    assert rows[1]["position"] == 1
    assert rows[2]["normalized"] == "ark:99999/fk4x"
    assert rows[2]["shared_naan"] == "test ids"
    err = r.stderr.splitlines()
    assert len(err) == 1
    assert err[0].startswith("pidkit: error: ")
    assert "'not an ark'" in err[0]


def test_ark_normalize_stdin() -> None:
    lines = ["ark:12345/x6np1wh8k", "ARK:/12345/x6np1wh8k", "http://example.org/rslvr/ark:12345/x54--xz32-1"]
    r = run("ark", "normalize", "-", stdin="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["ark:12345/x6np1wh8k", "ark:12345/x6np1wh8k", "ark:12345/x54xz321"]


def test_ark_normalize_bad_input_named_and_rest_processed() -> None:
    r = run("ark", "normalize", "ark:12345/x%zz", "ark:/12345/b-1")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["ark:12345/b1"]
    assert "'ark:12345/x%zz'" in r.stderr
    assert "position 12" in r.stderr
    assert "Traceback" not in r.stderr


def test_ark_check() -> None:
    r = run("ark", "check", "https://n2t.net/ark:/13030/c7x921j3h", "ark:13030/c7x921j3k")
    assert r.returncode == 1
    out = r.stdout.splitlines()
    assert out[0] == "ark:13030/c7x921j3h\tok"
    assert out[1].startswith("ark:13030/c7x921j3k\tbad")
    assert "'h'" in out[1]
    assert r.stderr == ""
    assert run("ark", "check", "ark:/13030/c7833mx7t").returncode == 0


def test_noid_check_computes() -> None:
    r = run("noid", "check", "13030/xf93gt2", "13030/f54x54g1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["q", "1"]
    r = run("noid", "check", "--full", "-", stdin="13030/xf93gt2\n")
    assert r.stdout.splitlines() == ["13030/xf93gt2q"]


def test_noid_check_verify() -> None:
    r = run("noid", "check", "--verify", "13030/f54x54g11", "13030/f54x45g11", "x")
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == "13030/f54x54g11\tok"
    assert r.stdout.splitlines()[1].startswith("13030/f54x45g11\tbad")
    assert r.stdout.splitlines()[2].startswith("x\tbad")


def test_usage_errors_exit_2() -> None:
    assert run("ark").returncode == 2
    assert run("ark", "parse").returncode == 2
    assert run("noid", "check", "--full", "--verify", "x").returncode == 2


@pytest.mark.parametrize("argv", [["ark", "--help"], ["ark", "parse", "--help"], ["noid", "check", "--help"]])
def test_help(argv: list[str]) -> None:
    r = run(*argv)
    assert r.returncode == 0
    assert "usage: pidkit" in r.stdout


def test_in_process_main(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ark", "normalize", "ark:/12345/x5-4-xz-321"]) == 0
    assert capsys.readouterr().out == "ark:12345/x54xz321\n"
    assert main(["ark", "parse", "ark:12345/x6", "ark:12345/b1"]) == 0
    out = capsys.readouterr().out
    assert out.count("input:") == 2
    assert "\n\ninput:" in out  # blocks separated by a blank line
    assert main(["noid", "check", "x" * 70000]) == 1
    assert "longer than" in capsys.readouterr().err


def test_clean_option() -> None:
    pasted = "ark:12345/x6np1-\n   wh8k"
    r = run("ark", "normalize", pasted)
    assert r.returncode == 1
    assert "position 17" in r.stderr
    r = run("ark", "normalize", "--clean", pasted)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ark:12345/x6np1wh8k\n"
    r = run("ark", "check", "--clean", " ark:13030/c7x921 j3h ")
    assert r.stdout == "ark:13030/c7x921j3h\tok\n"
