"""pidkit new | inspect | convert | llid | rkey — through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.cli.main import main

DATA = Path(__file__).parent / "data" / "vectors"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_version_and_help() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("pidkit ")
    r = run("--help")
    assert r.returncode == 0
    for command in ("new", "inspect", "convert", "llid", "rkey", "ark", "noid"):
        assert command in r.stdout


def test_usage_error_exits_2_without_traceback() -> None:
    r = run("new", "nonsense")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "invalid choice" in r.stderr
    r = run("new", "xarkid", "-n", "0")
    assert r.returncode == 2 and "between 1 and" in r.stderr


def test_new_xarkid_many_are_distinct_and_parse() -> None:
    r = run("new", "xarkid", "-n", "200000")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 200000 and len(set(lines)) == 200000
    assert all(len(x) == 20 for x in lines)
    r2 = run("inspect", "--json", lines[0], lines[-1])
    out = [json.loads(x) for x in r2.stdout.splitlines()]
    assert [o["scheme"] for o in out] == ["xarkid", "xarkid"]


def test_new_tid_strictly_increasing() -> None:
    r = run("new", "tid", "-n", "100000")
    lines = r.stdout.splitlines()
    assert len(lines) == 100000
    assert lines == sorted(lines) and len(set(lines)) == len(lines)


def test_new_uid_forms() -> None:
    paf = run("new", "uid", "-n", "3").stdout.split()
    assert len(paf) == 3 and all(len(v) == 36 for v in paf)
    for value in paf:
        assert json.loads(run("inspect", "--json", value).stdout)["scheme"] == "gedcom-uid"
    dashed = run("new", "uid", "--gedcom7").stdout.strip()
    assert [len(p) for p in dashed.split("-")] == [8, 4, 4, 4, 12]


def test_new_is_quiet_on_closed_pipe() -> None:
    p = subprocess.run(
        f"{sys.executable} -m pidkit new xarkid -n 5000000 | head -n 1",
        shell=True, capture_output=True, text=True, timeout=120,
    )
    assert len(p.stdout.strip()) == 20
    assert "Traceback" not in p.stderr


def test_inspect_stdin_json_lines_and_exit_code() -> None:
    vec = json.loads((DATA / "xarkid.json").read_text())["vectors"][2]
    r = run("inspect", "--json", "-", stdin=f"{vec['compact']}\nnot an id!\n{vec['guid']}\n")
    assert r.returncode == 1  # one input has no valid reading
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [row["input"] for row in rows] == [vec["compact"], "not an id!", vec["guid"]]
    assert [row["scheme"] for row in rows] == ["xarkid", "unknown", "xarkid"]
    assert rows[0]["timestamp"] == vec["utc"]


def test_inspect_human_output() -> None:
    r = run("inspect", "ark:/12345/x5-4-xz-321")
    assert r.returncode == 0
    assert "ark:12345/x54xz321" in r.stdout and "examples" in r.stdout


XARK = json.loads((DATA / "xarkid.json").read_text())["vectors"]


@pytest.mark.parametrize("vec", XARK, ids=lambda v: v["compact"])
def test_convert_every_form(vec: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """In-process (``main``: the same parser and command; the process around it is tested by ``run``
    above and below), one conversion at a time."""

    def convert(*args: str) -> str:
        assert main(["convert", *args]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        return out.strip()

    for source in (vec["compact"], vec["guid"], vec["guid"].upper()):
        assert convert(source, "--to", "compact") == vec["compact"]
        assert convert(source, "--to", "guid") == vec["guid"]
        assert convert(source, "--to", "hex") == vec["guid"].replace("-", "")
    assert convert(vec["guid"], "--to", "uid") == vec["compact"]
    assert convert(vec["compact"], "--to", "uid", "--gedcom7") == vec["guid"]
    assert run("convert", vec["guid"], "--to", "compact").stdout.strip() == vec["compact"]  # and as a process


def test_convert_paf_uid_to_guid_and_bad_input() -> None:
    r = run("convert", "161C15D03ECE47968211BBB2E9EE7F4FA5A6", "--to", "guid")
    assert r.stdout.strip() == "161c15d0-3ece-4796-8211-bbb2e9ee7f4f"
    r = run("convert", "AYvP5WgA+/+/ASNFZ4mr", "--to", "guid")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "AYvP5WgA+/+/ASNFZ4mr" in r.stderr and "Traceback" not in r.stderr


def test_llid_json_lines_match_published_ids() -> None:
    cases = json.loads((DATA / "librarylink_published.json").read_text())
    stdin = "".join(json.dumps(c["pairs"]) + "\n" for c in cases)
    r = run("llid", "-", stdin=stdin)
    assert r.returncode == 0
    assert r.stdout.split() == [c["expected"] for c in cases]


def test_llid_bad_line_names_its_line_and_continues() -> None:
    good = json.dumps(
        [
            ["http://bibfra.me/purl/versa/type", "http://schema.org/Person"],
            ["http://schema.org/name", "Augusta Ada King"],
        ]
    )
    r = run("llid", "-", stdin=f"{good}\n{{oops\n[[1,2]]\n{good}\n")
    assert r.returncode == 1
    assert r.stdout.split() == ["xjgOrUFiw_o", "xjgOrUFiw_o"]  # the Library.Link page's published example
    assert "line 2" in r.stderr and "line 3" in r.stderr


def test_llid_versa_file(tmp_path: Path) -> None:
    md = tmp_path / "people.md"
    md.write_text(
        "# @docheader\n\n* @base: http://example.org/\n* @schema: http://schema.org/\n\n"
        "# jon-postel [Person]\n\n* name: Jonathan Bruce Postel\n* birthDate: 1943-08-06\n"
        "* deathDate: 1998-10-16\n* gender: male\n"
    )
    r = run("llid", str(md), "--keys", "name,birthDate,deathDate")
    assert r.returncode == 0, r.stderr
    doc_id, llid = r.stdout.strip().split("\t")
    assert doc_id.endswith("jon-postel")
    assert llid == "65IMbTlnlOQ"  # the algorithm page's worked example (type, name, birthDate, deathDate)
    assert run("llid", str(md)).returncode == 2


def test_rkey_check() -> None:
    r = run("rkey", "check", "self", "a/b", ".", "example.net")
    assert r.returncode == 1
    assert r.stdout.split() == ["self", "example.net"]
    assert "'a/b' at position 2" in r.stderr
    r = run("rkey", "check", "--type", "tid", "3jzfcijpj2z2a", "self")
    assert r.returncode == 1 and r.stdout.split() == ["3jzfcijpj2z2a"]
    r = run("rkey", "check", "--type", "literal:a/b", "x")
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_in_process_main_returns_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "3jzfcijpj2z2a"]) == 0
    assert main(["inspect", ""]) == 1
    assert main(["nonexistent-command"]) == 2
    capsys.readouterr()


def test_inspect_xarkid_past_year_9999() -> None:
    r = run("inspect", "________________AAAA")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "unix_ms: 281474976710655" in r.stdout and "after the year 9999" in r.stdout
    r = run("inspect", "--json", "________________AAAA")
    assert r.returncode == 0 and json.loads(r.stdout)["timestamp"] is None


PERSON_MD = (
    "# @docheader\n\n* @schema: http://schema.org/\n\n"
    "# jon-postel [Person]\n\n* name: Jonathan Bruce Postel\n* birthDate: 1943-08-06\n"
)


def test_llid_versa_unknown_key_is_an_error(tmp_path: Path) -> None:
    md = tmp_path / "people.md"
    md.write_text(PERSON_MD)
    r = run("llid", str(md), "--keys", "nosuch")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("pidkit: error: ")
    assert "'nosuch'" in r.stderr and "'jon-postel'" in r.stderr and "line 5" in r.stderr
    assert str(md) in r.stderr and "Traceback" not in r.stderr
    r = run("llid", str(md), "--keys", "name,nosuch")
    assert r.returncode == 1 and "'nosuch'" in r.stderr


def test_llid_versa_without_schema_warns(tmp_path: Path) -> None:
    md = tmp_path / "people.md"
    md.write_text("# jon-postel [Person]\n* name: Jonathan Bruce Postel\n")
    r = run("llid", str(md), "--keys", "name")
    assert r.returncode == 0 and r.stdout.startswith("jon-postel\t")
    assert r.stderr.startswith("pidkit: warning: ") and "@schema" in r.stderr and str(md) in r.stderr
    with_schema = tmp_path / "schema.md"
    with_schema.write_text(PERSON_MD)
    r = run("llid", str(with_schema), "--keys", "name")
    assert r.returncode == 0 and r.stderr == ""
